"""The cost of one step of scan's loop on the C backend, against a Python loop over numpy.

  h + 1                      a recurrent 50-vector plus one: the loop's own cost per step
  tanh(x_t + h W)            a 50-unit tanh RNN (float32): Gemv and tanh in place
  sigmoid(h W + W_uh[u_t])   the forward scan of the paper's RNN benchmark (V 54, H 50)

Each row: microseconds per step of a call of 100 steps and of 1000 steps (the difference is
the per-call cost of the Scan node spread over the steps), and of the numpy loop. Times are
CPU time of this thread (time.thread_time), the least of several repeats: on a busy machine
wall time mostly measures the other processes.

    sympile-bench scan_step [--repeats 7]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import sympile
import sympile.tensor as T
from sympile.benchmarks.harness import add_common_options
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery
from sympile.scan import scan

C_MODE = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")
HIDDEN, VOCABULARY = 50, 54


def _least_cpu_seconds(run: Callable[[], Any], repeats: int, min_seconds: float = 0.05) -> float:
    run()
    start = time.thread_time()
    run()
    inner = max(1, int(min_seconds / max(time.thread_time() - start, 1e-6)))
    samples = []
    for _ in range(repeats):
        start = time.thread_time()
        for _ in range(inner):
            run()
        samples.append((time.thread_time() - start) / inner)
    return min(samples)


def _plus_one(steps: int, rng: np.random.Generator):
    h0 = T.fvector("h0")
    states, _ = scan(lambda h: h + np.float32(1), outputs_info=h0, n_steps=steps)
    values = (np.zeros(HIDDEN, "float32"),)

    def numpy_loop(h):
        result = np.empty((steps, HIDDEN), "float32")
        for step in range(steps):
            h = h + np.float32(1)
            result[step] = h
        return result

    return [h0], states, values, numpy_loop


def _tanh_rnn(steps: int, rng: np.random.Generator):
    x, h0, w = T.fmatrix("x"), T.fvector("h0"), T.fmatrix("w")
    states, _ = scan(lambda x_t, h, w: T.tanh(x_t + T.dot(h, w)), sequences=x,
                     outputs_info=h0, non_sequences=w)
    values = (rng.normal(size=(steps, HIDDEN)).astype("float32"), np.zeros(HIDDEN, "float32"),
              (rng.normal(size=(HIDDEN, HIDDEN)) * 0.1).astype("float32"))

    def numpy_loop(xs, h, weights):
        result = np.empty((steps, HIDDEN), "float32")
        for step in range(steps):
            h = np.tanh(xs[step] + h @ weights)
            result[step] = h
        return result

    return [x, h0, w], states, values, numpy_loop


def _token_rnn(steps: int, rng: np.random.Generator):
    tokens, h0 = T.lvector("tokens"), T.fvector("h0")
    w_hh, w_uh = T.fmatrix("w_hh"), T.fmatrix("w_uh")
    states, _ = scan(lambda token, h, w_hh, w_uh: T.sigmoid(T.dot(h, w_hh) + w_uh[token]),
                     sequences=tokens, outputs_info=h0, non_sequences=[w_hh, w_uh])
    values = (rng.integers(0, VOCABULARY, size=steps), np.zeros(HIDDEN, "float32"),
              (rng.normal(size=(HIDDEN, HIDDEN)) * 0.1).astype("float32"),
              (rng.normal(size=(VOCABULARY, HIDDEN)) * 0.1).astype("float32"))

    def numpy_loop(token_values, h, recurrent, embedding):
        result = np.empty((steps, HIDDEN), "float32")
        for step in range(steps):
            h = 1 / (1 + np.exp(-(h @ recurrent + embedding[token_values[step]])))
            result[step] = h
        return result

    return [tokens, h0, w_hh, w_uh], states, values, numpy_loop


CASES = {"h + 1": _plus_one, "tanh(x_t + h W)": _tanh_rnn,
         "sigmoid(h W + W_uh[u_t])": _token_rnn}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 7)
    arguments = parser.parse_args(argv)
    print(f"{'case':26s} {'100 steps':>10s} {'1000 steps':>11s} {'numpy loop':>11s}  us/step")
    for name, build in CASES.items():
        per_step = []
        for steps in (100, 1000):
            inputs, states, values, numpy_loop = build(steps, np.random.default_rng(0))
            function = sympile.function(inputs, states, mode=C_MODE, trust_input=True)
            np.testing.assert_allclose(function(*values), numpy_loop(*values), rtol=1e-4,
                                       atol=1e-5)
            per_step.append(_least_cpu_seconds(lambda run=function, given=values: run(*given),
                                               arguments.repeats) / steps)
        numpy_step = _least_cpu_seconds(lambda run=numpy_loop, given=values: run(*given),
                                        arguments.repeats) / 1000
        print(f"{name:26s} {per_step[0] * 1e6:10.3f} {per_step[1] * 1e6:11.3f} "
              f"{numpy_step * 1e6:11.3f}")


if __name__ == "__main__":
    main()
