"""The MLP benchmark trains the same model in every implementation: after a few SGD steps
the parameters agree with the hand-written numpy version (so the timings compare equal work)."""

import importlib.util

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.benchmarks import mlp

LAYERS = [784, 20, 10]
STEPS = 4


def _assert_same_parameters(steps, reference):
    steps()
    reference()
    for actual, expected in zip(steps.parameters(), reference.parameters()):
        np.testing.assert_allclose(actual, expected, rtol=2e-4, atol=2e-6)


@pytest.mark.parametrize("style", ["default", "trust_input", "n_calls"])
def test_sympile_styles_train_like_numpy(style):
    steps = mlp.theano_style_steps(sympile, T, T.nnet.softmax, LAYERS, 10, STEPS, style)
    _assert_same_parameters(steps, mlp.numpy_steps(LAYERS, 10, STEPS))


def test_parameters_change():
    steps = mlp.numpy_steps(LAYERS, 10, STEPS)
    before = steps.parameters()
    steps()
    assert not np.allclose(before[0], steps.parameters()[0])


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_torch_trains_like_numpy():
    _assert_same_parameters(mlp.torch_steps(LAYERS, 10, STEPS), mlp.numpy_steps(LAYERS, 10, STEPS))


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")
@pytest.mark.parametrize("style", ["jit step", "fori_loop"])
def test_jax_trains_like_numpy(style):
    _assert_same_parameters(mlp.jax_steps(LAYERS, 10, STEPS, style),
                            mlp.numpy_steps(LAYERS, 10, STEPS))


@pytest.mark.skipif(importlib.util.find_spec("pytensor") is None, reason="pytensor not installed")
def test_pytensor_trains_like_numpy():
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.special import softmax
    steps = mlp.theano_style_steps(pytensor, pt, lambda s: softmax(s, axis=1), LAYERS, 10,
                                   STEPS, "trust_input")
    _assert_same_parameters(steps, mlp.numpy_steps(LAYERS, 10, STEPS))


@pytest.mark.parametrize("streams", ["RandomStreams", "MRG_RandomStreams"])
def test_sympile_dropout_training_is_reproducible_and_differs_from_plain(streams):
    """sympile/benchmarks/random_streams.py's dropout MLP: a masked step is not the plain one, and a
    stream of one seed trains to the same parameters twice."""
    from sympile.tensor import random

    def trained(seed):
        steps = mlp.theano_style_steps(sympile, T, T.nnet.softmax, LAYERS, 10, STEPS,
                                       "trust_input", dropout=0.5,
                                       streams=getattr(random, streams)(seed=seed))
        steps()
        return steps.parameters()

    plain = mlp.theano_style_steps(sympile, T, T.nnet.softmax, LAYERS, 10, STEPS,
                                   "trust_input")
    plain()
    first, again = trained(3), trained(3)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.allclose(first[0], plain.parameters()[0])
