"""Sparse matrices (Theano's theano.sparse, the paper's section 3.5): CSR and CSC matrices of
scipy.sparse values, their operations with structured and regular gradients
(sympile.sparse.basic), shared sparse matrices, and verify_grad_sparse."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse

from sympile.gradient import verify_grad
from sympile.sparse import basic, methods, rewriting, sharedvar  # noqa: F401 - methods binds the operators
from sympile.sparse.basic import *  # noqa: F403
from sympile.sparse.basic import __all__ as _basic_all
from sympile.sparse.sharedvar import SparseTensorSharedVariable, sparse_constructor
from sympile.sparse.type import (
    SparseConstant,
    SparseTensorType,
    SparseVariable,
    all_dtypes,
    as_sparse_or_tensor_variable,
    as_sparse_variable,
    complex_dtypes,
    continuous_dtypes,
    csc_matrix,
    csr_matrix,
    discrete_dtypes,
    float_dtypes,
    int_dtypes,
    integer_dtypes,
    matrix,
    sparse_formats,
    uint_dtypes,
)
from sympile.tensor.variable import as_tensor_variable

# Theano's flag for "scipy.sparse is importable": scipy is one of sympile's two
# dependencies, so sparse support is always there.
enable_sparse = True

# Theano's names for the type and for the sparse-or-dense test.
SparseType = SparseTensorType
as_sparse = as_sparse_variable
# Theano's CSR(data, indices, indptr, shape) and CSC(...): a matrix built from its parts.
CSR = CSM("csr")  # noqa: F405
CSC = CSM("csc")  # noqa: F405


def shared(value: Any, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None, borrow: bool = False,
           format: str | None = None) -> SparseTensorSharedVariable:
    """Theano's sparse.shared: a shared variable of the scipy.sparse matrix `value`."""
    if not scipy.sparse.issparse(value):
        raise TypeError(f"sparse.shared: expected a scipy.sparse matrix, got "
                        f"{value.__class__.__name__} (sympile.shared takes dense values)")
    return sparse_constructor(value, name, strict, allow_downcast, borrow, format)


def _is_sparse_variable(x: Any) -> bool:
    return isinstance(getattr(x, "type", None), SparseTensorType)


def verify_grad_sparse(fun: Callable[..., Any], pt: Sequence[Any], structured: bool = False,
                       **kwargs: Any) -> None:
    """sympile.gradient.verify_grad for a function of sparse (and dense) inputs (Theano's
    verify_grad_sparse). structured: only the stored values of each sparse point vary (the
    derivative checked is the structured one); else every entry does (the regular one).
    A sparse output is checked through its dense form (all of it, or where it stores values
    when structured). kwargs go to verify_grad."""
    point, rebuild = [], []
    for value in pt:
        if not scipy.sparse.issparse(value):
            point.append(np.asarray(value))
            rebuild.append(None)
            continue
        format = value.format if value.format in sparse_formats else "csr"
        matrix_value = scipy.sparse.csr_matrix(value) if format == "csr" else \
            scipy.sparse.csc_matrix(value)
        matrix_value.sort_indices()
        if structured:
            point.append(matrix_value.data.copy())
            rebuild.append(lambda data, m=matrix_value, f=format: CSM(f)(  # noqa: F405
                data, as_tensor_variable(m.indices.astype(np.int32)),
                as_tensor_variable(m.indptr.astype(np.int32)),
                as_tensor_variable(np.asarray(m.shape, dtype=np.int64))))
        else:
            point.append(matrix_value.toarray())
            rebuild.append(lambda dense, f=format: SparseFromDense(f)(dense))  # noqa: F405

    def dense_fun(*inputs):
        output = fun(*[x if make is None else make(x) for x, make in zip(inputs, rebuild)])
        if not _is_sparse_variable(output):
            return output
        return dense_from_sparse(output, sparse_grad=structured)  # noqa: F405

    verify_grad(dense_fun, point, **kwargs)


__all__ = list(_basic_all)
__all__ += ["CSC", "CSR", "SparseConstant", "SparseTensorSharedVariable", "SparseTensorType",
            "all_dtypes", "as_sparse_or_tensor_variable", "complex_dtypes", "continuous_dtypes",
            "discrete_dtypes",
            "float_dtypes", "int_dtypes", "integer_dtypes", "uint_dtypes", "shared",
            "SparseType", "SparseVariable", "as_sparse", "as_sparse_variable", "basic", "rewriting",
            "csc_matrix", "csr_matrix", "matrix", "sharedvar", "sparse_formats",
            "verify_grad_sparse"]
