"""cumsum and cumprod on the device: the axis moved last and made contiguous, one thread per
line accumulating in numpy's order (sympile/tensor/extra_ops/cumulative_cuda.py), the axis
put back; repeat (numpy.repeat) as rows taken along the axis."""

from __future__ import annotations

import math

import numpy as np

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.elemwise import axis_back, axis_last, element_strides
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.tensor.extra_ops.cumulative_cuda import CUMULATIVE_DTYPES, cumulative_kernel
from sympile.tensor.extra_ops.ops import CumOp, Repeat
from sympile.tensor.subtensor.rows_cuda import take_rows_kernel

__all__ = ["GpuCumOp", "GpuRepeat"]


class GpuCumOp(GpuWrapper):
    """`op` (a CumOp) of a device array."""

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        device = runtime(self.context)
        moved, order = axis_last(device, x, self.op.axis)
        out_dtype = node.outputs[0].type.dtype
        result = device.empty(moved.shape, out_dtype)
        lines = math.prod(moved.shape[:-1])
        if lines and moved.shape[-1]:
            device.launch(cumulative_kernel(self.op.mode, x.dtype.name, out_dtype), lines,
                          [lines, moved.shape[-1], moved, result])
        output_storage[0][0] = axis_back(device, result, order)


@register_gpu(CumOp)
def _lift_cumulative(node: Apply, inputs, context: str):
    if node.inputs[0].type.dtype not in CUMULATIVE_DTYPES:
        return None
    return [GpuCumOp(node.op, context)(inputs[0])]


class GpuRepeat(GpuWrapper):
    """`op` (a Repeat) of a device array by host repeats: the source of each output position
    along the axis (numpy.repeat of the positions, on the host, moved to the device once
    for each new length and repeats, so that a captured step needs no transfer), then the
    rows taken by the take kernel."""

    @staticmethod
    def _sources(device, length: int, repeats):
        """The device array of numpy.repeat(arange(length), repeats)."""
        repeats = np.asarray(repeats, dtype=np.int64)
        return device.constant(
            ("repeat", length, repeats.shape, repeats.tobytes()),
            lambda: np.repeat(np.arange(length, dtype=np.int64), repeats))

    def perform(self, node, inputs, output_storage):
        x, repeats = inputs
        device = runtime(self.context)
        if self.op.axis is None:
            x, axis = device.contiguous(x).reshape((x.size,)), 0
        else:
            axis = self.op.axis
        self.op.check_repeats(node, x.shape[axis], repeats)
        sources = self._sources(device, x.shape[axis], repeats)
        order = [axis] + [a for a in range(x.ndim) if a != axis]
        moved = x.transpose(order)
        result = device.empty((sources.shape[0], *moved.shape[1:]), x.dtype.name)
        if result.size:
            inner = moved.shape[1:]
            strides = element_strides(moved, (False,) * moved.ndim)
            kernel = take_rows_kernel(x.dtype.name, ("int64",), 1, max(len(inner), 1))
            device.launch(kernel, result.size,
                          [result.size, math.prod(inner), sources.shape[0], moved.shape[0],
                           *(inner or (1,)), moved, strides[0], *(strides[1:] or [0]),
                           sources, 1, result])
        inverse = [order.index(a) for a in range(len(order))]
        output_storage[0][0] = device.contiguous(result.transpose(inverse))


@register_gpu(Repeat)
def _lift_repeat(node: Apply, inputs, context: str):
    if node.inputs[0].type.dtype.startswith("complex"):
        return None
    return [GpuRepeat(node.op, context)(inputs[0], node.inputs[1])]
