"""The README's demo runs and computes what it prints."""

import runpy
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.py"


def test_demo_runs_and_converges(capsys):
    runpy.run_path(str(DEMO), run_name="__main__")
    text = capsys.readouterr().out
    assert "== power iteration ==" in text
    lines = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    estimate = float(lines["after 200 more steps in one fn(n_calls=...) call"])
    reference = float(lines["numpy.linalg.eigh top eigenvalue"])
    assert abs(estimate - reference) < 1e-8
    costs = [float(line.split("cost")[1]) for line in text.splitlines()
             if line.startswith("step") and "cost" in line]
    assert costs[-1] < costs[0] / 2
    accuracy = [line for line in text.splitlines() if line.startswith("training accuracy")]
    assert float(accuracy[0].split()[-1]) > 0.9


def _example(name: str):
    return runpy.run_path(str(DEMO.parent / name))


def test_dropout_mlp_learns_the_digits(tmp_path, capsys):
    """Eight epochs of the dropout MLP: well above chance on the held-out digits, and the
    accuracy plot written."""
    plot = tmp_path / "accuracy.png"
    history = _example("dropout_mlp.py")["main"](["--epochs", "8", "--plot", str(plot)])
    assert history["test"][-1] > 0.85 and len(history["train"]) == 8
    assert plot.stat().st_size > 1000
    assert "final test accuracy" in capsys.readouterr().out


def test_denoising_autoencoder_cost_falls(tmp_path):
    plot = tmp_path / "filters.png"
    history = _example("denoising_autoencoder.py")["main"](
        ["--epochs", "8", "--plot", str(plot)])
    assert history["cost"][-1] < 0.85 * history["cost"][0]
    # Corruption makes reconstruction harder: the model saw corrupted digits, not these.
    assert history["test clean"] < history["test corrupted"]
    assert plot.stat().st_size > 1000


def test_lenet_learns_the_digits(tmp_path):
    plot = tmp_path / "lenet.png"
    history = _example("lenet.py")["main"](["--epochs", "2", "--plot", str(plot)])
    assert history["test"][-1] > 0.8 and history["loss"][-1] < history["loss"][0]
    assert plot.stat().st_size > 1000


def test_gaussian_process_fits_the_diabetes_data(tmp_path):
    plot = tmp_path / "gp.png"
    history = _example("gaussian_process.py")["main"](["--steps", "60", "--plot", str(plot)])
    assert history["nll"][-1] < history["nll"][0] - 10
    assert history["test rmse"] < 0.95 * history["baseline rmse"]
    assert plot.stat().st_size > 1000


def test_sparse_logistic_regression_learns_the_topics(tmp_path):
    plot = tmp_path / "sparse.png"
    history = _example("sparse_logistic_regression.py")["main"](
        ["--epochs", "3", "--train", "4000", "--test", "500", "--plot", str(plot)])
    assert sum(history["loss"][-20:]) / 20 < history["loss"][0] - 1.0
    assert history["test accuracy"] > 0.7
    assert plot.stat().st_size > 1000


def test_char_rnn_learns_and_samples(tmp_path):
    plot = tmp_path / "char_rnn.png"
    history = _example("char_rnn.py")["main"](
        ["--steps", "200", "--hidden", "64", "--plot", str(plot)])
    assert sum(history["loss"][-20:]) / 20 < history["uniform loss"] - 1.0
    assert all(len(sample) == 301 for sample in history["samples"])
    assert plot.stat().st_size > 1000


def test_hessian_free_fits_the_digits(tmp_path):
    plot = tmp_path / "hf.png"
    history = _example("hessian_free.py")["main"](["--steps", "10", "--plot", str(plot)])
    assert history["loss"][-1] < 0.1 * history["loss"][0]
    assert history["test accuracy"] > 0.9
    assert plot.stat().st_size > 1000


def test_logistic_regression_classifies_the_tumours(tmp_path):
    plot = tmp_path / "logistic_regression.png"
    history = _example("logistic_regression.py")["main"](["--steps", "60", "--plot", str(plot)])
    assert history["cost"][-1] < history["cost"][0] / 4
    assert history["test"][-1] > 0.9
    assert plot.stat().st_size > 1000
