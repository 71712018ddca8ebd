"""cumsum and cumprod on the device: the axis moved last and made contiguous, one thread per
line accumulating in numpy's order (sympile/tensor/extra_ops/cumulative_cuda.py), the axis
put back."""

from __future__ import annotations

import math

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.tensor.extra_ops.cumulative_cuda import CUMULATIVE_DTYPES, cumulative_kernel
from sympile.tensor.extra_ops.ops import CumOp

__all__ = ["GpuCumOp"]


class GpuCumOp(GpuWrapper):
    """`op` (a CumOp) of a device array."""

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        device = runtime(self.context)
        if self.op.axis is None:
            x, axis = device.contiguous(x).reshape((x.size,)), 0
        else:
            axis = self.op.axis
        order = [a for a in range(x.ndim) if a != axis] + [axis]
        moved = device.contiguous(x.transpose(order))
        out_dtype = node.outputs[0].type.dtype
        result = device.empty(moved.shape, out_dtype)
        lines = math.prod(moved.shape[:-1])
        if lines and moved.shape[-1]:
            device.launch(cumulative_kernel(self.op.mode, x.dtype.name, out_dtype), lines,
                          [lines, moved.shape[-1], moved, result])
        inverse = [order.index(a) for a in range(len(order))]
        output_storage[0][0] = device.contiguous(result.transpose(inverse))


@register_gpu(CumOp)
def _lift_cumulative(node: Apply, inputs, context: str):
    if node.inputs[0].type.dtype not in CUMULATIVE_DTYPES:
        return None
    return [GpuCumOp(node.op, context)(inputs[0])]
