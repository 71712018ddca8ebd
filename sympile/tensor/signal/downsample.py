"""Theano 0.7-0.9's `theano.tensor.signal.downsample`, which libraries of that time still
import: max_pool_2d, pool.pool_2d under its old signature, with one DeprecationWarning per
process. As in those versions, ignore_border=None means False (a partial window at the
border is pooled too); pool.pool_2d's default is True."""

from __future__ import annotations

import warnings
from typing import Any

from sympile.graph.basic import Variable
from sympile.tensor.signal.pool import pool_2d

__all__ = ["max_pool_2d"]

_warned: list[bool] = []


def max_pool_2d(input: Any, ds: Any, ignore_border: bool | None = None, st: Any = None,
                padding: Any = (0, 0), mode: str = "max") -> Variable:
    """Theano's downsample.max_pool_2d(input, ds, ignore_border, st, padding, mode)."""
    if not _warned:
        _warned.append(True)
        warnings.warn("theano.tensor.signal.downsample.max_pool_2d is Theano 0.7-0.9's name: "
                      "use sympile.tensor.signal.pool.pool_2d (ws=, stride=, pad=; its "
                      "ignore_border defaults to True)", DeprecationWarning, stacklevel=2)
    return pool_2d(input, ws=ds, ignore_border=bool(ignore_border), stride=st, pad=padding,
                   mode=mode)
