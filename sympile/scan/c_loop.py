"""Scan's loop on the C backend (CVM.run_steps), prepared once per inner Function.

The inner graph is rewritten after the outer graph's scan rewrites have pushed its invariants
out, so rewriting it can make new ones: the transpose that the BLAS rewrite puts before a Gemv
of dot(h, W), for instance, would make a new view of W at every step. Such nodes, computed
from the non-sequences and constants alone, are split off into a prologue run once per call
of the Scan; the step graph reads their results as extra non-sequences. A node is left in the
step when a step node overwrites its result, or what that result views, in place (it would
no longer hold at the next step), and so is everything computed from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sympile.compile import Mode, Out
from sympile.compile import function as compile_function
from sympile.graph.basic import Constant, Variable, clone_replace
from sympile.graph.fgraph import OUTPUT, FunctionGraph
from sympile.tensor.type import TensorType

__all__ = ["CLoop", "build_c_loop", "invariant_boundary"]


@dataclass
class CLoop:
    """step: the Function run_steps runs once per step; prologue: None, or the Function of
    the hoisted values, run once per call of the Scan; plan: the step's run_steps plan, for
    the arrays (sequences, state buffers, non-sequences, hoisted values) in that order."""

    step: Any
    prologue: Any
    plan: Any

    def run(self, n_steps: int, sequences: list[np.ndarray], buffers: list[np.ndarray],
            non_sequences: list[np.ndarray]) -> tuple[int, list[np.ndarray | None]]:
        """Run the loop; returns the number of steps run and, per output, the buffer
        allocated for it (None for the state outputs)."""
        hoisted: tuple[Any, ...] = ()
        if self.prologue is not None:
            vm = self.prologue._vm
            for cell, value in zip(self.prologue._input_cells, non_sequences):
                cell[0] = value
            vm()
            # Read in place, not returned by a call (which copies what views an input): the
            # step only reads them, during this loop.
            hoisted = tuple(cell[0] for cell in vm.output_storage)
        return self.step._vm.run_steps(self.plan, n_steps,
                                       (*sequences, *buffers, *non_sequences, *hoisted))


def invariant_boundary(fgraph: FunctionGraph, fixed: list[Variable]) -> list[Variable]:
    """The variables of `fgraph` computed from the `fixed` inputs and constants alone that a
    step node, or an output, reads: what a prologue computes once (in the graph's order).
    Tensor nodes only, none overwriting a value, none whose result a node overwrites."""
    overwritten = _overwritten(fgraph)
    invariant = set(fixed)
    hoisted: list[Variable] = []
    for node in fgraph.toposort():
        if (not node.op.destroy_map
                and all(isinstance(v.type, TensorType) for v in node.inputs + node.outputs)
                and all(isinstance(v, Constant) or v in invariant for v in node.inputs)
                and not any(v in overwritten for v in node.outputs)):
            invariant.update(node.outputs)
            hoisted.extend(node.outputs)
    hoisted_nodes = {v.owner for v in hoisted}
    return [v for v in hoisted
            if any(client is OUTPUT or client not in hoisted_nodes
                   for client, _ in fgraph.clients.get(v, ()))]


def _overwritten(fgraph: FunctionGraph) -> set[Variable]:
    """The variables whose memory a node of `fgraph` overwrites: the inputs of its
    destroy_map, and what each of them views or was itself written over (the same memory)."""
    overwritten = {node.inputs[index] for node in fgraph.apply_nodes
                   for indices in node.op.destroy_map.values() for index in indices}
    pending = list(overwritten)
    while pending:
        variable = pending.pop()
        owner = variable.owner
        if owner is None:
            continue
        position = owner.outputs.index(variable)
        for index in (*owner.op.view_map.get(position, ()),
                      *owner.op.destroy_map.get(position, ())):
            base = owner.inputs[index]
            if base not in overwritten:
                overwritten.add(base)
                pending.append(base)
    return overwritten


def build_c_loop(op: Any, function: Any) -> CLoop:
    """The CLoop of Scan `op` for its inner Function `function` (on a VM with run_steps)."""
    fgraph = function.maker.fgraph
    n_inner_outputs = len(op.inner_outputs)
    step, prologue, n_hoisted = function, None, 0
    # An inner function with updates or with implicit inputs is left whole.
    if (op.n_non_sequences and len(fgraph.inputs) == len(op.inner_inputs)
            and len(fgraph.outputs) == n_inner_outputs):
        fixed = fgraph.inputs[len(fgraph.inputs) - op.n_non_sequences:]
        boundary = invariant_boundary(fgraph, fixed)
        if boundary:
            split = _split(fgraph, fixed, boundary)
            if split is not None:
                prologue, step = split
                n_hoisted = len(boundary)
    return CLoop(step, prologue, _prepare_steps(op, step, n_hoisted))


def _split(fgraph: FunctionGraph, fixed: list[Variable],
           boundary: list[Variable]) -> tuple[Any, Any] | None:
    """(prologue, step) Functions: the prologue computes `boundary` from `fixed`; the step
    is `fgraph` reading `boundary` as extra inputs after its own. The graph is compiled as it
    is (already rewritten, in-place ops included). None if the step would overwrite an input."""
    # Imported here: sympile.compile sits above the graph layer the Scan op belongs to.
    mode = Mode(None, backend="c")
    hoisted_inputs = [variable.type.make_variable(variable.name) for variable in boundary]
    step_outputs = clone_replace(list(fgraph.outputs), dict(zip(boundary, hoisted_inputs)))
    step = compile_function([*fgraph.inputs, *hoisted_inputs],
                            [Out(output, borrow=True) for output in step_outputs], mode=mode,
                            on_unused_input="ignore", trust_input=True, accept_inplace=True)
    if step.maker.fgraph.destroy_handler.destroyed_inputs():
        return None
    prologue = compile_function(list(fixed), [Out(variable, borrow=True)
                                              for variable in boundary],
                                mode=mode, on_unused_input="ignore", trust_input=True,
                                accept_inplace=True)
    # The loop runs their C programs (Function._vm) directly, never through a call that would
    # switch to them from the interim Python VM of config.compile_async.
    step.wait_compiled()
    prologue.wait_compiled()
    return prologue, step


def _prepare_steps(op: Any, function: Any, n_hoisted: int) -> Any:
    """The run_steps plan of the step Function `function` of Scan `op`, whose inputs are the
    inner inputs and then `n_hoisted` hoisted values."""
    vm = function._vm
    fgraph = function.maker.fgraph
    input_cells = [vm.storage[variable] for variable in fgraph.inputs]
    output_cells = [vm.storage[variable]
                    for variable in fgraph.outputs[:len(op.inner_outputs)]]
    n_sequences, n_recurrent = op.n_sequence_inputs, len(op.recurrent_taps)
    inputs = [(cell, index, "sequence", 0)
              for index, cell in enumerate(input_cells[:n_sequences])]
    outputs: list[tuple[list[Any], int | np.dtype, int]] = []
    position = n_sequences
    for state, (lag, taps) in enumerate(zip(op._lags, op.recurrent_taps)):
        # Rows wrap around modulo the buffer's length (no wrap unless kept_steps).
        for tap in taps:
            inputs.append((input_cells[position], n_sequences + state, "state", lag + tap))
            position += 1
        outputs.append((output_cells[state], n_sequences + state, lag))
    # The non-sequences, then the hoisted values: stored once.
    inputs.extend((cell, n_sequences + n_recurrent + index, "fixed", 0)
                  for index, cell in enumerate(input_cells[position:]))
    outputs.extend((output_cells[n_recurrent + index],
                    np.dtype(op.inner_outputs[n_recurrent + index].type.dtype), 0)
                   for index in range(op.n_plain_outputs))
    condition = output_cells[-1] if op.has_until else None
    return vm.prepare_steps(inputs, outputs, condition)
