"""Reductions of elementwise expressions on the C backend, with and without the fused
reduction (local_careduce_fusion), against numpy and JAX.

    sympile-bench reduction_fusion [--repeats 7] [--no-jax]

Workloads: sum((x - mean(x))**2), sum(exp(x)) and max(abs(x)) on 1e6 and 1e7 float32, and the
row-wise sum((a - b)**2, axis=1) and column-wise sum((a - b)**2, axis=0) of 1000x1000 float32
matrices. Each is compiled twice in FAST_RUN on the C backend, serial (openmp off): with every
fast_run rewrite ("fused") and without local_careduce_fusion ("unfused": the elementwise result
is stored, then reduced), called with trust_input. Prints the minimum over repeats of the
time of one call (the minimum: on a shared machine, the calls nothing interrupted), and
numpy's time divided by each.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import sympile
import sympile.tensor as T
from sympile.benchmarks.harness import add_common_options
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery

FUSED = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")
UNFUSED = Mode(RewriteQuery(include=("fast_run",), exclude=("local_careduce_fusion",)),
               backend="c", name="FAST_RUN_C_UNFUSED")


def best_seconds(call: Callable[[], object], repeats: int) -> float:
    """The minimum over `repeats` calls of the time of one."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


# (label, expression of the inputs for sympile, numpy and jax.numpy alike, input shapes).
WORKLOADS = [
    ("sum((x-mean(x))**2)", lambda lib, x: ((x - lib.mean(x)) ** 2).sum(), "vector"),
    ("sum(exp(x))", lambda lib, x: lib.exp(x).sum(), "vector"),
    ("max(abs(x))", lambda lib, x: lib.abs(x).max(), "vector"),
    ("sum((a-b)**2, axis=1)", lambda lib, a, b: ((a - b) ** 2).sum(axis=1), "matrices"),
    ("sum((a-b)**2, axis=0)", lambda lib, a, b: ((a - b) ** 2).sum(axis=0), "matrices"),
]


def _inputs(kind: str, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    if kind == "vector":
        return [rng.standard_normal(size).astype("float32")]
    side = round(size ** 0.5)
    return [rng.standard_normal((side, side)).astype("float32") for _ in range(2)]


def _compiled(expression: Callable, kind: str, mode: Mode):
    variables = [T.fvector("x")] if kind == "vector" else [T.fmatrix("a"), T.fmatrix("b")]
    with sympile.config.change_flags(openmp=False):
        function = sympile.function(variables, expression(T, *variables), mode=mode)
    assert function._vm.fallback_nodes == []
    function.trust_input = True
    return function


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 40)
    parser.add_argument("--no-jax", action="store_true",
                        help="leave jax out")
    arguments = parser.parse_args()
    jax = None
    if not arguments.no_jax:
        try:
            import jax
        except ImportError:
            print("jax: skipped, not installed")
    rng = np.random.default_rng(0)
    rows = []
    for label, expression, kind in WORKLOADS:
        fused, unfused = _compiled(expression, kind, FUSED), _compiled(expression, kind, UNFUSED)
        for size in ((10 ** 6, 10 ** 7) if kind == "vector" else (10 ** 6,)):
            values = _inputs(kind, size, rng)
            reference = expression(np, *values)
            np.testing.assert_allclose(fused(*values), reference, rtol=1e-4)
            timings = {
                "numpy": best_seconds(lambda e=expression, v=values: e(np, *v),
                                      arguments.repeats),
                "sympile unfused": best_seconds(lambda f=unfused, v=values: f(*v),
                                                arguments.repeats),
                "sympile fused": best_seconds(lambda f=fused, v=values: f(*v),
                                              arguments.repeats),
            }
            if jax is not None:
                jitted = jax.jit(lambda *arrays, e=expression: e(jax.numpy, *arrays))
                device_values = [jax.numpy.asarray(v) for v in values]
                timings["jax jit"] = best_seconds(
                    lambda f=jitted, v=device_values: f(*v).block_until_ready(),
                    arguments.repeats)
            shape = "x".join(map(str, values[0].shape))
            for name, seconds in timings.items():
                rows.append((f"{label}, {shape} float32", name, seconds, timings["numpy"]))
    width = max(len(row[0]) for row in rows)
    print(f"{'workload':<{width}}  {'implementation':<16} {'time':>10}  numpy / this")
    for label, name, seconds, reference in rows:
        print(f"{label:<{width}}  {name:<16} {seconds * 1e3:>8.3f}ms  {reference / seconds:>8.2f}")


if __name__ == "__main__":
    main()
