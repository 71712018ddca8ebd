"""The Theano tutorial's denoising autoencoder (dA), trained on scikit-learn's digits.

    python -m pip install '.[examples]' && python examples/denoising_autoencoder.py

Each 8x8 digit (pixels scaled to [0, 1], no download) is corrupted by zeroing each pixel with
probability 0.3 (a binomial mask drawn by RandomStreams at every step), encoded by
h = sigmoid(W x~ + b) into 32 hidden units and decoded with the tied weights,
z = sigmoid(W' h + b'); the cost is the cross-entropy between the clean x and z, trained by
SGD on minibatches of 20. A progress bar shows the epochs; at the end the mean
reconstruction cross-entropy of clean and corrupted test digits is printed, and the learned
filters (the rows of W') are saved as an image (sympile-output/denoising_autoencoder_filters.png).
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
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None

N_VISIBLE, N_HIDDEN = 64, 32


class DenoisingAutoencoder:
    """The tutorial's dA: tied weights, binomial corruption, cross-entropy cost."""

    def __init__(self, seed: int, corruption: float):
        rng = np.random.default_rng(seed)
        floatx = sympile.config.floatX
        bound = 4 * np.sqrt(6.0 / (N_HIDDEN + N_VISIBLE))
        self.W = sympile.shared(rng.uniform(-bound, bound, (N_VISIBLE, N_HIDDEN)).astype(floatx),
                                name="W")
        self.b = sympile.shared(np.zeros(N_HIDDEN, floatx), name="b")
        self.b_prime = sympile.shared(np.zeros(N_VISIBLE, floatx), name="b_prime")
        self.parameters = [self.W, self.b, self.b_prime]
        self.streams = RandomStreams(seed=seed)
        self.corruption = corruption

    def corrupted(self, x):
        keep = self.streams.binomial(size=x.shape, n=1, p=1 - self.corruption,
                                     dtype=sympile.config.floatX)
        return keep * x

    def reconstructed(self, x):
        hidden = T.nnet.sigmoid(T.dot(x, self.W) + self.b)
        return T.nnet.sigmoid(T.dot(hidden, self.W.T) + self.b_prime)

    def cost(self, clean, seen):
        z = self.reconstructed(seen)
        return -T.sum(clean * T.log(z) + (1 - clean) * T.log(1 - z), axis=1).mean()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--corruption", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", default="sympile-output/denoising_autoencoder_filters.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    floatx = sympile.config.floatX
    data = (load_digits().data / 16.0).astype(floatx)
    order = np.random.default_rng(arguments.seed).permutation(len(data))
    train_x, test_x = data[order[:1500]], data[order[1500:]]

    model = DenoisingAutoencoder(arguments.seed, arguments.corruption)
    shared_x = sympile.shared(train_x)
    index = T.lscalar("index")
    x = shared_x[index * arguments.batch:(index + 1) * arguments.batch]
    cost = model.cost(x, model.corrupted(x))
    learning_rate = np.asarray(0.1, floatx)
    updates = [(p, p - learning_rate * g)
               for p, g in zip(model.parameters, sympile.grad(cost, model.parameters))]
    train = sympile.function([index], cost, updates=updates)
    clean = T.matrix("clean")
    reconstruction_cost = sympile.function([clean], model.cost(clean, clean))
    denoising_cost = sympile.function([clean], model.cost(clean, model.corrupted(clean)))

    n_batches = len(train_x) // arguments.batch
    history = {"cost": []}
    progress = tqdm(range(arguments.epochs), desc="epochs", unit="epoch")
    for _ in progress:
        history["cost"].append(float(np.mean([train(i) for i in range(n_batches)])))
        progress.set_postfix(cost=f"{history['cost'][-1]:.3f}")
    history["test clean"] = float(reconstruction_cost(test_x))
    history["test corrupted"] = float(denoising_cost(test_x))
    print(f"training cost: first epoch {history['cost'][0]:.4f}, last {history['cost'][-1]:.4f}")
    print(f"test reconstruction cross-entropy: clean input {history['test clean']:.4f}, "
          f"corrupted input {history['test corrupted']:.4f}")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(4, 8, figsize=(8, 4))
        for filter_weights, axis in zip(model.W.get_value().T, axes.ravel()):
            axis.imshow(filter_weights.reshape(8, 8), cmap="gray")
            axis.axis("off")
        figure.suptitle(f"dA filters, {int(arguments.corruption * 100)}% corruption")
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"filters saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
