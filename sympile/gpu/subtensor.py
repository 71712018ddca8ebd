"""Indexing on the device.

- GpuSubtensor: x[basic index], a view of the device array.
- GpuIncSubtensor: a copy of x with its basic region set to, or incremented by, y (the
  elementwise copy or add kernel writing into the region's view).
- GpuTakeRows: x[index0, index1, ...] for integer arrays on x's first axes, broadcast
  together (an embedding lookup x[index], a pick x[arange(n), y]; rows_take.cu).
- GpuIncRows: x[index] += y for an integer vector on axis 0 with atomic adds, so repeated
  entries add every occurrence (rows_inc.cu; float32/64 and 32/64-bit integers).
The index's integers and slice bounds stay host values; index arrays move to the device.
"""

from __future__ import annotations

import math

import numpy as np

from sympile.gpu.basic import GpuArrayType, GpuWrapper, check_context
from sympile.gpu.elemwise import GpuElemwise, element_strides
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.scalar import basic as scalar
from sympile.tensor.elemwise import Elemwise
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
            kernel, inputs = GpuElemwise(Elemwise(scalar.identity), self.context), [y]
            strides = [y_strides]
        else:
            kernel, inputs = GpuElemwise(Elemwise(scalar.add), self.context), [region, y]
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


class GpuTakeRows(GpuWrapper):
    """x[index0, index1, ...] for integer arrays on x's first axes."""

    device_inputs = None

    def perform(self, node, inputs, output_storage):
        x, *indices = inputs
        device = runtime(self.context)
        try:
            broadcast = np.broadcast_shapes(*(index.shape for index in indices))
        except ValueError:
            shapes = " ".join(str(index.shape) for index in indices)
            raise IndexError(f"{self}: shape mismatch: indexing arrays could not be broadcast "
                             f"together with shapes {shapes}") from None
        k = len(indices)
        inner_shape = x.shape[k:]
        output = device.empty(broadcast + inner_shape, x.dtype.name)
        size = math.prod(output.shape)
        if size:
            x_strides = element_strides(x, (False,) * x.ndim)
            kernel = take_rows_kernel(x.dtype.name, tuple(i.dtype.name for i in indices),
                                      max(len(broadcast), 1), max(len(inner_shape), 1))
            arguments = [size, math.prod(inner_shape), *(broadcast or (1,)), *x.shape[:k],
                         *(inner_shape or (1,)), x, *x_strides[:k], *(x_strides[k:] or [0])]
            for index in indices:
                # The index's strides in the broadcast shape (a 0-d one: one stride of 0).
                own = element_strides(index, tuple(n == 1 for n in index.shape))
                arguments += [index, *([0] * (len(broadcast) - index.ndim) + own or [0])]
            _index_error(self, device, kernel, size, [*arguments, output], x.shape)
        output_storage[0][0] = output


class GpuIncRows(GpuWrapper):
    """x[index] += y for an integer vector index on axis 0 (numpy.add.at)."""

    device_inputs = 3

    def make_node(self, x, y, index):
        check_context(self, [x, y, index], self.context)
        host = self.op.make_node(x.type.host_type(), y.type.host_type(),
                                 index.type.host_type())
        return Apply(self, [x, y, index], [GpuArrayType.of(host.outputs[0].type, self.context)()])

    def perform(self, node, inputs, output_storage):
        x, y, index = inputs
        device = runtime(self.context)
        region = (index.shape[0],) + x.shape[1:]
        self.op.check_value(node, y, region)
        result = device.copy(x)
        size = math.prod(region)
        if size:
            inner_shape = x.shape[1:] or (1,)
            offset = len(region) - y.ndim
            y_strides = [0] * offset + element_strides(y, tuple(n == 1 for n in y.shape))
            out_strides = element_strides(result, (False,) * result.ndim)
            kernel = inc_rows_kernel(x.dtype.name, index.dtype.name, len(inner_shape))
            arguments = [size, math.prod(inner_shape), x.shape[0], *inner_shape, result,
                         out_strides[0], *(out_strides[1:] or [0]), index,
                         element_strides(index, (False,))[0], y, y_strides[0],
                         *(y_strides[1:] or [0])]
            _index_error(self, device, kernel, size, arguments, x.shape)
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


def _rows_index(node: Apply, first: int) -> bool:
    """The index is one integer array on axis 0 (x[index])."""
    return node.op.idx_list == (ARRAY,) and node.inputs[first].type.dtype in _INDEX_DTYPES


def _leading_arrays(node: Apply) -> bool:
    """The index is integer arrays on x's first axes (x[index0, index1, ...])."""
    idx_list = node.op.idx_list
    return (0 < len(idx_list) <= MAX_INDEXED_AXES and all(kind == ARRAY for kind in idx_list)
            and all(v.type.dtype in _INDEX_DTYPES for v in node.inputs[1:]))


@register_gpu(AdvancedSubtensor)
@register_gpu(AdvancedSubtensor1)
@register_gpu(AdvancedBooleanSubtensor)
def _lift_take_rows(node: Apply, inputs, context: str):
    if not _leading_arrays(node) or node.inputs[0].type.dtype.startswith("complex"):
        return None
    return [GpuTakeRows(node.op, context)(*inputs)]


@register_gpu(AdvancedIncSubtensor)
@register_gpu(AdvancedIncSubtensor1)
@register_gpu(AdvancedBooleanIncSubtensor)
def _lift_inc_rows(node: Apply, inputs, context: str):
    op = node.op
    if not _rows_index(node, 2) or op.set_instead_of_inc or op.ignore_duplicates \
            or node.inputs[2].type.ndim != 1 or node.inputs[0].type.dtype not in ATOMIC_DTYPES:
        return None
    return [GpuIncRows(op, context)(*inputs)]
