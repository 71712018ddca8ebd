"""The 2012 Theano paper's RNN benchmark (its Fig. 2, against RNNLM), in sympile and each peer.

A vocabulary of V tokens (= input = output size), H hidden units, float32, batch 1:
h_t = sigmoid(h_{t-1} W_hh + W_uh[u_t]) from h_0 = 0, y_t = softmax(h_t W_hy), and the cost of
a sequence u_0 .. u_L is the summed cross-entropy -sum_t log y_t[u_{t+1}]. Each sequence is
one SGD step (learning rate 0.01) with full backpropagation through time. Every builder
returns a callable that trains once over all the sequences (n_sequences * L sequence
elements), with `parameters()` giving [W_uh, W_hh, W_hy] as numpy arrays (tests compare
them); `forward_steps` times the recurrence alone (the per-step overhead of the loop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sympile.benchmarks.harness import Steps

LEARNING_RATE = 0.01
SMALL = {"vocabularies": (54,), "hiddens": (50,), "n_sequences": 3, "length": 100}
FULL = {"vocabularies": (10, 54, 3000), "hiddens": (50, 100, 500, 1500), "n_sequences": 100,
        "length": 100}


def dataset(vocabulary: int, n_sequences: int, length: int, seed: int = 0) -> np.ndarray:
    """n_sequences rows of length + 1 tokens: row i trains on tokens :-1 against 1:."""
    return np.random.default_rng(seed).integers(0, vocabulary, (n_sequences, length + 1))


def initial_parameters(vocabulary: int, hidden: int, seed: int = 1) -> list[np.ndarray]:
    """[W_uh, W_hh, W_hy], normal with standard deviation 0.1, float32."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * 0.1).astype("float32")
            for shape in ((vocabulary, hidden), (hidden, hidden), (hidden, vocabulary))]


def theano_style_steps(library: Any, tensor: Any, sigmoid: Callable, softmax: Callable,
                       vocabulary: int, hidden: int, n_sequences: int, length: int,
                       mode: Any = None) -> Steps:
    """The paper's program with scan in a Theano-API library (sympile or pytensor): the
    sequences and parameters in shared variables, one call per sequence given its index."""
    data = library.shared(dataset(vocabulary, n_sequences, length), name="data")
    parameters = [library.shared(value, name=name) for value, name in
                  zip(initial_parameters(vocabulary, hidden), ("W_uh", "W_hh", "W_hy"))]
    w_uh, w_hh, w_hy = parameters
    index = tensor.lscalar("index")
    sequence = data[index]
    states, _ = library.scan(
        lambda token, previous, w_hh, w_uh: sigmoid(tensor.dot(previous, w_hh) + w_uh[token]),
        sequences=sequence[:-1], outputs_info=tensor.zeros((hidden,), dtype="float32"),
        non_sequences=[w_hh, w_uh])
    probabilities = softmax(tensor.dot(states, w_hy))
    cost = -tensor.log(probabilities[tensor.arange(length), sequence[1:]]).sum()
    gradients = library.grad(cost, parameters)
    updates = [(p, p - np.float32(LEARNING_RATE) * g) for p, g in zip(parameters, gradients)]
    kwargs = {} if mode is None else {"mode": mode}
    train = library.function([index], cost, updates=updates, **kwargs)
    train.trust_input = True
    indices = [np.array(i, dtype="int64") for i in range(n_sequences)]
    return Steps(lambda: [train(i) for i in indices], lambda: [p.get_value() for p in parameters])


def numpy_steps(vocabulary: int, hidden: int, n_sequences: int, length: int) -> Steps:
    """Hand-written forward pass and backpropagation through time in numpy (the baseline)."""
    data = dataset(vocabulary, n_sequences, length)
    parameters = initial_parameters(vocabulary, hidden)
    w_uh, w_hh, w_hy = parameters
    rows = np.arange(length)
    rate = np.float32(LEARNING_RATE)

    def run() -> None:
        for tokens in data:
            inputs, targets = tokens[:-1], tokens[1:]
            states = np.empty((length + 1, hidden), dtype="float32")
            states[0] = 0
            for step in range(length):
                pre_activation = states[step] @ w_hh + w_uh[inputs[step]]
                states[step + 1] = 1 / (1 + np.exp(-pre_activation))
            scores = states[1:] @ w_hy
            scores -= scores.max(axis=1, keepdims=True)
            delta = np.exp(scores)
            delta /= delta.sum(axis=1, keepdims=True)
            delta[rows, targets] -= 1
            w_hy_gradient = states[1:].T @ delta
            state_gradients = delta @ w_hy.T
            w_hh_gradient = np.zeros_like(w_hh)
            w_uh_gradient = np.zeros_like(w_uh)
            carried = np.zeros(hidden, dtype="float32")
            for step in range(length - 1, -1, -1):
                state = states[step + 1]
                pre_gradient = (state_gradients[step] + carried) * state * (1 - state)
                w_hh_gradient += np.outer(states[step], pre_gradient)
                w_uh_gradient[inputs[step]] += pre_gradient
                carried = pre_gradient @ w_hh.T
            for parameter, gradient in zip(parameters,
                                           (w_uh_gradient, w_hh_gradient, w_hy_gradient)):
                parameter -= rate * gradient
    return Steps(run, lambda: [p.copy() for p in parameters])


def jax_steps(vocabulary: int, hidden: int, n_sequences: int, length: int) -> Steps:
    """A jitted SGD step per sequence: lax.scan for the recurrence, jax.grad for BPTT."""
    import jax
    import jax.numpy as jnp

    data = jnp.asarray(dataset(vocabulary, n_sequences, length).astype("int32"))
    state = {"parameters": [jnp.asarray(p) for p in initial_parameters(vocabulary, hidden)]}

    def cost(parameters, tokens):
        w_uh, w_hh, w_hy = parameters

        def step(previous, token):
            current = jax.nn.sigmoid(previous @ w_hh + w_uh[token])
            return current, current

        _, states = jax.lax.scan(step, jnp.zeros(hidden, dtype=jnp.float32), tokens[:-1])
        log_probabilities = jax.nn.log_softmax(states @ w_hy)
        return -log_probabilities[jnp.arange(length), tokens[1:]].sum()

    @jax.jit
    def train(parameters, tokens):
        gradients = jax.grad(cost)(parameters, tokens)
        return [p - LEARNING_RATE * g for p, g in zip(parameters, gradients)]

    def run() -> None:
        parameters = state["parameters"]
        for index in range(n_sequences):
            parameters = train(parameters, data[index])
        state["parameters"] = jax.block_until_ready(parameters)
    return Steps(run, lambda: [np.asarray(p) for p in state["parameters"]])


def torch_steps(vocabulary: int, hidden: int, n_sequences: int, length: int,
                device: str = "cpu") -> Steps:
    """Eager torch: a Python loop over the steps, autograd for BPTT, in-place SGD; device:
    where the data and parameters live ('cuda': a run waits for the device at its end)."""
    import torch

    data = torch.from_numpy(dataset(vocabulary, n_sequences, length)).to(device)
    parameters = [torch.tensor(p, requires_grad=True, device=device)
                  for p in initial_parameters(vocabulary, hidden)]
    w_uh, w_hh, w_hy = parameters

    def run() -> None:
        for tokens in data:
            previous = torch.zeros(hidden, device=device)
            states = []
            for token in tokens[:-1]:
                previous = torch.sigmoid(previous @ w_hh + w_uh[token])
                states.append(previous)
            scores = torch.stack(states) @ w_hy
            cost = torch.nn.functional.cross_entropy(scores, tokens[1:], reduction="sum")
            gradients = torch.autograd.grad(cost, parameters)
            with torch.no_grad():
                for parameter, gradient in zip(parameters, gradients):
                    parameter.sub_(LEARNING_RATE * gradient)
        if device != "cpu":
            torch.cuda.synchronize()
    return Steps(run, lambda: [p.detach().cpu().numpy().copy() for p in parameters])


def forward_steps(library: Any, tensor: Any, sigmoid: Callable, vocabulary: int, hidden: int,
                  length: int, mode: Any = None) -> Callable[[], Any]:
    """The recurrence alone over one sequence, by scan (its per-step cost against
    numpy_forward's hand-written loop)."""
    tokens = dataset(vocabulary, 1, length)[0, :-1]
    w_uh, w_hh, _ = (library.shared(value) for value in initial_parameters(vocabulary, hidden))
    sequence = tensor.lvector("tokens")
    states, _ = library.scan(
        lambda token, previous, w_hh, w_uh: sigmoid(tensor.dot(previous, w_hh) + w_uh[token]),
        sequences=sequence, outputs_info=tensor.zeros((hidden,), dtype="float32"),
        non_sequences=[w_hh, w_uh])
    kwargs = {} if mode is None else {"mode": mode}
    forward = library.function([sequence], states, **kwargs)
    forward.trust_input = True
    return lambda: forward(tokens)


def numpy_forward(vocabulary: int, hidden: int, length: int) -> Callable[[], Any]:
    tokens = dataset(vocabulary, 1, length)[0, :-1]
    w_uh, w_hh, _ = initial_parameters(vocabulary, hidden)

    def run() -> np.ndarray:
        states = np.empty((length, hidden), dtype="float32")
        previous = np.zeros(hidden, dtype="float32")
        for step, token in enumerate(tokens):
            previous = 1 / (1 + np.exp(-(previous @ w_hh + w_uh[token])))
            states[step] = previous
        return states
    return run
