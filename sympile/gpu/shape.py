"""Reshape and SpecifyShape of device arrays: the host ops' own perform on the device array
(a view where the strides allow, as numpy's reshape; a check of the shape). The shape
entries stay host values."""

from __future__ import annotations

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.placement import register_gpu
from sympile.graph.basic import Apply
from sympile.tensor.shape.ops import Reshape, SpecifyShape

__all__: list[str] = []


@register_gpu(Reshape, computes=False)
@register_gpu(SpecifyShape, computes=False)
def _lift_shaping(node: Apply, inputs, context: str):
    return [GpuWrapper(node.op, context)(inputs[0], *node.inputs[1:])]
