"""Theano's get_canonical_form_slice: a slice of an axis as an increasing slice and a
direction, from symbolic or constant bounds."""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Constant
from sympile.tensor.math import abs as abs_
from sympile.tensor.math import gt, lt, maximum, minimum, switch
from sympile.tensor.variable import as_tensor_variable

__all__ = ["get_canonical_form_slice"]


def _constant(value: Any) -> int | None:
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, Constant) and np.ndim(value.data) == 0:
        return int(value.data)
    return None


def _clip(value: Any, low: Any, high: Any) -> Any:
    return minimum(maximum(value, low), high)


def _wrapped(index: Any, length: Any) -> Any:
    return switch(lt(index, 0), index + length, index)


def _increasing(start: Any, stop: Any, step: Any, length: Any) -> tuple[Any, Any]:
    """(start, stop) of start:stop:step for a step > 0, with 0 <= start <= stop <= length."""
    first = 0 if start is None else _clip(_wrapped(start, length), 0, length)
    last = length if stop is None else _clip(_wrapped(stop, length), 0, length)
    return first, maximum(first, last)


def _decreasing(start: Any, stop: Any, size: Any, length: Any) -> tuple[Any, Any]:
    """(start, stop) of the increasing slice (step `size` > 0) holding the elements of
    start:stop:-size in reverse order, with 0 <= start <= stop <= length."""
    first = length - 1 if start is None else _clip(_wrapped(start, length), -1, length - 1)
    end = -1 if stop is None else _clip(_wrapped(stop, length), -1, length - 1)
    count = switch(gt(first, end), (first - end - 1) // size + 1, 0)
    some = gt(count, 0)
    return switch(some, first - (count - 1) * size, 0), switch(some, first + 1, 0)


def get_canonical_form_slice(theslice: Any, length: Any) -> tuple[Any, Any]:
    """`theslice` of an axis of `length` as (slice(start, stop, step), direction) with
    0 <= start <= stop <= length and step > 0, such that x[theslice] is
    x[start:stop:step][::direction] (direction 1 or -1, a variable when the step's sign is not
    known); an integer index instead gives (the index made non-negative, 1)."""
    if not isinstance(theslice, slice):
        return _wrapped(as_tensor_variable(theslice), length), 1
    step = 1 if theslice.step is None else theslice.step
    known = _constant(step)
    if known == 0:
        raise ValueError("get_canonical_form_slice: slice step cannot be zero")
    if known is not None and known > 0:
        start, stop = _increasing(theslice.start, theslice.stop, step, length)
        return slice(start, stop, step), 1
    size = -known if known is not None else abs_(as_tensor_variable(step))
    backward = _decreasing(theslice.start, theslice.stop, size, length)
    if known is not None:
        return slice(*backward, size), -1
    forward = _increasing(theslice.start, theslice.stop, size, length)
    negative = lt(step, 0)
    return (slice(switch(negative, backward[0], forward[0]),
                  switch(negative, backward[1], forward[1]), size),
            switch(negative, -1, 1))
