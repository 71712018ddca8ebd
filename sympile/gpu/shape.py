"""Reshape, SpecifyShape and Split of device arrays (the host ops' own perform on the device
array: a view where the strides allow, as numpy's reshape; a check of the shape; one view per
piece), and Join (copies into the output's slabs). Shape entries, the split sizes and the
axes stay host values."""

from __future__ import annotations

from sympile.gpu.basic import GpuArrayType, GpuWrapper, check_context
from sympile.gpu.elemwise import copy_into
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.tensor.basic.ops import Join, Split, runtime_axis
from sympile.tensor.shape.ops import Reshape, SpecifyShape

__all__ = ["GpuJoin"]


@register_gpu(Reshape, computes=False)
@register_gpu(SpecifyShape, computes=False)
def _lift_shaping(node: Apply, inputs, context: str):
    return [GpuWrapper(node.op, context)(inputs[0], *node.inputs[1:])]


@register_gpu(Split, computes=False)
def _lift_split(node: Apply, inputs, context: str):
    return GpuWrapper(node.op, context).make_node(inputs[0], *node.inputs[1:]).outputs


class GpuJoin(Op):
    """join(axis, *tensors) (a Join op) of device arrays, the axis a host value: each tensor
    copied (converted to the output's dtype) into its slab of the output by the
    elementwise copy kernel."""

    __props__ = ("op", "context")

    def __init__(self, op: Join, context: str):
        self.op = op
        self.context = context

    def __str__(self):
        return f"GpuJoin<{self.context}>"

    def make_node(self, axis, *tensors):
        check_context(self, tensors, self.context)
        host = self.op.make_node(axis, *[v.type.host_type() for v in tensors])
        return Apply(self, [host.inputs[0], *tensors],
                     [GpuArrayType.of(host.outputs[0].type, self.context)()])

    def perform(self, node, inputs, output_storage):
        axis, *arrays = inputs
        axis = runtime_axis(axis, arrays[0].ndim, self.op)
        others = {tuple(a.shape[:axis] + a.shape[axis + 1:]) for a in arrays}
        if len(others) > 1:
            shapes = ", ".join(str(a.shape) for a in arrays)
            raise ValueError(f"{self.op}: cannot join arrays of shapes {shapes} along axis "
                             f"{axis}: their other lengths differ")
        device = runtime(self.context)
        dtype = node.outputs[0].type.dtype
        shape = list(arrays[0].shape)
        shape[axis] = sum(a.shape[axis] for a in arrays)
        output = device.empty(shape, dtype)
        start = 0
        for array in arrays:
            stop = start + array.shape[axis]
            copy_into(self.context, array, output[(slice(None),) * axis + (slice(start, stop),)])
            start = stop
        output_storage[0][0] = output

    def infer_shape(self, fgraph, node, input_shapes):
        return self.op.infer_shape(fgraph, node, input_shapes)


@register_gpu(Join)
def _lift_join(node: Apply, inputs, context: str):
    return [GpuJoin(node.op, context)(node.inputs[0], *inputs[1:])]
