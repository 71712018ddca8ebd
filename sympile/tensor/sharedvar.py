"""Shared tensors and shared(): values that live between calls and that updates change (the
base class is graph/sharedvar.py's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Variable
from sympile.graph.sharedvar import Container, SharedVariable
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import TensorMethods


class TensorSharedVariable(TensorMethods, SharedVariable):
    """A shared tensor: it supports the same operators and methods as any tensor variable."""


# Constructors for other kinds of values (Theano's shared_constructor): each returns a shared
# variable for a value it takes, or None; tried newest first, before the tensor one.
_CONSTRUCTORS: list[Any] = []


def shared_constructor(constructor: Any) -> Any:
    """Register `constructor(value, name, strict, allow_downcast, borrow, **kwargs)`, which
    returns a shared variable for the values it takes and None for the others (Theano's
    theano.compile.shared_constructor); returns it, so it serves as a decorator."""
    _CONSTRUCTORS.insert(0, constructor)
    return constructor


def static_shape(shape: Any, broadcastable: Any, value_shape: tuple[int, ...]) -> tuple:
    """The static shape of a shared variable of a value of `value_shape`, given shared()'s
    `shape` or `broadcastable` (Theano's: True axes have length 1) or neither (all unknown)."""
    if broadcastable is not None:
        if shape is not None:
            raise TypeError("shared: give shape or broadcastable, not both")
        shape = tuple(1 if flag else None for flag in broadcastable)
    static = tuple(shape) if shape is not None else (None,) * len(value_shape)
    if len(static) != len(value_shape):
        raise ValueError(f"shared: shape {shape} does not match the value's shape {value_shape}")
    return static


def shared(value: Any, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None, borrow: bool = False,
           shape: tuple[int | None, ...] | None = None,
           broadcastable: tuple[bool, ...] | None = None,
           target: str | None = None) -> SharedVariable:
    """A shared variable holding `value` (copied unless borrow=True).

    target (Theano's): 'cpu' keeps the value in host memory; a device context ('cuda0')
    puts it there; None: on the GPU that config.device names for float values (sympile.gpu
    registers that constructor), else on the host.

    Its dtype is numpy's for the value; its static shape is unknown in every dimension (so
    set_value may change the shape) unless `shape` is given. broadcastable (Theano's form):
    True axes have static length 1 (they broadcast), the others are unknown.
    """
    for constructor in _CONSTRUCTORS:
        variable = constructor(value, name=name, strict=strict, allow_downcast=allow_downcast,
                               borrow=borrow, shape=shape, broadcastable=broadcastable,
                               target=target)
        if variable is not None:
            return variable
    return tensor_constructor(value, name, strict, allow_downcast, borrow, shape,
                              broadcastable, target)


def tensor_constructor(value: Any, name: str | None = None, strict: bool = False,
                       allow_downcast: bool | None = None, borrow: bool = False,
                       shape: tuple[int | None, ...] | None = None,
                       broadcastable: tuple[bool, ...] | None = None,
                       target: str | None = None) -> TensorSharedVariable:
    """A shared tensor in host memory holding the number or array `value`, whatever
    config.device says (Theano's tensor_constructor, also T._shared); see shared()."""
    if target not in (None, "cpu"):
        raise ValueError(f"shared: target must be 'cpu' or a GPU device context ('cuda0', "
                         f"...), got {target!r}")
    if isinstance(value, Variable):
        raise TypeError(f"shared: {value} is symbolic; give shared() a numpy value")
    try:
        data = np.asarray(value) if not isinstance(value, np.ndarray) else value
    except (TypeError, ValueError) as error:
        raise TypeError(f"shared: cannot make a shared variable of {value!r}: {error}") from None
    if data.dtype.kind not in "biufc":
        raise TypeError(f"shared: values of dtype {data.dtype} are not supported; give a numeric "
                        f"numpy array or Python number")
    type_ = tensor_type(data.dtype, static_shape(shape, broadcastable, data.shape))
    return TensorSharedVariable(type_, data, name=name,
                                strict=strict, allow_downcast=allow_downcast, borrow=borrow)


__all__ = ["SharedVariable", "TensorSharedVariable", "shared", "shared_constructor",
           "static_shape", "tensor_constructor", "Container"]
