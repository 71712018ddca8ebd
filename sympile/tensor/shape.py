"""Shape ops: shape, shape_i, specify_shape, reshape, flatten, squeeze, expand_dims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.op import Op
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Shape", "ShapeI", "SpecifyShape", "shape", "shape_i", "specify_shape"]


class Shape(Op):
    """shape(x): the int64 vector of x's dimensions."""

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        return Apply(self, [x], [tensor_type("int64", (x.type.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [(node.inputs[0].type.ndim,)]


class ShapeI(Op):
    """shape_i(x, i): the length of axis i of x, an int64 scalar."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def __str__(self):
        return f"Shape_i{{{self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        if not 0 <= self.axis < x.type.ndim:
            raise ValueError(f"{self}: {x} has {x.type.ndim} dimensions, no axis {self.axis}")
        return Apply(self, [x], [tensor_type("int64", ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.axis], dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


_shape = Shape()


def shape(x: Any) -> Variable:
    """The shape of x, as a symbolic int64 vector (x.shape)."""
    return _shape(as_tensor_variable(x, op="shape"))


def shape_i(x: Any, axis: int) -> Variable:
    """The length of axis `axis` of x: a constant if x's type knows it, else a symbolic int64
    scalar."""
    x = as_tensor_variable(x, op="shape_i")
    if -x.type.ndim <= axis < 0:
        axis += x.type.ndim
    static = x.type.shape[axis] if 0 <= axis < x.type.ndim else None
    if static is not None:
        return as_tensor_variable(np.int64(static))
    return ShapeI(axis)(x)


class SpecifyShape(Op):
    """specify_shape(x, shape): x, checked at run time to have `shape` (None entries: any
    length); its type then knows the given lengths."""

    view_map = {0: [0]}

    def make_node(self, x, *lengths):
        x = as_tensor_variable(x, op=self)
        if len(lengths) != x.type.ndim:
            raise ValueError(f"{self}: {x} has {x.type.ndim} dimensions, but a shape of "
                             f"{len(lengths)} entries was given")
        inputs = [x]
        static = []
        for axis, length in enumerate(lengths):
            if length is None:
                inputs.append(_NONE_LENGTH)
                static.append(None)
                continue
            length = as_tensor_variable(length, op=self, argument=f"shape[{axis}]")
            if length.type.ndim != 0 or length.type.dtype[:3] not in ("int", "uin"):
                raise TypeError(f"{self}: shape entry {axis} must be an integer scalar, got "
                                f"{length.type}")
            inputs.append(length)
            static.append(int(length.data) if isinstance(length, Constant) else None)
        merged = []
        for axis, (known, given) in enumerate(zip(x.type.shape, static)):
            if known is not None and given is not None and known != given:
                raise ValueError(f"{self}: axis {axis} of {x} has length {known}, not {given}")
            merged.append(known if given is None else given)
        return Apply(self, inputs, [tensor_type(x.type.dtype, merged)()])

    def perform(self, node, inputs, output_storage):
        x, *lengths = inputs
        for axis, length in enumerate(lengths):
            if length.ndim == 0 and int(length) >= 0 and x.shape[axis] != int(length):
                expected = tuple("?" if np.asarray(n) < 0 else int(n) for n in lengths)
                raise ValueError(f"specify_shape: expected shape {expected}, got {x.shape}")
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        return [tuple(x_shape[axis] if _is_none_length(length) else length
                      for axis, length in enumerate(node.inputs[1:]))]


# An unspecified length in specify_shape: the constant -1 (lengths are never negative).
_NONE_LENGTH = as_tensor_variable(np.int64(-1))


def _is_none_length(variable: Variable) -> bool:
    return isinstance(variable, Constant) and int(variable.data) == -1


_specify_shape = SpecifyShape()


def specify_shape(x: Any, shape: Sequence[Any]) -> Variable:
    """x with its shape declared (and checked at run time); entries may be None."""
    x = as_tensor_variable(x, op="specify_shape")
    if isinstance(shape, Variable):
        raise TypeError("specify_shape: give the shape as a tuple of lengths, not a symbolic "
                        "vector")
    return _specify_shape(x, *shape)
