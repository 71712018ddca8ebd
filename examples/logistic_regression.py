"""Logistic regression on scikit-learn's breast cancer data set, the Theano tutorial's model.

    python -m pip install '.[examples]' && python examples/logistic_regression.py

The data set (569 tumours, 30 features each, malignant or benign; shipped with
scikit-learn, no download) is split 400 for training and 169 for testing, and each feature
is standardised with the training set's mean and deviation. The model is the tutorial's:
p = sigmoid(x w + b), binary cross-entropy plus an L2 penalty, full-batch gradient descent
with T.grad and updates on shared variables. A progress bar shows the steps; the loss and
the training and test accuracy are saved as a plot (sympile-output/logistic_regression.png).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T

try:
    import matplotlib
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None


def load_data(seed: int):
    data = load_breast_cancer()
    train_x, test_x, train_y, test_y = train_test_split(
        data.data, data.target.astype("float64"), test_size=169, random_state=seed,
        stratify=data.target)
    mean, deviation = train_x.mean(axis=0), train_x.std(axis=0)
    return (train_x - mean) / deviation, (test_x - mean) / deviation, train_y, test_y


def build(n_features: int, rate: float, penalty: float):
    """(train(x, y) -> cost, accuracy(x, y) -> fraction right)."""
    x, y = T.dmatrix("x"), T.dvector("y")
    w = sympile.shared(np.zeros(n_features), name="w")
    b = sympile.shared(0.0, name="b")
    p_1 = T.nnet.sigmoid(T.dot(x, w) + b)
    cost = T.nnet.binary_crossentropy(p_1, y).mean() + penalty * (w ** 2).sum()
    gw, gb = sympile.grad(cost, [w, b])
    train = sympile.function([x, y], cost, updates=[(w, w - rate * gw), (b, b - rate * gb)])
    accuracy = sympile.function([x, y], T.eq(p_1 > 0.5, y).mean())
    return train, accuracy


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--penalty", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="sympile-output/logistic_regression.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    train_x, test_x, train_y, test_y = load_data(arguments.seed)
    train, accuracy = build(train_x.shape[1], arguments.rate, arguments.penalty)
    history: dict[str, list[float]] = {"cost": [], "train": [], "test": []}
    progress = tqdm(range(arguments.steps), desc="steps", unit="step")
    for _ in progress:
        history["cost"].append(float(train(train_x, train_y)))
        history["train"].append(float(accuracy(train_x, train_y)))
        history["test"].append(float(accuracy(test_x, test_y)))
        progress.set_postfix(cost=f"{history['cost'][-1]:.4f}",
                             test=f"{history['test'][-1]:.3f}", refresh=False)
    print(f"cost {history['cost'][0]:.4f} -> {history['cost'][-1]:.4f}")
    print(f"final training accuracy {history['train'][-1]:.4f}")
    print(f"final test accuracy {history['test'][-1]:.4f}")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, (loss_axes, accuracy_axes) = pyplot.subplots(1, 2, figsize=(9, 3.5))
        steps = np.arange(1, arguments.steps + 1)
        loss_axes.plot(steps, history["cost"])
        loss_axes.set_xlabel("step")
        loss_axes.set_ylabel("cross-entropy + L2")
        loss_axes.set_yscale("log")
        accuracy_axes.plot(steps, history["train"], label="training")
        accuracy_axes.plot(steps, history["test"], label="test")
        accuracy_axes.set_xlabel("step")
        accuracy_axes.set_ylabel("accuracy")
        accuracy_axes.legend()
        figure.suptitle("logistic regression, breast cancer data")
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"plot saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
