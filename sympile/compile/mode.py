"""Modes: which graph rewrites run, and which backend runs the result.

A Mode pairs a rewriter with a backend. The rewriter is a callable on a FunctionGraph or a
RewriteQuery over sympile.tensor.rewriting.rewrite_db, resolved at each compilation (so rules
registered later are included). FAST_RUN selects the rewrites tagged 'fast_run' and runs on
config.backend (C by default), FAST_COMPILE those tagged 'fast_compile' (the merge pass) on the
Python backend; DEBUG_MODE (alias 'DebugMode', see
sympile.compile.debugmode) runs the FAST_RUN rewrites and checks at every call that they
changed no value.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from sympile.config import config
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import RewriteHistory
from sympile.graph.rewriting.db import RewriteQuery
from sympile.link.c.cmodule import compiler_available
from sympile.link.c.codegen import has_c_code
from sympile.link.c.linker import CVM
from sympile.link.python.vm import PythonVM
from sympile.tensor.rewriting import rewrite_db

Rewriter = Callable[[FunctionGraph], Any]


class Mode:
    """rewriter: a callable that rewrites a FunctionGraph in place, a RewriteQuery over
    rewrite_db, or None (no rewrite); backend: 'python' (the reference VM) or 'c' (the C
    backend: one compiled module per function, Python backend without a compiler);
    record_history: attach a RewriteHistory to each compiled graph, so that
    `f.maker.fgraph.rewrite_history` shows which rewrite changed what."""

    def __init__(self, rewriter: Rewriter | RewriteQuery | None = None,
                 backend: str | None = "python", name: str | None = None,
                 record_history: bool = False):
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"Mode: unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
        if rewriter is not None and not isinstance(rewriter, RewriteQuery) \
                and not callable(rewriter):
            raise TypeError(f"Mode: rewriter must be a callable, a RewriteQuery or None, got "
                            f"{rewriter!r}")
        self.rewriter = rewriter
        self.backend = backend
        self.name = name or f"Mode(backend={backend!r})"
        self.record_history = record_history

    def rewrite(self, fgraph: FunctionGraph) -> None:
        if self.record_history and getattr(fgraph, "rewrite_history", None) is None:
            fgraph.attach_feature(RewriteHistory())
        if isinstance(self.rewriter, RewriteQuery):
            rewrite_db.query_rewriter(self.rewriter)(fgraph)
        elif self.rewriter is not None:
            self.rewriter(fgraph)

    def link(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
             profile: bool = False):
        """The backend's VM for `fgraph` (timing each node when `profile`)."""
        backend = config.backend if self.backend is None else self.backend
        # Ops that run graphs of their own (the Scan Op) compile them like the outer graph.
        for node in fgraph.apply_nodes:
            prepare_node = getattr(node.op, "prepare_node", None)
            if prepare_node is not None:
                prepare_node(node, self, backend)
        return BACKENDS[backend](fgraph, input_storage, profile=profile)

    # -- derived modes ----------------------------------------------------------------------
    def _with_query(self, method: str, tags: tuple[str, ...]) -> Mode:
        if not isinstance(self.rewriter, RewriteQuery):
            raise TypeError(f"Mode.{method}: mode {self.name} does not select its rewrites by "
                            f"a RewriteQuery")
        query = getattr(self.rewriter, method)(*tags)
        return self._derived(query, f"{self.name}.{method}({', '.join(map(repr, tags))})")

    def _derived(self, rewriter: RewriteQuery, name: str) -> Mode:
        """A mode like this one (same class and settings) with another rewrite query."""
        return Mode(rewriter, self.backend, name, self.record_history)

    def including(self, *tags: str) -> Mode:
        """This mode plus the rewrites with one of `tags` (or named so)."""
        return self._with_query("including", tags)

    def excluding(self, *tags: str) -> Mode:
        """This mode without the rewrites with one of `tags` (or named so)."""
        return self._with_query("excluding", tags)

    def requiring(self, *tags: str) -> Mode:
        """This mode restricted to the rewrites with every one of `tags`."""
        return self._with_query("requiring", tags)

    def __str__(self):
        return self.name


def c_backend(fgraph: FunctionGraph, input_storage: list[list[Any]], profile: bool = False):
    """The C backend's VM for `fgraph`; the Python backend (after one warning) when there is
    no C compiler (config.cxx = '' or not runnable), and when no node has C code (nothing
    to compile)."""
    if not compiler_available():
        global _warned_no_compiler
        if not _warned_no_compiler:
            _warned_no_compiler = True
            warnings.warn(f"sympile: no usable C compiler (config.cxx = {config.cxx!r}); "
                          f"functions run on the Python backend, which is much slower",
                          stacklevel=2)
        return PythonVM(fgraph, input_storage, profile)
    if not any(has_c_code(node) for node in fgraph.apply_nodes):
        return PythonVM(fgraph, input_storage, profile)
    return CVM(fgraph, input_storage, profile)


_warned_no_compiler = False

BACKENDS: dict[str, Callable[..., Any]] = {"python": PythonVM, "c": c_backend}

PREDEFINED_MODES: dict[str, Mode] = {
    "FAST_RUN": Mode(RewriteQuery(include=("fast_run",)), backend=None, name="FAST_RUN"),
    "FAST_COMPILE": Mode(RewriteQuery(include=("fast_compile",)), name="FAST_COMPILE"),
}

# debugmode subclasses Mode, so it is imported once Mode exists; sympile.compile imports this
# module first, so the cycle always starts here.
from sympile.compile.debugmode import DEBUG_MODE  # noqa: E402

PREDEFINED_MODES["DEBUG_MODE"] = DEBUG_MODE
PREDEFINED_MODES["DebugMode"] = DEBUG_MODE


def get_mode(mode: str | Mode | None) -> Mode:
    """The Mode for `mode` (a Mode, a predefined name, or None for config.mode)."""
    if mode is None:
        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode in PREDEFINED_MODES:
        return PREDEFINED_MODES[mode]
    raise ValueError(f"unknown mode {mode!r}; expected a Mode or one of "
                     f"{', '.join(PREDEFINED_MODES)}")
