"""`sympile-bench` / `python -m sympile.benchmarks`: the side-by-side run (run.py), or another
suite named first: `sympile-bench sparse --compare scipy,jax`."""

from __future__ import annotations

import importlib
import sys

# Suite name -> what it times (each module's own --help has its options).
SUITES = {
    "run": "the default: call overhead, fused elementwise loops and the paper's MLP training "
           "(the RNN with --only ...,rnn) against numpy, PyTensor, JAX and PyTorch",
    "blas": "the products alone: sympile's skinny kernels against BLAS, numpy, jax, torch",
    "compile_time": "function() of the MLP, RNN and LeNet steps (cold, warm, background) "
                    "against jax.jit's compile",
    "distributed": "data-parallel MLP steps on 1 and 2 MPI processes, against torch.distributed",
    "elemwise": "elementwise loops by size and thread count",
    "gpu": "the paper's GPU columns on a CUDA device: copy bandwidth, fused loops, MLP, RNN "
           "and LeNet-5 training against torch (eager, torch.compile) and jax",
    "lenet": "LeNet-5 training steps against torch and jax",
    "linalg": "a GP's likelihood gradient and batched solves against PyTensor, jax, torch",
    "random_streams": "random draws and a dropout MLP step against numpy, jax, torch",
    "reduction_fusion": "reductions fused with the elementwise work that feeds them",
    "rewrites": "rewritten against unrewritten graphs: node counts and times",
    "scan_step": "the cost of one scan step",
    "softmax": "softmax and its cross-entropy against jax and torch",
    "sparse": "CSR products and a sparse logistic regression step against scipy, PyTensor, "
              "jax, torch",
}


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--list"]:
        for name, what in SUITES.items():
            print(f"{name:17s}{what}")
        return
    suite = argv.pop(0) if argv and argv[0] in SUITES else "run"
    module = importlib.import_module(f"sympile.benchmarks.{suite}")
    if suite == "run":
        module.main(argv)
        return
    # The other suites read sys.argv themselves.
    sys.argv = [f"sympile-bench {suite}", *argv]
    module.main()


if __name__ == "__main__":
    main()
