"""Tests of sympile.tensor.constant_value: get_scalar_constant_value finds the values the
graph alone decides and raises NotScalarConstantError for every other."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.constant_value import NotScalarConstantError, get_scalar_constant_value


def value_of(variable):
    result = get_scalar_constant_value(variable)
    assert isinstance(result, np.ndarray) and result.ndim == 0
    return result


def test_constants_and_numbers():
    assert value_of(3) == 3
    assert value_of(np.float32(2.5)).dtype == np.float32
    assert value_of(T.constant(np.full((2, 3), 4.0))) == 4.0
    assert np.isnan(value_of(T.constant([np.nan, np.nan])))
    assert value_of(np.array([[7]])) == 7


def test_through_ops_that_pass_a_value_on():
    x = T.tensor("float64", shape=(3, None), name="x")
    assert value_of(x.shape[0]) == 3
    assert value_of(T.shape_i(x, 0)) == 3
    assert value_of(T.constant(2.0).dimshuffle("x", "x")) == 2.0
    assert value_of(T.zeros((3, 4))) == 0.0
    assert value_of(T.specify_shape(T.constant([5, 5]), (2,))) == 5
    assert value_of(T.unbroadcast(T.constant([[1.0]]), 0)) == 1.0
    assert value_of(T.cast(T.constant(2.7), "int32") * 3) == 6
    result = value_of(T.exp(T.constant(0.0, dtype="float32")))
    assert result == 1.0 and result.dtype == np.float32


@pytest.mark.parametrize("make", [
    lambda x: x,
    lambda x: x.shape[1],
    lambda x: T.constant([1, 2]),
    lambda x: T.constant(np.zeros(0)),
    lambda x: T.constant([np.nan, 1.0]),
    lambda x: x.sum(),
    lambda x: sympile.shared(np.float64(1.0)),
])
def test_not_constant(make):
    x = T.tensor("float64", shape=(3, None), name="x")
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(make(x))


def test_options():
    two = T.constant(1.0) + 1.0
    assert get_scalar_constant_value(two) == 2.0
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(two, elemwise=False)
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(T.constant(2.0).dimshuffle("x"), only_process_constants=True)
    deep = T.constant(1.0)
    for _ in range(12):
        deep = deep.dimshuffle("x")
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(deep)
    assert get_scalar_constant_value(deep, max_recur=20) == 1.0
    assert T.constant(3.0).get_scalar_constant_value() == 3.0


def test_elements_of_constants_asserts_and_scalar_conversions():
    """Theano's: an element of a constant (or of a vector of scalars) at indices the graph
    decides, through Assert and the scalar/tensor conversions."""
    from sympile.tensor.basic import scalar_from_tensor, tensor_from_scalar
    from sympile.tensor.raise_op import Assert

    vector = T.constant(np.array([3, 4, 5]))
    matrix = T.constant(np.arange(6).reshape(2, 3))
    assert get_scalar_constant_value(vector[1]) == 4
    assert get_scalar_constant_value(vector[-1]) == 5
    assert get_scalar_constant_value(vector[T.constant(2)]) == 5
    assert get_scalar_constant_value(matrix[1, 2]) == 5
    two = T.constant(2)
    assert get_scalar_constant_value(Assert()(two, two > 1)) == 2
    # An assertion that fails, or that only a call decides, gives no value.
    with pytest.raises(NotScalarConstantError, match="its assertion fails"):
        get_scalar_constant_value(Assert()(two, two > 2))
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(Assert()(two, two > T.dscalar()))
    assert get_scalar_constant_value(scalar_from_tensor(T.constant(5))) == 5
    assert get_scalar_constant_value(tensor_from_scalar(scalar_from_tensor(
        T.constant(6)))) == 6
    made = T.stack([T.constant(7), T.lscalar("n")])
    assert get_scalar_constant_value(made[0]) == 7
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(made[1])
    with pytest.raises(NotScalarConstantError, match="takes a slice or an array index"):
        get_scalar_constant_value(vector[1:])
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(vector[T.lscalar("i")])
