"""Gaussian-process regression on scikit-learn's diabetes data, its hyperparameters fitted by
the gradient of the log marginal likelihood through cholesky and cho_solve.

    python -m pip install '.[examples]' && python examples/gaussian_process.py

The data (442 patients, shipped with scikit-learn, no download): disease progression after
one year against body-mass index, both standardized; 300 patients train, 142 test. The
kernel is s² exp(-(x - x')² / 2l²) plus noise σ²; the three log-hyperparameters follow
Adam on -log p(y | x) = ½ yᵀ K⁻¹ y + Σ log diag(L) + n/2 log 2π with K = L Lᵀ, all
symbolic (sympile.tensor.slinalg), so that one compiled function gives the likelihood and
its gradient. The fit (posterior mean and two standard deviations) is saved as a plot
(sympile-output/gaussian_process.png).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sympile
import sympile.tensor as T
from sympile.tensor import slinalg

try:
    import matplotlib
    from sklearn.datasets import load_diabetes
    from tqdm import tqdm
except ImportError as error:
    raise SystemExit(f"this example needs the examples extra: python -m pip install "
                     f"'.[examples]' ({error})") from None


def load_data(seed: int):
    data = load_diabetes()
    x = data.data[:, 2]  # body-mass index
    y = data.target
    x = (x - x.mean()) / x.std()
    y = (y - y.mean()) / y.std()
    order = np.random.default_rng(seed).permutation(len(x))
    train, test = order[:300], order[300:]
    return x[train], y[train], x[test], y[test]


def kernel(a, b, log_scale, log_signal):
    squared = (a.dimshuffle(0, "x") - b.dimshuffle("x", 0)) ** 2
    return T.exp(2 * log_signal) * T.exp(-0.5 * squared * T.exp(-2 * log_scale))


def build():
    """(likelihood_and_gradient(theta, x, y), predict(theta, x, y, new_x))."""
    theta = T.dvector("theta")  # log length scale, log signal sd, log noise sd
    x, y, new_x = T.dvector("x"), T.dvector("y"), T.dvector("new_x")
    log_scale, log_signal, log_noise = theta[0], theta[1], theta[2]
    covariance = kernel(x, x, log_scale, log_signal) + T.exp(2 * log_noise) * T.eye(x.shape[0])
    factor = slinalg.cholesky(covariance)
    alpha = slinalg.cho_solve((factor, True), y)
    n = T.cast(x.shape[0], "float64")
    nll = 0.5 * T.dot(y, alpha) + T.log(T.diagonal(factor)).sum() + 0.5 * n * np.log(2 * np.pi)
    fit = sympile.function([theta, x, y], [nll, sympile.grad(nll, theta)])
    cross = kernel(new_x, x, log_scale, log_signal)
    mean = T.dot(cross, alpha)
    projected = slinalg.solve_triangular(factor, cross.T, lower=True)
    variance = T.exp(2 * log_signal) - (projected ** 2).sum(axis=0) + T.exp(2 * log_noise)
    predict = sympile.function([theta, x, y, new_x], [mean, variance])
    return fit, predict


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="sympile-output/gaussian_process.png",
                        help="where the plot goes (\'\': no plot; default: %(default)s)")
    arguments = parser.parse_args(argv)
    train_x, train_y, test_x, test_y = load_data(arguments.seed)
    fit, predict = build()
    theta = np.zeros(3)
    moment, square = np.zeros(3), np.zeros(3)
    history = {"nll": []}
    progress = tqdm(range(1, arguments.steps + 1), desc="Adam steps", unit="step")
    for step in progress:
        nll, gradient = fit(theta, train_x, train_y)
        history["nll"].append(float(nll))
        moment = 0.9 * moment + 0.1 * gradient
        square = 0.999 * square + 0.001 * gradient ** 2
        theta = theta - 0.05 * (moment / (1 - 0.9 ** step)) / (
            np.sqrt(square / (1 - 0.999 ** step)) + 1e-8)
        progress.set_postfix(nll=f"{nll:.2f}")
    mean, variance = predict(theta, train_x, train_y, test_x)
    history["test rmse"] = float(np.sqrt(np.mean((mean - test_y) ** 2)))
    history["baseline rmse"] = float(np.sqrt(np.mean((train_y.mean() - test_y) ** 2)))
    history["theta"] = theta
    print(f"length scale {np.exp(theta[0]):.3f}, signal sd {np.exp(theta[1]):.3f}, "
          f"noise sd {np.exp(theta[2]):.3f}")
    print(f"-log p(y): {history['nll'][0]:.2f} -> {history['nll'][-1]:.2f}")
    print(f"test RMSE {history['test rmse']:.4f} (predicting the mean: "
          f"{history['baseline rmse']:.4f})")
    if arguments.plot:
        matplotlib.use("Agg")
        from matplotlib import pyplot

        grid = np.linspace(train_x.min(), train_x.max(), 200)
        grid_mean, grid_variance = predict(theta, train_x, train_y, grid)
        spread = 2 * np.sqrt(grid_variance)
        figure, axes = pyplot.subplots(figsize=(6, 4))
        axes.scatter(train_x, train_y, s=8, alpha=0.5, label="training patients")
        axes.plot(grid, grid_mean, color="black", label="posterior mean")
        axes.fill_between(grid, grid_mean - spread, grid_mean + spread, alpha=0.2,
                          label="±2 sd")
        axes.set_xlabel("body-mass index (standardized)")
        axes.set_ylabel("disease progression (standardized)")
        axes.set_title("GP regression, hyperparameters by gradient")
        axes.legend()
        figure.tight_layout()
        Path(arguments.plot).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(arguments.plot, dpi=100)
        print(f"fit saved to {arguments.plot}")
    return history


if __name__ == "__main__":
    main()
