"""sort and argsort on the device: the sorted axis moved last and made contiguous, then the
bitonic network of sympile/tensor/sort/sort_cuda.py over the rows, then the sorted values
(sort) or their positions (argsort) copied out with the axis back in place. numpy's order:
NaNs last, ties stable. PermuteAlongAxis (the sort's derivative) gathers or scatters along
the axis the same way, after checking that p is a permutation."""

from __future__ import annotations

import math

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.elemwise import axis_back, axis_last, copy_into
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.tensor.elemwise.elemwise_cuda import computed_dtype
from sympile.tensor.sort.ops import ArgSortOp, PermuteAlongAxis, SortOp
from sympile.tensor.sort.sort_cuda import (
    SORTABLE_DTYPES,
    permute_kernel,
    sort_start_kernel,
    sort_step_kernel,
    sort_steps,
)

__all__ = ["GpuPermuteAlongAxis", "GpuSort"]


class GpuSort(GpuWrapper):
    """`op` (SortOp or ArgSortOp) of a device array."""

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        device = runtime(self.context)
        moved, order = axis_last(device, x, self.op.axis)
        n = moved.shape[-1]
        rows = math.prod(moved.shape[:-1])
        dtype = node.outputs[0].type.dtype
        result = device.empty(moved.shape, dtype)
        if rows and n:
            places = 1 << (n - 1).bit_length()
            keys = device.empty((rows, places), computed_dtype(x.dtype.name))
            position = device.empty((rows, places), "int64")
            device.launch(sort_start_kernel(x.dtype.name), rows * places,
                          [rows * places, n, places, moved, keys, position])
            step = sort_step_kernel(x.dtype.name)
            for k, j in sort_steps(places):
                device.launch(step, rows * places // 2,
                              [rows * places // 2, n, places, k, j, keys, position])
            sorted_part = (keys if isinstance(self.op, SortOp) else position)[:, :n]
            copy_into(self.context, sorted_part.reshape(moved.shape), result)
        output_storage[0][0] = axis_back(device, result, order)


class GpuPermuteAlongAxis(GpuWrapper):
    """`op` (a PermuteAlongAxis) of a device array by a device permutation."""

    device_inputs = 2

    def perform(self, node, inputs, output_storage):
        x, permutation = inputs
        op = self.op
        if tuple(permutation.shape) != tuple(x.shape):
            raise ValueError(f"PermuteAlongAxis: permutation has shape "
                             f"{tuple(permutation.shape)}, x has {tuple(x.shape)}")
        device = runtime(self.context)
        moved, order = axis_last(device, x, op.axis)
        entries, _ = axis_last(device, permutation, op.axis)
        result = device.empty(moved.shape, x.dtype.name)
        total = math.prod(moved.shape)
        if total:
            kernel = permute_kernel(x.dtype.name, permutation.dtype.name)
            seen = device.empty((total,), "int32")
            for stage in (0, 1, 2):
                try:
                    device.launch(kernel, total, [stage, total, moved.shape[-1],
                                                  int(op.inverse), moved, entries, result,
                                                  seen])
                except ValueError as error:
                    raise ValueError(f"PermuteAlongAxis: {error}".replace(
                        "[0, n)", f"[0, {moved.shape[-1]})").replace(
                        "the axis", f"axis {op.axis}")) from None
        output_storage[0][0] = axis_back(device, result, order)


@register_gpu(PermuteAlongAxis)
def _lift_permute(node: Apply, inputs, context: str):
    x, permutation = node.inputs
    if x.type.dtype not in SORTABLE_DTYPES or permutation.type.dtype not in SORTABLE_DTYPES \
            or permutation.type.dtype in ("bool", "float16", "float32", "float64"):
        return None
    return [GpuPermuteAlongAxis(node.op, context)(*inputs)]


@register_gpu(SortOp)
@register_gpu(ArgSortOp)
def _lift_sort(node: Apply, inputs, context: str):
    if node.inputs[0].type.dtype not in SORTABLE_DTYPES:
        return None
    return [GpuSort(node.op, context)(inputs[0])]
