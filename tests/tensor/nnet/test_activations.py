"""Theano's T.nnet activations elu, selu, hard_sigmoid and ultra_fast_sigmoid, and
T.extra_ops.to_one_hot: values against numpy, derivatives checked numerically."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor import nnet
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

ALPHA, SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _ultra_fast_sigmoid(x):
    half = np.abs(x) / 2
    magnitude = np.where(half < 1.7, 1.5 * half / (1 + half),
                         np.where(half < 3, 0.935409070603099 + 0.0458812946797165 * (half - 1.7),
                                  0.99505475368673))
    return (1 + np.sign(x) * magnitude) / 2


REFERENCES = {
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: SCALE * np.where(x > 0, x, ALPHA * np.expm1(x)),
    "hard_sigmoid": lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    "ultra_fast_sigmoid": _ultra_fast_sigmoid,
}
# Points away from the kinks (0, +-2.5, +-3.4, +-6), where the derivative is defined.
POINT = np.array([-7.0, -4.1, -2.9, -1.3, -0.4, 0.3, 1.1, 2.2, 3.0, 5.5, 8.0])


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_values(name, mode):
    for dtype in ("float32", "float64"):
        x = T.vector(dtype=dtype)
        output = getattr(nnet, name)(x)
        assert output.dtype == dtype
        value = sympile.function([x], output, mode=mode)(POINT.astype(dtype))
        np.testing.assert_allclose(value, REFERENCES[name](POINT.astype(dtype)),
                                   rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-7)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_derivatives(name):
    function = getattr(nnet, name)
    verify_grad(function, [POINT], rng=0)
    verify_rop(function, [POINT], rng=0)


def test_elu_alpha_and_ultra_fast_sigmoid_error():
    x = T.dvector()
    np.testing.assert_allclose(sympile.function([x], nnet.elu(x, 0.5))(np.array([-1.0, 2.0])),
                               [0.5 * np.expm1(-1.0), 2.0])
    grid = np.linspace(-10, 10, 2001)
    approximation = sympile.function([x], nnet.ultra_fast_sigmoid(x))(grid)
    assert np.abs(approximation - 1 / (1 + np.exp(-grid))).max() < 0.03


def test_to_one_hot():
    y = T.lvector("y")
    one_hot = T.extra_ops.to_one_hot(y, 4)
    assert one_hot.dtype == sympile.config.floatX
    np.testing.assert_array_equal(sympile.function([y], one_hot)(np.array([0, 3, 1])),
                                  np.eye(4)[[0, 3, 1]])
    assert T.extra_ops.to_one_hot(y, 3, dtype="int8").dtype == "int8"
    with pytest.raises(TypeError, match="to_one_hot: y must be an integer vector"):
        T.extra_ops.to_one_hot(T.dvector(), 3)
