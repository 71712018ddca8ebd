"""Shared variables: values, copies, types, set_value checks."""

import numpy as np
import pytest

import sympile.tensor as T
from sympile import function, shared
from sympile.compile.shared import SharedVariable


def test_value_is_copied_unless_borrowed():
    value = np.arange(3.0)
    s = shared(value, name="s")
    value[0] = 100.0
    assert s.get_value()[0] == 0.0
    got = s.get_value()
    got[1] = 100.0
    assert s.get_value()[1] == 1.0
    borrowed = shared(value, borrow=True)
    assert borrowed.get_value(borrow=True) is value


def test_type_follows_numpy():
    assert shared(np.zeros((2, 3), dtype="float32")).type == T.TensorType("float32", (None, None))
    assert shared(0).dtype == "int64"
    assert shared(0.5).dtype == "float64"
    assert shared([1, 2]).type == T.TensorType("int64", (None,))
    assert shared(np.zeros(3), shape=(3,)).type.shape == (3,)
    assert isinstance(shared(1.0), SharedVariable)


def test_set_value_converts_and_checks():
    s = shared(np.zeros(3, dtype="float32"))
    s.set_value([1, 2, 3, 4])
    assert s.get_value().dtype == np.float32 and s.get_value().shape == (4,)
    with pytest.raises(TypeError, match="set_value of shared variable.*without losing"):
        s.set_value(np.ones(2))
    with pytest.raises(TypeError, match="1 dimensions.*got one with 2"):
        s.set_value(np.ones((2, 2), dtype="float32"))
    np.testing.assert_array_equal(s.get_value(), [1, 2, 3, 4])
    fixed = shared(np.zeros(3), shape=(3,))
    with pytest.raises(TypeError, match="axis 0 has length 4, not 3"):
        fixed.set_value(np.zeros(4))


def test_set_value_copies_unless_borrowed():
    s = shared(np.zeros(2))
    value = np.ones(2)
    s.set_value(value)
    value[0] = 5.0
    assert s.get_value()[0] == 1.0
    s.set_value(value, borrow=True)
    assert s.get_value(borrow=True) is value


def test_bad_values():
    with pytest.raises(TypeError, match="symbolic"):
        shared(T.dvector())
    with pytest.raises(TypeError, match="not supported"):
        shared(np.array(["a"]))
    with pytest.raises(ValueError, match="does not match"):
        shared(np.zeros(3), shape=(3, 1))


def test_shared_behaves_like_a_tensor():
    w = shared(np.array([[1.0, 2.0], [3.0, 4.0]]), name="w")
    f = function([], [w.T, w * 2, -w, w[0]])
    transposed, doubled, negated, first = f()
    np.testing.assert_array_equal(transposed, [[1, 3], [2, 4]])
    np.testing.assert_array_equal(doubled, [[2, 4], [6, 8]])
    np.testing.assert_array_equal(negated, -w.get_value())
    np.testing.assert_array_equal(first, [1, 2])
