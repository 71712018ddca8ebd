"""Shared sparse matrices: sympile.shared(a scipy.sparse matrix) (Theano's
sparse.sharedvar)."""

from __future__ import annotations

from typing import Any

import scipy.sparse

from sympile.sparse.type import SparseMethods, SparseTensorType
from sympile.tensor.sharedvar import SharedVariable, shared_constructor

__all__ = ["SparseTensorSharedVariable", "sparse_constructor"]


class SparseTensorSharedVariable(SparseMethods, SharedVariable):
    """A shared CSR or CSC matrix: its operators are those of sparse variables."""


@shared_constructor
def sparse_constructor(value: Any, name: str | None = None, strict: bool = False,
                       allow_downcast: bool | None = None, borrow: bool = False,
                       format: str | None = None, **kwargs: Any):
    """A shared variable of a scipy.sparse matrix (CSR and CSC kept, other formats made
    CSR unless `format` says otherwise); None for anything else."""
    if not scipy.sparse.issparse(value):
        return None
    if kwargs.get("shape") is not None or kwargs.get("broadcastable") is not None:
        raise TypeError("shared: a sparse matrix takes no shape or broadcastable")
    format = format or (value.format if value.format in ("csr", "csc") else "csr")
    type_ = SparseTensorType(format, value.dtype)
    return SparseTensorSharedVariable(type_, value, name=name, strict=strict,
                                      allow_downcast=allow_downcast, borrow=borrow)
