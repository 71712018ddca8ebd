"""Modes: which graph rewrites run, and which backend runs the result.

A Mode pairs a rewrite query with a backend. The rewrite databases are filled by
sympile.tensor.rewriting; while a database holds no rewrite, a mode runs the graph as the user
wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sympile.config import config
from sympile.graph.fgraph import FunctionGraph
from sympile.link.python.vm import PythonVM

Rewriter = Callable[[FunctionGraph], None]


class Mode:
    """rewriter: a callable that rewrites a FunctionGraph in place (None: none);
    backend: 'python' (the reference VM)."""

    def __init__(self, rewriter: Rewriter | None = None, backend: str = "python",
                 name: str | None = None):
        if backend not in BACKENDS:
            raise ValueError(f"Mode: unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
        self.rewriter = rewriter
        self.backend = backend
        self.name = name or f"Mode(backend={backend!r})"

    def rewrite(self, fgraph: FunctionGraph) -> None:
        if self.rewriter is not None:
            self.rewriter(fgraph)

    def link(self, fgraph: FunctionGraph, input_storage: list[list[Any]]):
        return BACKENDS[self.backend](fgraph, input_storage)

    def __str__(self):
        return self.name


BACKENDS: dict[str, Callable[..., Any]] = {"python": PythonVM}

PREDEFINED_MODES: dict[str, Mode] = {
    "FAST_RUN": Mode(name="FAST_RUN"),
    "FAST_COMPILE": Mode(name="FAST_COMPILE"),
}


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
