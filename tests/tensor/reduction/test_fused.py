"""FusedCAReduce (sympile/tensor/reduction/ops.py): the reduction of an elementwise scalar op of
broadcast inputs, on the Python backend against numpy and against the two unfused nodes;
static and inferred shapes; reverse and forward derivatives checked numerically in float64;
bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.gradient import verify_grad, verify_rop
from sympile.scalar import basic as scalar
from sympile.scalar.composite import Composite
from sympile.tensor.reduction import FusedCAReduce
from tests.utils import assert_like_numpy

NO_REWRITE = Mode(rewriter=None, backend="python", name="no rewrite")


def squared_difference(dtype: str = "float64") -> Composite:
    """(i0 - i1)**2 on `dtype` scalars."""
    first, second = scalar.get_scalar_type(dtype)(), scalar.get_scalar_type(dtype)()
    return Composite([first, second], [scalar.sqr(scalar.sub(first, second))])


def evaluate(output, inputs, values):
    return sympile.function(inputs, output, mode=NO_REWRITE)(*values)


REDUCTIONS = {
    "sum": (scalar.add, np.sum),
    "prod": (scalar.mul, np.prod),
    "max": (scalar.maximum, np.max),
    "min": (scalar.minimum, np.min),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, (0,), (1,), (2,), (0, 2), (1, 2)])
def test_values_match_numpy_with_broadcasting(name, axis):
    scalar_op, numpy_function = REDUCTIONS[name]
    x = T.tensor3("x")
    column = T.tensor(dtype="float64", shape=(None, None, 1), name="column")
    op = FusedCAReduce(scalar_op, squared_difference(), axis)
    rng = np.random.default_rng(0)
    x_value = rng.uniform(0.5, 1.5, (3, 4, 5))
    column_value = rng.uniform(0.5, 1.5, (3, 4, 1))
    result = evaluate(op(x, column), [x, column], [x_value, column_value])
    expected = numpy_function((x_value - column_value) ** 2, axis=axis)
    assert_like_numpy(result, expected)


def test_dtypes_follow_the_unfused_reduction():
    x = T.vector("x", dtype="int8")
    increment = scalar.get_scalar_type("int8")()
    plus_one = Composite([increment], [scalar.add(increment, np.int8(1))])
    default = FusedCAReduce(scalar.add, plus_one)(x)
    assert default.type.dtype == "int64"
    chosen = FusedCAReduce(scalar.add, plus_one, dtype="float32", acc_dtype="float64")(x)
    assert chosen.type.dtype == "float32"
    value = np.array([1, 2, 127], dtype="int8")
    # 127 + 1 wraps in int8 before the sum, as Elemwise computes it.
    assert evaluate(default, [x], [value]) == 2 + 3 - 128
    assert evaluate(chosen, [x], [value]).dtype == np.float32


def test_single_scalar_op_and_all_any():
    x = T.matrix("x")
    value = np.array([[0.5, -2.0, 3.0], [1.0, 0.25, -0.125]])
    assert_like_numpy(evaluate(FusedCAReduce(scalar.add, scalar.exp, (1,))(x), [x], [value]),
                      np.exp(value).sum(axis=1))
    positive = scalar.get_scalar_type("float64")()
    is_positive = Composite([positive], [scalar.gt(positive, np.float64(0))])
    assert evaluate(FusedCAReduce(scalar.logical_and, is_positive, (0,))(x), [x],
                    [value]).tolist() == [True, False, False]
    assert evaluate(FusedCAReduce(scalar.logical_or, is_positive)(x), [x], [value]).item() is True


def test_static_and_inferred_shape():
    x = T.tensor(dtype="float64", shape=(2, None, 5), name="x")
    row = T.tensor(dtype="float64", shape=(1, 1, 5), name="row")
    result = FusedCAReduce(scalar.add, squared_difference(), (2,))(x, row)
    assert result.type.shape == (2, None)
    shape_function = sympile.function([x, row], result.shape)
    assert not any(isinstance(node.op, FusedCAReduce)
                   for node in shape_function.maker.fgraph.apply_nodes)
    assert tuple(shape_function(np.zeros((2, 7, 5)), np.zeros((1, 1, 5)))) == (2, 7)


def test_empty_axis():
    x = T.matrix("x")
    value = np.zeros((0, 3))
    assert_like_numpy(evaluate(FusedCAReduce(scalar.add, scalar.exp, (0,))(x), [x], [value]),
                      np.zeros(3))
    with pytest.raises(ValueError, match="Max.*axis 0.*empty"):
        evaluate(FusedCAReduce(scalar.maximum, scalar.exp, (0,))(x), [x], [value])


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, (1,)])
def test_gradient_and_tangent(name, axis):
    scalar_op = REDUCTIONS[name][0]
    op = FusedCAReduce(scalar_op, squared_difference(), axis)

    def fun(x, row):
        return op(x, row.dimshuffle("x", 0))

    rng = np.random.default_rng(1)
    # Distinct values, away from ties of max and min, and from zero for prod.
    point = [rng.uniform(1.0, 2.0, (3, 4)), rng.uniform(-1.0, 0.0, (4,))]
    verify_grad(fun, point, rng=rng)
    verify_rop(fun, point, rng=rng)


def test_gradient_of_a_discrete_result_is_zero():
    x = T.dvector("x")
    positive = scalar.get_scalar_type("float64")()
    is_positive = Composite([positive], [scalar.gt(positive, np.float64(0))])
    op = FusedCAReduce(scalar.logical_or, is_positive)
    node = op(x).owner
    (rule,) = op.L_op(node.inputs, node.outputs, [T.dscalar()])
    np.testing.assert_array_equal(sympile.function([x], rule)([1.0, -1.0]), [0.0, 0.0])


def test_equality_and_bad_arguments():
    assert FusedCAReduce(scalar.add, squared_difference(), (0,)) == \
        FusedCAReduce(scalar.add, squared_difference(), [0])
    assert FusedCAReduce(scalar.add, squared_difference()) != \
        FusedCAReduce(scalar.mul, squared_difference())
    assert hash(FusedCAReduce(scalar.add, scalar.exp)) == hash(FusedCAReduce(scalar.add,
                                                                             scalar.exp))
    with pytest.raises(TypeError, match="CAReduce: expected a commutative, associative"):
        FusedCAReduce(scalar.sub, scalar.exp)
    pair = scalar.get_scalar_type("float64")()
    two_outputs = Composite([pair], [scalar.exp(pair), scalar.log(pair)])
    with pytest.raises(TypeError, match="FusedCAReduce: pre_op must be a scalar op with one "
                                        "output"):
        FusedCAReduce(scalar.add, two_outputs)
    with pytest.raises(TypeError, match="expected 2 inputs, got 1"):
        FusedCAReduce(scalar.add, squared_difference())(T.vector("x"))
    with pytest.raises(ValueError, match="cannot reduce axis 2"):
        FusedCAReduce(scalar.add, scalar.exp, (2,))(T.matrix("x"))
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        x, y = T.vector("x"), T.vector("y")
        evaluate(FusedCAReduce(scalar.add, squared_difference())(x, y), [x, y],
                 [np.zeros(3), np.zeros(4)])
