"""Elemwise, DimShuffle and Alloc on the device, and the shape ops of device arrays.

GpuElemwise launches the kernel of sympile/tensor/elemwise/elemwise_cuda.py: it checks the
broadcast as Elemwise does, allocates the outputs (C-contiguous), gives each operand its
strides in elements (0 along the axes its type broadcasts), merges the axes every operand's
strides allow (a contiguous operation runs the 1-d kernel) and launches over the output's
elements. GpuDimShuffle is a view (transpose and reshape of the device array). The shape ops
(Shape, Shape_i) read a device array's shape without moving it: their outputs stay on the
host.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sympile.gpu.basic import GpuArrayType, GpuWrapper, check_context, kernel_cache
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.scalar import basic as scalar
from sympile.scalar.composite import Composite
from sympile.tensor.basic.ops import Alloc, checked_alloc_shape
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, elemwise_cuda_kernel
from sympile.tensor.elemwise.ops import check_runtime_broadcast
from sympile.tensor.shape.ops import Shape, ShapeI

__all__ = ["GpuAlloc", "GpuDimShuffle", "GpuElemwise", "GpuShapeOp", "axis_back", "axis_last",
           "broadcast_operands", "collapse_axes", "copy_into", "element_strides", "elemwise_of",
           "scalar_kernel_op"]


def elemwise_of(dtypes: Sequence[str], build: Callable[..., Any]) -> Elemwise:
    """Elemwise of the scalar graph build(*scalars), one scalar of each of `dtypes`: the
    elementwise step a GPU implementation composes (alpha * p + beta * z, ...)."""
    scalars = [scalar.get_scalar_type(d)() for d in dtypes]
    return Elemwise(Composite(scalars, [build(*scalars)]))


def collapse_axes(shape: tuple[int, ...], strides: list[list[int]]
                  ) -> tuple[list[int], list[list[int]]]:
    """(shape, each operand's strides) with length-1 axes dropped and neighbouring axes
    merged where every operand steps from one to the next as over one axis; at least one
    axis is left."""
    kept = [axis for axis, length in enumerate(shape) if length != 1]
    if not kept:
        return [1], [[0] for _ in strides]
    merged_shape = [shape[kept[0]]]
    merged = [[operand[kept[0]]] for operand in strides]
    for axis in kept[1:]:
        if all(m[-1] == operand[axis] * shape[axis] for m, operand in zip(merged, strides)):
            merged_shape[-1] *= shape[axis]
            for m, operand in zip(merged, strides):
                m[-1] = operand[axis]
        else:
            merged_shape.append(shape[axis])
            for m, operand in zip(merged, strides):
                m.append(operand[axis])
    return merged_shape, merged


def element_strides(value, broadcast: tuple[bool, ...]) -> list[int]:
    """The strides of a device array in elements, 0 along the axes it broadcasts."""
    itemsize = value.dtype.itemsize
    return [0 if flag else stride // itemsize for stride, flag in zip(value.strides, broadcast)]


def broadcast_operands(elemwise: Elemwise, variables, values) -> tuple[tuple[int, ...],
                                                                       list[list[int]]]:
    """(the broadcast shape, each value's element strides) of the inputs of an elementwise
    computation, checked as Elemwise checks them: each axis has the length of the inputs
    whose type does not broadcast it."""
    check_runtime_broadcast(elemwise, variables, values)
    ndim = variables[0].type.ndim if variables else 0
    shape = tuple(next((value.shape[axis] for value, variable in zip(values, variables)
                        if variable.type.shape[axis] != 1), 1) for axis in range(ndim))
    return shape, [element_strides(value, variable.type.broadcastable)
                   for value, variable in zip(values, variables)]


class GpuElemwise(Op):
    """`elemwise` (an Elemwise op without inplace pattern) on device arrays of `context`."""

    __props__ = ("elemwise", "context")

    def __init__(self, elemwise: Elemwise, context: str):
        self.elemwise = elemwise
        self.context = context

    def __str__(self):
        return f"GpuElemwise{{{self.elemwise}}}<{self.context}>"

    def make_node(self, *inputs):
        check_context(self, inputs, self.context)
        host = self.elemwise.make_node(*[v.type.host_type() for v in inputs])
        return Apply(self, list(inputs),
                     [GpuArrayType.of(v.type, self.context)() for v in host.outputs])

    @kernel_cache
    def kernel(self, input_dtypes: tuple[Any, ...], output_dtypes: tuple[Any, ...],
               ndim: int) -> CudaKernel | None:
        """The kernel for these dtypes (names or numpy dtypes) over `ndim` axes."""
        return elemwise_cuda_kernel(self.elemwise.scalar_op,
                                    [np.dtype(d).name for d in input_dtypes],
                                    [np.dtype(d).name for d in output_dtypes], ndim)

    def perform(self, node, inputs, output_storage):
        device = runtime(self.context)
        shape, strides = broadcast_operands(self.elemwise, node.inputs, inputs)
        outputs = [device.empty(shape, v.type.dtype) for v in node.outputs]
        self.launch(device, shape, inputs, strides, outputs)
        for storage, value in zip(output_storage, outputs):
            storage[0] = value

    def launch(self, device, shape: tuple[int, ...], inputs, input_strides, outputs) -> None:
        """The kernel over `shape` from the inputs (with their element strides, 0 where
        they broadcast) into the device arrays `outputs` (any strides, views included)."""
        size = math.prod(shape)
        if not size:
            return
        strides = [*input_strides, *(element_strides(value, (False,) * len(shape))
                                     for value in outputs)]
        merged_shape, merged = collapse_axes(shape, strides)
        kernel = self.kernel(tuple(v.dtype for v in inputs), tuple(v.dtype for v in outputs),
                             len(merged_shape))
        arguments = [size, *merged_shape]
        for value, operand_strides in zip([*inputs, *outputs], merged):
            arguments += [value, *operand_strides]
        device.launch(kernel, size, arguments)

    def infer_shape(self, fgraph, node, input_shapes):
        return self.elemwise.infer_shape(fgraph, node, input_shapes)


def axis_last(device, value, axis: int | None) -> tuple[Any, list[int]]:
    """(value with `axis` moved last, C-contiguous; the order of axes it was moved by): a
    device array whose lines along `axis` are the rows of a (lines x n) array. axis None:
    the flattened value (numpy's axis=None)."""
    if axis is None:
        value, axis = device.contiguous(value).reshape((value.size,)), 0
    order = [a for a in range(value.ndim) if a != axis] + [axis]
    return device.contiguous(value.transpose(order)), order


def axis_back(device, value, order: list[int]):
    """axis_last's result put back in the original order of axes, C-contiguous."""
    return device.contiguous(value.transpose([order.index(a) for a in range(len(order))]))


@functools.cache
def scalar_kernel_op(scalar_op: Any, context: str) -> GpuElemwise:
    """The GpuElemwise of one scalar op, made once: ops that launch a copy or an add inside
    their perform reuse it, and with it the kernels it keeps (kernel_cache is per op)."""
    return GpuElemwise(Elemwise(scalar_op), context)


def copy_into(context: str, source, target) -> None:
    """target[...] = source (device arrays of one shape, any strides), converted to target's
    dtype, by the elementwise copy kernel."""
    dtype = target.dtype.name
    op = scalar.identity if source.dtype.name == dtype else scalar.cast_op(dtype)
    scalar_kernel_op(op, context).launch(
        runtime(context), tuple(source.shape), [source],
        [element_strides(source, (False,) * source.ndim)], [target])


class GpuDimShuffle(GpuWrapper):
    """`op` (a DimShuffle) of a device array: the host op's perform, a view (a transpose
    and a reshape of the device array)."""


class GpuShapeOp(Op):
    """A shape op (`op`: Shape or Shape_i) of a device array: its perform reads only the
    array's shape, and its output is a host tensor."""

    __props__ = ("op",)

    def __init__(self, op: Op):
        self.op = op

    def __str__(self):
        return f"Gpu{self.op}"

    def make_node(self, x):
        host = self.op.make_node(x.type.host_type())
        return Apply(self, [x], [v.type() for v in host.outputs])

    def perform(self, node, inputs, output_storage):
        self.op.perform(node, inputs, output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        return self.op.infer_shape(fgraph, node, input_shapes)


class GpuAlloc(GpuWrapper):
    """`op` (an Alloc) of a device value: a new array of the requested shape (host lengths)
    filled by broadcasting the value, through the elementwise copy kernel."""

    def __init__(self, op: Alloc, context: str):
        super().__init__(op, context)
        self.copy = scalar_kernel_op(scalar.identity, context)

    def perform(self, node, inputs, output_storage):
        value, *lengths = inputs
        shape = checked_alloc_shape(self, node, value.shape, lengths)
        device = runtime(self.context)
        dtype = node.outputs[0].type.dtype
        output = device.empty(shape, dtype)
        offset = len(shape) - value.ndim
        value_strides = [0] * offset + element_strides(value, tuple(length == 1 for length
                                                                    in value.shape))
        self.copy.launch(device, shape, [value], [value_strides], [output])
        output_storage[0][0] = output


@register_gpu(Alloc)
def _lift_alloc(node: Apply, inputs, context: str):
    gpu_op = GpuAlloc(node.op, context)
    dtypes = ((node.inputs[0].type.dtype,), (node.outputs[0].type.dtype,))
    if gpu_op.copy.kernel(*dtypes, max(node.outputs[0].type.ndim, 1)) is None:
        return None
    # The lengths stay the host's values (the node's own inputs).
    return [gpu_op(inputs[0], *node.inputs[1:])]


@register_gpu(Elemwise)
def _lift_elemwise(node: Apply, inputs, context: str):
    op = node.op
    if op.inplace_pattern:
        return None
    dtypes = (tuple(v.type.dtype for v in node.inputs), tuple(v.type.dtype for v in node.outputs))
    gpu_op = GpuElemwise(op, context)
    if gpu_op.kernel(*dtypes, max(node.outputs[0].type.ndim, 1)) is None:
        return None
    return gpu_op.make_node(*inputs).outputs


@register_gpu(DimShuffle, computes=False)
def _lift_dimshuffle(node: Apply, inputs, context: str):
    return [GpuDimShuffle(node.op, context)(inputs[0])]


@register_gpu(Shape, computes=False)
@register_gpu(ShapeI, computes=False)
def _lift_shape(node: Apply, inputs, context: str):
    return [GpuShapeOp(node.op)(inputs[0])]
