"""2d pooling on the device: Pool (every mode, padding, strides, ignore_border) and its
gradients MaxPoolGrad and AveragePoolGrad, float32 and float64, by the kernels of
sympile/tensor/signal/pool_cuda.py (one thread per output element forward, one per input
element backward, so no atomics). Inputs that are not C-contiguous are copied first. 3d
pooling, other dtypes and the second-order ops stay on the host.
"""

from __future__ import annotations

import math

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.tensor.signal.pool import AveragePoolGrad, MaxPoolGrad, Pool
from sympile.tensor.signal.pool_cuda import MODES, pool_backward_kernel, pool_forward_kernel

__all__ = ["GpuPool"]

KERNEL_DTYPES = ("float32", "float64")
_INPUTS = {Pool: ("x",), AveragePoolGrad: ("x", "gz"), MaxPoolGrad: ("x", "maxout", "gz")}


class GpuPool(GpuWrapper):
    """`op` (a 2d Pool, MaxPoolGrad or AveragePoolGrad) on device arrays of `context`."""

    @property
    def device_inputs(self) -> int:
        return len(_INPUTS[type(self.op)])

    def perform(self, node, inputs, output_storage):
        op = self.op
        device = runtime(self.context)
        x, *rest = (device.contiguous(value) for value in inputs)
        pooled = tuple(op.pooled_shape(x.shape))
        for name, value in zip(_INPUTS[type(op)][1:], rest):
            if tuple(value.shape) != pooled:
                raise ValueError(f"{op.label}: {name} has shape {tuple(value.shape)}, "
                                 f"expected {pooled} (the pooled shape of the input's "
                                 f"{tuple(x.shape)})")
        rows, cols = x.shape[-2:]
        geometry = [rows, cols, *pooled[-2:], *op.ws, *op.stride, *op.pad, MODES[op.mode]]
        dtype = node.outputs[0].type.dtype
        if isinstance(op, Pool):
            result = device.empty(pooled, dtype)
            size, kernel, arrays = math.prod(pooled), pool_forward_kernel(dtype), [x]
        else:
            result = device.empty(x.shape, dtype)
            size, kernel = math.prod(x.shape), pool_backward_kernel(dtype)
            arrays = [x, *rest] if isinstance(op, MaxPoolGrad) else [x, rest[0], rest[0]]
        if size:
            device.launch(kernel, size, [size, *geometry, *arrays, result])
        output_storage[0][0] = result


@register_gpu(Pool)
@register_gpu(MaxPoolGrad)
@register_gpu(AveragePoolGrad)
def _lift_pool(node: Apply, inputs, context: str):
    dtypes = {v.type.dtype for v in node.inputs + node.outputs}
    if node.op.nd != 2 or len(dtypes) != 1 or not dtypes <= set(KERNEL_DTYPES):
        return None
    return [GpuPool(node.op, context)(*inputs)]
