"""RandomStreams' draws on the device: uniform and bernoulli (random_cuda.py), with the
CPU's numbers for the same seed. The stream's state stays a host value: a draw's node
becomes AdvanceState (the new state, on the host) and GpuPhiloxDraw (the sample, on the
device), which reads the state from a device copy of it (16 bytes moved per draw), so that a
captured draw (sympile.gpu.graphs) reads the state of each call.

MRG_RandomStreams' uniforms (Theano's GPU MRG): its streams' states live on the device when
functions are compiled for one (MRG_RandomStreams.state_target, bound here), and
GpuMRGUniform advances a copy of them, a thread per stream, with the CPU's step
(mrg_step.h): the CPU's numbers, nothing moved per draw."""

from __future__ import annotations

import math

import numpy as np

from sympile.gpu.basic import GpuArrayType, GpuFromHost, GpuWrapper, check_context
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime, target_context
from sympile.graph.basic import Apply
from sympile.graph.gradient_types import NonDifferentiable
from sympile.graph.op import Op
from sympile.tensor.random.mrg_streams import MRG_RandomStreams
from sympile.tensor.random.op import STATE_TYPE, MRGUniform, RandomDraw, shape_of_size
from sympile.tensor.random.random_cuda import (
    DEVICE_DRAWS,
    mrg_uniform_kernel,
    philox_draw_kernel,
    words_per_element,
)

__all__ = ["AdvanceState", "GpuMRGUniform", "GpuPhiloxDraw"]


class AdvanceState(NonDifferentiable, Op):
    """A stream's state [key, calls] -> [key, calls + 1] (mod 2**64), as a draw leaves it."""

    __props__ = ()

    def make_node(self, state):
        return Apply(self, [state], [STATE_TYPE()])

    def perform(self, node, inputs, output_storage):
        key, calls = (int(word) for word in inputs[0])
        output_storage[0][0] = np.array([key, (calls + 1) % 2**64], dtype=np.uint64)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(2,)]


class GpuPhiloxDraw(NonDifferentiable, Op):
    """The sample of `draw` (a RandomDraw of a distribution in DEVICE_DRAWS) on the device;
    inputs: the state on the device, the host's size and parameters."""

    __props__ = ("draw", "context")

    def __init__(self, draw: RandomDraw, context: str):
        self.draw = draw
        self.context = context

    def __str__(self):
        return f"Gpu{self.draw}<{self.context}>"

    def make_node(self, state, size, *parameters):
        check_context(self, [state], self.context)
        host = self.draw.make_node(state.type.host_type(), size, *parameters)
        return Apply(self, [state, *host.inputs[1:]],
                     [GpuArrayType.of(host.outputs[1].type, self.context)()])

    def perform(self, node, inputs, output_storage):
        state, size, *parameters = inputs
        shape = shape_of_size(size, self.draw.label)
        threshold = 0
        if self.draw.distribution == "bernoulli":
            p = float(parameters[0])
            if not 0 <= p <= 1:
                raise ValueError(f"{self.draw.label}: p must be in [0, 1], got {p}")
            threshold = int(np.uint64(p * 4294967296.0))
        device = runtime(self.context)
        dtype = self.draw.dtype
        sample = device.empty(shape, dtype)
        count = math.prod(shape)
        if count:
            per_block = 4 // words_per_element(self.draw.distribution, dtype)
            blocks = -(-count // per_block)
            device.launch(philox_draw_kernel(self.draw.distribution, dtype), blocks,
                          [count, blocks, state, threshold, sample])
        output_storage[0][0] = sample

    def infer_shape(self, fgraph, node, input_shapes):
        return [self.draw.infer_shape(fgraph, node, input_shapes)[1]]


@register_gpu(RandomDraw)
def _lift_draw(node: Apply, inputs, context: str):
    draw = node.op
    if draw.dtype not in DEVICE_DRAWS.get(draw.distribution, ()):
        return None
    state, size, *parameters = node.inputs
    return [AdvanceState()(state),
            GpuPhiloxDraw(draw, context)(GpuFromHost(context)(state), size, *parameters)]


class GpuMRGUniform(GpuWrapper):
    """`op` (an MRGUniform) of a device state: (the advanced copy of the state, the sample),
    both on the device."""

    def perform(self, node, inputs, output_storage):
        state, size = inputs
        shape, count = self.op.checked_shape(state.shape, size)
        device = runtime(self.context)
        new_state = device.copy(state)
        sample = device.empty(shape, self.op.dtype)
        n_streams = state.shape[0]
        used = min(count, n_streams)
        device.launch(mrg_uniform_kernel(self.op.dtype), used,
                      [used, n_streams, count, new_state, sample])
        output_storage[0][0] = new_state
        output_storage[1][0] = sample


@register_gpu(MRGUniform)
def _lift_mrg_uniform(node: Apply, inputs, context: str):
    return GpuMRGUniform(node.op, context)(inputs[0], node.inputs[1])


MRG_RandomStreams.state_target = staticmethod(target_context)
