"""Hessian-free optimisation of an MLP with Gauss-Newton-vector products (Rop and Lop), the
2012 Theano paper's use case for the R-operator, on scikit-learn's digits.

    python -m pip install '.[examples]' && python examples/hessian_free.py

Martens' method (2010), small: at each outer step the gradient g of the whole training set's
cross-entropy is computed, and the step d minimises the quadratic model
gᵀd + ½ dᵀ(G + λI)d by conjugate gradient, where G is the Gauss-Newton matrix of the loss
on a curvature minibatch: G v = Jᵀ H J v, with J v = Rop(logits, params, v) (forward mode),
H the softmax cross-entropy's Hessian in the logits, and Jᵀ u = Lop(logits, params, u)
(reverse mode): one compiled function, never a matrix. The damping λ follows the
Levenberg-Marquardt rule on the ratio of the actual to the predicted reduction. The network
is 64-100-10 (tanh); the digits (8x8, shipped with scikit-learn) split 1347 / 450. The
training loss per outer step is saved as a plot (sympile-output/hessian_free.png).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T

try:
    import matplotlib
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None


def build(seed: int):
    """The parameters and the compiled loss, gradient, Gauss-Newton product and
    prediction functions (all of x, y given as inputs)."""
    rng = np.random.default_rng(seed)
    shapes = [(64, 100), (100,), (100, 10), (10,)]
    params = [sympile.shared(rng.standard_normal(shape) / np.sqrt(shape[0])
                             if len(shape) == 2 else np.zeros(shape), name=name)
              for shape, name in zip(shapes, ("W1", "b1", "W2", "b2"))]
    x, y = T.dmatrix("x"), T.lvector("y")
    logits = T.dot(T.tanh(T.dot(x, params[0]) + params[1]), params[2]) + params[3]
    p = T.nnet.softmax(logits)
    loss = -T.log(p[T.arange(y.shape[0]), y]).mean()
    loss_and_gradient = sympile.function([x, y], [loss, *sympile.grad(loss, params)])
    loss_only = sympile.function([x, y], loss)
    # G v = Jᵀ H J v: H u = (p ∘ u - p (pᵀ u)) / n for softmax cross-entropy in the logits.
    directions = [param.type(f"v_{param.name}") for param in params]
    jv = sympile.gradient.Rop(logits, params, directions)
    hjv = (p * jv - p * (p * jv).sum(axis=1, keepdims=True)) / T.cast(x.shape[0], "float64")
    gv = sympile.gradient.Lop(logits, params, hjv)
    gauss_newton = sympile.function([x, *directions], gv, on_unused_input="ignore")
    predict = sympile.function([x], T.argmax(p, axis=1))
    return params, loss_and_gradient, loss_only, gauss_newton, predict


def conjugate_gradient(product, gradient: np.ndarray, damping: float, iterations: int):
    """d approximately minimising gᵀd + ½ dᵀ(G + λI)d; (d, the model's value at d)."""
    d = np.zeros_like(gradient)
    residual = -gradient.copy()
    direction = residual.copy()
    for _ in range(iterations):
        curvature = product(direction) + damping * direction
        step = residual @ residual / (direction @ curvature)
        d += step * direction
        new_residual = residual - step * curvature
        if np.linalg.norm(new_residual) < 1e-6 * np.linalg.norm(gradient):
            residual = new_residual
            break
        direction = new_residual + (new_residual @ new_residual) / (residual @ residual) * \
            direction
        residual = new_residual
    model = gradient @ d + 0.5 * d @ (product(d) + damping * d)
    return d, model


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="outer (Newton) steps")
    parser.add_argument("--cg-iterations", type=int, default=25)
    parser.add_argument("--curvature-batch", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="sympile-output/hessian_free.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    digits = load_digits()
    train_x, test_x, train_y, test_y = train_test_split(
        digits.data / 16.0, digits.target, test_size=450, random_state=arguments.seed)
    params, loss_and_gradient, loss_only, gauss_newton, predict = build(arguments.seed)
    shapes = [param.get_value().shape for param in params]
    sizes = [int(np.prod(shape)) for shape in shapes]

    def unflatten(vector):
        pieces = np.split(vector, np.cumsum(sizes)[:-1])
        return [piece.reshape(shape) for piece, shape in zip(pieces, shapes)]

    def set_params(vector):
        for param, value in zip(params, unflatten(vector)):
            param.set_value(value)

    theta = np.concatenate([param.get_value().ravel() for param in params])
    rng = np.random.default_rng(arguments.seed)
    damping = 1.0
    history = {"loss": [], "damping": []}
    progress = tqdm(range(arguments.steps), desc="Hessian-free steps", unit="step")
    for _ in progress:
        loss, *gradients = loss_and_gradient(train_x, train_y)
        history["loss"].append(float(loss))
        gradient = np.concatenate([g.ravel() for g in gradients])
        batch = rng.choice(len(train_x), arguments.curvature_batch, replace=False)

        def product(vector, batch=batch):
            return np.concatenate([piece.ravel() for piece in
                                   gauss_newton(train_x[batch], *unflatten(vector))])

        d, predicted = conjugate_gradient(product, gradient, damping,
                                          arguments.cg_iterations)
        set_params(theta + d)
        new_loss = float(loss_only(train_x, train_y))
        ratio = (new_loss - loss) / predicted if predicted < 0 else -1.0
        if ratio < 0.25:
            damping *= 1.5
        elif ratio > 0.75:
            damping /= 1.5
        if new_loss < loss:
            theta = theta + d
        else:
            set_params(theta)  # the step made things worse: keep the old point
        history["damping"].append(damping)
        progress.set_postfix(loss=f"{min(loss, new_loss):.4f}", damping=f"{damping:.3g}")
    set_params(theta)
    history["loss"].append(float(loss_only(train_x, train_y)))
    history["test accuracy"] = float(np.mean(predict(test_x) == test_y))
    print(f"training loss {history['loss'][0]:.3f} -> {history['loss'][-1]:.4f} in "
          f"{arguments.steps} Hessian-free steps; test accuracy "
          f"{history['test accuracy']:.3f}")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(figsize=(6, 4))
        axes.semilogy(history["loss"], marker="o", markersize=3)
        axes.set_xlabel("outer step (one CG solve with Gauss-Newton products)")
        axes.set_ylabel("training cross-entropy")
        axes.set_title("Hessian-free optimisation, 64-100-10 MLP on digits")
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"loss saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
