"""The operators and methods of tensor variables (x + y, x[i], x.sum(), x.reshape(...), ...),
bound onto TensorMethods (sympile/tensor/variable.py) when sympile.tensor is imported.

Each method delegates to the function of its op module. Those modules build on variable.py,
so variable.py cannot import them; this module sits above all of them and is imported last
by sympile/tensor/__init__.py, which binds the methods onto the class (as JAX binds its array
methods): the imports run one way and no method imports inside its body.
"""

from __future__ import annotations

import numpy as np

from sympile.graph.utils import bind_methods
from sympile.tensor import blas, math
from sympile.tensor.basic import fill, swapaxes, transfer, transpose, zeros_like
from sympile.tensor.blas.basic import dot
from sympile.tensor.constant_value import get_scalar_constant_value
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.extra_ops import (
    choose,
    compress,
    cumprod,
    cumsum,
    diagonal,
    nonzero,
    nonzero_values,
    repeat,
    searchsorted,
    trace,
)
from sympile.tensor.linalg.summaries import norm
from sympile.tensor.math import cast
from sympile.tensor.reduction import ops as reduction
from sympile.tensor.shape import flatten, reshape, shape, size, squeeze
from sympile.tensor.sort import argsort, sort
from sympile.tensor.subtensor import getitem, take
from sympile.tensor.variable import TensorMethods


def _comparison(variable):
    """`variable`, marked as the result of a comparison operator (see __bool__)."""
    variable._is_comparison = True
    return variable


class TensorOperators:
    """What bind_methods copies onto TensorMethods, so onto TensorVariable, TensorConstant
    and TensorSharedVariable."""

    @property
    def shape(self):
        return shape(self)

    @property
    def size(self):
        return size(self)

    @property
    def T(self):
        return transpose(self)

    # -- arithmetic -------------------------------------------------------------------------
    def __add__(self, other):
        return math.add(self, other)

    def __radd__(self, other):
        return math.add(other, self)

    def __sub__(self, other):
        return math.sub(self, other)

    def __rsub__(self, other):
        return math.sub(other, self)

    def __mul__(self, other):
        return math.mul(self, other)

    def __rmul__(self, other):
        return math.mul(other, self)

    def __truediv__(self, other):
        return math.true_div(self, other)

    def __rtruediv__(self, other):
        return math.true_div(other, self)

    def __floordiv__(self, other):
        return math.int_div(self, other)

    def __rfloordiv__(self, other):
        return math.int_div(other, self)

    def __mod__(self, other):
        return math.mod(self, other)

    def __rmod__(self, other):
        return math.mod(other, self)

    def __pow__(self, other):
        return math.pow(self, other)

    def __rpow__(self, other):
        return math.pow(other, self)

    def __neg__(self):
        return math.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return math.abs(self)

    def __invert__(self):
        return math.invert(self)

    def __and__(self, other):
        return math.and_(self, other)

    def __rand__(self, other):
        return math.and_(other, self)

    def __or__(self, other):
        return math.or_(self, other)

    def __ror__(self, other):
        return math.or_(other, self)

    def __xor__(self, other):
        return math.xor(self, other)

    def __rxor__(self, other):
        return math.xor(other, self)

    def __lshift__(self, other):
        return math.left_shift(self, other)

    def __rlshift__(self, other):
        return math.left_shift(other, self)

    def __rshift__(self, other):
        return math.right_shift(self, other)

    def __rrshift__(self, other):
        return math.right_shift(other, self)

    def __divmod__(self, other):
        return math.int_div(self, other), math.mod(self, other)

    def __rdivmod__(self, other):
        return math.int_div(other, self), math.mod(other, self)

    def __round__(self, ndigits=None):
        if ndigits is not None:
            raise TypeError("round(): only ndigits=None is supported for symbolic tensors")
        return math.round(self)

    def __matmul__(self, other):
        return blas.matmul(self, other)

    def __rmatmul__(self, other):
        return blas.matmul(other, self)

    # Comparisons build graphs; == and != stay identity tests (as in Theano) because
    # variables are dictionary keys everywhere. Use eq()/neq() for elementwise equality.
    def __lt__(self, other):
        return _comparison(math.lt(self, other))

    def __le__(self, other):
        return _comparison(math.le(self, other))

    def __gt__(self, other):
        return _comparison(math.gt(self, other))

    def __ge__(self, other):
        return _comparison(math.ge(self, other))

    def __bool__(self):
        """True, as in Theano (`if not W:` tests a constructor argument for None), except
        for the result of <, <=, > or >=: `if x > 0:` and `a < b < c` would silently test
        the variable, not its value."""
        if getattr(self, "_is_comparison", False):
            raise TypeError(
                f"the truth value of symbolic comparison {self} is unknown until the function "
                f"runs; use sympile.tensor.switch/where or ifelse for conditions")
        return True

    def __iter__(self):
        length = self.type.shape[0] if self.type.ndim else None
        if length is None:
            raise TypeError(f"cannot iterate over {self} ({self.type}): its length is not known "
                            f"statically; index it or use scan")
        return (self[index] for index in range(length))

    def __len__(self):
        length = self.type.shape[0] if self.type.ndim else None
        if length is None:
            raise TypeError(f"len() of {self} ({self.type}) is not known statically; "
                            f"use .shape[0]")
        return length

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, index):
        return getitem(self, index)

    def __setitem__(self, index, value):
        raise TypeError("symbolic variables are immutable: use "
                        "sympile.tensor.set_subtensor(x[index], value) or inc_subtensor")

    # -- methods ----------------------------------------------------------------------------
    def eq(self, other):
        return math.eq(self, other)

    def neq(self, other):
        return math.neq(self, other)

    def astype(self, dtype):
        return cast(self, dtype)

    def reshape(self, *shape, ndim=None):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return reshape(self, shape, ndim=ndim)

    def dimshuffle(self, *pattern):
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return DimShuffle(self.type.ndim, pattern)(self)

    def flatten(self, ndim=None, outdim=None):
        return flatten(self, ndim, outdim)

    def ravel(self):
        return self.flatten()

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return transpose(self, axes or None)

    def squeeze(self, axis=None):
        return squeeze(self, axis)

    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reduction.sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reduction.prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reduction.mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(self, axis=None, ddof=0, keepdims=False):
        return reduction.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        return reduction.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return reduction.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return reduction.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return reduction.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return reduction.argmin(self, axis=axis, keepdims=keepdims)

    def ptp(self, axis=None, keepdims=False):
        return reduction.ptp(self, axis=axis, keepdims=keepdims)

    def norm(self, L, axis=None, keepdims=False):
        """The L-norm of the elements over `axis` (all of them if None), Theano's
        x.norm(L): numpy's vector norms (sympile.tensor.linalg's norm), also L = 0 and
        +-inf."""
        if isinstance(L, (bool, np.bool_)) or not isinstance(L, (int, float, np.integer,
                                                                 np.floating)):
            raise TypeError(f"norm: L must be a number, got {L!r}")
        if axis is not None:
            return norm(self, L, axis=axis, keepdims=keepdims)
        result = norm(self.flatten(), L)
        return result.reshape((1,) * self.type.ndim) if keepdims else result

    def all(self, axis=None, keepdims=False):
        return reduction.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return reduction.any(self, axis=axis, keepdims=keepdims)

    def dot(self, other):
        return dot(self, other)

    __dot__ = dot

    def __rdot__(self, other):
        return dot(other, self)

    def cumsum(self, axis=None):
        return cumsum(self, axis=axis)

    def cumprod(self, axis=None):
        return cumprod(self, axis=axis)

    def repeat(self, repeats, axis=None):
        return repeat(self, repeats, axis=axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def trace(self, offset=0, axis1=0, axis2=1):
        return trace(self, offset=offset, axis1=axis1, axis2=axis2)

    def sort(self, axis=-1, kind="quicksort", order=None):
        _no_order(order, "sort")
        return sort(self, axis=axis, kind=kind)

    def argsort(self, axis=-1, kind="stable", order=None):
        _no_order(order, "argsort")
        return argsort(self, axis=axis, kind=kind)

    def searchsorted(self, v, side="left", sorter=None):
        return searchsorted(self, v, side=side, sorter=sorter)

    def take(self, indices, axis=None, mode="raise"):
        return take(self, indices, axis=axis, mode=mode)

    def clip(self, a_min, a_max):
        return math.clip(self, a_min, a_max)

    def round(self, mode="half_to_even"):
        return math.round(self, mode=mode)

    def conj(self):
        return math.conj(self)

    conjugate = conj

    def nonzero(self, return_matrix=False):
        return nonzero(self, return_matrix=return_matrix)

    def nonzero_values(self):
        return nonzero_values(self)

    def choose(self, choices, mode="raise"):
        """numpy's ndarray.choose: self holds the indices into `choices`."""
        return choose(self, choices, mode=mode)

    def compress(self, condition, axis=None):
        """numpy's ndarray.compress: the slices of self where `condition` is true."""
        return compress(condition, self, axis=axis)

    def swapaxes(self, axis1, axis2):
        return swapaxes(self, axis1, axis2)

    def fill(self, value):
        """value broadcast to self's shape (Theano's x.fill(value))."""
        return fill(self, value)

    def zeros_like(self, dtype=None):
        return zeros_like(self, dtype=dtype)

    def transfer(self, target):
        return transfer(self, target)

    def get_scalar_constant_value(self):
        return get_scalar_constant_value(self)

    @property
    def real(self):
        return math.real(self)

    @property
    def imag(self):
        return math.imag(self)

    def copy(self, name=None):
        return math.identity(self, name=name)


def _no_order(order, method: str) -> None:
    if order is not None:
        raise ValueError(f"{method}: order applies to numpy's structured arrays; a tensor has "
                         f"no fields, so order must be None")


def _elementwise_method(name: str):
    def method(self):
        return getattr(math, name)(self)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"sympile.tensor.{name}(self), elementwise."
    return method


# Theano's elementwise methods (x.exp(), x.tanh(), ...).
for _name in ("arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "cos",
              "cosh", "deg2rad", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p",
              "log2", "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"):
    setattr(TensorOperators, _name, _elementwise_method(_name))
del _name


bind_methods(TensorMethods, TensorOperators)
