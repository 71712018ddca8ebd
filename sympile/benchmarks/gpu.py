"""The paper's GPU columns: sympile's CUDA backend side by side with torch and jax on the
same card, in one run, each library in a process of its own.

    sympile-bench gpu [--context cuda0] [--compare torch,torch.compile,jax]
                      [--only copy,elemwise,mlp,rnn,lenet] [--sizes 1e7,1e8]
                      [--batches 1,10,60,600] [--rnn-hiddens 50,200,500,1500]
                      [--vocabulary 10000] [--lenet-batches 10,60] [--steps 50]
                      [--repeats 3] [--json sympile-bench-gpu.json]

Workloads (float32): a device-to-device copy (the card's bandwidth, the limit of the loops
below); the fused elementwise exp(-x*x)*sin(x) + tanh(x)*0.5 and the fused reduction
sum((x - mean(x))**2) of a device array; the paper's MLP training (mlp.py beside this file:
784-500-10 and 784-1000x3-10 at each batch, sympile with trust_input and fn(n_calls)); the
RNN language model by BPTT (rnn.py: the vocabulary, 3 sequences of 100, each hidden size);
LeNet-5 training (lenet.py). Data and parameters live on the device in every library (shared
variables of the placement target in sympile); a timed call waits for the device at its end.

Peers: torch (CUDA eager), torch.compile (mode="reduce-overhead", which replays CUDA Graphs;
MLP and LeNet) and jax (jax.jit on its GPU). A peer without a GPU is reported as failed and
left out. Ratios: a peer's time over sympile's in the matching call style (above 1: sympile
is faster); 'of limit': a loop's bytes per second over the measured copy bandwidth.

--context emulated runs the same program on sympile's CPU emulation of a device, with the
peers on the CPU: a check that the suite works, whose times mean nothing (use small sizes:
--sizes 1e4 --batches 1,10 --vocabulary 50 --rnn-hiddens 8 --lenet-batches 2 --steps 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from sympile.benchmarks import lenet, mlp, rnn
from sympile.benchmarks.harness import (
    Case,
    Row,
    format_table,
    print_compile_seconds,
    rows_of,
    run_workers,
    time_case,
    write_json,
)

PEERS = ("torch", "torch.compile", "jax")
WORKLOADS = ("copy", "elemwise", "mlp", "rnn", "lenet")
RNN_SEQUENCES, RNN_LENGTH = 3, 100
GPU_MLP_MODELS = ("mlp 784-500-10", "mlp 784-1000x3-10")


def _numbers(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part]


class _Library:
    """A worker's library: how it puts data on its device and waits for it."""

    def __init__(self, name: str, context: str):
        self.name = name
        self.emulated = context == "emulated"
        if name == "sympile":
            from sympile.gpu.runtime import runtime
            self.runtime = runtime(context)
        elif name.startswith("torch"):
            import torch
            if not self.emulated and not torch.cuda.is_available():
                raise SystemExit(f"{name}: torch {torch.__version__} sees no CUDA device")
            self.torch = torch
            self.device = "cpu" if self.emulated else "cuda"
        elif name == "jax":
            import jax
            if not self.emulated and jax.default_backend() != "gpu":
                raise SystemExit(f"jax: its default backend is {jax.default_backend()}, "
                                 f"not a GPU")
            self.jax = jax

    def synchronize(self) -> None:
        if self.name == "sympile":
            self.runtime.synchronize()
        elif self.name.startswith("torch") and not self.emulated:
            self.torch.cuda.synchronize()


def _elementwise(library: Any, x: Any) -> Any:
    return library.exp(-x * x) * library.sin(x) + library.tanh(x) * 0.5


def _variance_sum(library: Any, x: Any) -> Any:
    return ((x - library.mean(x)) ** 2).sum()


def _synchronized(run: Callable[[], Any], library: _Library) -> Callable[[], None]:
    def timed() -> None:
        run()
        library.synchronize()
    return timed


def loop_cases(library: _Library, sizes: list[int], workloads: set[str]) -> list[Case]:
    """The copy, the fused elementwise loop and the fused reduction at each size."""
    cases = []
    rng = np.random.default_rng(0)
    for size in sizes:
        host = rng.standard_normal(size).astype("float32")
        kinds = [("device copy", None, 8)] if "copy" in workloads else []
        if "elemwise" in workloads:
            kinds += [("fused elementwise", _elementwise, 8),
                      ("sum of squared dev.", _variance_sum, 4)]
        for label, expression, bytes_per_element in kinds:
            # The least traffic: x read once, and the elementwise result written.
            case = Case(label, f"{size:.0e} float32", "elements", size, "evaluation",
                        limit="copy", work=size * bytes_per_element)
            case.implementations.update(_loop_implementations(library, host, expression))
            cases.append(case)
    return cases


def _loop_implementations(library: _Library, host: np.ndarray,
                          expression: Callable | None) -> dict[str, Callable[[], None]]:
    name = library.name
    if name == "sympile":
        import sympile
        import sympile.tensor as T
        from sympile.gpu.runtime import placement_target

        device = library.runtime
        if expression is None:
            x = device.to_device(host)
            return {"sympile (runtime copy)": _synchronized(lambda: device.copy(x), library)}
        with placement_target(device.context):
            shared = sympile.shared(host, name="x")
            function = sympile.function([], expression(T, shared), return_device_arrays=True,
                                        trust_input=True)
        return {"sympile trust_input": _synchronized(function, library)}
    if name.startswith("torch"):
        torch = library.torch
        x = torch.from_numpy(host).to(library.device)
        if expression is None:
            return {} if name != "torch" else {
                "torch clone": _synchronized(lambda: x.clone(), library)}
        if name == "torch":
            return {"torch eager": _synchronized(lambda: expression(torch, x), library)}
        compiled = torch.compile(lambda v: expression(torch, v), mode="reduce-overhead")
        return {"torch.compile reduce-overhead": _synchronized(lambda: compiled(x), library)}
    jax = library.jax
    x = jax.numpy.asarray(host)
    if expression is None:
        return {"jax copy": lambda: jax.block_until_ready(jax.numpy.array(x, copy=True))}
    jitted = jax.jit(lambda v: expression(jax.numpy, v))
    return {"jax jit": lambda: jitted(x).block_until_ready()}


def mlp_cases(library: _Library, models: list[str], batches: list[int], steps: int,
              compile_seconds: dict[str, float]) -> list[Case]:
    cases = []
    for model in models:
        layers = mlp.MODELS[model]
        for batch in batches:
            case = Case(f"MLP train, {model}", f"batch {batch}", "examples", steps * batch,
                        "step", steps)
            name = library.name
            if name == "sympile":
                import sympile
                import sympile.tensor as T
                from sympile.gpu.runtime import placement_target
                # trust_input also without CUDA Graphs: what replaying the step gains.
                for style, graphs in (("trust_input", True), ("n_calls", True),
                                      ("trust_input", False)):
                    label = style if graphs else f"{style}, graphs off"
                    start = time.perf_counter()
                    with placement_target(library.runtime.context), \
                            sympile.config.change_flags(gpu_graphs=graphs):
                        run = mlp.theano_style_steps(sympile, T, T.nnet.softmax, layers, batch,
                                                     steps, style)
                    compile_seconds[f"MLP {model}, batch {batch}, {label}"] = (
                        time.perf_counter() - start)
                    case.implementations[f"sympile {label}"] = _synchronized(run, library)
            elif name == "torch":
                case.implementations["torch eager"] = mlp.torch_steps(
                    layers, batch, steps, device=library.device)
            elif name == "torch.compile":
                case.implementations["torch.compile reduce-overhead"] = mlp.torch_steps(
                    layers, batch, steps, device=library.device, compile_mode="reduce-overhead")
            else:
                for style in ("jit step", "fori_loop"):
                    case.implementations[f"jax {style}"] = mlp.jax_steps(layers, batch, steps,
                                                                          style)
            cases.append(case)
    return cases


def rnn_cases(library: _Library, vocabulary: int, hiddens: list[int],
              compile_seconds: dict[str, float]) -> list[Case]:
    cases = []
    for hidden in hiddens:
        case = Case("RNN train (BPTT)", f"V {vocabulary}, H {hidden}", "elements",
                    RNN_SEQUENCES * RNN_LENGTH, "sequence", RNN_SEQUENCES)
        name = library.name
        if name == "sympile":
            import sympile
            import sympile.tensor as T
            from sympile.gpu.runtime import placement_target
            start = time.perf_counter()
            with placement_target(library.runtime.context):
                run = rnn.theano_style_steps(sympile, T, T.sigmoid, T.nnet.softmax, vocabulary,
                                             hidden, RNN_SEQUENCES, RNN_LENGTH)
            compile_seconds[f"RNN V {vocabulary}, H {hidden}"] = time.perf_counter() - start
            case.implementations["sympile scan"] = _synchronized(run, library)
        elif name == "torch":
            case.implementations["torch loop"] = rnn.torch_steps(
                vocabulary, hidden, RNN_SEQUENCES, RNN_LENGTH, device=library.device)
        elif name == "jax":
            case.implementations["jax lax.scan"] = rnn.jax_steps(vocabulary, hidden,
                                                                 RNN_SEQUENCES, RNN_LENGTH)
        if case.implementations:
            cases.append(case)
    return cases


def lenet_cases(library: _Library, batches: list[int],
                compile_seconds: dict[str, float]) -> list[Case]:
    cases = []
    for batch in batches:
        case = Case("LeNet-5 train", f"batch {batch}", "examples", lenet.STEPS * batch, "step",
                    lenet.STEPS)
        name = library.name
        if name == "sympile":
            from sympile.gpu.runtime import placement_target
            start = time.perf_counter()
            with placement_target(library.runtime.context):
                run = lenet.sympile_steps("lenet", batch)
            compile_seconds[f"LeNet-5, batch {batch}"] = time.perf_counter() - start
            case.implementations["sympile trust_input"] = _synchronized(run, library)
        elif name == "torch":
            case.implementations["torch eager"] = lenet.torch_steps("lenet", batch, None,
                                                                    library.device)
        elif name == "torch.compile":
            case.implementations["torch.compile reduce-overhead"] = lenet.torch_steps(
                "lenet", batch, "reduce-overhead", library.device)
        else:
            case.implementations["jax jit"] = lenet.jax_steps("lenet", batch)
        cases.append(case)
    return cases


def build_cases(library: _Library, arguments: argparse.Namespace,
                compile_seconds: dict[str, float]) -> list[Case]:
    workloads = set(arguments.only.split(","))
    cases = loop_cases(library, _numbers(arguments.sizes), workloads)
    if "mlp" in workloads:
        cases += mlp_cases(library, arguments.models.split(","), _numbers(arguments.batches),
                           arguments.steps, compile_seconds)
    if "rnn" in workloads:
        cases += rnn_cases(library, arguments.vocabulary, _numbers(arguments.rnn_hiddens),
                           compile_seconds)
    if "lenet" in workloads:
        cases += lenet_cases(library, _numbers(arguments.lenet_batches), compile_seconds)
    return cases


def worker(name: str, arguments: argparse.Namespace) -> None:
    """Builds and times `name`'s implementations; prints them as one line of JSON."""
    library = _Library(name, arguments.context)
    compile_seconds: dict[str, float] = {}
    results = {}
    for case in build_cases(library, arguments, compile_seconds):
        if not case.implementations:
            continue
        results[case.key] = {"case": [case.workload, case.size, case.unit, case.units,
                                      case.per, case.count, case.limit, case.work],
                             "seconds": time_case(case, arguments.repeats)}
        print(f"{name}: measured {case.key}", file=sys.stderr)
    print(json.dumps({"results": results, "compile_seconds": compile_seconds,
                      "device": _device_name(library)}))


def _device_name(library: _Library) -> str:
    if library.name != "sympile" or library.emulated:
        return "emulated" if library.emulated else ""
    cupy = library.runtime.cupy
    properties = cupy.cuda.runtime.getDeviceProperties(library.runtime.index)
    return (f"{properties['name'].decode()} (compute capability {properties['major']}."
            f"{properties['minor']}, {properties['totalGlobalMem'] / 2**30:.0f} GiB)")


def _copy_bandwidth(results: dict[str, Any]) -> float | None:
    """Bytes per second of sympile's device copy at the largest size measured."""
    copies = [(case["case"][3], case["case"][7] / case["seconds"]["sympile (runtime copy)"])
              for case in results.get("results", {}).values()
              if case["case"][0] == "device copy"]
    return max(copies)[1] if copies else None


def parser() -> argparse.ArgumentParser:
    described = argparse.ArgumentParser(prog="sympile-bench gpu", description=__doc__,
                                        formatter_class=argparse.RawDescriptionHelpFormatter)
    described.add_argument("--context", default="cuda0",
                           help="the device: cuda0, cuda1, ... or emulated (default: "
                                "%(default)s)")
    described.add_argument("--compare", default=",".join(PEERS),
                           help=f"peers, comma-separated, from {', '.join(PEERS)} "
                                f"(default: %(default)s)")
    described.add_argument("--only", default=",".join(WORKLOADS),
                           help=f"workloads, comma-separated, from {', '.join(WORKLOADS)} "
                                f"(default: all)")
    described.add_argument("--sizes", default="1e7,1e8",
                           help="elements of the copy and the loops (default: %(default)s)")
    described.add_argument("--models", default=",".join(GPU_MLP_MODELS),
                           help=f"MLP models, comma-separated, from: {'; '.join(mlp.MODELS)}")
    described.add_argument("--batches", default="1,10,60,600",
                           help="MLP minibatch sizes (default: %(default)s)")
    described.add_argument("--steps", type=int, default=50,
                           help="MLP steps per timed call (default: %(default)s)")
    described.add_argument("--vocabulary", type=int, default=10000,
                           help="the RNN's vocabulary (default: %(default)s)")
    described.add_argument("--rnn-hiddens", default="50,200,500,1500",
                           help="the RNN's hidden sizes (default: %(default)s)")
    described.add_argument("--lenet-batches", default="10,60",
                           help="LeNet-5 minibatch sizes (default: %(default)s)")
    described.add_argument("--repeats", type=int, default=3,
                           help="timed repeats; the median is reported (default: %(default)s)")
    described.add_argument("--json", default="sympile-bench-gpu.json",
                           help="where to write the results (default: %(default)s)")
    described.add_argument("--worker", help=argparse.SUPPRESS)
    return described


def main(argv: list[str] | None = None) -> None:
    arguments = parser().parse_args(argv)
    if arguments.worker:
        worker(arguments.worker, arguments)
        return
    peers = [name for name in arguments.compare.split(",") if name]
    unknown = sorted(set(peers) - set(PEERS))
    unknown_workloads = sorted(set(arguments.only.split(",")) - set(WORKLOADS))
    if unknown or unknown_workloads:
        raise SystemExit(f"sympile-bench gpu: unknown peers {unknown} or workloads "
                         f"{unknown_workloads}; peers: {', '.join(PEERS)}; workloads: "
                         f"{', '.join(WORKLOADS)}")
    forwarded = list(sys.argv[1:] if argv is None else argv)
    results = run_workers(__spec__.name, ["sympile", *peers], forwarded, busy=False,
                          skip_failures=True)
    ours = results.get("sympile")
    if ours is None:
        raise SystemExit("sympile-bench gpu: sympile's worker failed (above)")
    bandwidth = _copy_bandwidth(ours)
    rows: list[Row] = []
    for key, result in ours["results"].items():
        seconds: dict[str, float] = {}
        for library in results.values():
            seconds.update(library["results"].get(key, {}).get("seconds", {}))
        rows += rows_of(Case(*result["case"]), seconds, {},
                        lambda case: bandwidth if case.limit == "copy" else None)
    print(f"sympile-bench gpu on {ours['device']} ({arguments.context}); peers: "
          f"{', '.join(name for name in peers if name in results) or 'none'}")
    if bandwidth:
        print(f"device copy: {bandwidth / 1e9:.0f} GB/s (read + write): the loops' limit")
    print(format_table(rows))
    compile_seconds = ours["compile_seconds"]
    print_compile_seconds("sympile function() seconds (its kernels compile at the first call)",
                          compile_seconds)
    write_json(arguments.json, rows, {
        "units": "seconds per row's `per`; ratio: the row's time over that of `compared_with` "
                 "(above 1: sympile is faster); of_limit: bytes per second over the device "
                 "copy's",
        "device": ours["device"], "context": arguments.context,
        "copy_bytes_per_second": bandwidth, "compile_seconds": compile_seconds,
        "libraries": sorted(results)})
    print(f"\nwritten to {arguments.json}")


if __name__ == "__main__":
    main()
