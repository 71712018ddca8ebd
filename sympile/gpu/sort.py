"""sort and argsort on the device: the sorted axis moved last and made contiguous, then the
bitonic network of sympile/tensor/sort/sort_cuda.py over the rows, then the sorted values
(sort) or their positions (argsort) copied out with the axis back in place. numpy's order:
NaNs last, ties stable. The sort's derivative (a permutation along the axis) runs on the
host."""

from __future__ import annotations

import math

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.elemwise import copy_into
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.tensor.elemwise.elemwise_cuda import computed_dtype
from sympile.tensor.sort.ops import ArgSortOp, SortOp
from sympile.tensor.sort.sort_cuda import (
    SORTABLE_DTYPES,
    sort_start_kernel,
    sort_step_kernel,
    sort_steps,
)

__all__ = ["GpuSort"]


class GpuSort(GpuWrapper):
    """`op` (SortOp or ArgSortOp) of a device array."""

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        device = runtime(self.context)
        if self.op.axis is None:
            x, axis = device.contiguous(x).reshape((x.size,)), 0
        else:
            axis = self.op.axis
        order = [a for a in range(x.ndim) if a != axis] + [axis]
        moved = device.contiguous(x.transpose(order))
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
        inverse = [order.index(a) for a in range(len(order))]
        output_storage[0][0] = device.contiguous(result.transpose(inverse))


@register_gpu(SortOp)
@register_gpu(ArgSortOp)
def _lift_sort(node: Apply, inputs, context: str):
    if node.inputs[0].type.dtype not in SORTABLE_DTYPES:
        return None
    return [GpuSort(node.op, context)(inputs[0])]
