"""Theano's linkers (`theano.gof.link`, `theano.gof.cc`): run a FunctionGraph as it stands,
with no rewrite, on one backend: `PerformLinker().accept(fgraph).make_function()` on the
Python backend (each op's perform), `CLinker()` and `OpWiseCLinker()` on the C backend,
`DualLinker()` on both, checking that they agree. make_function returns a callable of the
graph's inputs: the one output itself (unpack_single=True), else the list of outputs.
Built on function() with Mode(linker=..., optimizer=None). accept()'s no_recycling (which
outputs Theano must not reuse) is taken and left to sympile, which never hands out a buffer
that a later call overwrites unless an output asks for borrow=True."""

from __future__ import annotations

import copy
from typing import Any

from sympile.compile.function import function
from sympile.compile.mode import Mode
from sympile.graph.fgraph import FunctionGraph

__all__ = ["Linker", "PerformLinker", "CLinker", "OpWiseCLinker", "DualLinker"]


class Linker:
    """A backend that makes a callable of the FunctionGraph it accepted."""

    backend = "py"

    def __init__(self, allow_gc: bool | None = None, schedule: Any = None):
        if schedule is not None:
            raise NotImplementedError(f"{type(self).__name__}: a custom schedule; sympile "
                                      f"orders the nodes itself")
        self.allow_gc = allow_gc
        self.fgraph: FunctionGraph | None = None

    def accept(self, fgraph: FunctionGraph, no_recycling: Any = None,
               profile: Any = None) -> Linker:
        """This linker for `fgraph`; a copy of it if this one already holds another graph."""
        if not isinstance(fgraph, FunctionGraph):
            raise TypeError(f"{type(self).__name__}.accept: expected a FunctionGraph, got "
                            f"{fgraph!r}")
        if profile is not None:
            raise NotImplementedError(f"{type(self).__name__}.accept: profile; profile the "
                                      f"function with function(..., profile=True)")
        linker = self if self.fgraph in (None, fgraph) else copy.copy(self)
        linker.fgraph = fgraph
        return linker

    def _compile(self, backend: str, unpack_single: bool):
        if self.fgraph is None:
            raise ValueError(f"{type(self).__name__}.make_function: call accept(fgraph) first")
        outputs = list(self.fgraph.outputs)
        linker = backend if self.allow_gc in (None, True) else backend + "_nogc"
        return function(list(self.fgraph.inputs),
                        outputs[0] if unpack_single and len(outputs) == 1 else outputs,
                        mode=Mode(linker=linker, optimizer=None), accept_inplace=True,
                        on_unused_input="ignore")

    def make_function(self, unpack_single: bool = True):
        """A callable of the graph's inputs that returns its outputs."""
        return self._compile(self.backend, unpack_single)


class PerformLinker(Linker):
    """Every node's perform(), in order (sympile's Python backend)."""

    backend = "py"


class CLinker(Linker):
    """The graph as generated C (sympile's C backend; nodes without C code run perform)."""

    backend = "c"


class OpWiseCLinker(CLinker):
    """Theano's node-by-node C linker: here the same as CLinker."""


class DualLinker(Linker):
    """Both backends on every call; an AssertionError naming the output where their results
    differ (by the output Type's values_eq_approx), else the C backend's results."""

    def __init__(self, checker: Any = None, allow_gc: bool | None = None, schedule: Any = None):
        super().__init__(allow_gc, schedule)
        self.checker = checker

    def make_function(self, unpack_single: bool = True):
        python, c = (self._compile(backend, False) for backend in ("py", "c"))
        outputs = self.fgraph.outputs

        def both(*arguments):
            expected, got = python(*arguments), c(*arguments)
            for index, (variable, left, right) in enumerate(zip(outputs, expected, got)):
                agree = self.checker(left, right) if self.checker is not None \
                    else variable.type.values_eq_approx(left, right)
                if not agree:
                    raise AssertionError(f"DualLinker: output {index} ({variable}) differs: "
                                         f"Python backend {left!r}, C backend {right!r}")
            return got[0] if unpack_single and len(got) == 1 else got

        return both
