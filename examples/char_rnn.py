"""A character-level RNN language model with scan, trained on text that ships with Python.

    python -m pip install '.[examples]' && python examples/char_rnn.py

The text is the docstrings of a few standard-library modules (argparse, json, textwrap,
collections, string, functools, itertools), joined: about 40 KB of English about
programming, on every Python, with no download. The model reads one character at a time
(a one-hot row of the vocabulary), keeps a tanh hidden state of 256 units (scan over the
sequence) and predicts the next character with a softmax; it trains by truncated
backpropagation through time on 32 sequences of 64 characters a step, with Adam. A
progress bar shows the loss; the loss per step is saved as a plot (sympile-output/char_rnn.png), and
samples of generated text are printed (a second scan that feeds each drawn character back
in, with sympile's RandomStreams).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T
from sympile.tensor.shared_randomstreams import RandomStreams

try:
    import matplotlib
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None

MODULES = ("argparse", "json", "textwrap", "collections", "string", "functools", "itertools")


def corpus() -> str:
    """The docstrings of MODULES and of their public functions and classes, joined."""
    parts = []
    for name in MODULES:
        module = importlib.import_module(name)
        parts.append(inspect.getdoc(module) or "")
        for attribute in sorted(dir(module)):
            value = getattr(module, attribute)
            if not attribute.startswith("_") and (inspect.isfunction(value)
                                                  or inspect.isclass(value)):
                parts.append(inspect.getdoc(value) or "")
    return "\n\n".join(part for part in parts if part)


def build(vocabulary: int, hidden: int, learning_rate: float, seed: int):
    """(train_step(inputs, targets) -> loss, sample(first, length, temperature) -> ids)."""
    rng = np.random.default_rng(seed)

    def weight(*shape):
        return sympile.shared((rng.standard_normal(shape) / np.sqrt(shape[0]))
                              .astype("float32"))

    w_in, w_rec = weight(vocabulary, hidden), weight(hidden, hidden)
    w_out = weight(hidden, vocabulary)
    b_h = sympile.shared(np.zeros(hidden, "float32"))
    b_out = sympile.shared(np.zeros(vocabulary, "float32"))
    params = [w_in, w_rec, w_out, b_h, b_out]

    # Training: ids (time, batch) -> the next character's cross-entropy.
    inputs, targets = T.lmatrix("inputs"), T.lmatrix("targets")
    h0 = T.zeros((inputs.shape[1], hidden), dtype="float32")
    states, _ = sympile.scan(
        lambda ids, h: T.tanh(w_in[ids] + T.dot(h, w_rec) + b_h),
        sequences=inputs, outputs_info=h0)
    logits = T.dot(states.reshape((-1, hidden)), w_out) + b_out
    loss = T.nnet.categorical_crossentropy(T.nnet.softmax(logits), targets.flatten()).mean()
    updates = _adam(loss, params, learning_rate)
    train_step = sympile.function([inputs, targets], loss, updates=updates)

    # Sampling: each drawn character is the next step's input.
    streams = RandomStreams(seed)
    first = T.lscalar("first")
    length = T.lscalar("length")
    temperature = T.fscalar("temperature")

    def generate(previous, h):
        h = T.tanh(w_in[previous] + T.dot(h, w_rec) + b_h)
        p = T.nnet.softmax(((T.dot(h, w_out) + b_out) / temperature).dimshuffle("x", 0))
        drawn = T.argmax(streams.multinomial(pvals=p, dtype="int64")[0])
        return drawn, h

    (ids, _), sample_updates = sympile.scan(
        generate, outputs_info=[first, T.zeros((hidden,), dtype="float32")], n_steps=length)
    sample = sympile.function([first, length, temperature], ids, updates=sample_updates)
    return train_step, sample


def _adam(loss, params, rate: float, beta1: float = 0.9, beta2: float = 0.999):
    step = sympile.shared(np.float32(0))
    updates = [(step, step + 1)]
    t = step + 1
    correction = T.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    for param, gradient in zip(params, sympile.grad(loss, params)):
        zeros = np.zeros_like(param.get_value())
        m, v = sympile.shared(zeros), sympile.shared(zeros)
        new_m = beta1 * m + (1 - beta1) * gradient
        new_v = beta2 * v + (1 - beta2) * gradient ** 2
        updates += [(m, new_m), (v, new_v),
                    (param, param - (rate * correction) * new_m / (T.sqrt(new_v) + 1e-8))]
    return updates


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--length", type=int, default=64, help="characters per sequence")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="sympile-output/char_rnn.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    text = corpus()
    characters = sorted(set(text))
    ids = np.array([characters.index(c) for c in text], dtype=np.int64)
    print(f"{len(text)} characters of standard-library docstrings, {len(characters)} "
          f"distinct")
    train_step, sample = build(len(characters), arguments.hidden, arguments.learning_rate,
                               arguments.seed)
    rng = np.random.default_rng(arguments.seed)
    history = {"loss": []}
    progress = tqdm(range(arguments.steps), desc="BPTT steps", unit="step")
    for _ in progress:
        starts = rng.integers(0, len(ids) - arguments.length - 1, arguments.batch)
        window = np.stack([ids[s:s + arguments.length + 1] for s in starts], axis=1)
        history["loss"].append(float(train_step(window[:-1], window[1:])))
        progress.set_postfix(loss=f"{history['loss'][-1]:.3f}")
    history["uniform loss"] = float(np.log(len(characters)))
    print(f"cross-entropy per character: {history['loss'][0]:.3f} -> "
          f"{np.mean(history['loss'][-50:]):.3f} (uniform guess "
          f"{history['uniform loss']:.3f})")
    history["samples"] = []
    for temperature in (0.5, 1.0):
        drawn = sample(characters.index("T"), 300, np.float32(temperature))
        text_sample = "T" + "".join(characters[i] for i in drawn)
        history["samples"].append(text_sample)
        print(f"\n--- sample at temperature {temperature} ---\n{text_sample}")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(figsize=(6, 4))
        axes.plot(history["loss"], linewidth=0.8)
        axes.axhline(history["uniform loss"], color="grey", linestyle="--",
                     label="uniform guess")
        axes.set_xlabel("training step (32 sequences of 64 characters)")
        axes.set_ylabel("cross-entropy per character (nats)")
        axes.set_title("Character-level RNN on standard-library docstrings")
        axes.legend()
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"\nloss saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
