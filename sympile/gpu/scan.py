"""Scan and IfElse on the device.

- DeviceScan: a Scan whose float sequences, recurrent states, non-sequences and plain outputs
  are device arrays. Its inner function is compiled for the device (its nodes placed there,
  its float results returned as device arrays), its state buffers live on the device, and
  each step's results are copied into their rows by the device's copy kernel: no value
  crosses to the host during the loop (an until condition, a host value, excepted). The
  loop itself still runs in Python, one inner call per step.
- DeviceIfElse: an IfElse whose float branch values are device arrays (the condition is a
  host scalar); as lazy as the host op.
Integer sequences (token indices) stay on the host: the step reads its entry as a host
integer, which indexes a device array as a view.
"""

from __future__ import annotations

from typing import Any

from sympile.compile import Out
from sympile.compile import function as compile_function
from sympile.config import config
from sympile.gpu.basic import GpuArrayType, GpuFromHost
from sympile.gpu.elemwise import copy_into
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import placement_target, runtime
from sympile.graph.basic import Apply, Variable, clone_replace
from sympile.graph.utils import MethodNotDefined
from sympile.ifelse.basic import IfElse
from sympile.scan.op import Scan
from sympile.tensor.type import TensorType

__all__ = ["DeviceIfElse", "DeviceScan"]


def _on_device_dtype(dtype: Any) -> bool:
    """Float values live on the device (as shared variables do); others on the host."""
    return str(dtype).startswith("float")


def _moves(variable: Variable) -> bool:
    """A host tensor that moves to the device: a float one."""
    return isinstance(variable.type, TensorType) and _on_device_dtype(variable.type.dtype)


def _on(context: str, variable: Variable) -> bool:
    return isinstance(variable.type, GpuArrayType) and variable.type.context == context


class DeviceScan(Scan):
    """See the module's docstring; `context` holds its device arrays."""

    def __init__(self, context: str, *arguments: Any, **keywords: Any):
        super().__init__(*arguments, **keywords)
        self.context = context

    def __str__(self) -> str:
        return f"Gpu{super().__str__()}<{self.context}>"

    def make_node(self, n_steps, *inputs):
        node = super().make_node(n_steps, *inputs)
        n_stacked = len(self.recurrent_taps) + self.n_plain_outputs
        outputs = [GpuArrayType.of(output.type, self.context)() if _on(self.context, inner)
                   else output
                   for output, inner in zip(node.outputs, self.inner_outputs[:n_stacked])]
        return Apply(self, node.inputs, outputs)

    def _outer_input(self, value: Any, index: int) -> Variable:
        if isinstance(value, Variable) and _on(self.context, value):
            return value
        return super()._outer_input(value, index)

    def _compile_inner(self, mode):
        # The step runs once per loop step inside this op's perform: its own calls are not
        # replayed as graphs (their inputs are new rows at every step).
        with placement_target(self.context), config.change_flags(gpu_graphs=False):
            return compile_function(
                self.inner_inputs,
                [Out(output, borrow=True, device_array=_on(self.context, output))
                 for output in self.inner_outputs],
                mode=mode, on_unused_input="ignore", trust_input=True)

    def _empty(self, shape, dtype):
        if _on_device_dtype(dtype):
            return runtime(self.context).empty(shape, str(dtype))
        return super()._empty(shape, dtype)

    def _assign(self, target, value) -> None:
        device = runtime(self.context)
        if device.is_device_array(target):
            if target.size:
                copy_into(self.context, value, target)
        else:
            super()._assign(target, value)

    def _step_value(self, value):
        return value if runtime(self.context).is_device_array(value) \
            else super()._step_value(value)

    def _loop_in_c(self, run) -> bool:
        return False


@register_gpu(Scan)
def _lift_scan(node: Apply, inputs, context: str):
    """Scan(n_steps, sequences, initial states, non-sequences) -> DeviceScan with its float
    outer inputs on the device and its inner graph reading and returning device arrays."""
    op = node.op
    n_sequences, n_recurrent = op.n_sequence_inputs, len(op.recurrent_taps)
    outer = [moved if _moves(host) else host for host, moved in zip(node.inputs, inputs)][1:]
    # The outer input each inner input reads: its sequence, its state's initial buffer (one
    # inner input per tap), its non-sequence.
    sources = [*range(n_sequences),
               *(n_sequences + k for k, taps in enumerate(op.recurrent_taps) for _ in taps),
               *range(n_sequences + n_recurrent, len(outer))]
    inner_inputs, replacements = [], {}
    for inner, source in zip(op.inner_inputs, sources):
        if _on(context, outer[source]) and isinstance(inner.type, TensorType):
            device = GpuArrayType.of(inner.type, context)(name=inner.name)
            replacements[inner] = device._as_TensorVariable()
            inner = device
        inner_inputs.append(inner)
    n_stacked = n_recurrent + op.n_plain_outputs
    inner_outputs = clone_replace(op.inner_outputs, replacements) if replacements \
        else list(op.inner_outputs)
    for index, output in enumerate(inner_outputs[:n_stacked]):
        # A state has its initial value's dtype, so a float one lives on the device with it.
        if _moves(output):
            inner_outputs[index] = GpuFromHost(context)(output)
    device_op = DeviceScan(context, inner_inputs, inner_outputs, n_sequences,
                           op.recurrent_taps, op.n_plain_outputs, op.n_non_sequences,
                           op.has_until, name=op.name, truncate_gradient=op.truncate_gradient,
                           kept_steps=op.kept_steps, mode=op.mode)
    return device_op.make_node(node.inputs[0], *outer).outputs


class DeviceIfElse(IfElse):
    """See the module's docstring; `context` holds its device values."""

    __props__ = ("n_outs", "as_view", "context")

    def __init__(self, context: str, n_outs: int, as_view: bool = False,
                 name: str | None = None):
        super().__init__(n_outs, as_view=as_view, name=name)
        self.context = context

    def __str__(self) -> str:
        return f"Gpu{super().__str__()}<{self.context}>"

    def make_node(self, condition, *branches):
        n = self.n_outs
        host = [value.type.host_type() if _on(self.context, value) else value
                for value in branches]
        node = super().make_node(condition, *host)
        outputs = [GpuArrayType.of(output.type, self.context)() if _on(self.context, value)
                   else output for output, value in zip(node.outputs, branches[:n])]
        return Apply(self, [node.inputs[0], *branches], outputs)

    def perform(self, node, inputs, output_storage):
        condition = inputs[0]
        chosen = inputs[1:1 + self.n_outs] if condition else inputs[1 + self.n_outs:]
        device = runtime(self.context)
        for storage, value in zip(output_storage, chosen):
            if self.as_view:
                storage[0] = value
            else:
                storage[0] = device.copy(value) if device.is_device_array(value) \
                    else value.copy()

    def c_code(self, node, names):
        raise MethodNotDefined(f"{self}: device values have no C code")


# An IfElse computes nothing: it moves only with a branch value already on the device.
@register_gpu(IfElse, computes=False)
def _lift_ifelse(node: Apply, inputs, context: str):
    op = node.op
    n = op.n_outs
    then_values, else_values = node.inputs[1:1 + n], node.inputs[1 + n:]
    moved_then, moved_else = inputs[1:1 + n], inputs[1 + n:]
    branches_then, branches_else = [], []
    for then_value, else_value, device_then, device_else in zip(
            then_values, else_values, moved_then, moved_else):
        both = _moves(then_value) and _moves(else_value)
        branches_then.append(device_then if both else then_value)
        branches_else.append(device_else if both else else_value)
    if branches_then == list(then_values) and branches_else == list(else_values):
        return None
    device_op = DeviceIfElse(context, n, as_view=op.as_view, name=op.name)
    return device_op.make_node(node.inputs[0], *branches_then, *branches_else).outputs
