"""Theano's `theano.scalar.sharedvar`: shared variables holding a true scalar (a ScalarType
value, not a 0-d tensor), which Theano's scan used for its step counters. shared() makes a
tensor for any number; this constructor is for code that asks for a scalar explicitly."""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.sharedvar import SharedVariable
from sympile.scalar.basic import get_scalar_type

__all__ = ["ScalarSharedVariable", "shared"]


class ScalarSharedVariable(SharedVariable):
    """A shared variable of a ScalarType (tensor_from_scalar makes it a 0-d tensor)."""


def shared(value: Any, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None) -> ScalarSharedVariable:
    """A ScalarSharedVariable holding the number `value`, of its numpy dtype (int64 for a
    Python int, float64 for a float, complex128 for a complex)."""
    if isinstance(value, bool) or not isinstance(value, (np.number, int, float, complex)):
        raise TypeError(f"scalar.sharedvar.shared: expected a number, got {value!r}")
    dtype = np.asarray(value).dtype
    return ScalarSharedVariable(get_scalar_type(dtype), value, name=name, strict=strict,
                                allow_downcast=allow_downcast)
