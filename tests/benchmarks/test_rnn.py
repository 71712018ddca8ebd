"""The RNN benchmark trains the same model in every implementation: after one pass over a
few sequences the parameters agree with the hand-written numpy BPTT (equal work timed)."""

import importlib.util

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.benchmarks import rnn

SIZE = dict(vocabulary=7, hidden=5, n_sequences=2, length=6)


def _assert_same_parameters(steps, reference):
    before = reference.parameters()
    steps()
    reference()
    for actual, expected, initial in zip(steps.parameters(), reference.parameters(), before):
        assert not np.allclose(expected, initial)
        np.testing.assert_allclose(actual, expected, rtol=2e-4, atol=2e-6)


def test_sympile_trains_like_numpy():
    steps = rnn.theano_style_steps(sympile, T, T.sigmoid, T.nnet.softmax, **SIZE)
    _assert_same_parameters(steps, rnn.numpy_steps(**SIZE))


def test_sympile_forward_like_numpy():
    forward = rnn.forward_steps(sympile, T, T.sigmoid, 7, 5, 6)
    np.testing.assert_allclose(forward(), rnn.numpy_forward(7, 5, 6)(), rtol=1e-5)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_torch_trains_like_numpy():
    _assert_same_parameters(rnn.torch_steps(**SIZE), rnn.numpy_steps(**SIZE))


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")
def test_jax_trains_like_numpy():
    _assert_same_parameters(rnn.jax_steps(**SIZE), rnn.numpy_steps(**SIZE))


@pytest.mark.skipif(importlib.util.find_spec("pytensor") is None, reason="pytensor not installed")
def test_pytensor_trains_like_numpy():
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.special import softmax
    steps = rnn.theano_style_steps(pytensor, pt, pt.sigmoid, lambda s: softmax(s, axis=-1),
                                   **SIZE)
    _assert_same_parameters(steps, rnn.numpy_steps(**SIZE))
