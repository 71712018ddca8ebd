"""Data-parallel training of an MLP on scikit-learn's digits across MPI processes.

    python -m pip install '.[mpi,examples]'
    mpiexec -n 2 python examples/data_parallel_mlp.py

Every rank builds the same model (64-128-10, tanh, softmax); DataParallel gives every rank
rank 0's initial weights, and each step averages the ranks' gradients in one all-reduce.
The 1797 digits (8x8 images shipped with scikit-learn, no download) are split 1400 for
training, 397 for testing; each global minibatch of `--batch` images is shared out
between the ranks, every rank training on its own slice. Rank 0 alone shows the progress,
prints the test accuracy, writes the checkpoint (sympile-output/data_parallel_mlp.npz)
and plots the loss (sympile-output/data_parallel_mlp.png). Without
mpiexec it runs as one process.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T
from sympile import distributed

try:
    from sklearn.datasets import load_digits
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[mpi,examples]' ({error})") from None


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=60, help="global minibatch size")
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--checkpoint", default="sympile-output/data_parallel_mlp.npz",
                        help="where the parameters go (default: %(default)s)")
    parser.add_argument("--plot", default="sympile-output/data_parallel_mlp.png",
                        help="where the loss plot goes ('': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    distributed.init()
    rank, size = distributed.rank(), distributed.size()
    if arguments.batch % size:
        raise SystemExit(f"--batch {arguments.batch} must be a multiple of the {size} ranks")

    digits = load_digits()
    images = (digits.data / 16.0).astype("float32")
    order = np.random.default_rng(0).permutation(len(images))
    train, test = order[:1400], order[1400:]

    init = np.random.default_rng(rank)  # different on every rank: rank 0's are broadcast
    params = [sympile.shared((init.standard_normal((64, 128)) * 0.1).astype("float32"),
                             name="W1"),
              sympile.shared(np.zeros(128, "float32"), name="b1"),
              sympile.shared((init.standard_normal((128, 10)) * 0.1).astype("float32"),
                             name="W2"),
              sympile.shared(np.zeros(10, "float32"), name="b2")]
    parallel = distributed.DataParallel(params)
    x, y = T.fmatrix("x"), T.lvector("y")
    hidden = T.tanh(T.dot(x, params[0]) + params[1])
    probabilities = T.nnet.softmax(T.dot(hidden, params[2]) + params[3])
    cost = -T.log(probabilities[T.arange(y.shape[0]), y]).mean()
    step = sympile.function([x, y], cost, updates=parallel.sgd_updates(
        cost, arguments.learning_rate, momentum=0.9))
    predict = sympile.function([x], T.argmax(probabilities, axis=1))

    share = arguments.batch // size
    batches = len(train) // arguments.batch
    shuffle = np.random.default_rng(1)  # the same on every rank: the same global batches
    history = {"loss": []}
    steps = range(arguments.epochs * batches)
    for index in tqdm(steps, desc="steps", disable=rank != 0):
        if index % batches == 0:
            train = shuffle.permutation(train)
        chosen = train[(index % batches) * arguments.batch:][:arguments.batch]
        mine = chosen[rank * share:(rank + 1) * share]
        history["loss"].append(float(step(images[mine], digits.target[mine])))
    history["test accuracy"] = float(np.mean(predict(images[test]) == digits.target[test]))
    Path(arguments.checkpoint).parent.mkdir(parents=True, exist_ok=True)
    parallel.save(arguments.checkpoint)
    if rank == 0:
        print(f"{size} ranks, global batch {arguments.batch}: loss {history['loss'][0]:.3f} "
              f"-> {np.mean(history['loss'][-batches:]):.3f}, test accuracy "
              f"{history['test accuracy']:.3f}; checkpoint {arguments.checkpoint}")
        if arguments.plot:
            _plot(history["loss"], size, arguments.plot)
    return history


def _plot(losses: list[float], size: int, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(5, 3.5))
    axes.plot(range(1, len(losses) + 1), losses)
    axes.set_xlabel("step")
    axes.set_ylabel("rank 0's minibatch loss")
    axes.set_title(f"64-128-10 MLP, {size} rank(s), digits")
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    print(f"loss plot saved to {path}")


if __name__ == "__main__":
    main()
