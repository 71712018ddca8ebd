"""Batch normalization (T.nnet.bn): values against numpy, both parameter forms, running
averages through shared-variable updates, derivatives checked numerically."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor.nnet import bn


def _reference(x, gamma, beta, axes, epsilon):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    invstd = 1 / np.sqrt(var + epsilon)
    return (x - mean) * invstd * gamma + beta, mean, invstd, var


@pytest.mark.parametrize("axes, kept", [("per-activation", (0,)), ("spatial", (0, 2, 3)),
                                        ((0, 3), (0, 3))])
def test_train_and_test_values(axes, kept):
    rng = np.random.default_rng(0)
    x_value = rng.standard_normal((6, 3, 4, 5)) * 3 + 1
    shape = tuple(1 if axis in kept else n for axis, n in enumerate(x_value.shape))
    gamma_value, beta_value = rng.random(shape) + 0.5, rng.standard_normal(shape)
    x, gamma, beta = T.dtensor4("x"), T.dtensor4("gamma"), T.dtensor4("beta")
    out, mean, invstd = bn.batch_normalization_train(x, gamma, beta, axes=axes, epsilon=1e-3)
    values = sympile.function([x, gamma, beta], [out, mean, invstd])(x_value, gamma_value,
                                                                     beta_value)
    expected = _reference(x_value, gamma_value, beta_value, kept, 1e-3)
    for value, reference in zip(values, expected):
        np.testing.assert_allclose(value, reference, rtol=1e-12, atol=1e-12)
    mean_in, var_in = T.dtensor4("mean"), T.dtensor4("var")
    test_out = bn.batch_normalization_test(x, gamma, beta, mean_in, var_in, axes=axes,
                                           epsilon=1e-3)
    value = sympile.function([x, gamma, beta, mean_in, var_in], test_out)(
        x_value, gamma_value, beta_value, expected[1], expected[3])
    np.testing.assert_allclose(value, expected[0], rtol=1e-12, atol=1e-12)


def test_parameters_with_the_axes_left_out_and_running_averages():
    rng = np.random.default_rng(1)
    x_value = rng.standard_normal((8, 3, 2, 2))
    x = T.dtensor4("x")
    gamma = sympile.shared(np.array([1.0, 2.0, 0.5]))
    beta = sympile.shared(np.array([0.0, 1.0, -1.0]))
    running_mean = sympile.shared(np.zeros(3))
    running_var = sympile.shared(np.ones(3))
    out, mean, invstd, new_mean, new_var = bn.batch_normalization_train(
        x, gamma, beta, axes="spatial", running_average_factor=0.25,
        running_mean=running_mean, running_var=running_var)
    assert mean.type.ndim == 1 and new_var.type.ndim == 1
    step = sympile.function([x], out, updates=[(running_mean, new_mean),
                                               (running_var, new_var)])
    value = step(x_value)
    axes = (0, 2, 3)
    expected = _reference(x_value, gamma.get_value()[None, :, None, None],
                          beta.get_value()[None, :, None, None], axes, 1e-4)[0]
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    m = 8 * 2 * 2
    np.testing.assert_allclose(running_mean.get_value(), 0.25 * x_value.mean(axis=axes))
    np.testing.assert_allclose(running_var.get_value(),
                               0.75 + 0.25 * x_value.var(axis=axes) * m / (m - 1))


def test_derivatives():
    rng = np.random.default_rng(2)
    point = [rng.standard_normal((5, 2, 3)), rng.random((1, 2, 1)) + 0.5,
             rng.standard_normal((1, 2, 1))]

    def normalized(x, gamma, beta):
        return bn.batch_normalization_train(x, gamma, beta, axes=(0, 2))[0] ** 2

    verify_grad(normalized, point, rng=0)
    verify_rop(normalized, point, rng=0)


def test_old_form_and_bad_input():
    x = T.dmatrix("x")
    out = bn.batch_normalization(x, 2.0, 1.0, 0.5, 4.0)
    np.testing.assert_allclose(sympile.function([x], out)(np.ones((2, 2))),
                               np.full((2, 2), 1.25))
    with pytest.raises(ValueError, match="mode must be 'low_mem' or 'high_mem'"):
        bn.batch_normalization(x, 1, 0, 0, 1, mode="fast")
    with pytest.raises(ValueError, match="axes must be 'per-activation', 'spatial'"):
        bn.batch_normalization_train(x, T.dmatrix(), T.dmatrix(), axes="channel")
    with pytest.raises(ValueError, match="gamma must have 2 dimensions"):
        bn.batch_normalization_train(x, T.dtensor3(), T.dmatrix())
    with pytest.raises(ValueError, match="give running_mean and running_var together"):
        bn.batch_normalization_train(x, T.dmatrix(), T.dmatrix(), running_mean=T.dmatrix())
