"""A bag-of-words classifier on sparse CSR input: softmax regression trained by SGD through
sympile.sparse.structured_dot, the documents never made dense.

    python -m pip install '.[examples]' && python examples/sparse_logistic_regression.py

No text corpus ships with scikit-learn (20 newsgroups and RCV1 are downloads), so the data
are generated, the same for a given seed: 20 topics over a 20000-word vocabulary; the
words follow one Zipf law (the language's), and each topic gives 200 words of its own
more weight (16% of its mass); a document takes 20-100 words from one topic, and its row
holds the counts (about 0.25% of the row is stored). 8000 documents train, 2000 test.
Each minibatch of 100 documents is a scipy.sparse.csr_matrix given to the compiled step;
the weights are shared variables updated in place. The training loss is saved as a plot
(sympile-output/sparse_logreg.png).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import scipy.sparse

import sympile
import sympile.tensor as T
from sympile import sparse

try:
    import matplotlib
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None

TOPICS, VOCABULARY, OWN_WORDS = 20, 20_000, 200


def corpus(documents: int, seed: int) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """`documents` rows of word counts (CSR, float32) and their topics."""
    rng = np.random.default_rng(seed)
    topic_rng = np.random.default_rng(12345)  # the topics are the same for every split
    zipf = 1.0 / np.arange(1, VOCABULARY + 1)[topic_rng.permutation(VOCABULARY)]
    word_distributions = []
    for _ in range(TOPICS):
        weights = zipf.copy()
        weights[topic_rng.choice(VOCABULARY, OWN_WORDS, replace=False)] += 0.01
        word_distributions.append(weights / weights.sum())
    topics = rng.integers(0, TOPICS, documents)
    rows = []
    for topic in topics:
        words = rng.choice(VOCABULARY, rng.integers(20, 101), p=word_distributions[topic])
        counts = np.bincount(words, minlength=VOCABULARY)
        rows.append(scipy.sparse.csr_matrix(counts.astype(np.float32)))
    return scipy.sparse.vstack(rows, format="csr"), topics


def build(learning_rate: float):
    """(train_step(x, labels) -> loss, predict(x) -> classes) with shared weights."""
    x = sparse.csr_matrix("x", dtype="float32")
    labels = T.lvector("labels")
    weights = sympile.shared(np.zeros((VOCABULARY, TOPICS), np.float32), name="W")
    bias = sympile.shared(np.zeros(TOPICS, np.float32), name="b")
    # log(1 + counts) on the stored counts only: the zeros stay implicit.
    features = sparse.log1p(x)
    probabilities = T.nnet.softmax(sparse.structured_dot(features, weights) + bias)
    loss = -T.log(probabilities[T.arange(labels.shape[0]), labels]).mean()
    gradients = sympile.grad(loss, [weights, bias])
    rate = np.float32(learning_rate)
    train_step = sympile.function([x, labels], loss, updates=[
        (weights, weights - rate * gradients[0]), (bias, bias - rate * gradients[1])])
    predict = sympile.function([x], T.argmax(probabilities, axis=1))
    return train_step, predict


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--train", type=int, default=8000)
    parser.add_argument("--test", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--learning-rate", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="sympile-output/sparse_logreg.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    train_x, train_y = corpus(arguments.train, arguments.seed)
    test_x, test_y = corpus(arguments.test, arguments.seed + 1)
    print(f"{arguments.train} training documents, {train_x.nnz} stored counts "
          f"({100 * train_x.nnz / np.prod(train_x.shape):.2f}% of the matrix)")
    train_step, predict = build(arguments.learning_rate)
    rng = np.random.default_rng(arguments.seed)
    history = {"loss": []}
    batches = arguments.train // arguments.batch
    progress = tqdm(range(arguments.epochs * batches), desc="SGD steps", unit="step")
    for step in progress:
        if step % batches == 0:
            order = rng.permutation(arguments.train)
        chosen = order[(step % batches) * arguments.batch:][:arguments.batch]
        history["loss"].append(float(train_step(train_x[chosen], train_y[chosen])))
        progress.set_postfix(loss=f"{history['loss'][-1]:.3f}")
    history["test accuracy"] = float(np.mean(predict(test_x) == test_y))
    print(f"training loss {history['loss'][0]:.3f} -> {np.mean(history['loss'][-batches:]):.3f}"
          f" (last epoch's mean); test accuracy {history['test accuracy']:.3f} "
          f"(chance {1 / TOPICS:.3f})")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(figsize=(6, 4))
        axes.plot(history["loss"], linewidth=0.8)
        axes.set_xlabel("SGD step (minibatch of documents)")
        axes.set_ylabel("cross-entropy")
        axes.set_title("Sparse softmax regression, generated bag of words")
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"loss saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
