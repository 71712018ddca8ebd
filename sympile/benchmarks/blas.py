"""Dense products on the C backend (BLAS through scipy's pointers) against numpy, in GFLOP/s.

  dot         1000 x 1000 @ 1000 x 1000, float32 and float64: Dot, one gemm
  mlp layer   one step of a 784 -> 500 layer on a batch of 60: h = x @ W (Dot), and the
              SGD update W -= lr * x.T @ g (FAST_RUN makes it one Gemm), float32 and float64
  skinny      the three products of a layer's training step on a small batch, float32:
              forward x @ W, backward g @ W.T, update W -= lr * x.T @ g, for 784 -> 500 and
              1000 -> 1000 layers at batch 10 and 60; sympile with its skinny kernels
              (sympile.tensor.blas.skinny) and with config.blas_skinny = 'off' (BLAS's
              gemm), numpy, and jax (jit) and torch where installed

Each row: the median time of one call, and GFLOP/s (2 m k n flops per product). sympile runs
with trust_input and borrowed outputs, as a training loop would; numpy computes the same
arrays (writing the update in place, its fastest form). Note that numpy and scipy may link
different BLAS builds.

    sympile-bench blas [--repeats 7] [--only dot,mlp,skinny]
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable

import numpy as np

import sympile
import sympile.tensor as T
from sympile.benchmarks.harness import time_callable
from sympile.compile.function import Out
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery

C_MODE = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")


def _dot_case(dtype: str, size: int) -> tuple[str, float, dict]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(dtype)
    b = rng.standard_normal((size, size)).astype(dtype)
    x, y = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    function = sympile.function([x, y], Out(T.dot(x, y), borrow=True), mode=C_MODE,
                                trust_input=True)
    np.testing.assert_allclose(function(a, b), a @ b, rtol=1e-3, atol=1e-2)
    return (f"dot {size}x{size} {dtype}", 2.0 * size**3,
            {"sympile C": lambda: function(a, b), "numpy": lambda: np.dot(a, b)})


def _mlp_case(dtype: str, batch: int = 60, inputs: int = 784, units: int = 500):
    rng = np.random.default_rng(1)
    x_value = rng.standard_normal((batch, inputs)).astype(dtype)
    g_value = rng.standard_normal((batch, units)).astype(dtype)
    initial = (0.01 * rng.standard_normal((inputs, units))).astype(dtype)
    learning_rate = np.asarray(0.001, dtype)
    weight = sympile.shared(initial.copy(), name="W")
    x, g = T.matrix("x", dtype=dtype), T.matrix("g", dtype=dtype)
    function = sympile.function(
        [x, g], Out(T.dot(x, weight), borrow=True), mode=C_MODE, trust_input=True,
        updates=[(weight, weight - learning_rate * T.dot(x.T, g))])
    numpy_weight = initial.copy()

    def numpy_step():
        hidden = x_value @ numpy_weight
        numpy_weight[...] -= learning_rate * (x_value.T @ g_value)
        return hidden

    np.testing.assert_allclose(function(x_value, g_value), numpy_step(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(weight.get_value(), numpy_weight, rtol=1e-3, atol=1e-4)
    flops = 2.0 * batch * inputs * units * 2
    return (f"mlp layer {batch}x{inputs} @ {inputs}x{units} + update {dtype}", flops,
            {"sympile C": lambda: function(x_value, g_value), "numpy": numpy_step})


def _product(product: str, x, w, g):
    """The product `product` of a layer's step, in any numpy-like library."""
    if product == "forward":
        return x @ w
    if product == "backward":
        return g @ w.T
    return w - 0.01 * (x.T @ g)


def _skinny_case(product: str, batch: int, inputs: int, units: int):
    rng = np.random.default_rng(2)
    x_value = rng.standard_normal((batch, inputs)).astype("float32")
    g_value = rng.standard_normal((batch, units)).astype("float32")
    w_value = (0.01 * rng.standard_normal((inputs, units))).astype("float32")
    implementations: dict[str, Callable] = {}
    for setting in ("auto", "off"):
        weight = sympile.shared(w_value.copy(), name="W")
        x, g = T.matrix("x", dtype="float32"), T.matrix("g", dtype="float32")
        with sympile.config.change_flags(blas_skinny=setting):
            if product == "update":
                function = sympile.function([x, g], [], mode=C_MODE, trust_input=True,
                                            updates=[(weight, _product(product, x, weight, g))])
            else:
                function = sympile.function([x, g], Out(_product(product, x, weight, g),
                                                        borrow=True),
                                            mode=C_MODE, trust_input=True,
                                            on_unused_input="ignore")
        if product != "update":
            np.testing.assert_allclose(function(x_value, g_value),
                                       _product(product, x_value, w_value, g_value),
                                       rtol=1e-3, atol=1e-3)
        label = "sympile C" if setting == "auto" else "sympile BLAS"
        implementations[label] = lambda f=function: f(x_value, g_value)
    numpy_weight = w_value.copy()
    if product == "update":
        def numpy_update():
            numpy_weight[...] -= 0.01 * (x_value.T @ g_value)
        implementations["numpy"] = numpy_update
    else:
        implementations["numpy"] = lambda: _product(product, x_value, numpy_weight, g_value)
    if importlib.util.find_spec("jax") is not None:
        import jax
        jitted = jax.jit(lambda x, w, g: _product(product, x, w, g))
        arrays = [jax.numpy.asarray(v) for v in (x_value, w_value, g_value)]
        implementations["jax jit"] = lambda: jitted(*arrays).block_until_ready()
    if importlib.util.find_spec("torch") is not None:
        import torch
        tensors = [torch.from_numpy(v.copy()) for v in (x_value, w_value, g_value)]
        if product == "update":
            def torch_update():
                tensors[1].sub_(0.01 * (tensors[0].T @ tensors[2]))
            implementations["torch"] = torch_update
        else:
            implementations["torch"] = lambda: _product(product, *tensors)
    flops = 2.0 * batch * inputs * units
    return f"skinny {product} {batch}: {inputs} -> {units}", flops, implementations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed repeats; the best is reported (default: %(default)s)")
    parser.add_argument("--size", type=int, default=1000,
                        help="side of the square products of the dot section (default: "
                             "%(default)s)")
    parser.add_argument("--only", default="dot,mlp,skinny",
                        help="comma-separated sections: dot, mlp, skinny (default: %(default)s)")
    arguments = parser.parse_args()
    parts = set(arguments.only.split(","))
    cases = []
    if "dot" in parts:
        cases += [_dot_case(dtype, arguments.size) for dtype in ("float32", "float64")]
    if "mlp" in parts:
        cases += [_mlp_case(dtype) for dtype in ("float32", "float64")]
    if "skinny" in parts:
        cases += [_skinny_case(product, batch, inputs, units)
                  for inputs, units in ((784, 500), (1000, 1000)) for batch in (10, 60)
                  for product in ("forward", "backward", "update")]
    print(f"{'case':<52} {'implementation':<12} {'time':>10} {'GFLOP/s':>9}")
    for name, flops, implementations in cases:
        for label, run in implementations.items():
            seconds = time_callable(run, arguments.repeats)
            print(f"{name:<52} {label:<12} {seconds * 1e3:>8.3f}ms {flops / seconds / 1e9:>9.1f}")


if __name__ == "__main__":
    main()
