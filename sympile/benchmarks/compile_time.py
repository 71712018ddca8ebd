"""Compile time of training steps on the C backend: the paper's MLP, RNN and LeNet, cold,
warm, and a new function whose ops are cached, beside jax.jit's.

    sympile-bench compile_time [--models "mlp 784-500-10,rnn 54x50,lenet"] [--repeats 3]

Each repeat uses a new empty cache directory and runs in fresh processes, so 'cold' compiles
everything (precompiled header, program unit, op units, main unit); 'cold, installed' is
'cold' in another empty cache with a prebuilt tier (what `pip install` compiles:
sympile.compile.prebuild, built once for the run), the first function after an install,
which compiles only its graph's units and main unit; 'warm' is a new process
that finds the whole module on disk, and 'ops cached' is a new process building the step at
another size (the MLPs' and LeNet's batch 10 instead of 60, the RNN's sequence of 50 instead
of 100: the same ops but its own main unit, and the units whose types carry the size). These
three compile before function() returns (config.compile_async off). 'cold, async' is 'cold'
with config.compile_async on, in another empty cache: function() returns once the graph is
rewritten, the first calls run on the Python backend while the C compiles at a lower
priority, and the calls switch to C when it is built.

Reported: the whole program's time (data, graph, gradient, function, then 100 training
steps: `first 100 steps`, the figure to compare between 'cold' and 'cold, async'),
sympile.function's time, the C VMs' codegen, compile and load seconds (a scan's inner
function included), the compiler processes' CPU seconds, the compiler's wall seconds per
kind of source (summed over the processes), and for 'cold, async' the step at which the
calls switched to C. Minimum over the repeats; say how loaded the machine was.

Where jax is installed (the bench extra), 'jax.jit' is the same step in jax (the jax_steps
of mlp.py, rnn.py and lenet.py), in a new process: `function` is its first call less its
second (tracing, lowering and compiling), `first 100 steps` the whole program as for
sympile; and the ratios of sympile's function() to it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

MEASURE = r"""
import json, os, resource, subprocess, sys, time
import sympile, sympile.tensor as tt
from sympile.benchmarks.mlp import MODELS, theano_style_steps
sympile.config.compile_async = sys.argv[3] == "async"
from sympile.cache import store
store.PREBUILT_DIR = sys.argv[4]
from sympile.link.c import linker
from sympile.tensor.nnet import softmax

kinds = {}
original = subprocess.run
def timed(command, *arguments, **keywords):
    start = time.perf_counter()
    result = original(command, *arguments, **keywords)
    if "--version" not in command:
        kind = next((os.path.basename(part) for part in command
                     if part.endswith((".c", ".h"))), "link")
        kinds[kind] = kinds.get(kind, 0.0) + time.perf_counter() - start
    return result
store.subprocess.run = timed
machines = []
plan = linker.CVM._plan
def recording(self, *arguments, **keywords):
    plan(self, *arguments, **keywords)
    machines.append(self)
linker.CVM._plan = recording
in_function = []
functions = []
build = sympile.function
def timed_function(*arguments, **keywords):
    start = time.perf_counter()
    result = build(*arguments, **keywords)
    in_function.append(time.perf_counter() - start)
    functions.append(result)
    return result
sympile.function = timed_function
start = time.perf_counter()
workload, size = sys.argv[1], int(sys.argv[2])
if workload == "rnn 54x50":
    from sympile.benchmarks import rnn
    run = rnn.theano_style_steps(sympile, tt, tt.nnet.sigmoid, softmax, 54, 50, 1, size).run
    calls = 100  # one sequence (one step) a call
elif workload == "lenet":
    from sympile.benchmarks import lenet
    run = lenet.sympile_steps("lenet", size)
    calls = 100 // lenet.STEPS
else:
    run = theano_style_steps(sympile, tt, softmax, MODELS[workload], size, 1, "default").run
    calls = 100
built = time.perf_counter()
switched = 0
for call in range(calls):
    run()
    if not switched and isinstance(functions[-1]._vm, linker.CVM):
        switched = (call + 1) * 100 // calls
end = time.perf_counter()
times = {name: sum(machine.build_times.get(name, 0.0) for machine in machines)
         for name in ("codegen", "compile", "load")}
result = {"program": built - start, "first 100 steps": end - start,
          "function": sum(in_function), "codegen": times["codegen"]}
if sys.argv[3] == "async":
    # The build may still run: its compiler figures would be partial.
    result["switched at step"] = switched or 101
else:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result.update(compile=times["compile"], load=times["load"],
                  compiler_cpu=usage.ru_utime + usage.ru_stime,
                  **{"wall " + kind: seconds for kind, seconds in kinds.items()})
print(json.dumps(result))
"""

JAX_MEASURE = r"""
import json, sys, time
start = time.perf_counter()
workload, size = sys.argv[1], int(sys.argv[2])
if workload == "rnn 54x50":
    from sympile.benchmarks import rnn
    run, calls = rnn.jax_steps(54, 50, 1, size).run, 100
elif workload == "lenet":
    from sympile.benchmarks import lenet
    run, calls = lenet.jax_steps("lenet", size), 100 // lenet.STEPS
else:
    from sympile.benchmarks.mlp import MODELS, jax_steps
    run, calls = jax_steps(MODELS[workload], size, 1, "jit step").run, 100
times = []
for _ in range(calls):
    before = time.perf_counter()
    run()
    times.append(time.perf_counter() - before)
end = time.perf_counter()
# The first call traces, lowers and compiles, then runs as the second does.
print(json.dumps({"function": times[0] - times[1], "first 100 steps": end - start}))
"""

# (phase, which size, config.compile_async, in a cache of its own, with the prebuilt tier):
# the three sync phases without a tier share one cache, in this order. 'ops cached' builds
# the workload at its second size.
PHASES = (("cold", 0, False, False, False), ("warm", 0, False, False, False),
          ("ops cached", 1, False, False, False), ("cold, installed", 0, False, True, True),
          ("cold, async", 0, True, True, False))
# Each workload's two sizes: the MLPs' and LeNet's batch, the RNN's sequence length.
SIZES = {"rnn 54x50": (100, 50), "lenet": (60, 10)}
DEFAULT_SIZES = (60, 10)
WORKLOADS = "mlp 784-500-10,rnn 54x50,lenet"


def _package_parent() -> str:
    """The directory holding the sympile package, so that a child imports this copy."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _child(script: str, arguments: list[str], what: str,
           environment: dict[str, str] | None = None) -> dict[str, float]:
    """Run `script` in a new Python process and return the JSON of its last line."""
    result = subprocess.run([sys.executable, "-c", script, *arguments], cwd=_package_parent(),
                            env=environment, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"compile_time: measuring {what} failed:\n{result.stderr}")
    return json.loads(result.stdout.splitlines()[-1])


def measure(model: str, batch: int, compiledir: str, background: bool,
            tier: str | None) -> dict[str, float]:
    """One phase in a new process, in `compiledir`, with the prebuilt `tier` (None: none,
    even where the package imported has one)."""
    environment = dict(os.environ, SYMPILE_FLAGS=f"compiledir={compiledir},backend=c")
    return _child(MEASURE, [model, str(batch), "async" if background else "sync",
                            tier or os.path.join(compiledir, "no prebuilt tier")],
                  model, environment)


def prebuild_tier(directory: str) -> None:
    """The prebuilt tier of this copy of the package in `directory`, as setup.py builds it
    (under the default flags)."""
    environment = {name: value for name, value in os.environ.items()
                   if name != "SYMPILE_FLAGS"}
    result = subprocess.run([sys.executable, "-m", "sympile.compile.prebuild", directory],
                            cwd=_package_parent(), env=environment, capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"compile_time: the prebuilt tier failed:\n{result.stderr}")


def measure_jax(model: str, batch: int) -> dict[str, float] | None:
    """The jax.jit phase in a new process; None where jax is not installed."""
    if importlib.util.find_spec("jax") is None:
        return None
    return _child(JAX_MEASURE, [model, str(batch)], f"{model} with jax")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=WORKLOADS,
                        help="comma-separated workloads: MLPs ('mlp 784-500-10', 'logreg "
                             "784-10', 'mlp 784-1000x3-10'), 'rnn 54x50' (the paper's RNN "
                             "step on one sequence of 100), 'lenet' (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed repeats of each measure (default: %(default)s)")
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    tier_directory = tempfile.TemporaryDirectory(prefix="sympile-prebuilt-")
    prebuild_tier(tier_directory.name)
    for model in options.models.split(","):
        best: dict[str, dict[str, float]] = {}
        for _ in range(options.repeats):
            with tempfile.TemporaryDirectory(prefix="sympile-compile-time-") as shared, \
                    tempfile.TemporaryDirectory(prefix="sympile-compile-time-") as own:
                sizes = SIZES.get(model, DEFAULT_SIZES)
                measured = []
                for number, (phase, which, background, fresh, tier) in enumerate(PHASES):
                    # A directory of its own per fresh phase, named without the commas
                    # that would split SYMPILE_FLAGS.
                    compiledir = os.path.join(own, str(number)) if fresh else shared
                    measured.append((phase, measure(model, sizes[which], compiledir,
                                                    background,
                                                    tier_directory.name if tier else None)))
                jax_values = measure_jax(model, sizes[0])
                if jax_values is not None:
                    measured.append(("jax.jit", jax_values))
                for phase, values in measured:
                    kept = best.setdefault(phase, values)
                    for name, seconds in values.items():
                        kept[name] = min(kept.get(name, seconds), seconds)
        for phase, values in best.items():
            print(f"{model} {phase}: " + ", ".join(
                f"{name} {value}" if name == "switched at step" else f"{name} {value:.3f}"
                for name, value in values.items()))
        if "jax.jit" in best:
            jax_compile = best["jax.jit"]["function"]
            print(f"{model} function() / jax.jit compile: " + ", ".join(
                f"{phase} {best[phase]['function'] / jax_compile:.2f}x"
                for phase in ("cold", "cold, installed", "ops cached", "warm",
                              "cold, async")))
    tier_directory.cleanup()


if __name__ == "__main__":
    main()
