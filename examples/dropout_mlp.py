"""A multilayer perceptron with dropout, trained on scikit-learn's handwritten digits.

    python -m pip install '.[examples]' && python examples/dropout_mlp.py

The digits (1797 images of 8x8 pixels, classes 0-9, shipped with scikit-learn, no download)
are split 1347 for training and 450 for testing. The network is 64-256-256-10 with tanh
units; during training each hidden unit is kept with probability 0.5 by a mask that
RandomStreams draws anew at every step (inverted dropout: kept units are scaled by 2, so the
test network uses the weights as they are). Minibatches of 32 come from shared variables by
index, as in the Theano tutorials; SGD with momentum. A progress bar shows each epoch, and
the training and test accuracy per epoch is saved as a plot
(sympile-output/dropout_mlp_accuracy.png).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T
from sympile.tensor.shared_randomstreams import RandomStreams

try:
    import matplotlib
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None

LAYERS = [64, 256, 256, 10]
KEEP = 0.5


def load_data(seed: int):
    digits = load_digits()
    data = (digits.data / 16.0).astype(sympile.config.floatX)
    return train_test_split(data, digits.target.astype("int64"), test_size=450,
                            random_state=seed, stratify=digits.target)


def build(train_x, train_y, batch: int, seed: int, learning_rate: float, momentum: float):
    """(train(index) -> cost, accuracy(x, y) -> fraction right)."""
    rng = np.random.default_rng(seed)
    floatx = sympile.config.floatX
    parameters = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:]):
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        parameters.append(sympile.shared(rng.uniform(-bound, bound, (fan_in, fan_out))
                                         .astype(floatx), name=f"W{len(parameters) // 2}"))
        parameters.append(sympile.shared(np.zeros(fan_out, floatx),
                                         name=f"b{len(parameters) // 2}"))
    velocities = [sympile.shared(np.zeros_like(p.get_value())) for p in parameters]
    streams = RandomStreams(seed=seed)

    def network(x, dropout: bool):
        hidden = x
        for weight, bias in zip(parameters[:-2:2], parameters[1:-2:2]):
            hidden = T.tanh(T.dot(hidden, weight) + bias)
            if dropout:
                mask = streams.binomial(size=hidden.shape, p=KEEP, dtype=floatx)
                hidden = hidden * mask / np.asarray(KEEP, floatx)
        return T.nnet.softmax(T.dot(hidden, parameters[-2]) + parameters[-1])

    shared_x, shared_y = sympile.shared(train_x), sympile.shared(train_y)
    index = T.lscalar("index")
    x = shared_x[index * batch:(index + 1) * batch]
    y = shared_y[index * batch:(index + 1) * batch]
    probabilities = network(x, dropout=True)
    cost = -T.log(probabilities[T.arange(y.shape[0]), y]).mean()
    updates = []
    for parameter, velocity, gradient in zip(parameters, velocities,
                                             sympile.grad(cost, parameters)):
        new_velocity = (np.asarray(momentum, floatx) * velocity
                        - np.asarray(learning_rate, floatx) * gradient)
        updates += [(velocity, new_velocity), (parameter, parameter + new_velocity)]
    train = sympile.function([index], cost, updates=updates)

    test_x, test_y = T.matrix("x"), T.lvector("y")
    right = T.eq(T.argmax(network(test_x, dropout=False), axis=1), test_y).mean()
    return train, sympile.function([test_x, test_y], right)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", default="sympile-output/dropout_mlp_accuracy.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    train_x, test_x, train_y, test_y = load_data(arguments.seed)
    train, accuracy = build(train_x, train_y, arguments.batch, arguments.seed,
                            learning_rate=0.02, momentum=0.9)
    n_batches = len(train_x) // arguments.batch
    history = {"train": [], "test": []}
    progress = tqdm(range(arguments.epochs), desc="epochs", unit="epoch")
    for _ in progress:
        costs = [float(train(index)) for index in range(n_batches)]
        history["train"].append(float(accuracy(train_x, train_y)))
        history["test"].append(float(accuracy(test_x, test_y)))
        progress.set_postfix(cost=f"{np.mean(costs):.3f}", test=f"{history['test'][-1]:.3f}")
    print(f"final training accuracy {history['train'][-1]:.4f}")
    print(f"final test accuracy {history['test'][-1]:.4f}")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(figsize=(6, 4))
        epochs = np.arange(1, arguments.epochs + 1)
        axes.plot(epochs, history["train"], label="training (no dropout)")
        axes.plot(epochs, history["test"], label="test")
        axes.set_xlabel("epoch")
        axes.set_ylabel("accuracy")
        axes.set_title("64-256-256-10 MLP, dropout 0.5, digits")
        axes.legend()
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"accuracy curve saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
