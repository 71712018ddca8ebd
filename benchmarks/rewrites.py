"""The reference backend on rewritten (FAST_RUN) against unrewritten graphs.

    python -m benchmarks.rewrites [--repeats 7]

Workload: one SGD step of a 784-500-10 tanh MLP with softmax cross-entropy written naively
(as the paper's benchmark), batch 60, float32, data in shared variables. Prints node counts and
the median time per call for each mode, and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode


def build_step(mode, batch: int = 60, hidden: int = 500):
    rng = np.random.default_rng(0)
    data = sympile.shared(rng.standard_normal((6000, 784)).astype("float32"), name="data")
    labels = sympile.shared(rng.integers(0, 10, 6000).astype("int64"), name="labels")
    w1 = sympile.shared((0.01 * rng.standard_normal((784, hidden))).astype("float32"))
    b1 = sympile.shared(np.zeros(hidden, dtype="float32"))
    w2 = sympile.shared((0.01 * rng.standard_normal((hidden, 10))).astype("float32"))
    b2 = sympile.shared(np.zeros(10, dtype="float32"))
    index = T.lscalar("index")
    x = data[index * batch:(index + 1) * batch]
    y = labels[index * batch:(index + 1) * batch]
    h = T.tanh(T.dot(x, w1) + b1)
    scores = T.dot(h, w2) + b2
    exps = T.exp(scores - scores.max(axis=1, keepdims=True))
    probabilities = exps / exps.sum(axis=1, keepdims=True)
    cost = -T.log(probabilities[T.arange(y.shape[0]), y]).mean()
    params = [w1, b1, w2, b2]
    grads = sympile.grad(cost, params)
    updates = [(p, p - np.float32(0.01) * g) for p, g in zip(params, grads)]
    return sympile.function([index], cost, updates=updates, mode=mode)


def median_time(step, repeats: int, calls: int = 20) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(calls):
            step(i % 100)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    arguments = parser.parse_args()
    results = {}
    for name, mode in [("unrewritten", Mode(rewriter=None, name="none")),
                       ("FAST_COMPILE", "FAST_COMPILE"), ("FAST_RUN", "FAST_RUN")]:
        step = build_step(mode)
        nodes = len(step.maker.fgraph.apply_nodes)
        results[name] = (nodes, median_time(step, arguments.repeats))
    base = results["unrewritten"][1]
    print(f"{'mode':<14}{'nodes':>7}{'ms/call':>10}{'speed-up':>10}")
    for name, (nodes, seconds) in results.items():
        print(f"{name:<14}{nodes:>7}{seconds * 1e3:>10.3f}{base / seconds:>10.2f}")


if __name__ == "__main__":
    main()
