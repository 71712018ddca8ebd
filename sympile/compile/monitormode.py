"""MonitorMode and NanGuardMode (Theano's): a callback around every node of a function.

MonitorMode(pre_func, post_func) calls pre_func(i, node, fn) before node i computes and
post_func(i, node, fn) after; fn.inputs and fn.outputs are the node's storage cells (one-item
lists holding the values), as in Theano. NanGuardMode raises NanGuardError as soon as a node
reads or computes a NaN, an infinity or a value above 1e10 in magnitude (each check can be
turned off). Both run on the Python backend, every node by its perform(), so that each node
can be watched; a failed check stops the call before any update is applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sympile.compile.mode import DEFAULT, PREDEFINED_MODES, Mode
from sympile.graph.fgraph import FunctionGraph
from sympile.link.python.vm import PythonVM

__all__ = ["MonitorMode", "NanGuardError", "NanGuardMode"]


class _NodeStorage:
    """Theano's `fn` argument of the callbacks: the node's input and output cells."""

    def __init__(self, inputs: list[list[Any]], outputs: list[list[Any]]):
        self.inputs = inputs
        self.outputs = outputs


class MonitoredVM(PythonVM):
    """PythonVM calling `pre(i, node, fn)` and `post(i, node, fn)` around node i."""

    def __init__(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
                 profile: bool = False, pre: Callable | None = None,
                 post: Callable | None = None):
        super().__init__(fgraph, input_storage, profile)
        self.thunks = [(node, _watched(index, perform, pre, post, input_cells, output_cells),
                        input_cells, output_cells)
                       for index, (node, perform, input_cells, output_cells)
                       in enumerate(self.thunks)]
        if self._lazy_program is not None:
            self._lazy_program = self._program(self.steps)


def _watched(index: int, perform: Callable, pre: Callable | None, post: Callable | None,
             input_cells: list[list[Any]], output_cells: list[list[Any]]) -> Callable:
    storage = _NodeStorage(input_cells, output_cells)

    def run(node, values, outputs):
        if pre is not None:
            pre(index, node, storage)
        perform(node, values, outputs)
        if post is not None:
            post(index, node, storage)
    return run


class MonitorMode(Mode):
    """Theano's MonitorMode: pre_func / post_func around every node (Python backend)."""

    def __init__(self, pre_func: Callable | None = None, post_func: Callable | None = None,
                 optimizer: Any = DEFAULT, linker: str | None = None,
                 name: str | None = None):
        for label, func in (("pre_func", pre_func), ("post_func", post_func)):
            if func is not None and not callable(func):
                raise TypeError(f"{type(self).__name__}: {label} must be callable or None, "
                                f"got {func!r}")
        if linker not in (None, "py"):
            raise ValueError(f"{type(self).__name__}: runs on the Python backend (linker 'py');"
                             f" got linker={linker!r}")
        super().__init__(linker="py", optimizer=optimizer, name=name or type(self).__name__)
        self.pre_func = pre_func
        self.post_func = post_func

    def link(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
             profile: bool = False):
        for node in fgraph.apply_nodes:
            prepare_node = getattr(node.op, "prepare_node", None)
            if prepare_node is not None:
                prepare_node(node, self, "python")
        return MonitoredVM(fgraph, input_storage, profile, self.pre_func, self.post_func)

    def _derived(self, rewriter, name: str) -> MonitorMode:
        derived = MonitorMode(self.pre_func, self.post_func, optimizer=rewriter, name=name)
        derived.record_history = self.record_history
        return derived


class NanGuardError(AssertionError):
    """A node read or computed a NaN, an infinity or a too large value (NanGuardMode)."""


BIG = 1e10


class NanGuardMode(MonitorMode):
    """Theano's NanGuardMode: raise NanGuardError at the first node that reads or computes
    NaN (nan_is_error), +-inf (inf_is_error) or a value above 1e10 in magnitude
    (big_is_error). The node, the variable and where it was created are named."""

    def __init__(self, nan_is_error: bool = True, inf_is_error: bool = True,
                 big_is_error: bool = True, optimizer: Any = DEFAULT,
                 linker: str | None = None, name: str | None = None):
        self.nan_is_error = bool(nan_is_error)
        self.inf_is_error = bool(inf_is_error)
        self.big_is_error = bool(big_is_error)
        super().__init__(self._check_inputs, self._check_outputs, optimizer, linker,
                         name or "NanGuardMode")

    def _derived(self, rewriter, name: str) -> NanGuardMode:
        derived = NanGuardMode(self.nan_is_error, self.inf_is_error, self.big_is_error,
                               optimizer=rewriter, name=name)
        derived.record_history = self.record_history
        return derived

    def _check_inputs(self, index: int, node, fn: _NodeStorage) -> None:
        # Values computed by other nodes were checked when computed; inputs and constants
        # are checked where they are read.
        for variable, cell in zip(node.inputs, fn.inputs):
            if variable.owner is None:
                self._check(node, variable, cell[0], "reads")

    def _check_outputs(self, index: int, node, fn: _NodeStorage) -> None:
        for variable, cell in zip(node.outputs, fn.outputs):
            self._check(node, variable, cell[0], "computed")

    def _check(self, node, variable, value, verb: str) -> None:
        if not isinstance(value, (np.ndarray, np.generic)) or value.dtype.kind not in "fc":
            return
        problem = None
        if self.nan_is_error and np.isnan(value).any():
            problem = "NaN"
        elif self.inf_is_error and np.isinf(value).any():
            problem = "an infinity"
        elif self.big_is_error and (np.abs(value[np.isfinite(value)]) > BIG).any():
            problem = f"a value above {BIG:g} in magnitude"
        if problem is not None:
            where = variable.creation_site() if variable.owner is not None else "an input"
            raise NanGuardError(f"NanGuardMode: {node.op} {verb} {problem} in {variable} "
                                f"(created at {where})")


PREDEFINED_MODES["NanGuardMode"] = NanGuardMode()
