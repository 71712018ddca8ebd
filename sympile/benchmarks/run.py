"""sympile side by side with numpy and its peers, in one run.

    sympile-bench [--compare pytensor,jax,torch] [--only overhead,elemwise,mlp,rnn]
                  [--backend c|python] [--full] [--repeats 5] [--rnn-sizes 54x50,3000x100]
                  [--rnn-sequences 3] [--json sympile-bench.json] [--no-busy]

The workloads of "Theano: new features and speed improvements" (Bastien et al., 2012) and two
more: call overhead of f(x) = x + 1 on 10 float32 (default call, trust_input,
fn(n_calls)); fused elementwise exp(-x*x)*sin(x) + tanh(x)*0.5 and sum((x - mean(x))**2) on
1e6 and 1e7 float32; the paper's MLP training (see mlp.py beside this file) for three models
at batch 1, 10 and 60 in each call style. The default run takes a few minutes on 2 cores
with the peers installed (about a minute without them). Timings mean something only on a
quiet machine: close other work first.

The run first names the machine (CPU, x86-64 level, cores, caches) and measures its
float32 multiply-add peak and read bandwidth; each row shows its share of the limit it is
bound by ("of limit"). Peers that are not installed are skipped with a note
(`pip install '.[bench]'`). Each library runs in a process of its own, so that one library's
spinning threads never sit on the cores the next one is timed on.

Prints a table of median times per call or per training step, throughput, and each peer's
time divided by sympile's in the matching call style (pytensor trust_input against sympile
trust_input, jax's fori_loop against fn(n_calls), one Python call per step against
trust_input; above 1: sympile is faster), idle and then with one core kept busy by a
spinning process the harness starts (--no-busy: idle only). Writes the rows to JSON (times in
seconds per the row's `per`) and a bar chart of the ratios beside it (the same name, .png;
needs matplotlib).

rnn (not run by default): the paper's RNN trained by BPTT (see rnn.py), vocabulary 54 and
50 hidden units on 3 sequences of 100, the paper's whole table (100 sequences) under
--full; --rnn-sizes picks vocabulary x hidden pairs of it and --rnn-sequences the number of
sequences, for a part of the table in less time.
--full trains a whole epoch of 6000 examples per timed call (the paper's setup); by default a
timed call runs 50 minibatch steps.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

from sympile.benchmarks import machine, mlp, rnn
from sympile.benchmarks.harness import (
    Case,
    Row,
    available_peers,
    format_table,
    peer_versions,
    plot_ratios,
    print_compile_seconds,
    rows_of,
    run_workers,
    time_case,
    write_json,
)

OVERHEAD_CALLS = 1000


def _sympile_mode(backend: str) -> Any:
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery

    return Mode(RewriteQuery(include=("fast_run",)), backend=backend,
                name=f"FAST_RUN, {backend} backend")


def overhead_case(library: str, mode: Any) -> Case:
    """f(x) = x + 1 on 10 float32: what one call costs beyond the work."""
    x = np.arange(10, dtype="float32")
    case = Case("call overhead", "x + 1, 10 float32", "calls", OVERHEAD_CALLS, "call",
                OVERHEAD_CALLS)
    calls = range(OVERHEAD_CALLS)
    if library == "sympile":
        import sympile
        import sympile.tensor as T
        vector = T.fvector("x")
        default = sympile.function([vector], vector + 1, mode=mode)
        trusted = sympile.function([vector], vector + 1, mode=mode)
        trusted.trust_input = True
        trusted(x)
        case.implementations["sympile default"] = lambda: [default(x) for _ in calls]
        case.implementations["sympile trust_input"] = lambda: [trusted(x) for _ in calls]
        case.implementations["sympile n_calls"] = lambda: trusted.fn(n_calls=OVERHEAD_CALLS)
    elif library == "numpy":
        case.implementations["numpy"] = lambda: [np.add(x, 1) for _ in calls]
    elif library == "pytensor":
        import pytensor
        import pytensor.tensor as pt
        symbol = pt.fvector("x")
        pytensor_default = pytensor.function([symbol], symbol + 1)
        pytensor_trusted = pytensor.function([symbol], symbol + 1)
        pytensor_trusted.trust_input = True
        case.implementations["pytensor default"] = lambda: [pytensor_default(x) for _ in calls]
        case.implementations["pytensor trust_input"] = (
            lambda: [pytensor_trusted(x) for _ in calls])
    elif library == "jax":
        import jax
        jitted = jax.jit(lambda v: v + 1)
        device_x = jax.numpy.asarray(x)
        case.implementations["jax jit"] = (
            lambda: [jitted(device_x).block_until_ready() for _ in calls])
    elif library == "torch":
        import torch
        tensor_x = torch.from_numpy(x)
        case.implementations["torch eager"] = lambda: [tensor_x + 1 for _ in calls]
    return case


def _elementwise(library: Any, x: Any) -> Any:
    return library.exp(-x * x) * library.sin(x) + library.tanh(x) * 0.5


def _variance_sum(library: Any, x: Any) -> Any:
    return ((x - library.mean(x)) ** 2).sum()


def elementwise_cases(library: str, sizes: tuple[int, ...], mode: Any) -> list[Case]:
    cases = []
    rng = np.random.default_rng(0)
    for label, expression in (("fused elementwise", _elementwise),
                              ("sum of squared dev.", _variance_sum)):
        for size in sizes:
            x = rng.standard_normal(size).astype("float32")
            # The least traffic: x read once, and the elementwise result written.
            moved = size * 4 * (2 if label == "fused elementwise" else 1)
            case = Case(label, f"{size:.0e} float32", "elements", size, "evaluation",
                        limit="read", work=moved)
            if library == "sympile":
                import sympile
                import sympile.tensor as T
                vector = T.fvector("x")
                function = sympile.function([vector], expression(T, vector), mode=mode)
                function.trust_input = True
                case.implementations["sympile trust_input"] = lambda f=function, x=x: f(x)
            elif library == "numpy":
                case.implementations["numpy"] = lambda x=x, e=expression: e(np, x)
            elif library == "pytensor":
                import pytensor
                import pytensor.tensor as pt
                symbol = pt.fvector("x")
                peer = pytensor.function([symbol], expression(pt, symbol))
                peer.trust_input = True
                case.implementations["pytensor trust_input"] = lambda f=peer, x=x: f(x)
            elif library == "jax":
                import jax
                jitted = jax.jit(lambda v, e=expression: e(jax.numpy, v))
                device_x = jax.numpy.asarray(x)
                case.implementations["jax jit"] = (
                    lambda f=jitted, x=device_x: f(x).block_until_ready())
            elif library == "torch":
                import torch
                tensor_x = torch.from_numpy(x)
                case.implementations["torch eager"] = lambda x=tensor_x, e=expression: e(torch, x)
            cases.append(case)
    return cases


def mlp_cases(library: str, models: list[str], batches: tuple[int, ...], full: bool,
              compile_times: dict[str, float], mode: Any) -> list[Case]:
    cases = []
    for model in models:
        layers = mlp.MODELS[model]
        for batch in batches:
            steps = mlp.N_EXAMPLES // batch if full else 50
            # A step's products: 2 flops per weight and example forward, 4 backward (the
            # weights' and the inputs' gradients), less the first layer's input gradient.
            weights = sum(a * b for a, b in zip(layers, layers[1:]))
            flops = 2 * batch * (3 * weights - layers[0] * layers[1])
            case = Case(f"MLP train, {model}", f"batch {batch}", "examples", steps * batch,
                        "step", steps, limit="fma", work=flops)
            if library == "sympile":
                import sympile
                import sympile.tensor as T
                for style in ("default", "trust_input", "n_calls"):
                    start = time.perf_counter()
                    case.implementations[f"sympile {style}"] = mlp.theano_style_steps(
                        sympile, T, T.nnet.softmax, layers, batch, steps, style, mode)
                    compile_times[f"{model}, batch {batch}, {style}"] = (
                        time.perf_counter() - start)
            elif library == "numpy":
                case.implementations["numpy (by hand)"] = mlp.numpy_steps(layers, batch, steps)
            elif library == "pytensor":
                import pytensor
                import pytensor.tensor as pt
                from pytensor.tensor.special import softmax
                for style in ("default", "trust_input"):
                    case.implementations[f"pytensor {style}"] = mlp.theano_style_steps(
                        pytensor, pt, lambda s: softmax(s, axis=1), layers, batch, steps,
                        style)
            elif library == "jax":
                for style in ("jit step", "fori_loop"):
                    case.implementations[f"jax {style}"] = mlp.jax_steps(layers, batch, steps,
                                                                          style)
            elif library == "torch":
                case.implementations["torch eager"] = mlp.torch_steps(layers, batch, steps)
            cases.append(case)
    return cases


def rnn_cases(library: str, sizes: list[tuple[int, int]], n_sequences: int, length: int,
              mode: Any) -> list[Case]:
    """The paper's RNN training (sympile/benchmarks/rnn.py) and its forward recurrence alone,
    for each (vocabulary, hidden) of `sizes`."""
    cases = []
    for vocabulary, hidden in sizes:
        size = f"V {vocabulary}, H {hidden}"
        case = Case("RNN train (BPTT)", size, "elements", n_sequences * length, "sequence",
                    n_sequences)
        forward = Case("RNN forward only", size, "elements", length, "sequence")
        if library == "sympile":
            import sympile
            import sympile.tensor as T
            case.implementations["sympile scan"] = rnn.theano_style_steps(
                sympile, T, T.sigmoid, T.nnet.softmax, vocabulary, hidden, n_sequences,
                length, mode)
            forward.implementations["sympile scan"] = rnn.forward_steps(
                sympile, T, T.sigmoid, vocabulary, hidden, length, mode)
        elif library == "numpy":
            case.implementations["numpy (by hand)"] = rnn.numpy_steps(vocabulary, hidden,
                                                                      n_sequences, length)
            forward.implementations["numpy (by hand)"] = rnn.numpy_forward(vocabulary, hidden,
                                                                           length)
        elif library == "pytensor":
            import pytensor
            import pytensor.tensor as pt
            from pytensor.tensor.special import softmax
            case.implementations["pytensor scan"] = rnn.theano_style_steps(
                pytensor, pt, pt.sigmoid, lambda s: softmax(s, axis=-1), vocabulary,
                hidden, n_sequences, length)
        elif library == "jax":
            case.implementations["jax lax.scan"] = rnn.jax_steps(vocabulary, hidden,
                                                                 n_sequences, length)
        elif library == "torch":
            case.implementations["torch loop"] = rnn.torch_steps(vocabulary, hidden,
                                                                 n_sequences, length)
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


def build_cases(library: str, arguments: argparse.Namespace,
                compile_times: dict[str, float]) -> list[Case]:
    """The cases `arguments` select, with `library`'s implementations only."""
    workloads = set(arguments.only.split(","))
    mode = _sympile_mode(arguments.backend) if library == "sympile" else None
    cases: list[Case] = []
    if "overhead" in workloads:
        cases.append(overhead_case(library, mode))
    if "elemwise" in workloads:
        cases += elementwise_cases(library, (10**6, 10**7), mode)
    if "rnn" in workloads:
        table = rnn.FULL if arguments.full else rnn.SMALL
        sizes = arguments.rnn_sizes or [(vocabulary, hidden)
                                        for vocabulary in table["vocabularies"]
                                        for hidden in table["hiddens"]]
        cases += rnn_cases(library, sizes, arguments.rnn_sequences or table["n_sequences"],
                           table["length"], mode)
    if "mlp" in workloads:
        cases += mlp_cases(library, arguments.models.split(","),
                           tuple(int(b) for b in arguments.batches.split(",")),
                           arguments.full, compile_times, mode)
    return cases


def worker(library: str, arguments: argparse.Namespace) -> None:
    """Builds and times `library`'s implementations; prints them as one line of JSON."""
    compile_times: dict[str, float] = {}
    cases = build_cases(library, arguments, compile_times)
    results = {}
    for case in cases:
        results[case.key] = {"case": [case.workload, case.size, case.unit, case.units,
                                      case.per, case.count, case.limit, case.work],
                             "seconds": time_case(case, arguments.repeats)}
        print(f"{library}: measured {case.key}", file=sys.stderr)
    print(json.dumps({"results": results, "compile_seconds": compile_times}))


def _case_seconds(workers: dict[str, Any], key: str) -> dict[str, float]:
    """Every library's seconds for the case `key`, from run_workers' results."""
    seconds: dict[str, float] = {}
    for result in workers.values():
        seconds.update(result["results"].get(key, {}).get("seconds", {}))
    return seconds


def parser() -> argparse.ArgumentParser:
    described = argparse.ArgumentParser(
        prog="sympile-bench",
        description="\n\n".join([__doc__.splitlines()[0], *__doc__.split("\n\n")[2:]]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Other suites: sympile-bench SUITE --help (sympile-bench --list names them).")
    described.add_argument("--compare", default="pytensor,jax,torch",
                           help="comma-separated peers to time beside sympile and numpy, from "
                                "pytensor, jax, torch ('' for none; missing ones are skipped "
                                "with a note; default: %(default)s)")
    described.add_argument("--only", default="overhead,elemwise,mlp",
                           help="comma-separated workloads: overhead (f(x) = x + 1 per call), "
                                "elemwise (a fused loop and a variance sum on 1e6 and 1e7 "
                                "float32), mlp (the paper's MLP training), rnn (the paper's "
                                "RNN training by BPTT; default: %(default)s)")
    described.add_argument("--models", default=",".join(mlp.MODELS),
                           help=f"MLP models, comma-separated, from: {'; '.join(mlp.MODELS)}")
    described.add_argument("--batches", default="1,10,60",
                           help="MLP minibatch sizes, comma-separated (default: %(default)s)")
    described.add_argument("--backend", default="c", choices=("c", "python"),
                           help="sympile's backend, with FAST_RUN's rewrites (default: c)")
    described.add_argument("--full", action="store_true",
                           help="a whole epoch of 6000 examples per timed MLP call, and the "
                                "paper's whole RNN table (default: 50 steps a timed call)")
    described.add_argument("--repeats", type=int, default=5,
                           help="timed repeats; the median is reported (default: 5)")
    described.add_argument("--rnn-sizes", type=rnn_sizes, default=None,
                           help="RNN vocabulary x hidden pairs, e.g. 54x50,3000x100 (default: "
                                "54x50, or the paper's whole table under --full)")
    described.add_argument("--rnn-sequences", type=int, default=None,
                           help="RNN sequences of 100 per timed call (default 3, 100 under "
                                "--full)")
    described.add_argument("--json", default="sympile-bench.json",
                           help="where to write the results (default: %(default)s in the "
                                "current directory); the ratio plot goes beside it as .png")
    described.add_argument("--no-busy", action="store_true",
                           help="skip the second timing with one core kept busy")
    described.add_argument("--worker", help=argparse.SUPPRESS)
    return described


def machine_text(info: dict[str, Any], measured: dict[str, Any]) -> str:
    """The machine and its measured limits, as the report's header."""
    caches = ", ".join(f"{name} {size}" for name, size in info["caches"].items())
    fma = ", ".join(f"{gflops:.0f} GFLOP/s on {threads} thread{'s' * (threads > 1)}"
                    for threads, gflops in measured["fma_gflops"].items())
    read = "; ".join(f"{size >> 20} MiB: " + ", ".join(
        f"{gbs:.1f} GB/s on {threads} thread{'s' * (threads > 1)}"
        for threads, gbs in by_threads.items())
        for size, by_threads in measured["read_gbs"].items())
    level = info["isa_level"] or "level unknown"
    return (f"machine: {info['cpu'] or 'CPU model unknown'} ({level}, {info['cores']} cores; "
            f"caches {caches or 'unknown'})\n"
            f"limits: float32 multiply-add peak {fma}; read bandwidth {read}. 'of limit': "
            f"each row's share of the all-core limit it is bound by (the bandwidth at its "
            f"data's size)")


def main(argv: list[str] | None = None) -> None:
    arguments = parser().parse_args(argv)
    if arguments.worker:
        worker(arguments.worker, arguments)
        return
    peers, notes = available_peers([p for p in arguments.compare.split(",") if p])
    libraries = ["sympile", "numpy", *peers]
    # The machine's limits, measured first, while it is idle.
    info, measured = machine.machine_info(), machine.limits()

    def limits(case: Case) -> float:
        if case.limit == "fma":
            return max(measured["fma_gflops"].values()) * 1e9
        return machine.read_limit(measured, case.work)
    forwarded = list(sys.argv[1:] if argv is None else argv)
    idle = run_workers(__spec__.name, libraries, forwarded, busy=False, skip_failures=True)
    busy = ({} if arguments.no_busy else
            run_workers(__spec__.name, libraries, forwarded, busy=True, skip_failures=True))
    rows: list[Row] = []
    for key, result in idle.get("sympile", {}).get("results", {}).items():
        rows += rows_of(Case(*result["case"]), _case_seconds(idle, key),
                        _case_seconds(busy, key), limits)
    backend = arguments.backend
    print(f"sympile: FAST_RUN on the {backend} backend; peers: {', '.join(peers) or 'none'}; "
          f"each library in its own process")
    for note in notes:
        print(note)
    print(machine_text(info, measured))
    print(format_table(rows))
    compile_times = idle.get("sympile", {}).get("compile_seconds", {})
    print_compile_seconds("sympile compile time of the MLP training function (s)",
                          compile_times)
    write_json(arguments.json, rows, {
        "units": "seconds: per row's `per` (one call, one training step, one evaluation, "
                 "one sequence); ratio: the row's time over that of `compared_with` "
                 "(above 1: sympile is faster); busy_*: the same with one core kept busy",
        "versions": peer_versions(peers), "notes": notes, "backend": backend,
        "compile_seconds": compile_times, "machine": {**info, **measured}})
    print(f"\nwritten to {arguments.json}")
    plot = plot_ratios(rows, os.path.splitext(arguments.json)[0] + ".png")
    print(f"ratios plotted in {plot}" if plot else "no plot: matplotlib is not installed")


if __name__ == "__main__":
    main()
