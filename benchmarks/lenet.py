"""The LeNet-5-like training step in sympile and its peers, each library in a process of its
own, reported as examples per second and as ratios to sympile.

The network (issue 16's benchmark): 1x32x32 float32 input (NCHW) -> conv 5x5, 6 maps ->
tanh -> max-pool 2 -> conv 5x5, 16 maps -> tanh -> max-pool 2 -> 400 -> 120 -> 84 -> 10
(tanh), softmax cross-entropy, SGD with learning rate 0.01; convolutions are
cross-correlations. A timed call runs STEPS consecutive minibatch steps over 600 random
examples held by the library.

    python -m benchmarks.lenet [--compare torch,torch.compile,jax] [--batches 1,10,60]
                               [--repeats 5] [--busy]

Ratios above 1: sympile is faster.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
from collections.abc import Callable

import numpy as np

from benchmarks.harness import available_peers, time_callable

N_EXAMPLES = 600
STEPS = 20
LEARNING_RATE = 0.01
# (name, shape) of each parameter, in order.
SHAPES = [("conv1", (6, 1, 5, 5)), ("b1", (6,)), ("conv2", (16, 6, 5, 5)), ("b2", (16,)),
          ("fc1", (400, 120)), ("b3", (120,)), ("fc2", (120, 84)), ("b4", (84,)),
          ("fc3", (84, 10)), ("b5", (10,))]


def dataset(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((N_EXAMPLES, 1, 32, 32)).astype("float32"),
            rng.integers(0, 10, N_EXAMPLES).astype("int64"))


def initial_parameters(seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    parameters = []
    for name, shape in SHAPES:
        if name.startswith("b"):
            parameters.append(np.zeros(shape, "float32"))
            continue
        fan_in = int(np.prod(shape[1:])) if name.startswith("conv") else shape[0]
        bound = np.sqrt(3.0 / fan_in)
        parameters.append(rng.uniform(-bound, bound, shape).astype("float32"))
    return parameters


def sympile_steps(batch: int) -> Callable[[], object]:
    import sympile
    import sympile.tensor as T
    from sympile.tensor.signal.pool import pool_2d

    data, labels = dataset()
    shared_data, shared_labels = sympile.shared(data), sympile.shared(labels)
    parameters = [sympile.shared(value, name=name)
                  for (name, _), value in zip(SHAPES, initial_parameters())]
    conv1, b1, conv2, b2, fc1, b3, fc2, b4, fc3, b5 = parameters
    index = T.lscalar("index")
    x = shared_data[index * batch:(index + 1) * batch]
    y = shared_labels[index * batch:(index + 1) * batch]
    hidden = T.tanh(T.nnet.conv2d(x, conv1, filter_flip=False) + b1.dimshuffle("x", 0, "x", "x"))
    hidden = pool_2d(hidden, (2, 2))
    hidden = T.tanh(T.nnet.conv2d(hidden, conv2, filter_flip=False)
                    + b2.dimshuffle("x", 0, "x", "x"))
    hidden = pool_2d(hidden, (2, 2)).flatten(2)
    hidden = T.tanh(T.dot(hidden, fc1) + b3)
    hidden = T.tanh(T.dot(hidden, fc2) + b4)
    probabilities = T.nnet.softmax(T.dot(hidden, fc3) + b5)
    cost = -T.log(probabilities[T.arange(y.shape[0]), y]).mean()
    updates = [(p, p - np.float32(LEARNING_RATE) * g)
               for p, g in zip(parameters, sympile.grad(cost, parameters))]
    train = sympile.function([index], cost, updates=updates, mode="FAST_RUN",
                             trust_input=True)
    indices = [np.array(i % (N_EXAMPLES // batch), dtype="int64") for i in range(STEPS)]
    return lambda: [train(i) for i in indices]


def torch_steps(batch: int, compiled: bool) -> Callable[[], object]:
    import torch
    import torch.nn.functional as F

    data, labels = dataset()
    data, labels = torch.from_numpy(data), torch.from_numpy(labels)
    parameters = [torch.tensor(p, requires_grad=True) for p in initial_parameters()]

    def loss(parameters, x, y):
        conv1, b1, conv2, b2, fc1, b3, fc2, b4, fc3, b5 = parameters
        hidden = F.max_pool2d(torch.tanh(F.conv2d(x, conv1, b1)), 2)
        hidden = F.max_pool2d(torch.tanh(F.conv2d(hidden, conv2, b2)), 2).flatten(1)
        hidden = torch.tanh(hidden @ fc1 + b3)
        hidden = torch.tanh(hidden @ fc2 + b4)
        return F.cross_entropy(hidden @ fc3 + b5, y)

    def step(x, y):
        gradients = torch.autograd.grad(loss(parameters, x, y), parameters)
        with torch.no_grad():
            for parameter, gradient in zip(parameters, gradients):
                parameter.sub_(LEARNING_RATE * gradient)

    step_function = torch.compile(step) if compiled else step
    n_batches = N_EXAMPLES // batch

    def run() -> None:
        for index in range(STEPS):
            start = (index % n_batches) * batch
            step_function(data[start:start + batch], labels[start:start + batch])
    return run


def jax_steps(batch: int) -> Callable[[], object]:
    import jax
    import jax.numpy as jnp

    data, labels = dataset()
    data, labels = jnp.asarray(data), jnp.asarray(labels.astype("int32"))
    n_batches = N_EXAMPLES // batch

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                            dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                     "VALID")

    def loss(parameters, x, y):
        conv1, b1, conv2, b2, fc1, b3, fc2, b4, fc3, b5 = parameters
        hidden = pool(jnp.tanh(conv(x, conv1) + b1[None, :, None, None]))
        hidden = pool(jnp.tanh(conv(hidden, conv2) + b2[None, :, None, None]))
        hidden = hidden.reshape(hidden.shape[0], -1)
        hidden = jnp.tanh(hidden @ fc1 + b3)
        hidden = jnp.tanh(hidden @ fc2 + b4)
        log_probabilities = jax.nn.log_softmax(hidden @ fc3 + b5)
        return -jnp.mean(log_probabilities[jnp.arange(batch), y])

    @jax.jit
    def step(index, parameters):
        start = (index % n_batches) * batch
        x = jax.lax.dynamic_slice_in_dim(data, start, batch)
        y = jax.lax.dynamic_slice_in_dim(labels, start, batch)
        gradients = jax.grad(loss)(parameters, x, y)
        return [p - LEARNING_RATE * g for p, g in zip(parameters, gradients)]

    state = {"parameters": [jnp.asarray(p) for p in initial_parameters()]}

    def run() -> None:
        parameters = state["parameters"]
        for index in range(STEPS):
            parameters = step(index, parameters)
        state["parameters"] = jax.block_until_ready(parameters)
    return run


BUILDERS = {"sympile": sympile_steps, "torch": lambda b: torch_steps(b, False),
            "torch.compile": lambda b: torch_steps(b, True), "jax": jax_steps}


def _worker(name: str, batches: list[int], repeats: int) -> None:
    results = {}
    for batch in batches:
        run = BUILDERS[name](batch)
        run()  # compile, warm up
        results[str(batch)] = time_callable(run, repeats)
    print(json.dumps(results))


def _spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", default="torch,torch.compile,jax")
    parser.add_argument("--batches", default="1,10,60")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    batches = [int(b) for b in arguments.batches.split(",")]
    if arguments.worker:
        _worker(arguments.worker, batches, arguments.repeats)
        return
    requested = [name for name in arguments.compare.split(",") if name]
    importable, notes = available_peers(sorted({name.split(".")[0] for name in requested}))
    peers = [name for name in requested if name.split(".")[0] in importable]
    for note in notes:
        print(note)
    spinner = multiprocessing.Process(target=_spin, daemon=True) if arguments.busy else None
    if spinner is not None:
        spinner.start()
    results = {}
    try:
        for library in ["sympile", *peers]:
            output = subprocess.run(
                [sys.executable, "-m", "benchmarks.lenet", "--worker", library, "--batches",
                 arguments.batches, "--repeats", str(arguments.repeats)],
                capture_output=True, text=True)
            if output.returncode != 0:
                print(f"{library}: failed: {output.stderr.strip().splitlines()[-1:]}")
                continue
            results[library] = json.loads(output.stdout.strip().splitlines()[-1])
    finally:
        if spinner is not None:
            spinner.terminate()
    print(f"one core busy: {arguments.busy}; {STEPS} steps per timed call")
    print(f"{'batch':>5} {'library':<14} {'examples/s':>11} {'ratio to sympile':>17}")
    for batch in batches:
        base = results["sympile"][str(batch)]
        for library, times in results.items():
            seconds = times[str(batch)]
            print(f"{batch:>5} {library:<14} {STEPS * batch / seconds:>11.0f} "
                  f"{seconds / base:>17.2f}")


if __name__ == "__main__":
    main()
