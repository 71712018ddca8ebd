"""The softmax family on the C backend against numpy (and jax, torch when importable), in
microseconds per call and nanoseconds per element.

  softmax       exp(x - max) / sum, along the last axis
  log_softmax   (x - max) - log(sum(exp(x - max)))
  softmax_grad  sm * (dy - sum(dy * sm)), the gradient of softmax

on the shapes of the paper's workloads: (100, 54), (100, 3000) (the RNN's output layer at
vocabulary 3000), (60, 10) (the MLP's) and (1, 3000), float32 and float64. sympile runs with
trust_input, as a training loop would; numpy computes the same formulas in the input's
dtype; jax runs its jitted jax.nn functions (block_until_ready), torch its torch.softmax /
log_softmax (no gradient recorded).

    sympile-bench softmax [--repeats 7] [--compare jax,torch]
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import sympile
import sympile.tensor as T
from sympile.benchmarks.harness import add_common_options, available_peers, time_callable
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery
from sympile.tensor import nnet

C_MODE = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")
SHAPES = ((100, 54), (100, 3000), (60, 10), (1, 3000))
KINDS = ("softmax", "log_softmax", "softmax_grad")


def _numpy(kind: str) -> Callable[..., np.ndarray]:
    def softmax(x):
        exps = np.exp(x - x.max(axis=1, keepdims=True))
        exps /= exps.sum(axis=1, keepdims=True)
        return exps

    def log_softmax(x):
        shifted = x - x.max(axis=1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

    def softmax_grad(dy, sm):
        return sm * (dy - (dy * sm).sum(axis=1, keepdims=True))

    return {"softmax": softmax, "log_softmax": log_softmax, "softmax_grad": softmax_grad}[kind]


def _sympile(kind: str, dtype: str) -> Callable[..., Any]:
    x = T.tensor(dtype=dtype, shape=(None, None))
    if kind == "softmax_grad":
        dy = T.tensor(dtype=dtype, shape=(None, None))
        return sympile.function([dy, x], nnet.SoftmaxGrad(-1)(dy, x), mode=C_MODE,
                                trust_input=True)
    output = nnet.softmax(x) if kind == "softmax" else nnet.log_softmax(x)
    return sympile.function([x], output, mode=C_MODE, trust_input=True)


def _peer(name: str, kind: str) -> Callable[..., Any]:
    if name == "jax":
        import jax

        function = {"softmax": jax.nn.softmax, "log_softmax": jax.nn.log_softmax,
                    "softmax_grad": lambda dy, sm: sm * (dy - (dy * sm).sum(1, keepdims=True))}
        jitted = jax.jit(function[kind])
        return lambda *arrays: jitted(*arrays).block_until_ready()
    import torch

    function = {"softmax": lambda x: torch.softmax(x, 1),
                "log_softmax": lambda x: torch.log_softmax(x, 1),
                "softmax_grad": lambda dy, sm: sm * (dy - (dy * sm).sum(1, keepdim=True))}

    def run(*arrays):
        with torch.no_grad():
            return function[kind](*arrays)

    return run


def _peer_arrays(name: str, arrays: list[np.ndarray]) -> list[Any]:
    if name == "jax":
        import jax.numpy as jnp

        return [jnp.asarray(array) for array in arrays]
    import torch

    return [torch.from_numpy(array) for array in arrays]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 7, "jax,torch", "jax, torch")
    arguments = parser.parse_args()
    # float64 in jax (read when jax is first imported).
    os.environ.setdefault("JAX_ENABLE_X64", "1")
    peers, notes = available_peers([name for name in arguments.compare.split(",") if name])
    for note in notes:
        print(note)
    rng = np.random.default_rng(0)
    print(f"{'case':<32} {'implementation':<12} {'us/call':>10} {'ns/element':>11}")
    for dtype in ("float32", "float64"):
        for kind in KINDS:
            compiled = _sympile(kind, dtype)
            for shape in SHAPES:
                x = (3 * rng.standard_normal(shape)).astype(dtype)
                arrays = [x]
                if kind == "softmax_grad":
                    arrays = [rng.standard_normal(shape).astype(dtype), _numpy("softmax")(x)]
                np.testing.assert_allclose(compiled(*arrays), _numpy(kind)(*arrays),
                                           rtol=1e-4, atol=1e-5)
                implementations = {"sympile C": functools.partial(compiled, *arrays),
                                   "numpy": functools.partial(_numpy(kind), *arrays)}
                for name in peers:
                    implementations[name] = functools.partial(_peer(name, kind),
                                                              *_peer_arrays(name, arrays))
                case = f"{kind} {shape} {dtype}"
                for label, run in implementations.items():
                    seconds = time_callable(run, arguments.repeats)
                    print(f"{case:<32} {label:<12} {seconds * 1e6:>10.2f} "
                          f"{seconds * 1e9 / x.size:>11.2f}")


if __name__ == "__main__":
    main()
