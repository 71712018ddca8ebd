"""Tests of sympile.tensor.elemwise: broadcasting (static and at run time), weak Python
scalars (numpy 2's rules), Elemwise's node contract, and DimShuffle."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sympile
import sympile.tensor as T
from sympile.scalar import basic as scalar
from sympile.scalar.basic import ALL_DTYPES
from sympile.tensor.elemwise.ops import DimShuffle, Elemwise, broadcast_static_shape, is_elemwise_of
from tests.utils import (
    ELEMWISE_CASES,
    arrays,
    assert_like_numpy,
    check_infer_shape,
    evaluate,
    shapes,
)

# -- static broadcasting ------------------------------------------------------------------------


@pytest.mark.parametrize("input_shapes, expected", [
    ([(), ()], ()),
    ([(3,), ()], (3,)),
    ([(2, 3), (3,)], (2, 3)),
    ([(2, 1, 4), (3, 1)], (2, 3, 4)),
    ([(1,), (None,)], (None,)),
    ([(1, None), (None, 1)], (None, None)),
    ([(None,), (5,)], (5,)),
    ([(1,), (1,)], (1,)),
    ([(0,), (1,)], (0,)),
    ([(None, 0), (4, 1)], (4, 0)),
    ([(None,), (None,), (1,)], (None,)),
])
def test_broadcast_static_shape(input_shapes, expected):
    assert broadcast_static_shape(input_shapes) == expected


@pytest.mark.parametrize("input_shapes, axis", [([(3,), (4,)], 0), ([(2, 3), (5, 3)], 0),
                                                ([(2, 3), (2,)], 1), ([(0,), (2,)], 0)])
def test_broadcast_static_shape_conflicts(input_shapes, axis):
    with pytest.raises(ValueError, match=rf"add: shapes .* cannot be broadcast together "
                                         rf"\(axis {axis} has lengths"):
        broadcast_static_shape(input_shapes, op="add")


@pytest.mark.parametrize("x_shape, y_shape, expected", [
    ((None, None), (None,), (None, None)),
    ((1, None), (None, 1), (None, None)),
    ((3, None), (4,), (3, 4)),
    ((2, 1, 3), (4, 1), (2, 4, 3)),
    ((), (None, 2), (None, 2)),
    ((1, 1), (1,), (1, 1)),
])
def test_output_types_have_the_broadcast_static_shape(x_shape, y_shape, expected):
    x, y = T.tensor("float32", shape=x_shape), T.tensor("int8", shape=y_shape)
    for output in (x + y, y * x, T.maximum(x, y)):
        assert output.type == T.tensor_type("float32", expected)


def test_constants_have_a_full_static_shape():
    x = T.dmatrix()
    assert (x + np.ones((1, 4))).type.shape == (None, 4)
    assert (x + [[1.0], [2.0], [3.0]]).type.shape == (3, None)


def test_incompatible_static_shapes_raise_at_build_time():
    with pytest.raises(ValueError, match=r"Elemwise\{add,no_inplace\}: shapes \(3,\), \(4,\) "
                                         r"cannot be broadcast"):
        T.tensor("float64", shape=(3,)) + T.tensor("float64", shape=(4,))
    with pytest.raises(ValueError, match=r"Elemwise\{mul,no_inplace\}: shapes .* cannot be "
                                         r"broadcast"):
        T.dmatrix() * np.ones((2, 3, 4)).reshape(2, 3, 4)[0] * np.ones(5)


def test_an_axis_of_unknown_length_is_not_broadcast_at_run_time():
    """Deliberately unlike numpy: a length-1 axis broadcasts only if its type says so."""
    x, y = T.dmatrix("x"), T.dmatrix("y")
    function = sympile.function([x, y], x + y)
    with pytest.raises(ValueError, match=r"Elemwise\{add,no_inplace\}: input shapes \(3, 4\), "
                                         r"\(1, 4\) differ at axis "
                                         r"0, where one input has length 1 at run time but "
                                         r"its type does not say the axis is broadcastable"):
        function(np.ones((3, 4)), np.ones((1, 4)))
    # Declared (a row), it broadcasts.
    row = T.drow("row")
    assert_like_numpy(evaluate(x + row, [x, row], [np.ones((3, 4)), np.ones((1, 4))]),
                      np.full((3, 4), 2.0))


def test_different_lengths_at_run_time_raise():
    x, y = T.dvector("x"), T.dvector("y")
    function = sympile.function([x, y], x * y)
    with pytest.raises(ValueError, match=r"Elemwise\{mul,no_inplace\}: input shapes \(3,\), \(2,\) "
                                         r"cannot be "
                                         r"broadcast together \(axis 0 has lengths 3 and 2\)"):
        function(np.ones(3), np.ones(2))


@st.composite
def declared_shapes(draw):
    """Two broadcastable shapes and, for each, a static shape that knows some lengths."""
    shapes_ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
    declared = [tuple(n if draw(st.booleans()) else None for n in shape)
                for shape in shapes_.input_shapes]
    return shapes_.input_shapes, declared, shapes_.result_shape


@given(declared_shapes(), st.data())
def test_broadcasting_follows_numpy_where_declared(case, data):
    (x_shape, y_shape), (x_static, y_static), result_shape = case
    x, y = T.tensor("float64", shape=x_static), T.tensor("int16", shape=y_static)
    output = x - y
    for static, actual in zip(output.type.shape, result_shape):
        assert static is None or static == actual
    values = [data.draw(arrays("float64", x_shape)), data.draw(arrays("int16", y_shape))]
    ndim = len(result_shape)
    # A length-1 axis stretched to another length must be declared.
    stretched_undeclared = any(
        shape[axis] == 1 and static[axis] is None and result_shape[ndim - len(shape) + axis] != 1
        for shape, static in ((x_shape, x_static), (y_shape, y_static))
        for axis in range(len(shape)))
    if stretched_undeclared:
        with pytest.raises(ValueError, match="broadcastable"):
            evaluate(output, [x, y], values)
    else:
        assert_like_numpy(evaluate(output, [x, y], values), values[0] - values[1])


# -- weak Python scalars ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, value, expected", [
    ("float32", 1.5, "float32"), ("float16", 1.5, "float16"), ("int8", 1, "int8"),
    ("int8", 1.5, "float64"), ("uint8", 1, "uint8"), ("bool", 1, "int64"),
    ("bool", True, "bool"), ("bool", 1.5, "float64"), ("int32", 2 ** 40, "int64"),
    ("uint64", 2 ** 63, "uint64"), ("float32", 1j, "complex64"), ("int16", 1j, "complex128"),
    ("complex64", 2.5, "complex64"), ("float32", 2 ** 70, "float32"),
    # numpy raises OverflowError for these; we widen (as Theano did)
    ("int8", 1000, "int16"), ("int8", -1000, "int16"), ("uint8", -1, "int16"),
    ("uint8", 1000, "uint16"), ("int8", 200, "int16"), ("uint16", -1, "int32"),
    ("uint32", -1, "int64"),
])
def test_weak_python_scalar_dtype(dtype, value, expected):
    x = T.tensor(dtype, shape=(None,))
    assert (x + value).type.dtype == expected
    assert (value + x).type.dtype == expected


def test_widened_weak_integers_compute_exactly():
    x = T.bvector("x")
    values = np.array([-128, 0, 127], dtype="int8")
    assert_like_numpy(evaluate(x + 1000, [x], [values]),
                      values.astype("int16") + np.int16(1000))
    u = T.tensor("uint8", shape=(None,))
    assert_like_numpy(evaluate(u + -1, [u], [np.array([0, 255], "uint8")]),
                      np.array([-1, 254], dtype="int16"))


@pytest.mark.parametrize("dtype, value", [("int64", 2 ** 63), ("uint64", -1), ("int8", 2 ** 70),
                                          ("bool", -(2 ** 64))])
def test_weak_integer_that_no_integer_dtype_holds_raises(dtype, value):
    x = T.tensor(dtype, shape=(None,))
    with pytest.raises(OverflowError, match=rf"Elemwise\{{add,no_inplace\}}: the Python integer "
                                            rf"{value} is out of the range of"):
        x + value


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "uint64", "float16"])
@pytest.mark.parametrize("value", [1000, -1000, 2 ** 63, -(2 ** 63) - 1, 2 ** 64, 2 ** 70,
                                   -(2 ** 70)])
def test_comparisons_with_big_python_ints_are_exact(dtype, value):
    x = T.tensor(dtype, shape=(None,))
    if dtype == "bool":
        data = np.array([False, True])
    elif dtype == "float16":
        data = np.array([-np.inf, 0.0, 6e4, np.nan], dtype="float16")
    else:
        info = np.iinfo(dtype)
        data = np.array([info.min, 0, info.max], dtype=dtype)
    for name, compare in (("eq", operator.eq), ("neq", operator.ne), ("lt", operator.lt),
                          ("gt", operator.gt), ("le", operator.le), ("ge", operator.ge)):
        function = getattr(T, name)
        reference = ELEMWISE_CASES[name].reference
        for output, arguments in ((function(x, value), (data, value)),
                                  (function(value, x), (value, data))):
            try:
                # numpy converts the int to a float tensor's dtype (-2**63 - 1 is -inf as a
                # float16) and compares it exactly with an integer tensor,
                expected = _numpy(reference, *arguments)
            except OverflowError:
                # except a bool tensor's, which then compares as Python does: exactly.
                expected = np.array([compare(*(v if a is data else a for a in arguments))
                                     for v in data.tolist()])
            assert output.type.dtype == "bool"
            assert_like_numpy(evaluate(output, [x], [data]), expected)


WEAK_OPS = ["add", "sub", "mul", "true_div", "int_div", "mod", "pow", "maximum", "minimum",
            "eq", "neq", "lt", "gt", "le", "ge", "logaddexp", "arctan2", "hypot",
            "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
            "logical_and", "logical_or"]
PYTHON_SCALARS = st.one_of(st.booleans(), st.integers(-300, 300),
                           st.integers(-(2 ** 70), 2 ** 70), st.sampled_from([2 ** 63, -1, 0]),
                           st.floats(allow_nan=True, allow_infinity=True),
                           st.complex_numbers(max_magnitude=1e3))


PYTHON_COMPARISONS = {np.equal: operator.eq, np.not_equal: operator.ne, np.less: operator.lt,
                      np.greater: operator.gt, np.less_equal: operator.le,
                      np.greater_equal: operator.ge}


def _numpy(reference, *arguments) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(reference(*arguments))


def _expected(reference, x_values: np.ndarray, value, scalar_first: bool):
    """numpy's result; where numpy raises OverflowError, our rule: the value taken as the
    smallest integer dtype holding it (signed if the tensor is, or if the value is negative),
    or OverflowError (the class) if no such dtype promotes with the tensor to an integer."""
    def ordered(operand):
        return (operand, x_values) if scalar_first else (x_values, operand)
    try:
        return _numpy(reference, *ordered(value))
    except OverflowError:
        if reference in (np.logical_and, np.logical_or, np.logical_xor):
            # Only the truth value of the operand matters (numpy overflows converting it).
            return _numpy(reference, *ordered(bool(value)))
        if reference in PYTHON_COMPARISONS:
            # A comparison is exact (numpy overflows only for bool tensors).
            compare = PYTHON_COMPARISONS[reference]
            return np.array([compare(*((value, v) if scalar_first else (v, value)))
                             for v in x_values.tolist()])
        signed = x_values.dtype.kind in "bi" or value < 0
        for name in (("int8", "int16", "int32", "int64") if signed
                     else ("uint8", "uint16", "uint32", "uint64")):
            info = np.iinfo(name)
            if info.min <= value <= info.max:
                if np.result_type(x_values.dtype, name).kind not in "iu":
                    return OverflowError
                return _numpy(reference, *ordered(np.array(value, dtype=name)))
        return OverflowError


@given(name=st.sampled_from(WEAK_OPS), dtype=st.sampled_from(ALL_DTYPES),
       value=PYTHON_SCALARS, scalar_first=st.booleans(), data=st.data())
def test_python_scalars_follow_numpy(name, dtype, value, scalar_first, data):
    """An op on a tensor and a Python scalar (either side) gives numpy's dtype and values;
    where numpy raises OverflowError, our widening (or OverflowError if nothing fits)."""
    reference = ELEMWISE_CASES[name].reference
    function = getattr(T, name)
    x = T.tensor(dtype, shape=(None,))
    x_values = data.draw(arrays(dtype, (3,)))
    arguments = (value, x) if scalar_first else (x, value)
    try:
        expected = _expected(reference, x_values, value, scalar_first)
    except TypeError:
        with pytest.raises(TypeError, match=rf"{name} is not defined"):
            function(*arguments)
        return
    except ValueError:
        # Integers to negative integer powers: numpy raises, so do we (at run time).
        with pytest.raises(ValueError, match="negative integer powers"):
            evaluate(function(*arguments), [x], [x_values])
        return
    if expected is OverflowError:
        with pytest.raises(OverflowError,
                           match=rf"Elemwise\{{{name},no_inplace\}}: the Python integer"):
            function(*arguments)
        return
    output = function(*arguments)
    assert output.type.dtype == expected.dtype.name
    assert_like_numpy(evaluate(output, [x], [x_values]), expected)


@pytest.mark.parametrize("value, expected", [
    (np.float64(1.0), "float64"), (np.float16(1.0), "float32"), (np.int8(1), "float32"),
    (np.array(1.5), "float64"), (np.int64(1), "float64"), (np.complex64(1), "complex64"),
])
def test_numpy_scalars_and_0d_arrays_are_strong(value, expected):
    x = T.fvector()
    numpy_dtype = np.result_type(np.zeros(1, "float32"), value).name
    assert numpy_dtype == expected
    assert (x + value).type.dtype == expected
    assert (value + x).type.dtype == expected
    assert T.add(value, x).type.dtype == expected


def test_python_scalars_alone():
    """Without a tensor operand, the Python scalar of the highest kind takes its default dtype
    (floatX for a float) and the others are weak to it."""
    assert T.add(1, 2).type == T.tensor_type("int64", ())
    assert T.add(1, 2.5).type.dtype == "float64"
    assert T.lt(1, 2.5).type.dtype == "bool"
    assert T.mul(True, 3).type.dtype == "int64"
    assert T.add(1.5, 1j).type.dtype == "complex128"
    with sympile.config.change_flags(floatX="float32"):
        assert T.add(1, 2.5).type.dtype == "float32"
        assert T.switch(True, 1, 2.5).type.dtype == "float32"
    assert_like_numpy(T.add(1, 2.5).eval(), np.float64(3.5))


# -- the Elemwise op ----------------------------------------------------------------------------

def test_elemwise_props_and_string():
    assert Elemwise(scalar.add) == Elemwise(scalar.add)
    assert hash(Elemwise(scalar.add)) == hash(Elemwise(scalar.add))
    assert Elemwise(scalar.add) != Elemwise(scalar.mul)
    assert Elemwise(scalar.add) != Elemwise(scalar.add, inplace_pattern=((0, 0),))
    assert str(Elemwise(scalar.exp)) == "Elemwise{exp,no_inplace}"
    assert str(Elemwise(scalar.add, ((0, 0),))) == "add_inplace"
    x = T.dvector()
    assert is_elemwise_of(T.exp(x), scalar.exp)
    assert not is_elemwise_of(T.exp(x), scalar.log)
    assert not is_elemwise_of(x, scalar.exp)


def test_elemwise_inputs_are_padded_on_the_left():
    x, y = T.dtensor3("x"), T.dvector("y")
    node = (x + y).owner
    assert [v.type.ndim for v in node.inputs] == [3, 3]
    assert isinstance(node.inputs[1].owner.op, DimShuffle)
    assert node.inputs[1].type.shape == (1, 1, None)


def test_inplace_elemwise_writes_its_input():
    op = Elemwise(scalar.add, inplace_pattern=((0, 0),))
    assert op.destroy_map == {0: [0]}
    x, y = T.dvector("x"), T.dvector("y")
    node = op.make_node(x, y)
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    storage = [[None]]
    op.perform(node, [a, b], storage)
    assert storage[0][0] is a
    assert_like_numpy(a, np.array([11.0, 22.0]))


def test_inplace_elemwise_needs_a_matching_input():
    op = Elemwise(scalar.add, inplace_pattern=((0, 0),))
    with pytest.raises(TypeError, match=r"add_inplace: output 0 cannot be written over input 0"):
        op.make_node(T.bvector(), T.dvector())
    with pytest.raises(TypeError, match=r"output 0 cannot be written over input 0"):
        op.make_node(T.drow(), T.dmatrix())


@pytest.mark.parametrize("name", ["real", "identity", "conj", "imag"])
def test_outputs_never_alias_inputs(name):
    """np.real of a float array is that array; Elemwise copies so its output is not a view."""
    x = T.dvector()
    node = getattr(T, name)(x).owner
    value = np.array([1.0, 2.0])
    storage = [[None]]
    node.op.perform(node, [value], storage)
    assert not np.shares_memory(storage[0][0], value)
    assert node.op.view_map == {}


@pytest.mark.parametrize("x_type, y_type, x_shape, y_shape", [
    (T.dmatrix, T.drow, (3, 4), (1, 4)),
    (T.dtensor3, T.dscalar, (2, 0, 3), ()),
    (T.dcol, T.dvector, (5, 1), (2,)),
    (T.dvector, T.dvector, (4,), (4,)),
])
def test_elemwise_infer_shape(x_type, y_type, x_shape, y_shape):
    x, y = x_type("x"), y_type("y")
    values = [np.ones(x_shape), np.ones(y_shape)]
    check_infer_shape([x + y, T.switch(x > 0, x, y)], [x, y], values)


def test_infer_shape_uses_static_lengths():
    x = T.tensor("float64", shape=(None, 3))
    y = T.tensor("float64", shape=(2, None))
    node = (x * y).owner
    assert node.op.infer_shape(None, node, [("a", "b"), ("c", "d")]) == [(2, 3)]


# -- DimShuffle ---------------------------------------------------------------------------------

@pytest.mark.parametrize("static_shape, pattern, value_shape, reference", [
    ((None, None), (1, 0), (2, 3), lambda a: a.T),
    ((None,), ("x", 0), (4,), lambda a: a[None, :]),
    ((None,), (0, "x"), (4,), lambda a: a[:, None]),
    ((None, 1), (0,), (3, 1), lambda a: a[:, 0]),
    ((1, None, None), (2, "x", 1), (1, 2, 3), lambda a: a[0].T[:, None, :]),
    ((), ("x", "x"), (), lambda a: a.reshape(1, 1)),
    ((1,), (), (1,), lambda a: a.reshape(())),
    ((None, None, None), (0, 2, 1), (2, 0, 3), lambda a: a.transpose(0, 2, 1)),
])
def test_dimshuffle_values_views_and_static_shapes(static_shape, pattern, value_shape,
                                                   reference):
    x = T.tensor("int16", shape=static_shape)
    output = x.dimshuffle(*pattern)
    assert output.type.dtype == "int16"
    expected_static = tuple(1 if a == "x" else static_shape[a] for a in pattern)
    assert output.type.shape == expected_static
    value = np.arange(int(np.prod(value_shape)), dtype="int16").reshape(value_shape)
    assert_like_numpy(evaluate(output, [x], [value]), reference(value))
    assert output.owner.op.view_map == {0: [0]}
    storage = [[None]]
    output.owner.op.perform(output.owner, [value], storage)
    assert storage[0][0].base is value or np.shares_memory(storage[0][0], value) \
        or value.size == 0
    check_infer_shape(output, [x], [value])


def test_dimshuffle_pattern_as_a_list_and_numpy_ints():
    x = T.dmatrix()
    assert x.dimshuffle([1, "x", 0]).type.shape == (None, 1, None)
    op = DimShuffle(2, (np.int64(1), np.int64(0)))
    assert op.new_order == (1, 0) and all(type(a) is int for a in op.new_order)
    assert op == DimShuffle(2, (1, 0)) and hash(op) == hash(DimShuffle(2, (1, 0)))
    assert str(op) == "DimShuffle{1,0}"


@pytest.mark.parametrize("pattern, message", [
    ((0, 2), r"DimShuffle: 2 in pattern \(0, 2\) is neither 'x' nor an axis of a 2-d input"),
    ((0, -1), r"-1 in pattern"),
    ((0, "y"), r"'y' in pattern"),
    ((0, True), r"True in pattern"),
    ((0, 1.0), r"1.0 in pattern"),
    ((0, 0), r"DimShuffle: pattern \(0, 0\) repeats an axis"),
])
def test_dimshuffle_bad_patterns(pattern, message):
    with pytest.raises(ValueError, match=message):
        T.dmatrix().dimshuffle(*pattern)


def test_dimshuffle_drops_only_broadcastable_axes():
    with pytest.raises(ValueError, match=r"DimShuffle\{0\}: cannot drop axis 1 of "
                                         r"TensorType\(float64, matrix\): only axes "
                                         r"of length 1"):
        T.dmatrix().dimshuffle(0)
    assert T.dcol().dimshuffle(0).type.shape == (None,)
    assert T.tensor("float64", shape=(5, 1)).dimshuffle(0).type.shape == (5,)


def test_dimshuffle_checks_the_input_rank():
    with pytest.raises(TypeError, match=r"DimShuffle\{1,0\}: expected a 2-d input, got "
                                        r"TensorType\(float64, vector\)"):
        DimShuffle(2, (1, 0))(T.dvector())


@given(shape=shapes(max_dims=4), data=st.data())
def test_dimshuffle_random_permutations(shape, data):
    permutation = data.draw(st.permutations(range(len(shape))))
    inserts = data.draw(st.lists(st.integers(0, len(shape)), max_size=2))
    pattern: list = list(permutation)
    for position in inserts:
        pattern.insert(position, "x")
    x = T.tensor("float32", shape=(None,) * len(shape))
    value = data.draw(arrays("float32", shape))
    expected = np.transpose(value, permutation).reshape(
        [1 if axis == "x" else shape[axis] for axis in pattern])
    assert_like_numpy(evaluate(x.dimshuffle(pattern), [x], [value]), expected)
