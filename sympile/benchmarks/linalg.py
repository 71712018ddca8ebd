"""Linear-algebra workloads in sympile and its peers, each library in a process of its own,
reported as seconds per call and as ratios to sympile, float64.

  gp     the negative log marginal likelihood of a GP (squared-exponential kernel plus
         noise, n points in 1-d) and its gradient in the 3 log-hyperparameters:
         cholesky, cho_solve, log of the factor's diagonal
  solve  a batched solve, 64 x (32x32) with 4 right-hand sides each, and the gradient of
         sum(x * w) in the matrices and the right-hand sides

    sympile-bench linalg [--compare pytensor,jax,torch] [--sizes 500,2000]
                                [--repeats 5] [--busy]

Ratios above 1: sympile is faster.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from sympile.benchmarks.harness import (
    add_common_options,
    available_peers,
    print_ratio_table,
    run_workers,
    time_callable,
)

THETA = np.array([0.1, 0.2, -1.0])


def gp_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-3, 3, n))
    return x, np.sin(2 * x) + 0.3 * rng.standard_normal(n)


def solve_data(seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((64, 32, 32)) + 8 * np.eye(32)
    return a, rng.standard_normal((64, 32, 4)), rng.standard_normal((64, 32, 4))


def theano_style(library: Any, workload: str, n: int) -> Callable[[], Any]:
    """sympile's and PyTensor's programs (the same Theano API)."""
    tensor = library.tensor
    slinalg = importlib.import_module(f"{library.__name__}.tensor.slinalg")
    if workload == "gp":
        points, targets = gp_data(n)
        x = library.shared(points)
        y = library.shared(targets)
        theta = tensor.dvector("theta")
        squared = (x.dimshuffle(0, "x") - x.dimshuffle("x", 0)) ** 2
        kernel = tensor.exp(2 * theta[1]) * tensor.exp(-0.5 * squared * tensor.exp(-2 * theta[0]))
        kernel = kernel + tensor.exp(2 * theta[2]) * tensor.eye(n)
        factor = slinalg.cholesky(kernel)
        alpha = slinalg.solve_triangular(
            factor.T, slinalg.solve_triangular(factor, y, lower=True), lower=False)
        nll = 0.5 * tensor.dot(y, alpha) + tensor.log(tensor.diagonal(factor)).sum()
        f = library.function([theta], [nll, library.grad(nll, theta)])
        return lambda: f(THETA)
    a_value, b_value, w_value = solve_data()
    a, b = library.shared(a_value), library.shared(b_value)
    w = tensor.constant(w_value)
    x = slinalg.solve(a, b)
    total = (x * w).sum()
    f = library.function([], [total, *library.grad(total, [a, b])])
    return f


def sympile_run(workload: str, n: int) -> Callable[[], Any]:
    import sympile
    return theano_style(sympile, workload, n)


def pytensor_run(workload: str, n: int) -> Callable[[], Any]:
    import pytensor
    return theano_style(pytensor, workload, n)


def jax_run(workload: str, n: int) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    jax.config.update("jax_enable_x64", True)
    if workload == "gp":
        points, targets = (jnp.asarray(v) for v in gp_data(n))

        def nll(theta):
            squared = (points[:, None] - points[None, :]) ** 2
            kernel = jnp.exp(2 * theta[1]) * jnp.exp(-0.5 * squared * jnp.exp(-2 * theta[0]))
            kernel = kernel + jnp.exp(2 * theta[2]) * jnp.eye(n)
            factor = jnp.linalg.cholesky(kernel)
            alpha = jsl.cho_solve((factor, True), targets)
            return 0.5 * targets @ alpha + jnp.log(jnp.diag(factor)).sum()

        step = jax.jit(jax.value_and_grad(nll))
        theta = jnp.asarray(THETA)
        return lambda: jax.block_until_ready(step(theta))
    a, b, w = (jnp.asarray(v) for v in solve_data())

    def total(a, b):
        return (jnp.linalg.solve(a, b) * w).sum()

    step = jax.jit(jax.value_and_grad(total, argnums=(0, 1)))
    return lambda: jax.block_until_ready(step(a, b))


def torch_run(workload: str, n: int) -> Callable[[], Any]:
    import torch
    torch.set_default_dtype(torch.float64)
    if workload == "gp":
        points, targets = (torch.from_numpy(v) for v in gp_data(n))

        def run():
            theta = torch.tensor(THETA, requires_grad=True)
            squared = (points[:, None] - points[None, :]) ** 2
            kernel = torch.exp(2 * theta[1]) * torch.exp(-0.5 * squared * torch.exp(-2 * theta[0]))
            kernel = kernel + torch.exp(2 * theta[2]) * torch.eye(n)
            factor = torch.linalg.cholesky(kernel)
            alpha = torch.cholesky_solve(targets[:, None], factor)[:, 0]
            nll = 0.5 * targets @ alpha + torch.log(torch.diagonal(factor)).sum()
            nll.backward()
            return nll.item(), theta.grad
        return run
    a_value, b_value, w_value = solve_data()
    w = torch.from_numpy(w_value)

    def run():
        a = torch.tensor(a_value, requires_grad=True)
        b = torch.tensor(b_value, requires_grad=True)
        total = (torch.linalg.solve(a, b) * w).sum()
        total.backward()
        return total.item(), a.grad, b.grad
    return run


BUILDERS = {"sympile": sympile_run, "pytensor": pytensor_run, "jax": jax_run,
            "torch": torch_run}


def _worker(name: str, sizes: list[int], repeats: int) -> None:
    results = {}
    for workload, size in [("gp", n) for n in sizes] + [("solve", 64)]:
        run = BUILDERS[name](workload, size)
        run()  # compile, warm up
        results[f"{workload} {size}"] = time_callable(run, repeats)
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 5, "pytensor,jax,torch", "pytensor, jax, torch")
    parser.add_argument("--sizes", default="500,2000", help="GP sizes n")
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    sizes = [int(n) for n in arguments.sizes.split(",")]
    if arguments.worker:
        _worker(arguments.worker, sizes, arguments.repeats)
        return
    peers, notes = available_peers([name for name in arguments.compare.split(",") if name])
    for note in notes:
        print(note)
    results = run_workers(__spec__.name, ["sympile", *peers],
                          ["--sizes", arguments.sizes, "--repeats", str(arguments.repeats)],
                          arguments.busy, skip_failures=True)
    print(f"float64; one core busy: {arguments.busy}; seconds per call, ratio = peer / "
          f"sympile")
    print_ratio_table(results, peers, width=10)

if __name__ == "__main__":
    main()
