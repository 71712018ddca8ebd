"""The reference backend on rewritten (FAST_RUN) against unrewritten graphs.

    sympile-bench rewrites [--repeats 7]

Workload: one SGD step of a 784-500-10 tanh MLP with softmax cross-entropy written naively
(as the paper's benchmark), batch 60, float32, data in shared variables. Prints node counts and
the median time per call for each mode, and the ratio.

Then the gradient graph of a 784-500-500-10 tanh MLP (float32, softmax and
-log(p)[arange(n), y].mean(), gradients of every W and b): node counts unrewritten and after
FAST_RUN, and the largest difference between the two graphs' values.

Figures (2 shared cores, 3 December 2026; FAST_RUN on the C backend):
  SGD step, 784-500-10:          90 nodes unrewritten, 51 FAST_RUN (53 before the
                                 canonicalize/stabilize/specialize additions; 69 without
                                 fusion and inplace, 74 before)
  gradient graph, 784-500-500-10: 61 nodes unrewritten, 34 FAST_RUN (35 before; 43 without
                                 fusion and inplace, 49 before)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import sympile
import sympile.tensor as T
from sympile.benchmarks.harness import add_common_options
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


def mlp_gradient_graph(batch: int = 60):
    """(inputs, [cost, *gradients], values) of the 2-hidden-layer MLP, written naively."""
    rng = np.random.default_rng(0)
    x, y = T.fmatrix("x"), T.lvector("y")
    sizes = [784, 500, 500, 10]
    params = []
    for _ in zip(sizes, sizes[1:]):
        params.append(T.fmatrix(f"W{len(params) // 2}"))
        params.append(T.fvector(f"b{len(params) // 2}"))
    activation = x
    for layer in range(3):
        activation = T.dot(activation, params[2 * layer]) + params[2 * layer + 1]
        if layer < 2:
            activation = T.tanh(activation)
    probabilities = T.nnet.softmax(activation)
    cost = -T.log(probabilities)[T.arange(y.shape[0]), y].mean()
    outputs = [cost, *sympile.grad(cost, params)]
    values = [rng.standard_normal((batch, 784)).astype("float32"),
              rng.integers(0, 10, batch).astype("int64")]
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        values.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in))
                      .astype("float32"))
        values.append((0.1 * rng.standard_normal(fan_out)).astype("float32"))
    return [x, y, *params], outputs, values


def mlp_gradient_counts() -> None:
    inputs, outputs, values = mlp_gradient_graph()
    results = {}
    for name, mode in [("unrewritten", Mode(rewriter=None, name="none")),
                       ("FAST_RUN", "FAST_RUN")]:
        compiled = sympile.function(inputs, outputs, mode=mode)
        results[name] = (len(compiled.maker.fgraph.apply_nodes), compiled(*values))
    difference = max(float(np.max(np.abs(a - b))) for a, b in
                     zip(results["unrewritten"][1], results["FAST_RUN"][1]))
    print("\n784-500-500-10 MLP, cost and 6 gradients")
    for name, (nodes, _) in results.items():
        print(f"{name:<14}{nodes:>7} nodes")
    print(f"largest |unrewritten - FAST_RUN| over all outputs: {difference:.3g}")


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
    add_common_options(parser, 7)
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
    mlp_gradient_counts()


if __name__ == "__main__":
    main()
