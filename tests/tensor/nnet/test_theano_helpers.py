"""Theano's other nnet helpers against numpy: the Prepend ops, confusion_matrix, h_softmax
(with and without targets), logsoftmax; gradients checked numerically in float64."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad
from sympile.tensor.nnet import (
    Prepend_scalar_constant_to_each_row,
    Prepend_scalar_to_each_row,
    confusion_matrix,
    h_softmax,
    log_softmax,
    logsoftmax,
)

RNG = np.random.default_rng(0)


def test_prepend_a_column():
    x, val = T.dmatrix("x"), T.dscalar("val")
    constant, given = Prepend_scalar_constant_to_each_row(4.0)(x), \
        Prepend_scalar_to_each_row()(val, x)
    f = sympile.function([val, x], [constant, given, constant.shape])
    matrix = RNG.normal(size=(3, 5))
    first, second, shape = f(2.5, matrix)
    np.testing.assert_array_equal(first, np.hstack([np.full((3, 1), 4.0), matrix]))
    np.testing.assert_array_equal(second, np.hstack([np.full((3, 1), 2.5), matrix]))
    assert tuple(shape) == (3, 6)
    verify_grad(Prepend_scalar_constant_to_each_row(1.0), [matrix], rng=RNG)
    verify_grad(Prepend_scalar_to_each_row(), [np.array(0.5), matrix], rng=RNG)
    with pytest.raises(TypeError, match="val must be a number"):
        Prepend_scalar_constant_to_each_row("4")
    with pytest.raises(TypeError, match="must be a matrix"):
        Prepend_scalar_constant_to_each_row(1.0)(T.dvector())


def test_confusion_matrix_counts_actual_against_predicted():
    actual, predicted = T.dvector("actual"), T.dvector("predicted")
    f = sympile.function([actual, predicted], confusion_matrix(actual, predicted))
    a, p = np.array([2, 0, 2, 2, 0, 1]), np.array([0, 0, 2, 2, 0, 2])
    counts, order = f(a, p)
    np.testing.assert_array_equal(order, [0, 1, 2])
    expected = np.zeros((3, 3), dtype="int64")
    np.add.at(expected, (a, p), 1)
    np.testing.assert_array_equal(counts, expected)
    assert counts.dtype == np.int64


def _h_softmax_numpy(x, W1, b1, W2, b2, n_outputs):
    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    classes = softmax(x @ W1 + b1)
    within = softmax(np.einsum("bd,cdo->bco", x, W2) + b2)
    return (classes[:, :, None] * within).reshape(len(x), -1)[:, :n_outputs]


def test_h_softmax_all_outputs_and_targets():
    batch, dim, n_classes, per_class, n_outputs = 4, 3, 3, 4, 10
    values = [RNG.normal(size=(batch, dim)), RNG.normal(size=(dim, n_classes)),
              RNG.normal(size=n_classes), RNG.normal(size=(n_classes, dim, per_class)),
              RNG.normal(size=(n_classes, per_class))]
    x, W1, b1, W2, b2 = (T.tensor("float64", (None,) * v.ndim) for v in values)
    target = T.lvector("target")
    every = h_softmax(x, batch, n_outputs, n_classes, per_class, W1, b1, W2, b2)
    picked = h_softmax(x, batch, n_outputs, n_classes, per_class, W1, b1, W2, b2, target)
    f = sympile.function([x, W1, b1, W2, b2, target], [every, picked])
    targets = np.array([0, 9, 4, 7])
    got_every, got_picked = f(*values, targets)
    expected = _h_softmax_numpy(*values, n_outputs)
    np.testing.assert_allclose(got_every, expected, rtol=1e-12)
    np.testing.assert_allclose(got_picked, expected[np.arange(batch), targets], rtol=1e-12)
    # With every output kept, each row is a distribution.
    full = sympile.function([x, W1, b1, W2, b2], h_softmax(
        x, batch, n_classes * per_class, n_classes, per_class, W1, b1, W2, b2))(*values)
    np.testing.assert_allclose(full.sum(axis=1), 1.0)
    verify_grad(lambda *v: h_softmax(v[0], batch, n_outputs, n_classes, per_class, *v[1:],
                                     target=targets), values, rng=RNG)


def test_logsoftmax_is_log_softmax():
    assert logsoftmax is log_softmax
