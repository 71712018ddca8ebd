"""Elemwise (a scalar Op lifted to broadcasting tensors) and DimShuffle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant
from sympile.graph.op import Op
from sympile.scalar.basic import ScalarOp
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable, constant, is_python_scalar

__all__ = ["Elemwise", "DimShuffle", "broadcast_static_shape"]


def broadcast_static_shape(shapes: Sequence[tuple], op: Any = "broadcast") -> tuple:
    """numpy broadcasting of static shapes (None = unknown); ValueError if they conflict."""
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    result = []
    for axis in range(ndim):
        sizes = {s[axis] for s in padded}
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            raise ValueError(f"{op}: shapes {', '.join(map(str, shapes))} cannot be broadcast "
                             f"together (axis {axis} has lengths {sorted(known)})")
        if known:
            result.append(known.pop())
        elif sizes == {1}:
            result.append(1)
        else:
            result.append(None)
    return tuple(result)


def _weak_scalar_dtype(value: Any, tensor_dtypes: list[str]) -> str | None:
    """dtype for a Python scalar operand, as numpy 2 treats it: it takes the kind-aware
    promotion with the tensor operands (float32 array + 1.5 stays float32) when the value
    fits. None when there is no tensor operand (the value then takes its default dtype)."""
    if not tensor_dtypes:
        return None
    dtype = np.result_type(*tensor_dtypes, value)
    if dtype.kind in "iu" and not isinstance(value, bool):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            # numpy raises OverflowError here; we widen as Theano did (int8 + 1000 -> int16).
            dtype = np.result_type(*tensor_dtypes, np.min_scalar_type(value))
    return dtype.name


class Elemwise(Op):
    """Applies `scalar_op` elementwise with numpy broadcasting.

    Inputs of lower rank are padded on the left with broadcastable dimensions. A dimension of
    unknown length is never broadcast at run time: to broadcast a length-1 dimension it must
    be known to be 1 (row, col, dimshuffle('x', ...), specify_shape), so that gradients can be
    summed back over exactly the broadcast dimensions (as in Theano and PyTensor).

    inplace_pattern: ((output index, input index), ...): outputs written over inputs.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: tuple[tuple[int, int], ...] = (),
                 name: str | None = None):
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(inplace_pattern)
        self.name = name
        self.destroy_map = {out: [inp] for out, inp in self.inplace_pattern}

    def __str__(self):
        text = self.name or str(self.scalar_op)
        if self.inplace_pattern:
            text += "_inplace"
        return text

    def make_node(self, *inputs):
        nin = self.scalar_op.nin
        if len(inputs) != nin:
            raise TypeError(f"{self}: expected {nin} input{'s' * (nin != 1)}, got {len(inputs)}")
        tensor_dtypes = [as_tensor_variable(x, op=self).type.dtype
                         for x in inputs if not is_python_scalar(x)]
        variables = []
        for index, value in enumerate(inputs):
            if is_python_scalar(value):
                dtype = _weak_scalar_dtype(value, tensor_dtypes)
                variables.append(as_tensor_variable(value, dtype=dtype, op=self))
            else:
                variables.append(as_tensor_variable(value, op=self, argument=index))
        ndim = max(v.type.ndim for v in variables)
        aligned = [_pad_left(v, ndim) for v in variables]
        shape = broadcast_static_shape([v.type.shape for v in aligned], op=self)
        dtypes = self.scalar_op.output_dtypes(*(v.type.dtype for v in aligned))
        for out_index, in_index in self.inplace_pattern:
            in_type = aligned[in_index].type
            if in_type.dtype != dtypes[out_index] or in_type.shape != shape:
                raise TypeError(f"{self}: output {out_index} cannot be written over input "
                                f"{in_index} of type {in_type}")
        outputs = [tensor_type(dtype, shape)() for dtype in dtypes]
        return Apply(self, aligned, outputs)

    def perform(self, node, inputs, output_storage):
        _check_runtime_broadcast(self, node, inputs)
        with np.errstate(all="ignore"):
            results = self.scalar_op.impl(*inputs)
        if len(node.outputs) == 1:
            results = (results,)
        for storage, result, variable in zip(output_storage, results, node.outputs):
            result = np.asarray(result)
            if result.dtype.name != variable.type.dtype:
                result = result.astype(variable.type.dtype)
            storage[0] = result
        for out_index, in_index in self.inplace_pattern:
            target = inputs[in_index]
            target[...] = output_storage[out_index][0]
            output_storage[out_index][0] = target

    def infer_shape(self, fgraph, node, input_shapes):
        shape = []
        for axis in range(node.outputs[0].type.ndim):
            for variable, input_shape in zip(node.inputs, input_shapes):
                if variable.type.shape[axis] != 1:
                    shape.append(input_shape[axis])
                    break
            else:
                shape.append(1)
        return [tuple(shape)] * len(node.outputs)


def _pad_left(variable, ndim: int):
    """`variable` with broadcastable axes added in front up to `ndim` dimensions."""
    missing = ndim - variable.type.ndim
    if missing == 0:
        return variable
    if isinstance(variable, Constant):
        return constant(variable.data.reshape((1,) * missing + variable.data.shape))
    return DimShuffle(variable.type.ndim, ("x",) * missing + tuple(range(variable.type.ndim)))(
        variable)


def _check_runtime_broadcast(op: Elemwise, node: Apply, inputs: Sequence[np.ndarray]) -> None:
    ndim = node.outputs[0].type.ndim
    for axis in range(ndim):
        length = None
        for variable, value in zip(node.inputs, inputs):
            if variable.type.shape[axis] == 1:
                continue
            size = value.shape[axis]
            if length is None:
                length = size
            elif size != length:
                shapes = ", ".join(str(np.shape(v)) for v in inputs)
                if 1 in (size, length):
                    raise ValueError(
                        f"{op}: input shapes {shapes} differ at axis {axis}, where one input "
                        f"has length 1 at run time but its type does not say the axis is "
                        f"broadcastable; declare it (row/col, dimshuffle('x', ...), "
                        f"specify_shape or a static shape) to broadcast it")
                raise ValueError(f"{op}: input shapes {shapes} cannot be broadcast together "
                                 f"(axis {axis} has lengths {length} and {size})")


class DimShuffle(Op):
    """Reorder, insert ('x': a new axis of length 1) and drop (length-1 only) dimensions.

    new_order: for each output axis, the input axis it takes or 'x'. Returns a view.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order: Sequence[int | str]):
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(new_order)
        kept = [axis for axis in self.new_order if axis != "x"]
        for axis in self.new_order:
            if axis != "x" and not (isinstance(axis, (int, np.integer))
                                    and 0 <= axis < self.input_ndim):
                raise ValueError(f"DimShuffle: {axis!r} in pattern {self.new_order} is neither "
                                 f"'x' nor an axis of a {self.input_ndim}-d input")
        if len(set(kept)) != len(kept):
            raise ValueError(f"DimShuffle: pattern {self.new_order} repeats an axis")
        self.drop = tuple(a for a in range(self.input_ndim) if a not in kept)
        self.shuffle = tuple(kept)
        self.augment = tuple(i for i, a in enumerate(self.new_order) if a == "x")

    def __str__(self):
        return f"DimShuffle{{{','.join(str(a) for a in self.new_order)}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        if x.type.ndim != self.input_ndim:
            raise TypeError(f"{self}: expected a {self.input_ndim}-d input, got {x.type}")
        for axis in self.drop:
            if x.type.shape[axis] != 1:
                raise ValueError(f"{self}: cannot drop axis {axis} of {x.type}: only axes of "
                                 f"length 1 (broadcastable) can be dropped")
        shape = tuple(1 if a == "x" else x.type.shape[a] for a in self.new_order)
        return Apply(self, [x], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        result = x.transpose(self.shuffle + self.drop)
        shape = [1 if a == "x" else x.shape[a] for a in self.new_order]
        output_storage[0][0] = result.reshape(shape)

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        return [tuple(1 if a == "x" else shape[a] for a in self.new_order)]


def is_elemwise_of(variable: Any, scalar_op: ScalarOp) -> bool:
    """True if `variable` is computed by Elemwise(scalar_op)."""
    owner = getattr(variable, "owner", None)
    return owner is not None and isinstance(owner.op, Elemwise) \
        and owner.op.scalar_op == scalar_op

