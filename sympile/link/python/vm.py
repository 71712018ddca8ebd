"""The reference backend: run each node's perform() in topological order.

Every variable has one storage cell (a one-element list) that lives as long as the compiled
function, so an Op may reuse the array it produced on the previous call.

Conditionals are lazy: the VM runs the steps of sympile.link.schedule.lazy_schedule, which
both backends follow.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.debugprint import debugprint
from sympile.graph.fgraph import FunctionGraph
from sympile.link.schedule import Step, is_conditional, lazy_schedule


class UpdatingRuns:
    """call() and run() for a VM whose __call__ runs the program once.

    set_updates(updates): (target cell, cell of the new value, copy the value?) for each
    update. set_call(input cells, outputs, single): what call() stores and returns; outputs
    are (cell, copy the value?, empty the cell afterwards?) triples.
    """

    updates: list[tuple[list[Any], list[Any], bool]] = []
    _lock: threading.Lock
    _call_inputs: list[list[Any]] = []
    _call_outputs: list[tuple[list[Any], bool, bool]] = []
    _single = False

    def set_updates(self, updates: list[tuple[list[Any], list[Any], bool]]) -> None:
        self.updates = list(updates)

    def set_call(self, input_cells: list[list[Any]],
                 outputs: list[tuple[list[Any], bool, bool]], single: bool) -> None:
        self._call_inputs = list(input_cells)
        self._call_outputs = list(outputs)
        self._single = single

    def call(self, values: tuple) -> Any:
        """One call: store `values` in the input cells, run, take the outputs, apply the
        updates, empty the cells of the outputs handed out; the output, or a list. One
        thread at a time (self._lock): a call sees no other call's values."""
        with self._lock:
            return self._call(values)

    def _call(self, values: tuple) -> Any:
        for cell, value in zip(self._call_inputs, values):
            cell[0] = value
        self()
        results = [copy.copy(cell[0]) if copy_needed else cell[0]
                   for cell, copy_needed, _ in self._call_outputs]
        apply_updates(self.updates)
        return self._hand_out(results)

    def _hand_out(self, results: list[Any]) -> Any:
        """Empty the cells of the outputs handed out; the output, or the list of them."""
        for cell, _, clear in self._call_outputs:
            if clear:
                cell[0] = None
        return results[0] if self._single else results

    def run(self, n_calls: int = 1) -> None:
        """Run the program and apply the updates, n_calls times."""
        with self._lock:
            for _ in range(n_calls):
                self()
                apply_updates(self.updates)


class PythonVM(UpdatingRuns):
    """Runs `fgraph`; `input_storage` gives the cells of its inputs (shared variables pass their
    containers' cells, so updates are seen by every function)."""

    def __init__(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
                 profile: bool = False):
        self.fgraph = fgraph
        self._lock = threading.Lock()
        self.nodes = fgraph.toposort()
        # The nodes read the inputs from cells of their own, filled from `input_storage` when
        # a run starts: a shared variable that another thread's function updates meanwhile
        # is seen by every node of this run as it was at the start.
        self.storage: dict[Variable, list[Any]] = {variable: [None] for variable in fgraph.inputs}
        self.input_cells = list(input_storage)
        self._input_copies = [(self.storage[variable], cell)
                              for variable, cell in zip(fgraph.inputs, input_storage)]
        for variable in fgraph.variables:
            if variable not in self.storage:
                self.storage[variable] = [variable.data] if isinstance(variable, Constant) \
                    else [None]
        self.output_storage = [self.storage[v] for v in fgraph.outputs]
        self.thunks = [(node, node.op.perform, [self.storage[v] for v in node.inputs],
                        [self.storage[v] for v in node.outputs]) for node in self.nodes]
        self.profiling = profile
        self._node_seconds = [0.0] * len(self.nodes)
        self._node_calls = [0] * len(self.nodes)
        self.steps = lazy_schedule(self.nodes, fgraph.outputs, fgraph.orderings())
        self._lazy_program = self._program(self.steps) \
            if any(is_conditional(node) for node in self.nodes) else None

    def node_profile(self) -> list[tuple[float, int]]:
        """(seconds, calls) of each node in self.nodes, when built with profile=True."""
        return list(zip(self._node_seconds, self._node_calls))

    def _program(self, steps: list[Step]) -> tuple:
        """Each step as (node index, node, perform, input cells, output cells, branches):
        branches is (then program, else program) for a conditional, else None."""
        return tuple((step.index, *self.thunks[step.index],
                      (self._program(step.then_steps), self._program(step.else_steps))
                      if is_conditional(self.nodes[step.index]) else None)
                     for step in steps)

    def __call__(self) -> None:
        for own, given in self._input_copies:
            own[0] = given[0]
        if self._lazy_program is not None:
            self._run_lazy(self._lazy_program)
            return
        if self.profiling:
            self._profiled_call()
            return
        for node, perform, input_cells, output_cells in self.thunks:
            values = [cell[0] for cell in input_cells]
            try:
                perform(node, values, output_cells)
            except Exception as error:
                raise_with_node(node, values, error)

    def _run_lazy(self, program: tuple) -> None:
        for index, node, perform, input_cells, output_cells, branches in program:
            if branches is not None:
                self._run_lazy(branches[0] if input_cells[0][0] else branches[1])
            values = [cell[0] for cell in input_cells]
            start = time.perf_counter() if self.profiling else 0.0
            try:
                perform(node, values, output_cells)
            except Exception as error:
                raise_with_node(node, values, error)
            finally:
                if self.profiling:
                    self._node_seconds[index] += time.perf_counter() - start
                    self._node_calls[index] += 1

    def _profiled_call(self) -> None:
        for index, (node, perform, input_cells, output_cells) in enumerate(self.thunks):
            values = [cell[0] for cell in input_cells]
            start = time.perf_counter()
            try:
                perform(node, values, output_cells)
            except Exception as error:
                raise_with_node(node, values, error)
            finally:
                self._node_seconds[index] += time.perf_counter() - start
                self._node_calls[index] += 1


def apply_updates(updates: list[tuple[list[Any], list[Any], bool]],
                  copy_value: Callable[[Any], Any] = copy.copy) -> None:
    """(target cell, cell of the new value, copy it?) updates, each value that needs it
    copied by `copy_value`."""
    # Read every new value before writing any, so updates are simultaneous.
    new_values = [copy_value(cell[0]) if copy_needed else cell[0]
                  for _, cell, copy_needed in updates]
    for (target, _, _), value in zip(updates, new_values):
        target[0] = value


def _same_kind(error: Exception, message: str) -> Exception:
    """An exception of `error`'s class carrying `message`, or of the nearest base class that
    takes a message (numpy's _ArrayMemoryError needs a shape and dtype: a MemoryError then),
    so that `except MemoryError` still catches it."""
    for kind in type(error).__mro__:
        if not issubclass(kind, BaseException):
            continue
        try:
            return kind(message)
        except Exception:
            continue
    return RuntimeError(message)


def raise_with_node(node: Apply, values: list[Any], error: Exception):
    """Re-raise `error` (same class where possible) with the node, its input shapes and
    dtypes, and where the user created the failing variable."""
    shapes = ", ".join(str(np.shape(v)) if v is not None else "None" for v in values)
    dtypes = ", ".join(str(getattr(v, "dtype", type(v).__name__)) for v in values)
    output = node.outputs[0]
    message = (f"{error}\n  while computing {node.op} (inputs {', '.join(map(str, node.inputs))})"
               f"\n  input shapes: {shapes}\n  input dtypes: {dtypes}"
               f"\n  the variable was created at {output.creation_site()}")
    if config.exception_verbosity == "high":
        tree = debugprint(node.outputs, file="str", print_type=True)
        message += "\n  the failing node's graph:\n    " + tree.replace("\n", "\n    ")
    else:
        message += ("\n  (config.exception_verbosity='high' also shows the failing node's "
                    "graph)")
    wrapped = _same_kind(error, message)
    wrapped.__dict__.update(getattr(error, "__dict__", {}))
    wrapped.node = node
    raise wrapped from error
