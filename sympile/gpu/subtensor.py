"""Indexing on the device.

- GpuSubtensor: x[basic index], a view of the device array.
- GpuIncSubtensor: a copy of x with its basic region set to, or incremented by, y (the
  elementwise copy or add kernel writing into the region's view).
- GpuTakeRows: x[index0, index1, ...] for integer arrays on x's first axes, broadcast
  together (an embedding lookup x[index], a pick x[arange(n), y]; rows_take.cu).
- GpuIncRows: x[index0, index1, ...] += y for the same indices with atomic adds, so
  repeated positions add every occurrence (rows_inc.cu; float32/64 and 32/64-bit integers),
  and x[index0, ...] = y, the last of repeated positions winning (rows_set.cu; any dtype
  but complex).
The index's integers and slice bounds stay host values; index arrays move to the device.
"""

from __future__ import annotations

import math

import numpy as np

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.elemwise import element_strides, scalar_kernel_op
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.scalar import basic as scalar
from sympile.tensor.subtensor.index_kinds import ARRAY
from sympile.tensor.subtensor.ops import (
    AdvancedBooleanIncSubtensor,
    AdvancedBooleanSubtensor,
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    apply_numpy_index,
    numpy_index,
)
from sympile.tensor.subtensor.rows_cuda import (
    ATOMIC_DTYPES,
    MAX_INDEXED_AXES,
    inc_rows_kernel,
    set_rows_kernel,
    take_rows_kernel,
)

__all__ = ["GpuIncRows", "GpuIncSubtensor", "GpuSubtensor", "GpuTakeRows"]


class GpuSubtensor(GpuWrapper):
    view_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        x, *index_values = inputs
        index = numpy_index(self.op.idx_list, index_values) + (Ellipsis,)
        output_storage[0][0] = apply_numpy_index(self, x, index)


class GpuIncSubtensor(GpuWrapper):
    device_inputs = 2

    def perform(self, node, inputs, output_storage):
        x, y, *index_values = inputs
        device = runtime(self.context)
        result = device.copy(x)
        index = numpy_index(self.op.idx_list, index_values) + (Ellipsis,)
        region = apply_numpy_index(self, result, index)
        self.op.check_value(node, y, region.shape)
        offset = region.ndim - y.ndim
        y_strides = [0] * offset + element_strides(y, tuple(length == 1 for length in y.shape))
        if self.op.set_instead_of_inc:
            kernel, inputs = scalar_kernel_op(scalar.identity, self.context), [y]
            strides = [y_strides]
        else:
            kernel, inputs = scalar_kernel_op(scalar.add, self.context), [region, y]
            strides = [element_strides(region, (False,) * region.ndim), y_strides]
        kernel.launch(device, region.shape, inputs, strides, [region])
        output_storage[0][0] = result


def _index_error(op: Op, device, kernel, size: int, arguments, lengths) -> None:
    try:
        device.launch(kernel, size, arguments)
    except IndexError as error:
        axis = int(str(error).rpartition(" ")[2])
        raise IndexError(f"{op}: an index entry is out of bounds for axis {axis} with size "
                         f"{lengths[axis]}") from None


def _broadcast_shape(op, indices) -> tuple[int, ...]:
    """The shape the index arrays broadcast to (IndexError as numpy's when they do not)."""
    try:
        return np.broadcast_shapes(*(index.shape for index in indices))
    except ValueError:
        shapes = " ".join(str(index.shape) for index in indices)
        raise IndexError(f"{op}: shape mismatch: indexing arrays could not be broadcast "
                         f"together with shapes {shapes}") from None


def _index_arguments(indices, broadcast: tuple[int, ...]) -> list:
    """Each index array and its strides in the broadcast shape (a 0-d one: one stride 0)."""
    arguments = []
    for index in indices:
        own = element_strides(index, tuple(n == 1 for n in index.shape))
        arguments += [index, *([0] * (len(broadcast) - index.ndim) + own or [0])]
    return arguments


def _geometry(x, broadcast, k: int) -> tuple[tuple[int, ...], list]:
    """(x's inner shape, the kernels' leading arguments after n)."""
    inner_shape = tuple(x.shape[k:])
    return inner_shape, [math.prod(inner_shape), *(broadcast or (1,)), *x.shape[:k],
                         *(inner_shape or (1,))]


class GpuTakeRows(GpuWrapper):
    """x[index0, index1, ...] for integer arrays on x's first axes."""

    device_inputs = None

    def perform(self, node, inputs, output_storage):
        x, *indices = inputs
        device = runtime(self.context)
        broadcast = _broadcast_shape(self, indices)
        k = len(indices)
        inner_shape, geometry = _geometry(x, broadcast, k)
        output = device.empty(broadcast + inner_shape, x.dtype.name)
        size = math.prod(output.shape)
        if size:
            x_strides = element_strides(x, (False,) * x.ndim)
            kernel = take_rows_kernel(x.dtype.name, tuple(i.dtype.name for i in indices),
                                      max(len(broadcast), 1), max(len(inner_shape), 1))
            arguments = [size, *geometry, x, *x_strides[:k], *(x_strides[k:] or [0]),
                         *_index_arguments(indices, broadcast), output]
            _index_error(self, device, kernel, size, arguments, x.shape)
        output_storage[0][0] = output


class GpuIncRows(GpuWrapper):
    """x[index0, index1, ...] += y for integer arrays on x's first axes (numpy.add.at), or
    with the op's set_instead_of_inc = y, the last of repeated positions winning (numpy's
    assignment)."""

    device_inputs = None

    def perform(self, node, inputs, output_storage):
        x, y, *indices = inputs
        device = runtime(self.context)
        broadcast = _broadcast_shape(self, indices)
        k = len(indices)
        inner_shape, geometry = _geometry(x, broadcast, k)
        region = broadcast + inner_shape
        self.op.check_value(node, y, region)
        result = device.copy(x)
        size = math.prod(region)
        if size:
            out_strides = element_strides(result, (False,) * result.ndim)
            y_strides = [0] * (len(region) - y.ndim) + element_strides(
                y, tuple(n == 1 for n in y.shape))
            dimensions = (x.dtype.name, tuple(i.dtype.name for i in indices),
                          max(len(broadcast), 1), max(len(inner_shape), 1))
            arguments = [*geometry, result, *out_strides[:k], *(out_strides[k:] or [0]),
                         *_index_arguments(indices, broadcast), y,
                         *(y_strides[:len(broadcast)] or [0]),
                         *(y_strides[len(broadcast):] or [0])]
            if not self.op.set_instead_of_inc:
                _index_error(self, device, inc_rows_kernel(*dimensions), size,
                             [size, *arguments], x.shape)
            else:
                kernel = set_rows_kernel(*dimensions)
                rows = math.prod(x.shape[:k])
                winner = device.empty((rows,), "int64")
                for stage, count in ((0, rows), (1, math.prod(broadcast)), (2, size)):
                    _index_error(self, device, kernel, count,
                                 [stage, count, *arguments, winner], x.shape)
        output_storage[0][0] = result


def _host_index(node: Apply, first: int):
    return node.inputs[first:]


@register_gpu(Subtensor, computes=False)
def _lift_subtensor(node: Apply, inputs, context: str):
    return [GpuSubtensor(node.op, context)(inputs[0], *_host_index(node, 1))]


@register_gpu(IncSubtensor)
def _lift_inc_subtensor(node: Apply, inputs, context: str):
    return [GpuIncSubtensor(node.op, context)(inputs[0], inputs[1], *_host_index(node, 2))]


_INDEX_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


def _leading_arrays(node: Apply, first: int) -> bool:
    """The index (inputs from `first` on) is integer arrays on x's first axes
    (x[index0, index1, ...])."""
    idx_list = node.op.idx_list
    return (0 < len(idx_list) <= MAX_INDEXED_AXES and all(kind == ARRAY for kind in idx_list)
            and all(v.type.dtype in _INDEX_DTYPES for v in node.inputs[first:]))


@register_gpu(AdvancedSubtensor)
@register_gpu(AdvancedSubtensor1)
@register_gpu(AdvancedBooleanSubtensor)
def _lift_take_rows(node: Apply, inputs, context: str):
    if not _leading_arrays(node, 1) or node.inputs[0].type.dtype.startswith("complex"):
        return None
    return [GpuTakeRows(node.op, context)(*inputs)]


@register_gpu(AdvancedIncSubtensor)
@register_gpu(AdvancedIncSubtensor1)
@register_gpu(AdvancedBooleanIncSubtensor)
def _lift_inc_rows(node: Apply, inputs, context: str):
    op = node.op
    dtype = node.inputs[0].type.dtype
    if not _leading_arrays(node, 2) or (op.ignore_duplicates and not op.set_instead_of_inc) \
            or (dtype not in ATOMIC_DTYPES if not op.set_instead_of_inc
                else dtype.startswith("complex")):
        return None
    return [GpuIncRows(op, context)(*inputs)]
