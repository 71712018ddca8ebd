"""sympile's demo: build expressions, compile them, iterate a shared-variable update, and
train logistic regression with symbolic gradients (the Theano tutorial's example).

Run: python examples/demo.py
"""

import time

import numpy as np

import sympile
import sympile.tensor as T


def expressions() -> None:
    print("== expressions ==")
    a, b = T.dmatrices("a", "b")
    difference = a - b
    f = sympile.function([a, b], [difference, abs(difference), difference ** 2])
    diff, abs_diff, squared = f([[1, 1], [1, 1]], [[0, 1], [2, 3]])
    print("a - b      =", diff.tolist())
    print("|a - b|    =", abs_diff.tolist())
    print("(a - b)**2 =", squared.tolist())

    x = T.dmatrix("x")
    logistic = sympile.function([x], 1 / (1 + T.exp(-x)))
    print("logistic([[0, 1], [-1, -2]]) =", np.round(logistic([[0, 1], [-1, -2]]), 6).tolist())
    print("formula:", sympile.pp(1 / (1 + T.exp(-x))))


def power_iteration(n: int = 50, steps: int = 200) -> None:
    """Top eigenvector of a symmetric matrix by v <- A v / |A v|, the state in shared
    variables and the loop in f.fn(n_calls=...)."""
    print("\n== power iteration ==")
    rng = np.random.default_rng(2012)
    basis, _ = np.linalg.qr(rng.standard_normal((n, n)))
    spectrum = np.linspace(1.0, 10.0, n)
    spectrum[-1] = 15.0  # a clear gap, so the iteration converges quickly
    matrix = basis @ np.diag(spectrum) @ basis.T

    A = sympile.shared(matrix, name="A")
    v = sympile.shared(rng.standard_normal(n), name="v")
    w = T.dot(A, v)
    v_next = w / T.sqrt(T.sum(w ** 2))
    rayleigh = T.dot(v_next, T.dot(A, v_next))
    step = sympile.function([], rayleigh, updates=[(v, v_next)], name="power_step")

    for iteration in range(1, 6):
        print(f"step {iteration}: eigenvalue estimate {float(step()):.6f}")
    (estimate,) = step.fn(n_calls=steps)
    true_vector = basis[:, -1]
    alignment = abs(float(np.dot(v.get_value(), true_vector)))
    print(f"after {steps} more steps in one fn(n_calls=...) call: {float(estimate):.10f}")
    print(f"numpy.linalg.eigh top eigenvalue:            {np.linalg.eigh(matrix)[0][-1]:.10f}")
    print(f"|<v, true eigenvector>| = {alignment:.10f}")


def logistic_regression(n_examples: int = 400, n_features: int = 50,
                        steps: int = 500) -> None:
    """The Theano tutorial's logistic regression, on data generated from a known model."""
    print("\n== logistic regression trained with grad and updates ==")
    rng = np.random.default_rng(1234)
    inputs = rng.standard_normal((n_examples, n_features))
    true_weights = rng.standard_normal(n_features)
    labels = (inputs @ true_weights + 0.5 * rng.standard_normal(n_examples) > 0).astype(float)

    x = T.dmatrix("x")
    y = T.dvector("y")
    w = sympile.shared(0.01 * rng.standard_normal(n_features), name="w")
    b = sympile.shared(0.0, name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))           # probability that the label is 1
    prediction = p_1 > 0.5
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)  # cross-entropy per example
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    start = time.perf_counter()
    train = sympile.function([x, y], [prediction, cost],
                             updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], name="train")
    compile_s = time.perf_counter() - start
    predict = sympile.function([x], prediction, name="predict")
    # config.backend is 'python' once sympile found it cannot compile C here (it warned).
    backend = sympile.config.backend
    background = backend == "c" and sympile.config.compile_async
    print(f"backend {backend}; function() took {compile_s:.2f} s"
          + (" (its C compiles in the background while the first steps run on numpy; cached "
             f"in {sympile.config.compiledir})" if background else ""))

    for step in range(steps + 1):
        _, loss = train(inputs, labels)
        if step % 100 == 0:
            print(f"step {step:4d}: cost {float(loss):.4f}")
    accuracy = float(np.mean(predict(inputs) == labels))
    print(f"training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    expressions()
    power_iteration()
    logistic_regression()
