"""Sparse matrices (Theano's sympile.sparse types): SparseTensorType holds scipy.sparse CSR or
CSC matrices of one dtype; SparseVariable gives them operators (+, -, *, .T, dot).

A value of the type is a scipy.sparse csr_matrix / csc_matrix (or the sparse array classes,
turned into matrices). Values of the other format are converted unless strict; a dense
array is refused (dense_from_sparse and csr_from_dense convert explicitly).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from sympile.config import config
from sympile.graph.basic import Constant, Variable
from sympile.graph.type import Type
from sympile.scalar.basic import normalize_dtype
from sympile.tensor.variable import as_tensor_variable

__all__ = ["SparseConstant", "SparseTensorType", "SparseVariable", "as_sparse_variable",
           "as_sparse_or_tensor_variable",
           "csc_matrix", "csr_matrix", "matrix", "sparse_formats"]

_FORMATS = {"csr": scipy.sparse.csr_matrix, "csc": scipy.sparse.csc_matrix}
sparse_formats = tuple(_FORMATS)


def _describe(value: Any) -> str:
    if scipy.sparse.issparse(value):
        return f"a scipy.sparse {value.format} of dtype {value.dtype} and shape {value.shape}"
    if isinstance(value, np.ndarray):
        return f"a dense ndarray of dtype {value.dtype} and shape {value.shape}"
    return f"{type(value).__name__} {value!r:.60}"


# The dtypes of sparse matrices (Theano's sparse.all_dtypes): scipy.sparse's numeric ones.
all_dtypes = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64", "complex64", "complex128")
# And its groups, as Theano's sparse module names them.
int_dtypes = all_dtypes[:4]
uint_dtypes = all_dtypes[4:8]
integer_dtypes = discrete_dtypes = int_dtypes + uint_dtypes
float_dtypes = all_dtypes[8:10]
complex_dtypes = all_dtypes[10:]
continuous_dtypes = complex_dtypes + float_dtypes


class SparseTensorType(Type):
    """scipy.sparse matrices of `format` ('csr' or 'csc') and `dtype`; always 2-D."""

    __props__ = ("format", "dtype")
    ndim = 2

    def __init__(self, format: str, dtype: Any):
        if format not in _FORMATS:
            raise ValueError(f"SparseTensorType: format must be one of {sparse_formats}, got "
                             f"{format!r}")
        self.format = format
        self.dtype = normalize_dtype(dtype)
        if self.dtype not in all_dtypes:
            raise TypeError(f"SparseTensorType: dtype must be one of {', '.join(all_dtypes)} "
                            f"(the numeric dtypes scipy.sparse stores; float16 is not one), "
                            f"got {self.dtype}")

    @property
    def shape(self) -> tuple[None, None]:
        return (None, None)

    @property
    def broadcastable(self) -> tuple[bool, bool]:
        return (False, False)

    def clone(self, format: str | None = None, dtype: Any = None) -> SparseTensorType:
        return SparseTensorType(format or self.format, dtype or self.dtype)

    def __str__(self):
        return f"Sparse({self.format}, {self.dtype})"

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        """`value` as a scipy.sparse matrix of this format and dtype, else TypeError. strict:
        only such a matrix, as it is. Otherwise another sparse format is converted, and a
        dtype numpy casts safely (or any, with allow_downcast)."""
        matrix_class = _FORMATS[self.format]
        if type(value) is matrix_class and value.dtype.name == self.dtype:
            return value
        if isinstance(value, Variable):
            raise TypeError(f"expected a value of {self}, got the symbolic variable {value}; "
                            f"to substitute a variable, use function(..., givens=...)")
        if strict or not scipy.sparse.issparse(value):
            raise TypeError(f"expected a scipy.sparse {self.format}_matrix of dtype "
                            f"{self.dtype}, got {_describe(value)}"
                            + ("" if scipy.sparse.issparse(value) or strict else
                               "; a dense value becomes sparse through csr_from_dense or "
                               "csc_from_dense"))
        if value.ndim != 2:
            raise TypeError(f"expected a 2-D sparse matrix, got {_describe(value)}")
        if value.dtype.name != self.dtype and not allow_downcast \
                and not np.can_cast(value.dtype, self.dtype, "safe"):
            raise TypeError(f"expected a sparse matrix of dtype {self.dtype}, got "
                            f"{_describe(value)}: converting would lose precision (pass "
                            f"allow_downcast=True to accept it)")
        return matrix_class(value, dtype=self.dtype)

    def values_eq(self, a: Any, b: Any) -> bool:
        return a.shape == b.shape and (a != b).nnz == 0

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        if a.shape != b.shape:
            return False
        difference = abs(a - b)
        return difference.nnz == 0 or difference.max() <= 1e-5 * max(abs(a).max(), 1.0)

    def data_signature(self, data: Any) -> Any:
        return (data.format, data.shape, data.dtype.name, data.data.tobytes(),
                data.indices.tobytes(), data.indptr.tobytes())

    def is_super(self, other: Type) -> bool:
        return self == other


class SparseMethods:
    """The attributes of sparse variables and constants; sympile/sparse/methods.py binds their
    operators (the functions of sympile.sparse.basic, which builds on this module)."""

    type: SparseTensorType

    @property
    def format(self) -> str:
        return self.type.format

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return 2


class SparseVariable(SparseMethods, Variable):
    """A symbolic sparse matrix."""


class SparseConstant(SparseMethods, Constant):
    """A sparse matrix constant."""

    def __str__(self):
        return self.name if self.name is not None else \
            f"SparseConstant{{{self.type.format}, {self.data.shape}, nnz={self.data.nnz}}}"


SparseTensorType.variable_type = SparseVariable
SparseTensorType.constant_type = SparseConstant


def matrix(format: str, name: str | None = None, dtype: Any = None) -> SparseVariable:
    """A symbolic sparse matrix of `format` (Theano's sparse.matrix); dtype config.floatX
    by default."""
    return SparseTensorType(format, dtype or config.floatX)(name)


def csr_matrix(name: str | None = None, dtype: Any = None) -> SparseVariable:
    """A symbolic CSR matrix (Theano's sparse.csr_matrix)."""
    return matrix("csr", name, dtype)


def csc_matrix(name: str | None = None, dtype: Any = None) -> SparseVariable:
    """A symbolic CSC matrix (Theano's sparse.csc_matrix)."""
    return matrix("csc", name, dtype)


def as_sparse_variable(x: Any, name: str | None = None, who: str = "as_sparse_variable",
                       argument: str = "x") -> Variable:
    """x as a sparse Variable: a sparse Variable as it is, a scipy.sparse matrix as a
    constant (of a copy: changing the matrix later does not change the graph); a dense
    variable or array is a TypeError naming `who` and `argument`."""
    if isinstance(x, Variable):
        if isinstance(x.type, SparseTensorType):
            return x
        raise TypeError(f"{who}: {argument} must be sparse, got the dense {x.type}; make it "
                        f"sparse with csr_from_dense or csc_from_dense")
    if scipy.sparse.issparse(x):
        format = x.format if x.format in _FORMATS else "csr"
        type_ = SparseTensorType(format, x.dtype)
        value = type_.filter(x)
        return type_.make_constant(value.copy() if value is x else value, name)
    raise TypeError(f"{who}: {argument} must be sparse, got {_describe(x)}")


def is_sparse(x: Any) -> bool:
    return isinstance(getattr(x, "type", None), SparseTensorType)


def as_sparse_or_tensor_variable(x: Any, name: str | None = None) -> Variable:
    """x as a sparse Variable if it is sparse (a sparse Variable or a scipy.sparse matrix),
    else as a tensor Variable (Theano's as_sparse_or_tensor_variable)."""
    if is_sparse(x) or scipy.sparse.issparse(x):
        return as_sparse_variable(x, name, who="as_sparse_or_tensor_variable")
    return as_tensor_variable(x, name=name, op="as_sparse_or_tensor_variable")
