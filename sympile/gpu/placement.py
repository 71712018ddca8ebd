"""Placement: the rewrite that moves every node with a GPU implementation onto the device and
puts the transfers at the edges (Theano's gpuarray optimizer), in the pipeline's `gpu` phase
(after fusion, so each fused elementwise group becomes one kernel; before inplace).

    op(x, y)  ->  HostFromGpu(GpuOp(GpuFromHost(x), GpuFromHost(y)))   (nodes in order)
    GpuFromHost(HostFromGpu(a))  ->  a                                (transfers cut)

Nodes are visited in topological order, so a node whose inputs were computed on the device
reads them there (the HostFromGpu between two device nodes is never built into the graph's
result), and a training step keeps only the transfers of its inputs and returned outputs.
Constants are moved to the device once, at compile time. Elementwise nodes of integers or
bools whose inputs are all on the host stay there (shape and index arithmetic, which host
ops read). Compiling warns once per function with the ops that run on the host for lack of
a GPU implementation (GpuHostOpsWarning).

A family gives its ops GPU implementations with `register_gpu(OpClass)`: a function
(node, device inputs, context) -> the node's outputs (device variables for tensors moved
there, host ones otherwise), or None to keep the node on the host.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable

from sympile.gpu.basic import GpuArrayType, GpuFromHost, HostFromGpu
from sympile.gpu.runtime import target_context
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import GraphRewriter
from sympile.graph.utils import user_stacklevel
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.type import TensorType

__all__ = ["GpuHostOpsWarning", "GpuPlacement", "register_gpu"]

Lift = Callable[[Apply, list[Variable], str], list[Variable] | None]
_IMPLEMENTATIONS: dict[type, tuple[Lift, bool]] = {}


class GpuHostOpsWarning(UserWarning):
    """Some ops of a function compiled for a GPU run on the host."""


def register_gpu(op_class: type, computes: bool = True) -> Callable[[Lift], Lift]:
    """Decorator: the function giving the GPU implementation of nodes of `op_class`.
    computes=False (views, shapes): a node moves only when an input is already on the
    device, never to move a host value there for it."""
    def register(lift: Lift) -> Lift:
        _IMPLEMENTATIONS[op_class] = (lift, computes)
        return lift
    return register


def on_device(variable: Variable, context: str) -> Variable:
    """`variable` as a device array of `context`: the device value a HostFromGpu copies, a
    constant moved now, a host view taken again on the device, or a new GpuFromHost."""
    owner = variable.owner
    if _reads_device(variable, context):
        return owner.inputs[0]
    if isinstance(variable, Constant):
        return GpuArrayType.of(variable.type, context).make_constant(variable.data)
    if owner is not None:
        # A host view (x.T) of what is moved anyway: the view is taken on the device, of
        # the one transfer of x (final_merge merges equal transfers).
        lift, computes = _IMPLEMENTATIONS.get(type(owner.op), (None, True))
        if lift is not None and not computes and len(owner.inputs) == 1 \
                and _is_tensor(owner.inputs[0]):
            outputs = lift(owner, [on_device(owner.inputs[0], context)], context)
            moved = outputs[owner.outputs.index(variable)] if outputs else None
            if moved is not None and isinstance(moved.type, GpuArrayType):
                return moved
    return GpuFromHost(context)(variable)


def _is_tensor(variable: Variable) -> bool:
    return isinstance(variable.type, TensorType)


def _reads_device(variable: Variable, context: str) -> bool:
    owner = variable.owner
    return owner is not None and isinstance(owner.op, HostFromGpu) \
        and owner.inputs[0].type.context == context


def _worth_moving(node: Apply, context: str, computes: bool) -> bool:
    """Work on values already on the device, or float work."""
    if any(_reads_device(v, context) for v in node.inputs):
        return True
    return computes and any(_is_tensor(v) and v.type.dtype.startswith("float")
                            for v in node.outputs)


class GpuPlacement(GraphRewriter):
    """See the module's docstring."""

    name = "gpu_placement"

    def apply(self, fgraph: FunctionGraph) -> bool:
        context = target_context()
        if context is None:
            return False
        changed = False
        on_host: Counter[str] = Counter()
        for node in fgraph.toposort():
            if isinstance(node.op, (GpuFromHost, HostFromGpu)) \
                    or not any(map(_is_tensor, node.inputs + node.outputs)):
                continue
            lift, computes = _IMPLEMENTATIONS.get(type(node.op), (None, True))
            if not _worth_moving(node, context, computes):
                continue
            outputs = None
            if lift is not None:
                outputs = lift(node, [on_device(v, context) if _is_tensor(v) else v
                                      for v in node.inputs], context)
            if outputs is None:
                on_host[str(node.op)] += 1
                continue
            pairs = [(old, HostFromGpu()(new) if isinstance(new.type, GpuArrayType) else new)
                     for old, new in zip(node.outputs, outputs)]
            fgraph.replace_all(pairs, reason=self.name)
            changed = True
        changed |= self._cut_transfers(fgraph)
        if on_host:
            listed = ", ".join(f"{name} x{count}" if count > 1 else name
                               for name, count in sorted(on_host.items()))
            warnings.warn(f"sympile.gpu: {sum(on_host.values())} node(s) run on the host "
                          f"({context} has no implementation of them; their inputs and "
                          f"outputs are transferred): {listed}", GpuHostOpsWarning,
                          stacklevel=user_stacklevel())
        return changed

    def _cut_transfers(self, fgraph: FunctionGraph) -> bool:
        # Nodes in order, so a round trip of a round trip's result (a scan gradient's inner
        # outputs) is cut to the first device value, not back to the inner trip's result.
        cut: dict[Variable, Variable] = {}
        for node in fgraph.toposort():
            if isinstance(node.op, GpuFromHost):
                source = node.inputs[0].owner
                if source is not None and isinstance(source.op, HostFromGpu) \
                        and source.inputs[0].type == node.outputs[0].type:
                    cut[node.outputs[0]] = cut.get(source.inputs[0], source.inputs[0])
        if cut:
            fgraph.replace_all(list(cut.items()), reason="gpu_cut_transfers")
        return bool(cut)


rewrite_db.register("gpu_placement", GpuPlacement(), "gpu", "fast_run", "fast_compile",
                    phase="gpu")
