"""Sparse workloads in sympile and its peers (scipy by hand, PyTensor's sparse module,
torch.sparse, jax.experimental.sparse), each library in a process of its own, float32,
reported as seconds per call and as ratios to sympile.

  product  Y = S @ W for a CSR S (rows x cols, `density` stored) and a dense W (cols x 64),
           with the loss 0.5 * sum(Y ** 2) and its gradient in W (Sᵀ Y)
  logreg   one SGD step of a bag-of-words softmax regression: a CSR batch X (1000 x cols,
           100 words a document), 20 classes, W (cols x 20) and b updated

    sympile-bench sparse [--compare scipy,pytensor,jax,torch] [--rows 100000]
                                [--cols 50000] [--density 0.001] [--repeats 3] [--busy]

Ratios above 1: sympile is faster.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse

from sympile.benchmarks.harness import (
    add_common_options,
    available_peers,
    print_ratio_table,
    run_workers,
    time_callable,
)

CLASSES, BATCH, WORDS, LEARNING_RATE = 20, 1000, 100, np.float32(0.1)


def product_data(rows: int, cols: int, density: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = scipy.sparse.random(rows, cols, density=density, format="csr", random_state=rng,
                            dtype=np.float32)
    return s, rng.standard_normal((cols, 64)).astype(np.float32)


def logreg_data(cols: int, seed: int = 1):
    """A generated bag-of-words batch: WORDS distinct words a document, counts 1-3."""
    rng = np.random.default_rng(seed)
    indptr = np.arange(0, (BATCH + 1) * WORDS, WORDS)
    indices = np.concatenate([np.sort(rng.choice(cols, WORDS, replace=False))
                              for _ in range(BATCH)])
    data = rng.integers(1, 4, BATCH * WORDS).astype(np.float32)
    x = scipy.sparse.csr_matrix((data, indices, indptr), shape=(BATCH, cols))
    labels = rng.integers(0, CLASSES, BATCH)
    return x, labels, np.zeros((cols, CLASSES), np.float32), np.zeros(CLASSES, np.float32)


def theano_style(library: Any, sparse: Any, workload: str, args: argparse.Namespace):
    tensor = library.tensor
    if workload == "product":
        s_value, w_value = product_data(args.rows, args.cols, args.density)
        s = sparse.csr_matrix("s", dtype="float32")
        w = library.shared(w_value)
        y = sparse.structured_dot(s, w)
        loss = 0.5 * (y ** 2).sum()
        f = library.function([s], [loss, library.grad(loss, w)])
        return lambda: f(s_value)
    x_value, labels_value, w_value, b_value = logreg_data(args.cols)
    x = sparse.csr_matrix("x", dtype="float32")
    labels = tensor.lvector("labels")
    w, b = library.shared(w_value), library.shared(b_value)
    p = tensor.nnet.softmax(sparse.structured_dot(x, w) + b)
    loss = -tensor.log(p[tensor.arange(labels.shape[0]), labels]).mean()
    gw, gb = library.grad(loss, [w, b])
    f = library.function([x, labels], loss, updates=[(w, w - LEARNING_RATE * gw),
                                                     (b, b - LEARNING_RATE * gb)])
    return lambda: f(x_value, labels_value)


def sympile_run(workload: str, args: argparse.Namespace):
    import sympile
    import sympile.sparse
    return theano_style(sympile, sympile.sparse, workload, args)


def pytensor_run(workload: str, args: argparse.Namespace):
    import pytensor
    import pytensor.sparse
    import pytensor.tensor
    pytensor.tensor.nnet = _PytensorNnet
    return theano_style(pytensor, pytensor.sparse, workload, args)


class _PytensorNnet:
    """PyTensor has no tensor.nnet: its softmax."""

    @staticmethod
    def softmax(x):
        from pytensor.tensor.special import softmax
        return softmax(x, axis=-1)


def scipy_run(workload: str, args: argparse.Namespace):
    if workload == "product":
        s, w = product_data(args.rows, args.cols, args.density)
        s_t = s.T.tocsr()

        def run():
            y = s @ w
            return 0.5 * float((y * y).sum()), s_t @ y
        return run
    x, labels, w, b = logreg_data(args.cols)
    x_t = x.T.tocsr()
    state = {"w": w, "b": b}

    def step():
        logits = x @ state["w"] + state["b"]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.log(p[np.arange(BATCH), labels]).mean()
        p[np.arange(BATCH), labels] -= 1
        p /= BATCH
        state["w"] = state["w"] - LEARNING_RATE * (x_t @ p)
        state["b"] = state["b"] - LEARNING_RATE * p.sum(axis=0)
        return loss
    return step


def torch_run(workload: str, args: argparse.Namespace):
    import torch
    torch.set_num_threads(2)

    def csr(matrix):
        return torch.sparse_csr_tensor(torch.from_numpy(matrix.indptr.astype(np.int64)),
                                       torch.from_numpy(matrix.indices.astype(np.int64)),
                                       torch.from_numpy(matrix.data), size=matrix.shape)
    if workload == "product":
        s_value, w_value = product_data(args.rows, args.cols, args.density)
        s, w = csr(s_value), torch.from_numpy(w_value).requires_grad_()

        def run():
            w.grad = None
            y = s @ w
            loss = 0.5 * (y * y).sum()
            loss.backward()
            return loss.item(), w.grad
        return run
    x_value, labels_value, w_value, b_value = logreg_data(args.cols)
    x, labels = csr(x_value), torch.from_numpy(labels_value)
    w = torch.from_numpy(w_value).requires_grad_()
    b = torch.from_numpy(b_value).requires_grad_()

    def step():
        w.grad = b.grad = None
        loss = torch.nn.functional.cross_entropy(x @ w + b, labels)
        loss.backward()
        with torch.no_grad():
            w.sub_(LEARNING_RATE * w.grad)
            b.sub_(LEARNING_RATE * b.grad)
        return loss.item()
    return step


def jax_run(workload: str, args: argparse.Namespace):
    import jax
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse
    if workload == "product":
        s_value, w_value = product_data(args.rows, args.cols, args.density)
        s = jsparse.BCSR.from_scipy_sparse(s_value)

        @jax.jit
        def value_and_grad(w):
            return jax.value_and_grad(lambda v: 0.5 * ((s @ v) ** 2).sum())(w)
        w = jnp.asarray(w_value)
        return lambda: jax.block_until_ready(value_and_grad(w))
    x_value, labels_value, w_value, b_value = logreg_data(args.cols)
    x = jsparse.BCSR.from_scipy_sparse(x_value)
    labels = jnp.asarray(labels_value)

    def loss(params):
        logits = x @ params[0] + params[1]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(BATCH), labels])

    @jax.jit
    def update(params):
        value, grads = jax.value_and_grad(loss)(params)
        return value, [p - LEARNING_RATE * g for p, g in zip(params, grads)]
    state = {"params": [jnp.asarray(w_value), jnp.asarray(b_value)]}

    def step():
        value, state["params"] = update(state["params"])
        return jax.block_until_ready(value)
    return step


BUILDERS: dict[str, Callable[..., Any]] = {"sympile": sympile_run, "scipy": scipy_run,
                                           "pytensor": pytensor_run, "jax": jax_run,
                                           "torch": torch_run}


def _worker(name: str, args: argparse.Namespace) -> None:
    results = {}
    for workload in ("product", "logreg"):
        run = BUILDERS[name](workload, args)
        run()  # compile, warm up
        results[workload] = time_callable(run, args.repeats)
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 3, "scipy,pytensor,jax,torch", "scipy, pytensor, jax, torch")
    parser.add_argument("--rows", type=int, default=100_000,
                        help="rows of the sparse matrix (default: %(default)s)")
    parser.add_argument("--cols", type=int, default=50_000,
                        help="columns of the sparse matrix (default: %(default)s)")
    parser.add_argument("--density", type=float, default=0.001,
                        help="fraction of the entries stored (default: %(default)s)")
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args)
        return
    requested = [name for name in args.compare.split(",") if name]
    peers, notes = available_peers([name for name in requested if name != "scipy"])
    peers = (["scipy"] if "scipy" in requested else []) + peers
    for note in notes:
        print(note)
    results = run_workers(__spec__.name, ["sympile", *peers],
                          ["--rows", str(args.rows), "--cols", str(args.cols),
                           "--density", str(args.density), "--repeats", str(args.repeats)],
                          args.busy, skip_failures=True)
    print(f"float32, S {args.rows} x {args.cols} at density {args.density}; one core busy: "
          f"{args.busy}; seconds per call, ratio = peer / sympile")
    print_ratio_table(results, peers, width=8)

if __name__ == "__main__":
    main()
