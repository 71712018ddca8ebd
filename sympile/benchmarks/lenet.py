"""Convolutional network training steps in sympile and its peers, each library in a process
of its own, reported as examples per second and as ratios to sympile.

  lenet  1x32x32 float32 input (NCHW) -> conv 5x5, 6 maps -> tanh ->
         max-pool 2 -> conv 5x5, 16 maps -> tanh -> max-pool 2 -> 400 -> 120 -> 84 -> 10
  large  the larger image net of the Theano benchmark scripts, as this module reads them:
         1x96x96 -> conv 7x7, 6 maps -> tanh -> max-pool 3 -> conv 7x7, 16 maps -> tanh ->
         max-pool 3 -> 1024 -> 120 -> 10

tanh units, softmax cross-entropy, SGD with learning rate 0.01; convolutions are
cross-correlations. A timed call runs STEPS consecutive minibatch steps over 600 random
examples held by the library.

    sympile-bench lenet [--net lenet|large] [--compare torch,torch.compile,jax]
                               [--batches 1,10,60] [--repeats 5] [--busy]

Ratios above 1: sympile is faster.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import numpy as np

from sympile.benchmarks.harness import (
    add_common_options,
    available_peers,
    run_workers,
    time_callable,
)

N_EXAMPLES = 600
STEPS = 20
LEARNING_RATE = 0.01
# image side, [(maps, kernel, pool) per conv layer], fully connected widths after them
NETS = {"lenet": (32, [(6, 5, 2), (16, 5, 2)], [120, 84, 10]),
        "large": (96, [(6, 7, 3), (16, 7, 3)], [120, 10])}


def shapes(net: str) -> list[tuple[str, tuple[int, ...]]]:
    """(kind, shape) of each parameter in order: 'conv' filters, 'fc' weights, 'bias'."""
    side, convs, widths = NETS[net]
    result, channels = [], 1
    for maps, kernel, pool in convs:
        result += [("conv", (maps, channels, kernel, kernel)), ("bias", (maps,))]
        channels, side = maps, (side - kernel + 1) // pool
    inputs = channels * side * side
    for width in widths:
        result += [("fc", (inputs, width)), ("bias", (width,))]
        inputs = width
    return result


def dataset(net: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    side = NETS[net][0]
    return (rng.standard_normal((N_EXAMPLES, 1, side, side)).astype("float32"),
            rng.integers(0, 10, N_EXAMPLES).astype("int64"))


def initial_parameters(net: str, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    parameters = []
    for kind, shape in shapes(net):
        if kind == "bias":
            parameters.append(np.zeros(shape, "float32"))
            continue
        fan_in = int(np.prod(shape[1:])) if kind == "conv" else shape[0]
        bound = np.sqrt(3.0 / fan_in)
        parameters.append(rng.uniform(-bound, bound, shape).astype("float32"))
    return parameters


def sympile_steps(net: str, batch: int) -> Callable[[], object]:
    import sympile
    import sympile.tensor as T
    from sympile.tensor.signal.pool import pool_2d

    data, labels = dataset(net)
    shared_data, shared_labels = sympile.shared(data), sympile.shared(labels)
    parameters = [sympile.shared(value) for value in initial_parameters(net)]
    index = T.lscalar("index")
    x = shared_data[index * batch:(index + 1) * batch]
    y = shared_labels[index * batch:(index + 1) * batch]
    hidden = x
    layers = list(zip(parameters[::2], parameters[1::2]))
    convs = NETS[net][1]
    for (weight, bias), (_, _, pool) in zip(layers, convs):
        hidden = T.tanh(T.nnet.conv2d(hidden, weight, filter_flip=False)
                        + bias.dimshuffle("x", 0, "x", "x"))
        hidden = pool_2d(hidden, (pool, pool))
    hidden = hidden.flatten(2)
    for weight, bias in layers[len(convs):-1]:
        hidden = T.tanh(T.dot(hidden, weight) + bias)
    probabilities = T.nnet.softmax(T.dot(hidden, layers[-1][0]) + layers[-1][1])
    cost = -T.log(probabilities[T.arange(y.shape[0]), y]).mean()
    updates = [(p, p - np.float32(LEARNING_RATE) * g)
               for p, g in zip(parameters, sympile.grad(cost, parameters))]
    train = sympile.function([index], cost, updates=updates, mode="FAST_RUN",
                             trust_input=True)
    indices = [np.array(i % (N_EXAMPLES // batch), dtype="int64") for i in range(STEPS)]
    return lambda: [train(i) for i in indices]


def torch_steps(net: str, batch: int, compile_mode: str | None,
                device: str = "cpu") -> Callable[[], object]:
    """Eager torch (compile_mode None) or the step under torch.compile(mode=compile_mode)
    ('default', 'reduce-overhead'); device: where the data and parameters live ('cuda': a
    run waits for the device at its end)."""
    import torch
    import torch.nn.functional as F

    data, labels = dataset(net)
    data, labels = torch.from_numpy(data).to(device), torch.from_numpy(labels).to(device)
    parameters = [torch.tensor(p, requires_grad=True, device=device)
                  for p in initial_parameters(net)]
    convs = NETS[net][1]

    def loss(parameters, x, y):
        layers = list(zip(parameters[::2], parameters[1::2]))
        hidden = x
        for (weight, bias), (_, _, pool) in zip(layers, convs):
            hidden = F.max_pool2d(torch.tanh(F.conv2d(hidden, weight, bias)), pool)
        hidden = hidden.flatten(1)
        for weight, bias in layers[len(convs):-1]:
            hidden = torch.tanh(hidden @ weight + bias)
        return F.cross_entropy(hidden @ layers[-1][0] + layers[-1][1], y)

    def step(x, y):
        gradients = torch.autograd.grad(loss(parameters, x, y), parameters)
        with torch.no_grad():
            for parameter, gradient in zip(parameters, gradients):
                parameter.sub_(LEARNING_RATE * gradient)

    step_function = step if compile_mode is None else torch.compile(step, mode=compile_mode)
    n_batches = N_EXAMPLES // batch

    def run() -> None:
        for index in range(STEPS):
            start = (index % n_batches) * batch
            step_function(data[start:start + batch], labels[start:start + batch])
        if device != "cpu":
            torch.cuda.synchronize()
    return run


def jax_steps(net: str, batch: int) -> Callable[[], object]:
    import jax
    import jax.numpy as jnp

    data, labels = dataset(net)
    data, labels = jnp.asarray(data), jnp.asarray(labels.astype("int32"))
    n_batches = N_EXAMPLES // batch
    convs = NETS[net][1]

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                            dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def pool(x, size):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, size, size),
                                     (1, 1, size, size), "VALID")

    def loss(parameters, x, y):
        layers = list(zip(parameters[::2], parameters[1::2]))
        hidden = x
        for (weight, bias), (_, _, size) in zip(layers, convs):
            hidden = pool(jnp.tanh(conv(hidden, weight) + bias[None, :, None, None]), size)
        hidden = hidden.reshape(hidden.shape[0], -1)
        for weight, bias in layers[len(convs):-1]:
            hidden = jnp.tanh(hidden @ weight + bias)
        log_probabilities = jax.nn.log_softmax(hidden @ layers[-1][0] + layers[-1][1])
        return -jnp.mean(log_probabilities[jnp.arange(batch), y])

    @jax.jit
    def step(index, parameters):
        start = (index % n_batches) * batch
        x = jax.lax.dynamic_slice_in_dim(data, start, batch)
        y = jax.lax.dynamic_slice_in_dim(labels, start, batch)
        gradients = jax.grad(loss)(parameters, x, y)
        return [p - LEARNING_RATE * g for p, g in zip(parameters, gradients)]

    state = {"parameters": [jnp.asarray(p) for p in initial_parameters(net)]}

    def run() -> None:
        parameters = state["parameters"]
        for index in range(STEPS):
            parameters = step(index, parameters)
        state["parameters"] = jax.block_until_ready(parameters)
    return run


BUILDERS = {"sympile": sympile_steps, "torch": lambda n, b: torch_steps(n, b, None),
            "torch.compile": lambda n, b: torch_steps(n, b, "default"), "jax": jax_steps}


def _worker(name: str, net: str, batches: list[int], repeats: int) -> None:
    results = {}
    for batch in batches:
        run = BUILDERS[name](net, batch)
        run()  # compile, warm up
        results[str(batch)] = time_callable(run, repeats)
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, 5, "torch,torch.compile,jax", "torch, torch.compile, jax")
    parser.add_argument("--net", default="lenet", choices=sorted(NETS),
                        help="the network: lenet (LeNet-5 on 32x32) or large (default: "
                             "%(default)s)")
    parser.add_argument("--batches", default="1,10,60",
                        help="minibatch sizes, comma-separated (default: %(default)s)")
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    batches = [int(b) for b in arguments.batches.split(",")]
    if arguments.worker:
        _worker(arguments.worker, arguments.net, batches, arguments.repeats)
        return
    requested = [name for name in arguments.compare.split(",") if name]
    importable, notes = available_peers(sorted({name.split(".")[0] for name in requested}))
    peers = [name for name in requested if name.split(".")[0] in importable]
    for note in notes:
        print(note)
    results = run_workers(__spec__.name, ["sympile", *peers],
                          ["--net", arguments.net, "--batches", arguments.batches,
                           "--repeats", str(arguments.repeats)], arguments.busy,
                          skip_failures=True)
    print(f"net {arguments.net}; one core busy: {arguments.busy}; {STEPS} steps per timed "
          f"call")
    print(f"{'batch':>5} {'library':<14} {'examples/s':>11} {'ratio to sympile':>17}")
    for batch in batches:
        base = results["sympile"][str(batch)]
        for library, times in results.items():
            seconds = times[str(batch)]
            print(f"{batch:>5} {library:<14} {STEPS * batch / seconds:>11.0f} "
                  f"{seconds / base:>17.2f}")


if __name__ == "__main__":
    main()
