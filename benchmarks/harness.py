"""Timing, peers and reporting shared by the benchmarks (not part of sympile).

A benchmark case is a set of implementations of one piece of work, each a callable that does
`units` units of it (examples, elements, calls) per invocation. Every implementation is timed
the same way in the same process (warm-up, then the median of several repeats) and reported
as seconds per unit, units per second and its ratio to sympile's fastest style; and again
with one core kept busy by a spinning process the harness starts and stops (busy_core).
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

PEERS = ("pytensor", "jax", "torch")


@dataclass
class Steps:
    """A training benchmark's implementation: `run()` does its steps; `parameters()` gives the
    trained parameters as numpy arrays (tests compare implementations by them)."""

    run: Callable[[], Any]
    parameters: Callable[[], list[np.ndarray]]

    def __call__(self) -> None:
        self.run()


def available_peers(requested: list[str]) -> tuple[list[str], list[str]]:
    """(importable peers, notes on those skipped), in the requested order."""
    found, notes = [], []
    for name in requested:
        if name not in PEERS:
            raise SystemExit(f"--compare: unknown peer {name!r}; known: {', '.join(PEERS)}")
        try:
            importlib.import_module(name)
        except ImportError as error:
            notes.append(f"{name}: skipped, not installed ({error})")
        else:
            found.append(name)
    return found, notes


def peer_versions(peers: list[str]) -> dict[str, str]:
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for name in ["sympile", *peers]:
        versions[name] = getattr(importlib.import_module(name), "__version__", "?")
    return versions


# Seconds to wait before timing an implementation: the thread pools of the one timed before
# (OpenMP's, XLA's, OpenBLAS's) spin for up to milliseconds after their work, on the cores
# the next one needs (sympile's fused loop on 1e7 elements took 66 ms instead of 13 right
# after torch and jax had run).
SETTLE_SECONDS = 0.2


def time_callable(run: Callable[[], Any], repeats: int, min_seconds: float = 0.05) -> float:
    """Median seconds of one `run()`; each repeat loops `run` enough times to last
    `min_seconds`, so short calls are not dominated by the timer."""
    time.sleep(SETTLE_SECONDS)
    run()
    start = time.perf_counter()
    run()
    once = max(time.perf_counter() - start, 1e-9)
    inner = max(1, int(min_seconds / once))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            run()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


@dataclass
class Case:
    """One piece of work: `implementations` maps 'library style' labels to callables doing
    `units` units of `unit` each; labels starting with 'sympile' are ours."""

    workload: str
    size: str
    unit: str
    units: float
    implementations: dict[str, Callable[[], Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Row:
    workload: str
    size: str
    implementation: str
    seconds_per_call: float
    units_per_second: float
    unit: str
    ratio_to_sympile: float
    busy_seconds_per_call: float | None = None
    busy_ratio_to_sympile: float | None = None


def _ratios(seconds: dict[str, float]) -> dict[str, float]:
    """Each time over sympile's best (above 1: sympile is faster)."""
    ours = [s for label, s in seconds.items() if label.startswith("sympile")]
    best = min(ours) if ours else float("nan")
    return {label: s / best for label, s in seconds.items()}


def measure(case: Case, repeats: int, busy: bool = True) -> list[Row]:
    """Time every implementation of `case`, idle and then (busy) with one core kept busy;
    the ratios are each time over sympile's best time in the same condition."""
    idle = {label: time_callable(run, repeats) for label, run in case.implementations.items()}
    loaded: dict[str, float] = {}
    if busy:
        with busy_core():
            loaded = {label: time_callable(run, repeats)
                      for label, run in case.implementations.items()}
    idle_ratios, loaded_ratios = _ratios(idle), _ratios(loaded)
    return [Row(case.workload, case.size, label, s, case.units / s, case.unit,
                idle_ratios[label], loaded.get(label), loaded_ratios.get(label))
            for label, s in idle.items()]


def format_table(rows: list[Row]) -> str:
    busy = any(row.busy_seconds_per_call is not None for row in rows)
    header = (f"{'workload':<28}{'size':<20}{'implementation':<30}{'time/call':>12}"
              f"{'throughput':>22}{'t/sympile':>10}"
              + (f"{'busy time':>12}{'t/sympile':>10}" if busy else ""))
    lines = [header, "-" * len(header)]
    previous = None
    for row in rows:
        key = (row.workload, row.size)
        if previous is not None and key != previous:
            lines.append("")
        previous = key
        throughput = f"{row.units_per_second:,.4g} {row.unit}/s"
        line = (f"{row.workload:<28}{row.size:<20}{row.implementation:<30}"
                f"{format_seconds(row.seconds_per_call):>12}{throughput:>22}"
                f"{row.ratio_to_sympile:>10.2f}")
        if row.busy_seconds_per_call is not None:
            line += (f"{format_seconds(row.busy_seconds_per_call):>12}"
                     f"{row.busy_ratio_to_sympile:>10.2f}")
        lines.append(line)
    return "\n".join(lines)


def format_seconds(seconds: float) -> str:
    for scale, suffix in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {suffix}"
    return f"{seconds * 1e9:.3g} ns"


def write_json(path: str, rows: list[Row], extra: dict[str, Any]) -> None:
    with open(path, "w") as handle:
        json.dump({**extra, "rows": [asdict(row) for row in rows]}, handle, indent=2)


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy_core() -> Iterator[None]:
    """One core kept busy by a spinning process (a data pipeline, a second job) while the
    block runs; the process is stopped after."""
    spinner = multiprocessing.Process(target=_spin, daemon=True)
    spinner.start()
    try:
        time.sleep(SETTLE_SECONDS)
        yield
    finally:
        spinner.terminate()
        spinner.join()


def print_ratio_table(results: dict[str, dict[str, float]], peers: list[str],
                      width: int = 10) -> None:
    """One line per case of sympile's results: each library's milliseconds and, for the
    peers, their ratio to sympile (above 1: sympile is faster)."""
    reference = results.get("sympile", {})
    for case in reference:
        cells = [f"sympile {reference[case] * 1e3:9.2f} ms"]
        for name in peers:
            if case in results.get(name, {}):
                seconds = results[name][case]
                cells.append(f"{name} {seconds * 1e3:9.2f} ms ({seconds / reference[case]:.2f})")
        print(f"{case:{width}s} " + "   ".join(cells))


def run_workers(module: str, libraries: list[str], arguments: list[str], busy: bool,
                skip_failures: bool) -> dict[str, Any]:
    """Each library's results, from `python -m <module> --worker <library> <arguments>` in a
    process of its own (its last line of output, JSON), with one core kept busy by a
    spinning process while they run when `busy`. A worker that fails raises, or with
    skip_failures is reported and left out."""
    results = {}
    with busy_core() if busy else nullcontext():
        for library in libraries:
            output = subprocess.run([sys.executable, "-m", module, "--worker", library,
                                     *arguments], capture_output=True, text=True,
                                    check=not skip_failures)
            if output.returncode != 0:
                print(f"{library}: failed: {output.stderr.strip().splitlines()[-1:]}")
                continue
            results[library] = json.loads(output.stdout.strip().splitlines()[-1])
    return results
