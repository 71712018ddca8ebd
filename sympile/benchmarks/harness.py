"""Timing, peers and reporting shared by the benchmarks (not part of sympile).

A benchmark case is a set of implementations of one piece of work, each a callable that does
it. Every implementation is timed the same way (warm-up, then the median of several repeats),
each library in a process of its own (run_workers), and reported as seconds per call or step,
throughput, and its ratio to sympile's implementation in the same call style; and again with
one core kept busy by a spinning process the harness starts and stops (busy_core).
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
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


def add_common_options(parser: Any, repeats: int, compare: str | None = None,
                       peers: str = "") -> None:
    """The options most suites share: --repeats (the median of that many timings is
    reported) and, when the suite has peers, --compare (the peers from `peers`)."""
    parser.add_argument("--repeats", type=int, default=repeats,
                        help="timed repeats; the median is reported (default: %(default)s)")
    if compare is not None:
        parser.add_argument("--compare", default=compare,
                            help=f"peers, comma-separated, from {peers} (default: "
                                 f"%(default)s)")


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
    """One piece of work: `implementations` maps 'library style' labels to callables; one
    call of any of them does `count` times one `per` (a call, a step, an evaluation), which
    is `units` of `unit` (calls, elements, examples). Labels starting with 'sympile' are
    ours."""

    workload: str
    size: str
    unit: str
    units: float
    per: str = "run"
    count: int = 1
    # The physical limit the work is bound by ("read": bytes read per `per`, against the
    # machine's read bandwidth; "fma": multiply-add flops per `per`, against its peak) and
    # that amount of work per `per` (sympile.benchmarks.machine).
    limit: str = ""
    work: float = 0.0
    implementations: dict[str, Callable[[], Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.workload}, {self.size}"


@dataclass
class Row:
    """One implementation's result. Times are seconds per `per` (one call, one training
    step, ...); ratios are the time over that of `compared_with`, sympile's implementation in
    the matching call style (above 1: sympile is faster)."""

    workload: str
    size: str
    implementation: str
    seconds: float
    per: str
    units_per_second: float
    unit: str
    compared_with: str | None
    ratio: float | None
    busy_seconds: float | None = None
    busy_ratio: float | None = None
    # The fraction of the machine's limit the row reaches (the case's work per second over
    # the read bandwidth or the multiply-add peak of every core), where the case has one.
    of_limit: float | None = None


def matching_sympile(label: str, ours: list[str]) -> str | None:
    """sympile's implementation in the call style of `label`: the one of the same style
    ('pytensor trust_input' -> 'sympile trust_input'), whole-loop styles against
    fn(n_calls), and any other style (one Python call per step: jax.jit, torch eager, numpy)
    against sympile's checked-input-free call, trust_input, or sympile's only style."""
    if label.startswith("sympile"):
        return None
    style = label.partition(" ")[2]
    if f"sympile {style}" in ours:
        return f"sympile {style}"
    if style == "fori_loop" and "sympile n_calls" in ours:
        return "sympile n_calls"
    per_call = [name for name in ours if not name.endswith("n_calls")]
    if "sympile trust_input" in per_call:
        return "sympile trust_input"
    return per_call[0] if per_call else None


def time_case(case: Case, repeats: int) -> dict[str, float]:
    """Seconds per `case.per` of each implementation (in this process)."""
    return {label: time_callable(run, repeats) / case.count
            for label, run in case.implementations.items()}


def rows_of(case: Case, idle: dict[str, float], busy: dict[str, float],
            limits: Callable[[Case], float | None] | None = None) -> list[Row]:
    """The rows of one case from its idle times and its busy-core times (empty if not
    measured), each implementation against sympile's in the matching style; `limits`
    (the case's limit: bytes/s or flops/s) gives each row its fraction of it."""
    ours = [label for label in idle if label.startswith("sympile")]
    limit = limits(case) if limits is not None and case.limit else None
    rows = []
    for label, seconds in idle.items():
        match = matching_sympile(label, ours)
        rows.append(Row(
            case.workload, case.size, label, seconds, case.per,
            case.units / case.count / seconds, case.unit, match,
            seconds / idle[match] if match else None, busy.get(label),
            busy[label] / busy[match] if match and label in busy and match in busy else None,
            case.work / seconds / limit if limit and case.work else None))
    return rows


def format_table(rows: list[Row]) -> str:
    """The rows as a table whose columns line up: times with their unit (per call, per
    step, ...), throughput, and each peer's ratio to the sympile style named beside it."""
    busy = any(row.busy_seconds is not None for row in rows)
    header = ["workload", "size", "implementation", "time", "throughput", "vs", "ratio",
              "of limit"]
    if busy:
        header += ["busy time", "busy ratio"]
    table = []
    for row in rows:
        cells = [row.workload, row.size, row.implementation,
                 f"{format_seconds(row.seconds)}/{row.per}",
                 f"{row.units_per_second:,.4g} {row.unit}/s",
                 (row.compared_with or "").removeprefix("sympile "),
                 "" if row.ratio is None else f"{row.ratio:.2f}",
                 "" if row.of_limit is None else f"{row.of_limit:.0%}"]
        if busy:
            cells += ["" if row.busy_seconds is None
                      else f"{format_seconds(row.busy_seconds)}/{row.per}",
                      "" if row.busy_ratio is None else f"{row.busy_ratio:.2f}"]
        table.append(cells)
    widths = [max(len(line[i]) for line in [header, *table]) for i in range(len(header))]
    numeric = {3, 4, 6, 7, 8, 9}

    def line(cells: list[str]) -> str:
        return "  ".join(cell.rjust(width) if index in numeric else cell.ljust(width)
                         for index, (cell, width) in enumerate(zip(cells, widths))).rstrip()

    lines = [line(header), "-" * len(line(header))]
    for index, cells in enumerate(table):
        if index and (rows[index].workload, rows[index].size) != (rows[index - 1].workload,
                                                                  rows[index - 1].size):
            lines.append("")
        lines.append(line(cells))
    return "\n".join(lines)


def plot_ratios(rows: list[Row], path: str) -> str | None:
    """A bar chart of each peer's ratio per workload (idle, and busy beside it), saved to
    `path`; None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    from matplotlib import pyplot

    peers = [row for row in rows if row.ratio is not None]
    if not peers:
        return None
    labels = [f"{row.workload}, {row.size}: {row.implementation}" for row in peers]
    positions = np.arange(len(peers))
    figure, axes = pyplot.subplots(figsize=(9, 0.28 * len(peers) + 1.5))
    busy = any(row.busy_ratio is not None for row in peers)
    height = 0.4 if busy else 0.8
    axes.barh(positions - (height / 2 if busy else 0), [row.ratio for row in peers], height,
              label="idle")
    if busy:
        axes.barh(positions + height / 2, [row.busy_ratio or np.nan for row in peers], height,
                  label="one core busy")
    axes.axvline(1.0, color="black", linewidth=0.8)
    axes.set_xscale("log")
    axes.set_yticks(positions, labels, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("peer time / sympile's time in the same call style (above 1: sympile faster)")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
    return path


def format_seconds(seconds: float) -> str:
    for scale, suffix in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {suffix}"
    return f"{seconds * 1e9:.3g} ns"


def print_compile_seconds(title: str, seconds: dict[str, float]) -> None:
    """The compile times of sympile's functions under `title`, one per line (nothing when
    there are none)."""
    if seconds:
        print(f"\n{title}:")
        for label, value in seconds.items():
            print(f"  {label}: {value:.3f}")


def write_json(path: str, rows: list[Row], extra: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
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
            print(f"timing {library}{' with one core busy' if busy else ''}", file=sys.stderr)
            output = subprocess.run([sys.executable, "-m", module, "--worker", library,
                                     *arguments], capture_output=True, text=True,
                                    check=not skip_failures)
            if output.returncode != 0:
                print(f"{library}: failed: {output.stderr.strip().splitlines()[-1:]}")
                continue
            results[library] = json.loads(output.stdout.strip().splitlines()[-1])
    return results
