"""Elementwise loops and reductions of the C backend against numpy.

    sympile-bench elemwise [--repeats 7]

Prints median times of: exp(-x*x)*sin(x) + tanh(x)*0.5 and (x-1)*(x+2)*0.5 + x*x on 1e6 and
1e7 float32, compiled in FAST_RUN on the C backend (one fused loop), serial and with OpenMP,
called with trust_input, against numpy (a temporary per operation); reductions of a 1000x1000
float32 matrix (sum of all, over axis 0 and 1, max of all and over axis 0, argmax over axis
1) and sum((x - mean(x))**2) on 1e6 float32, serial; and the call overhead of f(x) = x + 1 on
10 float32 (default call, trust_input, and numpy's x + 1).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from functools import partial

import numpy as np

import sympile
import sympile.tensor as T
from sympile.benchmarks.harness import add_common_options
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery

C_FAST_RUN = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")


def median_seconds(call: Callable[[], object], repeats: int, inner: int) -> float:
    """The median over `repeats` of the time of one call, each timing `inner` calls."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        times.append((time.perf_counter() - start) / inner)
    return float(np.median(times))


# (label, sympile expression, numpy expression): the transcendental expression of the run suite, and
# one of arithmetic only, which the compiler vectorises (libm's expf, sinf and tanhf are scalar
# calls; numpy has SIMD loops for them).
WORKLOADS = [
    ("exp(-x*x)*sin(x)+tanh(x)*0.5",
     lambda x: T.exp(-x * x) * T.sin(x) + T.tanh(x) * 0.5,
     lambda x: np.exp(-x * x) * np.sin(x) + np.tanh(x) * np.float32(0.5)),
    ("(x-1)*(x+2)*0.5+x*x",
     lambda x: (x - 1) * (x + 2) * 0.5 + x * x,
     lambda x: (x - np.float32(1)) * (x + np.float32(2)) * np.float32(0.5) + x * x),
]


# (label, sympile expression of a float32 matrix or vector, numpy expression, is a matrix).
REDUCTIONS = [
    ("sum, all", lambda x: x.sum(), lambda x: x.sum(), True),
    ("sum, axis 0", lambda x: x.sum(axis=0), lambda x: x.sum(axis=0), True),
    ("sum, axis 1", lambda x: x.sum(axis=1), lambda x: x.sum(axis=1), True),
    ("max, all", lambda x: x.max(), lambda x: x.max(), True),
    ("max, axis 0", lambda x: x.max(axis=0), lambda x: x.max(axis=0), True),
    ("argmax, axis 1", lambda x: T.argmax(x, axis=1), lambda x: x.argmax(axis=1), True),
    ("sum((x-mean(x))**2)", lambda x: ((x - x.mean()) ** 2).sum(),
     lambda x: ((x - x.mean()) ** 2).sum(), False),
]


def compiled(expression: Callable, openmp: bool,
             matrix: bool = False) -> sympile.compile.function.Function:
    x = T.fmatrix("x") if matrix else T.fvector("x")
    with sympile.config.change_flags(openmp=openmp):
        f = sympile.function([x], expression(x), mode=C_FAST_RUN)
    assert f._vm.fallback_nodes == []
    f.trust_input = True
    return f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 7)
    arguments = parser.parse_args()
    repeats = arguments.repeats
    rows: list[tuple[str, str, float, float]] = []
    for name, expression, numpy_expression in WORKLOADS:
        serial, parallel = compiled(expression, False), compiled(expression, True)
        for size in (10 ** 6, 10 ** 7):
            x = np.random.default_rng(0).standard_normal(size).astype("float32")
            np.testing.assert_allclose(serial(x), numpy_expression(x), rtol=1e-5, atol=1e-6)
            inner = 10 if size == 10 ** 6 else 2
            reference = median_seconds(partial(numpy_expression, x), repeats, inner)
            label = f"{name}, {size:.0e} float32"
            rows.append((label, "numpy", reference, reference))
            rows.append((label, "C fused, 1 thread",
                         median_seconds(partial(serial, x), repeats, inner), reference))
            rows.append((label, f"C fused, OpenMP ({os.cpu_count()} cores)",
                         median_seconds(partial(parallel, x), repeats, inner), reference))
    rng = np.random.default_rng(1)
    for name, expression, numpy_expression, matrix in REDUCTIONS:
        function = compiled(expression, False, matrix)
        x = rng.standard_normal((1000, 1000) if matrix else 10 ** 6).astype("float32")
        np.testing.assert_allclose(function(x), numpy_expression(x), rtol=1e-4, atol=1e-3)
        label = f"{name}, {'1000x1000' if matrix else '1e+06'} float32"
        reference = median_seconds(partial(numpy_expression, x), repeats, 20)
        rows.append((label, "numpy", reference, reference))
        rows.append((label, "C, 1 thread", median_seconds(partial(function, x), repeats, 20),
                     reference))
    small = np.arange(10, dtype="float32")
    vector = T.fvector("x")
    default = sympile.function([vector], vector + 1, mode=C_FAST_RUN)
    trusted = sympile.function([vector], vector + 1, mode=C_FAST_RUN)
    trusted.trust_input = True
    label = "x + 1, 10 float32 (call overhead)"
    reference = median_seconds(lambda: small + 1, repeats, 20000)
    rows.append((label, "numpy", reference, reference))
    rows.append((label, "C, default call", median_seconds(lambda: default(small), repeats,
                                                          20000), reference))
    rows.append((label, "C, trust_input", median_seconds(lambda: trusted(small), repeats,
                                                         20000), reference))
    width = max(len(row[0]) for row in rows)
    print(f"{'workload':<{width}}  {'implementation':<26} {'median':>11}  numpy / this")
    for label, implementation, seconds, numpy_seconds in rows:
        print(f"{label:<{width}}  {implementation:<26} {seconds * 1e6:9.2f}us  "
              f"{numpy_seconds / seconds:8.2f}x")


if __name__ == "__main__":
    main()
