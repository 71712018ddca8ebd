"""Theano's test values: config.compute_test_value computes each new variable's
tag.test_value as the graph is built, so that shape errors show where the user wrote them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.config import config


@pytest.fixture
def test_values():
    with config.change_flags(compute_test_value="raise"):
        yield


def test_a_shape_error_is_raised_where_the_graph_is_built(test_values):
    x = T.dmatrix("x")
    x.tag.test_value = np.ones((3, 4))
    W = sympile.shared(np.ones((5, 2)), "W")
    with pytest.raises(ValueError, match="computing the test value of Dot, built at .*"
                                         "test_test_values.py"):
        T.dot(x, W)
    assert T.tanh(x * 2).tag.test_value.shape == (3, 4)


def test_test_values_through_op_families(test_values):
    """Elementwise, reductions, indexing, nnet, gradients (through the stabilized cost),
    second order, scan and its gradient."""
    rng = np.random.default_rng(0)
    x, y = T.dmatrix("x"), T.lvector("y")
    x.tag.test_value = rng.normal(size=(3, 4))
    y.tag.test_value = np.array([0, 1, 2])
    W = sympile.shared(rng.normal(size=(4, 3)), "W")
    b = sympile.shared(np.zeros(3), "b")
    probabilities = T.nnet.softmax(T.dot(x, W) + b)
    cost = -T.mean(T.log(probabilities)[T.arange(y.shape[0]), y])
    gW, gb = sympile.grad(cost, [W, b])
    f = sympile.function([x, y], [cost, gW])
    expected_cost, expected_gW = f(x.tag.test_value, y.tag.test_value)
    np.testing.assert_allclose(cost.tag.test_value, expected_cost)
    np.testing.assert_allclose(gW.tag.test_value, expected_gW)
    assert sympile.gradient.hessian(cost, b).tag.test_value.shape == (3, 3)
    states, _ = sympile.scan(lambda row, h: T.tanh(row + h), sequences=x,
                             outputs_info=T.zeros((4,)))
    assert states.tag.test_value.shape == (3, 4)
    assert sympile.grad(states.sum(), x).tag.test_value.shape == (3, 4)
    assert x[1:, ::2].tag.test_value.shape == (2, 2)


def test_missing_test_values_raise_warn_or_are_ignored():
    x = T.dvector("x")
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(ValueError, match="input x has no test value"):
            x + 1
    with config.change_flags(compute_test_value="warn"):
        with pytest.warns(UserWarning, match="input x has no test value"):
            y = x + 1
        assert not hasattr(y.tag, "test_value")
    with config.change_flags(compute_test_value="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x + 1
    with pytest.raises(ValueError, match="compute_test_value must be 'off', 'ignore'"):
        config.compute_test_value = "on"


def test_print_test_value(test_values):
    x = T.dvector("x")
    x.tag.test_value = np.array([1.0, 2.0])
    total = (x * 2).sum()
    assert total.tag.test_value == 6.0
    with config.change_flags(print_test_value=True):
        assert repr(total) == repr(total.tag.test_value)
    assert repr(total) == str(total)
