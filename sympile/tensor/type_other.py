"""Theano's `theano.tensor.type_other`: NoneTypeT, the Type whose one value is None, and
NoneConst, its constant, which stands for an absent argument where an op takes variables
(an axis of None: `max_and_argmax(x, NoneConst)` reduces every axis)."""

from __future__ import annotations

from typing import Any

from sympile.graph.basic import Constant
from sympile.graph.type import Type

__all__ = ["NoneTypeT", "NoneConst", "none_type_t"]


class NoneTypeT(Type):
    """The Type of None."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        if value is not None:
            raise TypeError(f"NoneTypeT: expected None, got {value!r}")
        return None


none_type_t = NoneTypeT()
NoneConst = Constant(none_type_t, None, name="NoneConst")
