"""Theano's `theano.misc.safe_asarray`: _asarray (theano._asarray), numpy.asarray whose result
has exactly the dtype asked for."""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.config import config

__all__ = ["asarray_of_dtype"]


def asarray_of_dtype(a: Any, dtype: Any, order: str | None = None) -> np.ndarray:
    """numpy.asarray(a, dtype, order), with the result's dtype object the one `dtype` names
    (Theano wrote it for numpy versions that could return an equivalent but different
    dtype, such as int32 for intc)."""
    dtype = np.dtype(config.floatX if str(dtype) == "floatX" else dtype)
    result = np.asarray(a, dtype=dtype, order=order)
    if result.dtype != dtype:
        raise TypeError(f"theano._asarray: numpy gave dtype {result.dtype} for {dtype}")
    return result


# Theano's name.
_asarray = asarray_of_dtype
