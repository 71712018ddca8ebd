"""The operators and methods of sparse variables (x + y, x @ y, x[i], x.T, x.sum(), ...),
bound onto SparseMethods (sympile/sparse/type.py) by sympile/sparse/__init__.py: they call
sympile.sparse.basic, which builds on type.py, so they live above both.
"""

from __future__ import annotations

from sympile.graph.utils import bind_methods
from sympile.sparse.basic import (
    add,
    cast,
    csm_data,
    csm_properties,
    dense_from_sparse,
    dot,
    ge,
    get_item,
    gt,
    le,
    lt,
    mul,
    neg,
    sp_sum,
    sub,
    transpose,
)
from sympile.sparse.type import SparseMethods


class SparseOperators:
    """What bind_methods copies onto SparseMethods."""

    @property
    def shape(self):
        return csm_properties(self)[3]

    @property
    def size(self):
        """The number of stored entries (scipy.sparse's size: explicit zeros count)."""
        return csm_data(self).size

    @property
    def T(self):
        return transpose(self)

    def astype(self, dtype):
        return cast(self, dtype)

    def toarray(self):
        return dense_from_sparse(self)

    def __neg__(self):
        return neg(self)

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return sub(self, other)

    def __rsub__(self, other):
        return sub(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __matmul__(self, other):
        return dot(self, other)

    # Comparisons as scipy.sparse's (== and != stay identity: variables are graph nodes).
    def __lt__(self, other):
        return lt(self, other)

    def __gt__(self, other):
        return gt(self, other)

    def __le__(self, other):
        return le(self, other)

    def __ge__(self, other):
        return ge(self, other)

    def __rmatmul__(self, other):
        return dot(other, self)

    def __getitem__(self, index):
        return get_item(self, index)

    def sum(self, axis=None, sparse_grad=False):
        return sp_sum(self, axis, sparse_grad)


bind_methods(SparseMethods, SparseOperators)
