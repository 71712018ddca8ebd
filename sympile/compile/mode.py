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
from concurrent.futures import Future
from typing import Any

from sympile.config import OPTIMIZERS, config, linker_name, optimizer_name
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import RewriteHistory
from sympile.graph.rewriting.db import RewriteQuery
from sympile.graph.utils import user_stacklevel
from sympile.link.c.cmodule import compiler_available, toolchain_problem
from sympile.link.c.codegen import has_c_code
from sympile.link.c.linker import CVM, build_in_background
from sympile.link.python.vm import PythonVM
from sympile.tensor.rewriting import rewrite_db

Rewriter = Callable[[FunctionGraph], Any]


DEFAULT = "default"


class Mode:
    """How a function is compiled: the rewrites it applies and the backend it runs on.

    rewriter: a callable that rewrites a FunctionGraph in place, a RewriteQuery over
    rewrite_db, or None (no rewrite); backend: 'python' (the reference VM), 'c' (the C
    backend: one compiled module per function, Python backend without a compiler) or None
    (config.backend); record_history: attach a RewriteHistory to each compiled graph, so that
    `f.maker.fgraph.rewrite_history` shows which rewrite changed what.

    Theano's form, by keyword: Mode(linker='py', optimizer='fast_compile'). optimizer is one
    of config.OPTIMIZERS' names (None: no rewrite), a RewriteQuery or a callable; linker
    'py' is the Python backend, 'cvm', 'c', 'c|py', 'vm' config.backend. 'default' (either)
    follows config.optimizer / config.linker at each compilation.
    """

    def __init__(self, rewriter: Rewriter | RewriteQuery | None = None,
                 backend: str | None = "python", name: str | None = None,
                 record_history: bool = False, *, linker: str | None = None,
                 optimizer: Any = DEFAULT):
        theano_form = linker is not None or optimizer is not DEFAULT
        if theano_form and (rewriter is not None or backend != "python"):
            raise TypeError("Mode: give rewriter/backend or Theano's linker/optimizer, not both")
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"Mode: unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
        self._optimizer = self._linker = None
        if theano_form:
            self._optimizer = optimizer if optimizer in (DEFAULT, None) \
                or not isinstance(optimizer, str) \
                else optimizer_name(optimizer, "Mode: optimizer")
            rewriter = None if isinstance(optimizer, str) or optimizer is None else optimizer
            self._linker = DEFAULT if linker in (None, DEFAULT) \
                else linker_name(linker, "Mode: linker")
            backend = None
        if rewriter is not None and not isinstance(rewriter, RewriteQuery) \
                and not callable(rewriter):
            raise TypeError(f"Mode: rewriter must be a callable, a RewriteQuery or None, got "
                            f"{rewriter!r} (Theano's names go by keyword: "
                            f"Mode(linker='py', optimizer='fast_run'))")
        self._rewriter = rewriter
        self._backend = backend
        self.name = name or (f"Mode(linker={self._linker!r}, optimizer={optimizer!r})"
                             if theano_form else f"Mode(backend={backend!r})")
        self.record_history = record_history

    @property
    def rewriter(self) -> Rewriter | RewriteQuery | None:
        """The rewriter, with Theano's optimizer names resolved (config.optimizer for
        'default') when asked."""
        if not isinstance(self._optimizer, str):
            return self._rewriter
        name = config.optimizer if self._optimizer == DEFAULT else self._optimizer
        tags = OPTIMIZERS[name]
        return None if tags is None else RewriteQuery(include=tags)

    @property
    def linker(self) -> str:
        """Theano's linker name: 'py' for the Python backend, else 'cvm'."""
        if self._linker is not None:
            return config.linker if self._linker == DEFAULT else self._linker
        return "py" if self.backend == "python" else "cvm"

    @property
    def optimizer(self) -> Rewriter | RewriteQuery | None:
        """Theano's name for the rewriter."""
        return self.rewriter

    @property
    def backend(self) -> str | None:
        """'python', 'c', or None for config.backend."""
        if self._linker is None:
            return self._backend
        return "python" if self.linker == "py" else None

    @property
    def runs_python_vm(self) -> bool:
        """Whether functions of this mode run on the Python backend: chosen, or the C backend
        without a compiler."""
        backend = config.backend if self.backend is None else self.backend
        return backend == "python" or not compiler_available()

    @property
    def allow_gc(self) -> bool:
        """Whether functions free their intermediates after each call ('_nogc' linkers do
        not; otherwise config.allow_gc)."""
        if self._linker is None:
            return config.allow_gc
        return config.allow_gc and not self.linker.endswith("_nogc")

    def rewrite(self, fgraph: FunctionGraph) -> None:
        if self.record_history and getattr(fgraph, "rewrite_history", None) is None:
            fgraph.attach_feature(RewriteHistory())
        if isinstance(self.rewriter, RewriteQuery):
            rewrite_db.query_rewriter(self.rewriter)(fgraph)
        elif self.rewriter is not None:
            self.rewriter(fgraph)

    def link(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
             profile: bool = False, backend: str | None = None):
        """The backend's VM for `fgraph` (timing each node when `profile`); backend: this
        mode's when None."""
        if backend is None:
            backend = config.backend if self.backend is None else self.backend
        self._prepare_nodes(fgraph, backend)
        return BACKENDS[backend](fgraph, input_storage, profile=profile)

    def runs_python_vm_for(self, fgraph: FunctionGraph) -> bool:
        """Whether a function of this mode runs `fgraph` (rewritten) on the Python VM: this
        mode does, or no node of it has C code (nothing to compile)."""
        return self.runs_python_vm or not _has_c_code(fgraph)

    def compiles_in_background(self, profile: bool) -> bool:
        """Whether a function of this mode returns before its C is compiled
        (config.compile_async: see link_in_background): it runs on the C backend with a
        compiler, it is not profiled, and the mode links as Mode does."""
        return (config.compile_async and not profile and not self.runs_python_vm
                and type(self).link is Mode.link)

    def link_in_background(self, fgraph: FunctionGraph, input_storage: list[list[Any]]
                           ) -> CVM | Future:
        """The C backend's VM for `fgraph`, or a Future of it while its module compiles on a
        background thread (sympile.link.c.linker.build_in_background); the Python VM when
        no node has C code."""
        self._prepare_nodes(fgraph, "c")
        if not _has_c_code(fgraph):
            return PythonVM(fgraph, input_storage)
        return build_in_background(fgraph, input_storage)

    def _prepare_nodes(self, fgraph: FunctionGraph, backend: str) -> None:
        # Ops that run graphs of their own (the Scan Op) compile them like the outer graph.
        for node in fgraph.apply_nodes:
            prepare_node = getattr(node.op, "prepare_node", None)
            if prepare_node is not None:
                prepare_node(node, self, backend)

    # -- derived modes ----------------------------------------------------------------------
    def _with_query(self, method: str, tags: tuple[str, ...]) -> Mode:
        if not isinstance(self.rewriter, RewriteQuery):
            raise TypeError(f"Mode.{method}: mode {self.name} does not select its rewrites by "
                            f"a RewriteQuery")
        query = getattr(self.rewriter, method)(*tags)
        return self._derived(query, f"{self.name}.{method}({', '.join(map(repr, tags))})")

    def _derived(self, rewriter: RewriteQuery, name: str) -> Mode:
        """A mode like this one (same class and settings) with another rewrite query."""
        if self._linker is not None:
            return Mode(linker=self._linker, optimizer=rewriter, name=name,
                        record_history=self.record_history)
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

    def __reduce__(self):
        # A predefined mode unpickles as itself (get_mode by name), others by their state.
        if PREDEFINED_MODES.get(self.name) is self:
            return get_mode, (self.name,)
        return super().__reduce__()

    def __str__(self):
        return self.name


def c_backend(fgraph: FunctionGraph, input_storage: list[list[Any]], profile: bool = False):
    """The C backend's VM for `fgraph`; the Python backend when no node has C code (nothing
    to compile), and when this machine cannot compile C (no compiler, or no Python
    headers): then config.backend becomes 'python', after one warning at the user's line
    saying how to get the C backend."""
    problem = toolchain_problem()
    if problem is not None:
        warnings.warn(f"sympile: {problem}; functions run on the Python backend "
                      f"(config.backend is now 'python'), which is much slower. For the C "
                      f"backend install a compiler and Python's headers (apt-get install gcc "
                      f"python3-dev), or name a compiler: SYMPILE_FLAGS=cxx=/path/to/cc",
                      stacklevel=user_stacklevel())
        config.backend = "python"
        return PythonVM(fgraph, input_storage, profile)
    if not _has_c_code(fgraph):
        return PythonVM(fgraph, input_storage, profile)
    return CVM(fgraph, input_storage, profile)


def _has_c_code(fgraph: FunctionGraph) -> bool:
    return any(has_c_code(node) for node in fgraph.apply_nodes)


BACKENDS: dict[str, Callable[..., Any]] = {"python": PythonVM, "c": c_backend}

# Theano's optdb (the database every mode's rewrites come from) and its queries:
# optdb.query(OPT_FAST_RUN).optimize(fgraph) rewrites a graph as FAST_RUN does; the
# predefined modes are these queries.
optdb = rewrite_db
OPT_NONE = RewriteQuery()
OPT_MERGE = RewriteQuery(include=("merge",))
OPT_FAST_RUN = RewriteQuery(include=("fast_run",))
OPT_FAST_COMPILE = RewriteQuery(include=("fast_compile",))

PREDEFINED_MODES: dict[str, Mode] = {
    # Theano's default mode: config.optimizer's rewrites on config.linker's backend.
    "Mode": Mode(linker=DEFAULT, optimizer=DEFAULT, name="Mode"),
    "FAST_RUN": Mode(OPT_FAST_RUN, backend=None, name="FAST_RUN"),
    "FAST_COMPILE": Mode(OPT_FAST_COMPILE, name="FAST_COMPILE"),
}
# The modes that subclass Mode register themselves when imported (sympile.compile imports
# them): DEBUG_MODE and DebugMode (debugmode.py), NanGuardMode (monitormode.py).
# Theano's compile.mode.FAST_RUN and FAST_COMPILE: the predefined modes themselves.
FAST_RUN = PREDEFINED_MODES["FAST_RUN"]
FAST_COMPILE = PREDEFINED_MODES["FAST_COMPILE"]



def get_default_mode() -> Mode:
    """Theano's get_default_mode: the Mode config.mode names."""
    return get_mode(None)


def get_mode(mode: str | Mode | None) -> Mode:
    """The Mode for `mode` (a Mode, a predefined name, or None for config.mode). As in
    Theano, the default mode (None) also includes, excludes and requires the rewrite tags
    of config.optimizer_including, optimizer_excluding and optimizer_requiring."""
    if mode is None:
        return _with_tag_flags(get_mode(config.mode))
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode in PREDEFINED_MODES:
        return PREDEFINED_MODES[mode]
    raise ValueError(f"unknown mode {mode!r}; expected a Mode or one of "
                     f"{', '.join(PREDEFINED_MODES)}")


def _with_tag_flags(mode: Mode) -> Mode:
    for method, flag in (("excluding", "optimizer_excluding"),
                         ("including", "optimizer_including"),
                         ("requiring", "optimizer_requiring")):
        tags = getattr(config, flag)
        if tags:
            if not isinstance(mode.rewriter, RewriteQuery):
                raise ValueError(f"config.{flag}={':'.join(tags)!r}: the default mode "
                                 f"{mode.name} does not select its rewrites by tags")
            mode = getattr(mode, method)(*tags)
    return mode
