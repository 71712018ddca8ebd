"""diff and DiffOp (numpy.diff, Theano's DiffOp): values in every dtype, every order and axis,
shapes, and the derivatives against the Jacobian (which diff, being linear, is)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import Lop, Rop, verify_grad
from sympile.tensor.extra_ops import DiffOp, RepeatOp, diff, repeat


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["float64", "float32", "int32", "uint8", "bool"]),
       st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(0, 5), st.data())
def test_values_and_shapes_are_numpys(dtype, shape, n, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    value = np.random.default_rng(0).integers(0, 9, shape).astype(dtype)
    x = T.tensor(dtype, (None,) * len(shape))
    y = diff(x, n, axis)
    got, got_shape = sympile.function([x], [y, y.shape])(value)
    want = np.diff(value, n=n, axis=axis)
    assert got.dtype == want.dtype and y.type.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert tuple(got_shape) == want.shape


def test_static_shape_and_bad_arguments():
    x = T.tensor("float64", (5, None))
    assert diff(x, 2, 0).type.shape == (3, None)
    assert diff(x, 7, 0).type.shape == (0, None)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        diff(x, 1, 2)
    with pytest.raises(ValueError, match="at least one dimension"):
        diff(T.dscalar(), 1)
    with pytest.raises(ValueError, match="n must be non-negative"):
        DiffOp(-1)


def _jacobian(length, n):
    matrix = np.eye(length)
    return np.diff(matrix, n=n, axis=0)


@pytest.mark.parametrize("n", [0, 1, 2, 4, 6])
def test_derivatives_are_the_jacobians(n):
    x, u, v = T.dvector("x"), T.dvector("u"), T.dvector("v")
    line = np.linspace(-1, 2, 5)
    jacobian = _jacobian(line.size, n)
    forward = sympile.function([x, u], Rop(diff(x, n), x, u))
    backward = sympile.function([x, v], Lop(diff(x, n), x, v))
    for basis in np.eye(line.size):
        np.testing.assert_allclose(forward(line, basis), jacobian @ basis)
    for basis in np.eye(jacobian.shape[0]):
        np.testing.assert_allclose(backward(line, basis), jacobian.T @ basis)


@pytest.mark.parametrize("n, axis", [(1, 0), (2, 1), (3, -1), (2, 0)])
def test_gradient_of_every_axis(n, axis):
    value = np.random.default_rng(1).standard_normal((4, 3, 5))
    verify_grad(DiffOp(n, axis), [value], rng=np.random.default_rng(2))


def test_repeat_op_is_theanos_name_for_repeat():
    x = T.dmatrix("x")
    assert isinstance(repeat(x, 2, 1).owner.op, RepeatOp)
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(sympile.function([x], RepeatOp(axis=1)(x, 2))(value),
                                  np.repeat(value, 2, axis=1))
