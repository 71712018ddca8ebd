"""Random numbers: sympile's RandomStreams (and MRG_RandomStreams) against numpy's Generator,
jax.random and torch, each library in a process of its own, reported side by side as
ratios to sympile's time.

  uniform, normal   float32 samples, 1e6 and 1e7 per call (sympile: a compiled draw
                    returning its buffer, Out(borrow=True); numpy: default_rng().random /
                    standard_normal; jax: a jitted draw from a new key each call; torch:
                    torch.rand / torch.randn)
  dropout MLP       one SGD step (50 per timed call) of 784-500-500-10, tanh, dropout
                    p=0.5 (inverted) on both hidden layers, batch 10 and 60, on the MLP
                    benchmark's data (sympile/benchmarks/mlp.py); sympile with trust_input

    sympile-bench random_streams [--compare numpy,jax,torch] [--repeats 7] [--busy]

--busy keeps one core busy (a spinning process) while every library is timed, as a
training job shares a machine. Ratios above 1: sympile is faster.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import numpy as np

from sympile.benchmarks import mlp
from sympile.benchmarks.harness import (
    add_common_options,
    available_peers,
    format_seconds,
    run_workers,
    time_callable,
)

SIZES = (1_000_000, 10_000_000)
LAYERS = [784, 500, 500, 10]
DROPOUT = 0.5
STEPS = 50
BATCHES = (10, 60)


def _sympile_cases() -> dict[str, Callable[[], object]]:
    import sympile
    import sympile.tensor as T
    from sympile.tensor.random import MRG_RandomStreams, RandomStreams

    cases = {}
    for size in SIZES:
        for kind in ("uniform", "normal"):
            for streams in (RandomStreams, MRG_RandomStreams):
                draw = getattr(streams(seed=1), kind)((size,), dtype="float32")
                function = sympile.function([], sympile.Out(draw, borrow=True),
                                            mode="FAST_RUN")
                label = "" if streams is RandomStreams else " (MRG)"
                cases[f"{kind} {size:.0e} float32{label}"] = function
    for batch in BATCHES:
        for streams in (RandomStreams, MRG_RandomStreams):
            label = "" if streams is RandomStreams else " (MRG)"
            cases[f"dropout MLP batch {batch}{label}"] = _sympile_dropout(
                sympile, T, streams(seed=1), batch)
    return cases


def _sympile_dropout(sympile, T, streams, batch: int) -> Callable[[], object]:
    return mlp.theano_style_steps(sympile, T, T.nnet.softmax, LAYERS, batch, STEPS,
                                  "trust_input", mode="FAST_RUN", dropout=DROPOUT,
                                  streams=streams)


def _numpy_cases() -> dict[str, Callable[[], object]]:
    generator = np.random.default_rng(1)
    cases = {}
    for size in SIZES:
        cases[f"uniform {size:.0e} float32"] = lambda size=size: generator.random(
            size, dtype=np.float32)
        cases[f"normal {size:.0e} float32"] = lambda size=size: generator.standard_normal(
            size, dtype=np.float32)
    return cases


def _jax_cases() -> dict[str, Callable[[], object]]:
    import jax
    import jax.numpy as jnp

    state = {"key": jax.random.PRNGKey(1)}
    cases = {}
    for size in SIZES:
        for kind in ("uniform", "normal"):
            sampler = getattr(jax.random, kind)

            @jax.jit
            def draw(key, sampler=sampler, size=size):
                key, subkey = jax.random.split(key)
                return key, sampler(subkey, (size,), dtype=jnp.float32)

            def run(draw=draw):
                state["key"], sample = draw(state["key"])
                return sample.block_until_ready()
            cases[f"{kind} {size:.0e} float32"] = run
    for batch in BATCHES:
        cases[f"dropout MLP batch {batch}"] = mlp.jax_steps(LAYERS, batch, STEPS, "jit step",
                                                            dropout=DROPOUT)
    return cases


def _torch_cases() -> dict[str, Callable[[], object]]:
    import torch

    torch.manual_seed(1)
    cases = {}
    for size in SIZES:
        cases[f"uniform {size:.0e} float32"] = lambda size=size: torch.rand(size)
        cases[f"normal {size:.0e} float32"] = lambda size=size: torch.randn(size)
    for batch in BATCHES:
        cases[f"dropout MLP batch {batch}"] = mlp.torch_steps(LAYERS, batch, STEPS,
                                                              dropout=DROPOUT)
    return cases


WORKERS = {"sympile": _sympile_cases, "numpy": _numpy_cases, "jax": _jax_cases,
           "torch": _torch_cases}


def _worker(name: str, repeats: int) -> None:
    """Time every case of one library in this process; print {case: seconds} as JSON."""
    cases = WORKERS[name]()
    for run in cases.values():
        run()  # compile, warm the caches
    print(json.dumps({case: time_callable(run, repeats) for case, run in cases.items()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 7, "numpy,jax,torch", "numpy, jax, torch")
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        _worker(arguments.worker, arguments.repeats)
        return
    requested = [name for name in arguments.compare.split(",") if name and name != "numpy"]
    peers, notes = available_peers(requested)
    libraries = ["sympile"] + (["numpy"] if "numpy" in arguments.compare else []) + peers
    for note in notes:
        print(note)
    results = run_workers(__spec__.name, libraries,
                          ["--repeats", str(arguments.repeats)], arguments.busy,
                          skip_failures=False)
    print(f"one core busy: {arguments.busy}")
    print(f"{'case':<34} {'library':<8} {'time':>10} {'ratio to sympile':>17}")
    for case, seconds in results["sympile"].items():
        print(f"{case:<34} {'sympile':<8} {format_seconds(seconds):>10} {1.0:>17.2f}")
        base = case.replace(" (MRG)", "")
        if base != case:
            continue
        for library in libraries[1:]:
            if case in results[library]:
                other = results[library][case]
                print(f"{'':<34} {library:<8} {format_seconds(other):>10} "
                      f"{other / seconds:>17.2f}")


if __name__ == "__main__":
    main()
