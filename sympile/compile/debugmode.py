"""DEBUG_MODE: run the FAST_RUN rewrites and check, at every call, that they changed no value.

Compiling records every replacement the rewrites make (a RewriteHistory) together with a
frozen copy of the replaced and the replacing variables' graphs as they stood at that moment,
and keeps a copy of the graph before any rewrite. Calling the function then evaluates, with
the reference VM and on copies of the actual inputs:

1. the original graph and the rewritten graph, every intermediate value kept (a node that
   overwrites an input overwrites a copy);
2. each recorded replacement: the old and the new variables as functions of the graph inputs.

A replacement whose new value differs from the old one (the Type's values_eq_approx) raises
BadRewriteError naming the rewrite, the variable and the largest difference; one that turns
finite values into NaN/inf raises InvalidValueError. A rewrite may turn NaN/inf into finite
values (that is what stabilization rewrites do). Then the rewritten graph's intermediates must
be finite wherever the original graph was entirely finite, and its outputs must match the
original's (which also catches changes no rewrite recorded). Only when every check passes does
the real computation run, so a failed check leaves shared variables untouched, and checking
never applies updates.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.compile.mode import PREDEFINED_MODES, Mode, Rewriter
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import RewriteHistory, RewriteRecord
from sympile.graph.rewriting.db import RewriteQuery
from sympile.link.python.vm import PythonVM, UpdatingRuns

__all__ = ["DEBUG_MODE", "BadRewriteError", "DebugMode", "DebugModeError", "InvalidValueError"]


class DebugModeError(Exception):
    """A check of DEBUG_MODE failed."""


class BadRewriteError(DebugModeError):
    """A rewrite replaced a variable by one computing different values.

    rewrite: the rewrite's name; old, new: the replaced and the replacing variable;
    max_difference: the largest absolute difference (None when the shapes differ or the
    values are not numeric arrays).
    """

    def __init__(self, message: str, rewrite: str, old: Variable | None, new: Variable | None,
                 max_difference: float | None):
        super().__init__(message)
        self.rewrite = rewrite
        self.old = old
        self.new = new
        self.max_difference = max_difference


class InvalidValueError(DebugModeError):
    """The rewritten graph computes NaN or inf where the original graph did not.

    rewrite: the name of the rewrite that introduced it, when one is known (else None);
    variable: the variable whose value is not finite.
    """

    def __init__(self, message: str, rewrite: str | None, variable: Variable):
        super().__init__(message)
        self.rewrite = rewrite
        self.variable = variable


# -- recording ----------------------------------------------------------------------------------

class _CheckedReplacement:
    """One recorded replacement with a frozen graph computing old and new from the graph's
    inputs: outputs[:n_old] are the old variables, outputs[n_old:] the new ones."""

    def __init__(self, record: RewriteRecord, fgraph: FunctionGraph):
        self.record = record
        # A copy, so that later rewrites (which change node inputs in place) cannot change
        # what this check computes: each replacement is judged on the graph it was made in.
        self.graph = FunctionGraph(fgraph.inputs, list(record.old) + list(record.new))
        self.vm = CopyingVM(self.graph, [[None] for _ in self.graph.inputs])

    def values(self, input_values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """The old and the new variables' values on `input_values`."""
        values = _run(self.vm, input_values)
        n_old = len(self.record.old)
        outputs = [values[v] for v in self.graph.outputs]
        return outputs[:n_old], outputs[n_old:]


class DebugHistory(RewriteHistory):
    """A RewriteHistory that also keeps the graph as it was before rewriting (`original`) and,
    for each record, a frozen copy of the old and new variables' graphs (`checks`)."""

    def __init__(self, original: FunctionGraph):
        super().__init__()
        self.original = original
        self.checks: list[_CheckedReplacement] = []
        self._fgraph: FunctionGraph | None = None

    def on_attach(self, fgraph: FunctionGraph) -> None:
        super().on_attach(fgraph)
        self._fgraph = fgraph

    def on_detach(self, fgraph: FunctionGraph) -> None:
        super().on_detach(fgraph)
        self._fgraph = None

    def record(self, name: str, node: Apply | None, old: Sequence[Variable],
               new: Sequence[Variable]) -> None:
        super().record(name, node, old, new)
        if self._fgraph is not None:
            self.checks.append(_CheckedReplacement(self.records[-1], self._fgraph))


# -- the mode -----------------------------------------------------------------------------------

class DebugMode(Mode):
    """A Mode whose compiled functions check their rewrites at every call (module docstring).

    rewriter: as for Mode (default: the FAST_RUN query); the backend is always the reference
    VM, so the checked graphs and the one that runs are computed the same way.
    """

    def __init__(self, rewriter: Rewriter | RewriteQuery | None = None,
                 backend: str = "python", name: str | None = None):
        if rewriter is None:
            rewriter = RewriteQuery(include=("fast_run",))
        if backend != "python":
            raise ValueError(f"DebugMode: the backend must be 'python' (the reference VM), got "
                             f"{backend!r}")
        super().__init__(rewriter, backend, name or "DebugMode", record_history=True)

    def rewrite(self, fgraph: FunctionGraph) -> None:
        history = getattr(fgraph, "rewrite_history", None)
        if history is not None and not isinstance(history, DebugHistory):
            raise ValueError(f"{self.name}: the graph already has a RewriteHistory; DebugMode "
                             f"needs to attach its own")
        if history is None:
            fgraph.attach_feature(DebugHistory(fgraph.clone()))
        super().rewrite(fgraph)

    def link(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
             profile: bool = False):
        history = getattr(fgraph, "rewrite_history", None)
        if not isinstance(history, DebugHistory):
            # Never rewritten by this mode: only the finiteness of the graph is checked.
            history = DebugHistory(fgraph.clone())
        return CheckingVM(fgraph, input_storage, history, self.name, profile)

    def _derived(self, rewriter: RewriteQuery, name: str) -> Mode:
        return DebugMode(rewriter, self.backend, name)


class CopyingVM(PythonVM):
    """The reference VM, except that a node overwriting an input (destroy_map) overwrites a
    copy of it: every variable keeps its own value, whatever order the checked graph runs
    in (a frozen replacement graph has no DestroyHandler to order its readers first)."""

    def __init__(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
                 profile: bool = False):
        super().__init__(fgraph, input_storage, profile)
        self.thunks = [(node, _on_copies(perform, node) if node.op.destroy_map else perform,
                        input_cells, output_cells)
                       for node, perform, input_cells, output_cells in self.thunks]
        if self._lazy_program is not None:
            self._lazy_program = self._program(self.steps)


def _on_copies(perform, node: Apply):
    """`perform`, given copies of the inputs `node` overwrites."""
    destroyed = {index for indexes in node.op.destroy_map.values() for index in indexes}

    def perform_on_copies(node, values, output_storage):
        perform(node, [copy.copy(value) if index in destroyed else value
                       for index, value in enumerate(values)], output_storage)

    return perform_on_copies


class CheckingVM(UpdatingRuns):
    """Runs `fgraph` with the reference VM after checking, on copies of the inputs, every
    replacement `history` recorded against the original graph (module docstring)."""

    def __init__(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
                 history: DebugHistory, mode_name: str, profile: bool = False):
        self.vm = PythonVM(fgraph, input_storage, profile)
        self._lock = self.vm._lock
        self.nodes = self.vm.nodes
        self.node_profile = self.vm.node_profile
        self.fgraph = fgraph
        self.history = history
        self.mode_name = mode_name
        self.input_storage = input_storage
        self.output_storage = self.vm.output_storage
        self.storage = self.vm.storage
        self._rewritten = CopyingVM(fgraph, [[None] for _ in fgraph.inputs])
        self._original = CopyingVM(history.original, [[None] for _ in fgraph.inputs])

    def __call__(self) -> None:
        self.check([cell[0] for cell in self.input_storage])
        self.vm()

    def check(self, input_values: Sequence[Any]) -> None:
        """Raise BadRewriteError or InvalidValueError if a rewrite changed what the graph
        computes on `input_values`."""
        original = _run(self._original, input_values)
        for check in self.history.checks:
            self._check_replacement(check, input_values)
        rewritten = _run(self._rewritten, input_values)
        if all(_finite(value) for value in original.values()):
            for variable in _toposorted_variables(self.fgraph):
                if not _finite(rewritten[variable]):
                    raise InvalidValueError(
                        f"{self.mode_name}: the rewritten graph computes NaN or inf in "
                        f"{_describe(variable)}, while every value of the original graph is "
                        f"finite on these inputs", None, variable)
        for index, (before, after) in enumerate(zip(self.history.original.outputs,
                                                    self.fgraph.outputs)):
            self._compare("the rewrites (all together)", before, after, original[before],
                          rewritten[after], f"output {index}")

    def _check_replacement(self, check: _CheckedReplacement,
                           input_values: Sequence[Any]) -> None:
        record = check.record
        try:
            old_values, new_values = check.values(input_values)
        except Exception as error:
            raise BadRewriteError(
                f"{self.mode_name}: rewrite {record.name!r}: computing {_pairs(record)} "
                f"failed: {error}", record.name, None, None, None) from error
        for old, new, old_value, new_value in zip(record.old, record.new, old_values,
                                                  new_values):
            self._compare(record.name, old, new, old_value, new_value, _describe(old))

    def _compare(self, rewrite: str, old: Variable, new: Variable, old_value: Any,
                 new_value: Any, what: str) -> None:
        if _finite(old_value) and not _finite(new_value):
            raise InvalidValueError(
                f"{self.mode_name}: rewrite {rewrite!r} replaced {what} by {new}, which "
                f"computes NaN or inf where the replaced variable is finite", rewrite, new)
        if not old.type.values_eq_approx(_accept_stabilized(old_value, new_value), new_value):
            difference = _max_difference(old_value, new_value)
            detail = (f"max |difference| {difference:g}" if difference is not None
                      else f"values {_summary(old_value)} and {_summary(new_value)}")
            raise BadRewriteError(
                f"{self.mode_name}: rewrite {rewrite!r} replaced {what} by {new}, which "
                f"computes different values on these inputs: {detail}", rewrite, old, new,
                difference)


def _run(vm: PythonVM, input_values: Sequence[Any]) -> dict[Variable, Any]:
    """Run `vm` on copies of `input_values` (an op that wrongly overwrites an input cannot
    change the real inputs); returns every variable's value and empties the storage."""
    for cell, value in zip(vm.input_cells, input_values):
        cell[0] = copy.copy(value)
    vm()
    values = {variable: cell[0] for variable, cell in vm.storage.items()}
    for variable, cell in vm.storage.items():
        if not isinstance(variable, Constant):
            cell[0] = None
    for cell in vm.input_cells:
        cell[0] = None
    return values


def _toposorted_variables(fgraph: FunctionGraph) -> list[Variable]:
    return [output for node in fgraph.toposort() for output in node.outputs]


def _finite(value: Any) -> bool:
    """False if value is a float or complex array (or scalar) holding a NaN or an inf."""
    if isinstance(value, (np.ndarray, np.generic, float, complex)):
        array = np.asarray(value)
        if array.dtype.kind in "fc":
            return bool(np.all(np.isfinite(array)))
    return True


def _accept_stabilized(old_value: Any, new_value: Any) -> Any:
    """old_value with new_value wherever old is NaN/inf and new is finite: a rewrite may
    compute finite values where the original overflowed (stabilization)."""
    if not (isinstance(old_value, np.ndarray) and isinstance(new_value, np.ndarray)) \
            or old_value.shape != new_value.shape or old_value.dtype.kind not in "fc" \
            or new_value.dtype.kind not in "fc":
        return old_value
    improved = ~np.isfinite(old_value) & np.isfinite(new_value)
    return np.where(improved, new_value, old_value) if improved.any() else old_value


def _max_difference(old_value: Any, new_value: Any) -> float | None:
    try:
        old_array, new_array = np.asarray(old_value), np.asarray(new_value)
        if old_array.shape != new_array.shape or old_array.dtype.kind not in "biufc" \
                or new_array.dtype.kind not in "biufc":
            return None
        if old_array.size == 0:
            return 0.0
        with np.errstate(invalid="ignore", over="ignore"):
            difference = np.abs(old_array.astype(np.complex128 if old_array.dtype.kind == "c"
                                                 else np.float64) - new_array)
        return float(np.nanmax(difference)) if not np.all(np.isnan(difference)) \
            else float("nan")
    except (TypeError, ValueError):
        return None


def _summary(value: Any) -> str:
    shape = np.shape(value) if isinstance(value, (np.ndarray, np.generic)) else None
    return f"of shape {shape}" if shape is not None else repr(value)


def _describe(variable: Variable) -> str:
    if variable.owner is None:
        return f"{variable}"
    return f"{variable} (output of {variable.owner}, created at {variable.creation_site()})"


def _pairs(record: RewriteRecord) -> str:
    return ", ".join(f"{old} -> {new}" for old, new in zip(record.old, record.new))


DEBUG_MODE = DebugMode(name="DEBUG_MODE")
PREDEFINED_MODES["DEBUG_MODE"] = PREDEFINED_MODES["DebugMode"] = DEBUG_MODE
