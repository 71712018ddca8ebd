"""The profiler: `function(..., profile=True)` gives `f.profile`, a ProfileStats.

It reports the time and calls of each node and op type, which nodes ran their perform()
instead of C code, the time spent in calls of the function, and how compilation split into
rewriting, code generation, C compilation and module loading.
"""

from __future__ import annotations

import atexit
import sys
from collections import defaultdict
from typing import Any, TextIO

from sympile.compile.mode import DEFAULT, Mode


class ProfileStats:
    """Timings of one compiled function (Theano's ProfileStats). The VM records the node
    times; Function records calls."""

    def __init__(self, name: str | None, rewrite_s: float):
        self.name = name
        self.rewrite_s = rewrite_s
        self.calls = 0
        self.call_s = 0.0
        self.vm: Any = None

    @property
    def link_times(self) -> dict[str, Any]:
        return dict(getattr(self.vm, "build_times", {}))

    def node_times(self) -> list[tuple[Any, float, int, bool]]:
        """(node, seconds, calls, ran perform?) for every node, in execution order."""
        fallback = set(getattr(self.vm, "fallback_nodes", self.vm.nodes))
        return [(node, seconds, calls, node in fallback)
                for node, (seconds, calls) in zip(self.vm.nodes, self.vm.node_profile())]

    def op_times(self) -> list[tuple[str, float, int, int, bool]]:
        """(op type, seconds, calls, nodes, any ran perform?) by op type, slowest first."""
        totals: dict[str, list[Any]] = defaultdict(lambda: [0.0, 0, 0, False])
        for node, seconds, calls, fallback in self.node_times():
            entry = totals[_op_type(node.op)]
            entry[0] += seconds
            entry[1] += calls
            entry[2] += 1
            entry[3] |= fallback
        rows = [(name, *values) for name, values in totals.items()]
        return sorted(rows, key=lambda row: -row[1])

    def summary(self, file: TextIO | None = None, n_nodes: int = 20) -> None:
        """Print the profile (to stdout by default)."""
        out = file or sys.stdout
        node_rows = self.node_times()
        node_total = sum(seconds for _, seconds, _, _ in node_rows) or 1e-300
        backend = "c" if "codegen" in self.link_times else "python"
        print(f"Function profile: {self.name or '<unnamed>'}", file=out)
        per_call = 1e6 * self.call_s / self.calls if self.calls else 0.0
        print(f"  {self.calls} calls, {self.call_s:.6f} s in calls ({per_call:.2f} us per call);"
              f" {node_total if node_rows else 0.0:.6f} s in nodes", file=out)
        print(f"  compile: {self._compile_line()}", file=out)
        fallbacks = [node for node, _, _, fallback in node_rows if fallback]
        print(f"  backend {backend}: {len(node_rows)} nodes, {len(fallbacks)} ran perform()",
              file=out)
        print("  per op type:   seconds       %    calls  nodes  op type", file=out)
        for name, seconds, calls, nodes, fallback in self.op_times():
            print(f"              {seconds:10.6f}  {100 * seconds / node_total:5.1f}  "
                  f"{calls:7d}  {nodes:5d}  {name}{' (perform)' if fallback else ''}",
                  file=out)
        print(f"  per node (slowest {n_nodes}):   seconds       %    calls  node", file=out)
        for node, seconds, calls, fallback in sorted(node_rows, key=lambda r: -r[1])[:n_nodes]:
            print(f"              {seconds:10.6f}  {100 * seconds / node_total:5.1f}  "
                  f"{calls:7d}  {node.op}{' (perform)' if fallback else ''}", file=out)
        if fallbacks and backend == "c":
            print("  nodes without C code (they ran perform()):", file=out)
            for node in fallbacks:
                print(f"    {node.op}  -> {node.outputs[0].creation_site()}", file=out)

    def _compile_line(self) -> str:
        link = self.link_times
        if not link:
            return f"rewrite {self.rewrite_s:.4f} s"
        hit = " (cache hit)" if link.get("cache_hit") else ""
        return (f"rewrite {self.rewrite_s:.4f} s, codegen {link['codegen']:.4f} s, "
                f"C compile {link['compile']:.4f} s{hit}, load {link['load']:.4f} s")


def _op_type(op: Any) -> str:
    scalar_op = getattr(op, "scalar_op", None)
    name = type(op).__name__
    return f"{name}{{{scalar_op}}}" if scalar_op is not None else name


_AT_EXIT: list[ProfileStats] = []


def print_at_exit(stats: ProfileStats) -> None:
    """Print `stats`' summary when Python exits (config.profile=True, as Theano's
    profile flag), to stderr, after those of the functions compiled before it."""
    if not _AT_EXIT:
        atexit.register(_print_all)
    _AT_EXIT.append(stats)


def _print_all() -> None:
    for stats in _AT_EXIT:
        if stats.vm is not None:
            stats.summary(file=sys.stderr)


class ProfileMode(Mode):
    """Theano's ProfileMode(linker=..., optimizer=...): every function compiled with it is
    profiled (function(profile=True)); print_summary() prints their profiles, in the order
    they were compiled."""

    def __init__(self, linker: str | None = None, optimizer: Any = DEFAULT,
                 name: str | None = None):
        super().__init__(linker=linker, optimizer=optimizer, name=name or "ProfileMode")
        self.profiles: list[ProfileStats] = []

    def _derived(self, rewriter: Any, name: str) -> ProfileMode:
        derived = ProfileMode(self._linker, rewriter, name)
        derived.record_history = self.record_history
        derived.profiles = self.profiles
        return derived

    def print_summary(self, file: TextIO | None = None) -> None:
        for stats in self.profiles:
            stats.summary(file=file)
