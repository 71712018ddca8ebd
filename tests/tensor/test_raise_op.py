"""Assert / assert_op (Theano's T.opt): the value passes when every condition holds, an
AssertionError with the message and the node otherwise; derivatives pass through."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import Rop, grad
from sympile.tensor.opt import Assert, assert_op


def test_the_value_passes_when_every_condition_holds():
    x = T.dvector("x")
    checked = assert_op(x, T.gt(x.shape[0], 1), T.all(T.ge(x, 0)))
    f = sympile.function([x], checked * 2)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(AssertionError, match="(?s)Theano Assert failed!.*while computing Assert"):
        f(np.array([-1.0, 2.0]))
    with pytest.raises(AssertionError):
        f(np.array([1.0]))


def test_message_types_and_derivatives():
    x = T.dvector("x")
    y = Assert("x must be short")(x, T.lt(x.shape[0], 4))
    assert y.type == x.type and y.owner.op.view_map == {0: [0]}
    with pytest.raises(AssertionError, match="x must be short"):
        sympile.function([x], y)(np.zeros(5))
    g = grad((y ** 2).sum(), x)
    u = T.dvector("u")
    f = sympile.function([x, u], [g, Rop(y ** 2, x, u)])
    gradient, tangent = f(np.array([1.0, 3.0]), np.array([1.0, 1.0]))
    np.testing.assert_array_equal(gradient, [2.0, 6.0])
    np.testing.assert_array_equal(tangent, [2.0, 6.0])
    with pytest.raises(TypeError, match="condition 0 must be a scalar"):
        assert_op(x, T.gt(x, 0))


def test_a_constant_false_condition_fails_when_called_not_when_compiled():
    x = T.dvector("x")
    f = sympile.function([x], assert_op(x, T.as_tensor_variable(np.int8(0))))
    with pytest.raises(AssertionError):
        f(np.zeros(2))
