"""LeNet-5 trained on scikit-learn's handwritten digits.

    python -m pip install '.[examples]' && python examples/lenet.py

The 1797 8x8 digits (shipped with scikit-learn, no download) are scaled to [0, 1] and
upsampled 4x to the 32x32 images LeNet-5 takes; 1347 train it, 450 test it. The network,
as in the Theano tutorial and LeCun et al. (1998): conv 5x5 with 6 maps, tanh, max-pool 2,
conv 5x5 with 16 maps, tanh, max-pool 2, then 400 -> 120 -> 84 -> 10 (tanh), softmax
cross-entropy; SGD with momentum on minibatches of 32. A progress bar shows the epochs, and
the loss and accuracies per epoch are saved as a plot (sympile-output/lenet.png).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T
from sympile.tensor.signal.pool import pool_2d

try:
    import matplotlib
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None

SHAPES = [(6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,), (400, 120), (120,), (120, 84), (84,),
          (84, 10), (10,)]


def load_data(seed: int):
    digits = load_digits()
    images = np.kron(digits.images / 16.0, np.ones((4, 4)))[:, None].astype(
        sympile.config.floatX)
    return train_test_split(images, digits.target.astype("int64"), test_size=450,
                            random_state=seed, stratify=digits.target)


def build(train_x, train_y, batch: int, seed: int):
    """(train(index) -> cost, evaluate(x, y) -> (cost, accuracy))."""
    rng = np.random.default_rng(seed)
    floatx = sympile.config.floatX
    parameters = []
    for shape in SHAPES:
        if len(shape) == 1:
            value = np.zeros(shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
            value = rng.uniform(-1, 1, shape) * np.sqrt(3.0 / fan_in)
        parameters.append(sympile.shared(value.astype(floatx)))
    velocities = [sympile.shared(np.zeros_like(p.get_value())) for p in parameters]

    def network(x):
        conv1, b1, conv2, b2, fc1, b3, fc2, b4, fc3, b5 = parameters
        hidden = T.tanh(T.nnet.conv2d(x, conv1) + b1.dimshuffle("x", 0, "x", "x"))
        hidden = pool_2d(hidden, (2, 2))
        hidden = T.tanh(T.nnet.conv2d(hidden, conv2) + b2.dimshuffle("x", 0, "x", "x"))
        hidden = pool_2d(hidden, (2, 2)).flatten(2)
        hidden = T.tanh(T.dot(hidden, fc1) + b3)
        hidden = T.tanh(T.dot(hidden, fc2) + b4)
        return T.nnet.softmax(T.dot(hidden, fc3) + b5)

    def loss(probabilities, y):
        return -T.log(probabilities[T.arange(y.shape[0]), y]).mean()

    shared_x, shared_y = sympile.shared(train_x), sympile.shared(train_y)
    index = T.lscalar("index")
    x = shared_x[index * batch:(index + 1) * batch]
    y = shared_y[index * batch:(index + 1) * batch]
    cost = loss(network(x), y)
    updates = []
    for parameter, velocity, gradient in zip(parameters, velocities,
                                             sympile.grad(cost, parameters)):
        new_velocity = (np.asarray(0.9, floatx) * velocity
                        - np.asarray(0.05, floatx) * gradient)
        updates += [(velocity, new_velocity), (parameter, parameter + new_velocity)]
    train = sympile.function([index], cost, updates=updates)

    test_x, test_y = T.tensor4("x"), T.lvector("y")
    probabilities = network(test_x)
    right = T.eq(T.argmax(probabilities, axis=1), test_y).mean()
    return train, sympile.function([test_x, test_y], [loss(probabilities, test_y), right])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", default="sympile-output/lenet.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    train_x, test_x, train_y, test_y = load_data(arguments.seed)
    train, evaluate = build(train_x, train_y, arguments.batch, arguments.seed)
    n_batches = len(train_x) // arguments.batch
    history = {"loss": [], "train": [], "test": []}
    progress = tqdm(range(arguments.epochs), desc="epochs", unit="epoch")
    for _ in progress:
        history["loss"].append(float(np.mean([train(i) for i in range(n_batches)])))
        history["train"].append(float(evaluate(train_x, train_y)[1]))
        history["test"].append(float(evaluate(test_x, test_y)[1]))
        progress.set_postfix(loss=f"{history['loss'][-1]:.3f}",
                             test=f"{history['test'][-1]:.3f}")
    print(f"final training accuracy {history['train'][-1]:.4f}")
    print(f"final test accuracy {history['test'][-1]:.4f}")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, (left, right) = pyplot.subplots(1, 2, figsize=(9, 3.5))
        epochs = np.arange(1, arguments.epochs + 1)
        left.plot(epochs, history["loss"])
        left.set_xlabel("epoch")
        left.set_ylabel("training loss")
        right.plot(epochs, history["train"], label="training")
        right.plot(epochs, history["test"], label="test")
        right.set_xlabel("epoch")
        right.set_ylabel("accuracy")
        right.legend()
        figure.suptitle("LeNet-5 on scikit-learn's digits (8x8 upsampled to 32x32)")
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"loss and accuracy curves saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
