"""sympile side by side with numpy and its peers, in one run.

    python -m benchmarks.run [--compare pytensor,jax,torch] [--only overhead,elemwise,mlp,rnn]
                             [--backend c|python] [--full] [--repeats 5]
                             [--rnn-sizes 54x50,3000x100] [--rnn-sequences 3]
                             [--json benchmarks/results.json] [--no-busy]

Workloads (issue 5): call overhead of f(x) = x + 1 on 10 float32 (default call, trust_input,
fn(n_calls)); fused elementwise exp(-x*x)*sin(x) + tanh(x)*0.5 and sum((x - mean(x))**2) on
1e6 and 1e7 float32; the paper's MLP training (see benchmarks/mlp.py) for three models at batch
1, 10 and 60 in each call style. Peers that are not installed are skipped with a note
(`pip install '.[bench]'`). Prints a table of median times, throughput and each time divided
by sympile's best time for the same work (above 1: sympile is faster), idle and then with one
core kept busy by a spinning process the harness starts (--no-busy: idle only), and writes
it to JSON.
rnn (not run by default): the paper's RNN trained by BPTT (see benchmarks/rnn.py), vocabulary
54 and 50 hidden units on 3 sequences of 100, the paper's whole table (100 sequences) under
--full; --rnn-sizes picks vocabulary x hidden pairs of it and --rnn-sequences the number of
sequences, for a part of the table in less time.
--full trains a whole epoch of 6000 examples per timed call (the paper's setup); by default a
timed call runs 50 minibatch steps.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import sympile
import sympile.tensor as T
from benchmarks import mlp, rnn
from benchmarks.harness import (
    Case,
    Row,
    available_peers,
    format_table,
    measure,
    peer_versions,
    write_json,
)
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery

OVERHEAD_CALLS = 1000


def overhead_case(peers: list[str], mode: Mode) -> Case:
    """f(x) = x + 1 on 10 float32: what one call costs beyond the work."""
    x = np.arange(10, dtype="float32")
    case = Case("call overhead", "x + 1, 10 float32", "calls", OVERHEAD_CALLS)
    vector = T.fvector("x")
    default = sympile.function([vector], vector + 1, mode=mode)
    trusted = sympile.function([vector], vector + 1, mode=mode)
    trusted.trust_input = True
    trusted(x)
    calls = range(OVERHEAD_CALLS)
    case.implementations["sympile default"] = lambda: [default(x) for _ in calls]
    case.implementations["sympile trust_input"] = lambda: [trusted(x) for _ in calls]
    case.implementations["sympile fn(n_calls)"] = lambda: trusted.fn(n_calls=OVERHEAD_CALLS)
    case.implementations["numpy"] = lambda: [np.add(x, 1) for _ in calls]
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt
        symbol = pt.fvector("x")
        pytensor_default = pytensor.function([symbol], symbol + 1)
        pytensor_trusted = pytensor.function([symbol], symbol + 1)
        pytensor_trusted.trust_input = True
        case.implementations["pytensor default"] = lambda: [pytensor_default(x) for _ in calls]
        case.implementations["pytensor trust_input"] = (
            lambda: [pytensor_trusted(x) for _ in calls])
    if "jax" in peers:
        import jax
        jitted = jax.jit(lambda v: v + 1)
        device_x = jax.numpy.asarray(x)
        case.implementations["jax jit"] = (
            lambda: [jitted(device_x).block_until_ready() for _ in calls])
    if "torch" in peers:
        import torch
        tensor_x = torch.from_numpy(x)
        case.implementations["torch eager"] = lambda: [tensor_x + 1 for _ in calls]
    return case


def _elementwise(library: Any, x: Any) -> Any:
    return library.exp(-x * x) * library.sin(x) + library.tanh(x) * 0.5


def _variance_sum(library: Any, x: Any) -> Any:
    return ((x - library.mean(x)) ** 2).sum()


def elementwise_cases(peers: list[str], sizes: tuple[int, ...], mode: Mode) -> list[Case]:
    cases = []
    rng = np.random.default_rng(0)
    for label, expression in (("fused elementwise", _elementwise),
                              ("sum of squared dev.", _variance_sum)):
        for size in sizes:
            x = rng.standard_normal(size).astype("float32")
            case = Case(label, f"{size:.0e} float32", "elements", size)
            vector = T.fvector("x")
            function = sympile.function([vector], expression(T, vector), mode=mode)
            function.trust_input = True
            case.implementations["sympile trust_input"] = lambda f=function, x=x: f(x)
            case.implementations["numpy"] = lambda x=x, e=expression: e(np, x)
            if "pytensor" in peers:
                import pytensor
                import pytensor.tensor as pt
                symbol = pt.fvector("x")
                peer = pytensor.function([symbol], expression(pt, symbol))
                peer.trust_input = True
                case.implementations["pytensor trust_input"] = lambda f=peer, x=x: f(x)
            if "jax" in peers:
                import jax
                jitted = jax.jit(lambda v, e=expression: e(jax.numpy, v))
                device_x = jax.numpy.asarray(x)
                case.implementations["jax jit"] = (
                    lambda f=jitted, x=device_x: f(x).block_until_ready())
            if "torch" in peers:
                import torch
                tensor_x = torch.from_numpy(x)
                case.implementations["torch eager"] = lambda x=tensor_x, e=expression: e(torch, x)
            cases.append(case)
    return cases


def _sympile_softmax() -> Callable:
    nnet = getattr(T, "nnet", None)
    if nnet is not None and hasattr(nnet, "softmax"):
        return nnet.softmax
    return lambda scores: T.exp(scores - scores.max(axis=1, keepdims=True)) / T.exp(
        scores - scores.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)


def mlp_cases(peers: list[str], models: list[str], batches: tuple[int, ...], full: bool,
              compile_times: dict[str, float], mode: Mode) -> list[Case]:
    cases = []
    for model in models:
        layers = mlp.MODELS[model]
        for batch in batches:
            steps = mlp.N_EXAMPLES // batch if full else 50
            case = Case(f"MLP train, {model}", f"batch {batch}", "examples", steps * batch)
            for style in ("default", "trust_input", "n_calls"):
                start = time.perf_counter()
                case.implementations[f"sympile {style}"] = mlp.theano_style_steps(
                    sympile, T, _sympile_softmax(), layers, batch, steps, style, mode)
                compile_times[f"{model}, batch {batch}, {style}"] = time.perf_counter() - start
            case.implementations["numpy (by hand)"] = mlp.numpy_steps(layers, batch, steps)
            if "pytensor" in peers:
                import pytensor
                import pytensor.tensor as pt
                from pytensor.tensor.special import softmax
                for style in ("default", "trust_input"):
                    case.implementations[f"pytensor {style}"] = mlp.theano_style_steps(
                        pytensor, pt, lambda s: softmax(s, axis=1), layers, batch, steps,
                        style)
            if "jax" in peers:
                for style in ("jit step", "fori_loop"):
                    case.implementations[f"jax {style}"] = mlp.jax_steps(layers, batch, steps,
                                                                          style)
            if "torch" in peers:
                case.implementations["torch eager"] = mlp.torch_steps(layers, batch, steps)
            cases.append(case)
    return cases


def rnn_cases(peers: list[str], sizes: list[tuple[int, int]], n_sequences: int, length: int,
              mode: Mode) -> list[Case]:
    """The paper's RNN training (benchmarks/rnn.py) and its forward recurrence alone, for each
    (vocabulary, hidden) of `sizes`."""
    cases = []
    for vocabulary, hidden in sizes:
        size = f"V {vocabulary}, H {hidden}"
        case = Case("RNN train (BPTT)", size, "elements", n_sequences * length)
        case.implementations["sympile scan"] = rnn.theano_style_steps(
            sympile, T, T.sigmoid, T.nnet.softmax, vocabulary, hidden, n_sequences, length,
            mode)
        case.implementations["numpy (by hand)"] = rnn.numpy_steps(vocabulary, hidden,
                                                                  n_sequences, length)
        if "pytensor" in peers:
            import pytensor
            import pytensor.tensor as pt
            from pytensor.tensor.special import softmax
            case.implementations["pytensor scan"] = rnn.theano_style_steps(
                pytensor, pt, pt.sigmoid, lambda s: softmax(s, axis=-1), vocabulary,
                hidden, n_sequences, length)
        if "jax" in peers:
            case.implementations["jax lax.scan"] = rnn.jax_steps(vocabulary, hidden,
                                                                 n_sequences, length)
        if "torch" in peers:
            case.implementations["torch loop"] = rnn.torch_steps(vocabulary, hidden,
                                                                 n_sequences, length)
        forward = Case("RNN forward only", size, "elements", length)
        forward.implementations["sympile scan"] = rnn.forward_steps(
            sympile, T, T.sigmoid, vocabulary, hidden, length, mode)
        forward.implementations["numpy (by hand)"] = rnn.numpy_forward(vocabulary, hidden,
                                                                       length)
        cases += [case, forward]
    return cases


def rnn_sizes(text: str) -> list[tuple[int, int]]:
    """'54x50,3000x100' -> [(54, 50), (3000, 100)] (vocabulary, hidden)."""
    sizes = []
    for pair in text.split(","):
        parts = pair.split("x")
        if len(parts) != 2 or not all(part.strip().isdigit() for part in parts):
            raise argparse.ArgumentTypeError(
                f"--rnn-sizes: expected vocabulary x hidden pairs like 54x50,3000x100, "
                f"got {pair!r}")
        sizes.append((int(parts[0]), int(parts[1])))
    return sizes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", default="pytensor,jax,torch",
                        help="comma-separated peers ('' for none)")
    parser.add_argument("--only", default="overhead,elemwise,mlp")
    parser.add_argument("--models", default=",".join(mlp.MODELS),
                        help=f"comma-separated, from: {'; '.join(mlp.MODELS)}")
    parser.add_argument("--batches", default="1,10,60")
    parser.add_argument("--backend", default="c", choices=("c", "python"),
                        help="sympile's backend (FAST_RUN rewrites)")
    parser.add_argument("--full", action="store_true", help="a whole epoch per timed call")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rnn-sizes", type=rnn_sizes, default=None,
                        help="vocabulary x hidden pairs, e.g. 54x50,3000x100 (default: 54x50, "
                             "or the paper's whole table under --full)")
    parser.add_argument("--rnn-sequences", type=int, default=None,
                        help="sequences of 100 per timed call (default 3, 100 under --full)")
    parser.add_argument("--json", default="benchmarks/results.json")
    parser.add_argument("--no-busy", action="store_true",
                        help="skip the second timing with one core kept busy")
    arguments = parser.parse_args(argv)
    peers, notes = available_peers([p for p in arguments.compare.split(",") if p])
    workloads = set(arguments.only.split(","))
    mode = Mode(RewriteQuery(include=("fast_run",)), backend=arguments.backend,
                name=f"FAST_RUN, {arguments.backend} backend")
    cases: list[Case] = []
    compile_times: dict[str, float] = {}
    if "overhead" in workloads:
        cases.append(overhead_case(peers, mode))
    if "elemwise" in workloads:
        cases += elementwise_cases(peers, (10**6, 10**7), mode)
    if "rnn" in workloads:
        table = rnn.FULL if arguments.full else rnn.SMALL
        sizes = arguments.rnn_sizes or [(vocabulary, hidden)
                                        for vocabulary in table["vocabularies"]
                                        for hidden in table["hiddens"]]
        cases += rnn_cases(peers, sizes, arguments.rnn_sequences or table["n_sequences"],
                           table["length"], mode)
    if "mlp" in workloads:
        cases += mlp_cases(peers, arguments.models.split(","),
                           tuple(int(b) for b in arguments.batches.split(",")),
                           arguments.full, compile_times, mode)
    rows: list[Row] = []
    for case in cases:
        rows += measure(case, arguments.repeats, busy=not arguments.no_busy)
        print(f"measured {case.workload}, {case.size}", file=sys.stderr)
    print(f"sympile mode: {mode}; peers: {', '.join(peers) or 'none'}")
    for note in notes:
        print(note)
    print(format_table(rows))
    if compile_times:
        print("\nsympile compile time of the MLP training function (s):")
        for label, seconds in compile_times.items():
            print(f"  {label}: {seconds:.3f}")
    write_json(arguments.json, rows, {"versions": peer_versions(peers), "notes": notes,
                                      "mode": str(mode),
                                      "compile_seconds": compile_times})
    print(f"\nwritten to {arguments.json}")


if __name__ == "__main__":
    main()
