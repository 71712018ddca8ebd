"""The 2012 Theano paper's MLP training benchmark, in sympile and in each peer.

6000 float32 examples of 784 inputs with integer labels of 10 classes, held by the library
(shared variables, device arrays or tensors); SGD with learning rate 0.01 on the mean of
-log(softmax(...))[arange(n), y] over a minibatch. Every builder returns a callable that runs
`steps` consecutive minibatch steps (wrapping around the 6000 examples), with a
`parameters()` method giving the current parameters as numpy arrays (tests compare them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sympile.benchmarks.harness import Steps

N_EXAMPLES, N_INPUTS, N_CLASSES = 6000, 784, 10
LEARNING_RATE = 0.01
MODELS = {"logreg 784-10": [784, 10], "mlp 784-500-10": [784, 500, 10],
          "mlp 784-1000x3-10": [784, 1000, 1000, 1000, 10]}


def dataset(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((N_EXAMPLES, N_INPUTS)).astype("float32")
    labels = rng.integers(0, N_CLASSES, N_EXAMPLES).astype("int64")
    return data, labels


def initial_parameters(layers: list[int], seed: int = 1) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...], W uniform in +-sqrt(6 / (fan_in + fan_out)), b zero."""
    rng = np.random.default_rng(seed)
    parameters = []
    for fan_in, fan_out in zip(layers[:-1], layers[1:]):
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        parameters.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype("float32"))
        parameters.append(np.zeros(fan_out, dtype="float32"))
    return parameters


def theano_style_steps(library: Any, tensor: Any, softmax: Callable, layers: list[int],
                       batch: int, steps: int, style: str, mode: Any = None,
                       dropout: float = 0.0, streams: Any = None) -> Steps:
    """The paper's program in a Theano-API library (sympile or pytensor).

    style: 'default' (a call per minibatch, given its index), 'trust_input' (the same with
    input checks off), or 'n_calls' (the index in a shared variable updated by each call,
    `steps` calls run by one `fn(n_calls=steps)`). dropout > 0: each hidden unit is kept
    with probability 1 - dropout (inverted dropout), its mask drawn by `streams` (a
    RandomStreams) at every step."""
    data, labels = dataset()
    shared_data = library.shared(data, name="data")
    shared_labels = library.shared(labels, name="labels")
    parameters = [library.shared(value) for value in initial_parameters(layers)]
    n_batches = N_EXAMPLES // batch
    if style == "n_calls":
        position = library.shared(np.int64(0), name="position")
        index = position
    else:
        index = tensor.lscalar("index")
    x = shared_data[index * batch:(index + 1) * batch]
    y = shared_labels[index * batch:(index + 1) * batch]
    hidden = x
    keep = np.float32(1 - dropout)
    for weight, bias in zip(parameters[:-2:2], parameters[1:-2:2]):
        hidden = tensor.tanh(tensor.dot(hidden, weight) + bias)
        if dropout:
            hidden = hidden * streams.binomial(size=hidden.shape, p=keep, dtype="float32") / keep
    probabilities = softmax(tensor.dot(hidden, parameters[-2]) + parameters[-1])
    cost = -tensor.log(probabilities[tensor.arange(y.shape[0]), y]).mean()
    gradients = library.grad(cost, parameters)
    updates = [(p, p - np.float32(LEARNING_RATE) * g) for p, g in zip(parameters, gradients)]
    kwargs = {} if mode is None else {"mode": mode}

    def values() -> list[np.ndarray]:
        return [p.get_value() for p in parameters]

    if style == "n_calls":
        updates.append((position, (position + 1) % n_batches))
        train = library.function([], cost, updates=updates, **kwargs)
        return Steps(lambda: train.fn(n_calls=steps), values)
    train = library.function([index], cost, updates=updates, **kwargs)
    if style == "trust_input":
        train.trust_input = True
        indices = [np.array(i % n_batches, dtype="int64") for i in range(steps)]
        return Steps(lambda: [train(i) for i in indices], values)
    return Steps(lambda: [train(i % n_batches) for i in range(steps)], values)


def numpy_steps(layers: list[int], batch: int, steps: int) -> Steps:
    """Hand-written forward and backward passes in numpy (the baseline)."""
    data, labels = dataset()
    parameters = initial_parameters(layers)
    n_batches = N_EXAMPLES // batch
    rows = np.arange(batch)

    def run() -> None:
        for step in range(steps):
            start = (step % n_batches) * batch
            x, y = data[start:start + batch], labels[start:start + batch]
            activations = [x]
            for weight, bias in zip(parameters[:-2:2], parameters[1:-2:2]):
                activations.append(np.tanh(activations[-1] @ weight + bias))
            scores = activations[-1] @ parameters[-2] + parameters[-1]
            scores -= scores.max(axis=1, keepdims=True)
            delta = np.exp(scores)
            delta /= delta.sum(axis=1, keepdims=True)
            delta[rows, y] -= 1
            delta /= np.float32(batch)
            for layer in range(len(parameters) // 2 - 1, -1, -1):
                weight = parameters[2 * layer]
                weight_gradient = activations[layer].T @ delta
                bias_gradient = delta.sum(axis=0)
                if layer:
                    delta = (delta @ weight.T) * (1 - activations[layer] ** 2)
                weight -= np.float32(LEARNING_RATE) * weight_gradient
                parameters[2 * layer + 1] -= np.float32(LEARNING_RATE) * bias_gradient
    return Steps(run, lambda: [p.copy() for p in parameters])


def jax_steps(layers: list[int], batch: int, steps: int, style: str,
              dropout: float = 0.0) -> Steps:
    """A jitted SGD step called per minibatch ('jit step'), or `steps` of them in one
    jitted lax.fori_loop ('fori_loop', the analogue of fn(n_calls)). dropout > 0: masks from
    jax.random.bernoulli, a new key per step."""
    import jax
    import jax.numpy as jnp

    data, labels = dataset()
    data, labels = jnp.asarray(data), jnp.asarray(labels.astype("int32"))
    parameters = [jnp.asarray(p) for p in initial_parameters(layers)]
    n_batches = N_EXAMPLES // batch

    keep = 1 - dropout

    def loss(parameters, x, y, key):
        hidden = x
        for layer, (weight, bias) in enumerate(zip(parameters[:-2:2], parameters[1:-2:2])):
            hidden = jnp.tanh(hidden @ weight + bias)
            if dropout:
                mask = jax.random.bernoulli(jax.random.fold_in(key, layer), keep, hidden.shape)
                hidden = hidden * mask / keep
        log_probabilities = jax.nn.log_softmax(hidden @ parameters[-2] + parameters[-1])
        return -jnp.mean(log_probabilities[jnp.arange(batch), y])

    def step(index, carried):
        parameters, key = carried
        # Without dropout the key is carried untouched (no work added to the plain MLP).
        key, subkey = jax.random.split(key) if dropout else (key, key)
        start = (index % n_batches) * batch
        x = jax.lax.dynamic_slice_in_dim(data, start, batch)
        y = jax.lax.dynamic_slice_in_dim(labels, start, batch)
        gradients = jax.grad(loss)(parameters, x, y, subkey)
        return [p - LEARNING_RATE * g for p, g in zip(parameters, gradients)], key

    state = {"parameters": (parameters, jax.random.PRNGKey(1))}

    def values() -> list[np.ndarray]:
        return [np.asarray(p) for p in state["parameters"][0]]

    if style == "fori_loop":
        loop = jax.jit(lambda parameters: jax.lax.fori_loop(0, steps, step, parameters),
                       donate_argnums=0)

        def run() -> None:
            state["parameters"] = loop(state["parameters"])
            jax.block_until_ready(state["parameters"])
        return Steps(run, values)
    jitted = jax.jit(step, donate_argnums=1)

    def run_steps() -> None:
        parameters = state["parameters"]
        for index in range(steps):
            parameters = jitted(index, parameters)
        state["parameters"] = jax.block_until_ready(parameters)
    return Steps(run_steps, values)


def torch_steps(layers: list[int], batch: int, steps: int, dropout: float = 0.0,
                device: str = "cpu", compile_mode: str | None = None) -> Steps:
    """Eager torch: autograd for the gradients, in-place SGD updates; dropout > 0:
    torch.nn.functional.dropout on the hidden layers. device: where the data and parameters
    live ('cuda': a run waits for the device at its end); compile_mode: the step under
    torch.compile(mode=compile_mode) instead of eager."""
    import torch

    data, labels = dataset()
    data, labels = torch.from_numpy(data).to(device), torch.from_numpy(labels).to(device)
    parameters = [torch.tensor(p, requires_grad=True, device=device)
                  for p in initial_parameters(layers)]
    n_batches = N_EXAMPLES // batch

    def step(x, y):
        hidden = x
        for weight, bias in zip(parameters[:-2:2], parameters[1:-2:2]):
            hidden = torch.tanh(hidden @ weight + bias)
            if dropout:
                hidden = torch.nn.functional.dropout(hidden, dropout, training=True)
        scores = hidden @ parameters[-2] + parameters[-1]
        cost = torch.nn.functional.cross_entropy(scores, y)
        gradients = torch.autograd.grad(cost, parameters)
        with torch.no_grad():
            for parameter, gradient in zip(parameters, gradients):
                parameter.sub_(LEARNING_RATE * gradient)

    step_function = step if compile_mode is None else torch.compile(step, mode=compile_mode)

    def run() -> None:
        for index in range(steps):
            start = (index % n_batches) * batch
            step_function(data[start:start + batch], labels[start:start + batch])
        if device != "cpu":
            torch.cuda.synchronize()
    return Steps(run, lambda: [p.detach().cpu().numpy().copy() for p in parameters])
