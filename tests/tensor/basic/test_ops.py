"""transpose, Alloc (zeros, ones, full, *_like, fill), Eye, ARange, Join, stack, Split and
tile against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.config import config
from sympile.gradient import DisconnectedInputError, Lop, Rop, disconnected_type, grad
from sympile.graph.gradient_types import is_disconnected
from sympile.tensor.basic import (
    Alloc,
    ARange,
    Eye,
    Join,
    Split,
    alloc,
    arange,
    concatenate,
    eye,
    fill,
    full,
    full_like,
    identity_like,
    join,
    ones,
    ones_like,
    second,
    split,
    stack,
    tile,
    transpose,
    zeros,
    zeros_like,
)
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.shape import MakeVector, shape_i, specify_shape
from tests.utils import (
    NUMERIC_DTYPES,
    GradCase,
    arrays,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
    shapes,
)

REAL_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
               "float64"]


def symbolic(value, static=False):
    """A variable for `value`: of unknown shape, or of its static shape."""
    return T.tensor(value.dtype, shape=value.shape if static else (None,) * value.ndim)


def any_array(min_dims=0, max_dims=4, min_side=0, max_side=4, dtypes=NUMERIC_DTYPES):
    return st.sampled_from(dtypes).flatmap(
        lambda dtype: arrays(dtype, shapes(min_dims, max_dims, min_side, max_side)))


# ---------------------------------------------------------------------------------------------
# transpose

@given(any_array(), st.data())
def test_transpose_like_numpy(value, data):
    axes = data.draw(st.none() | st.permutations(range(value.ndim)))
    order = list(reversed(range(value.ndim))) if axes is None else list(axes)
    if axes is not None:
        axes = [a - value.ndim if data.draw(st.booleans()) else a for a in axes]
    x = symbolic(value, static=data.draw(st.booleans()))
    output = transpose(x, axes)
    assert output.type.shape == tuple(x.type.shape[a] for a in order)
    assert_like_numpy(evaluate(output, [x], [value]), np.transpose(value, axes))
    check_infer_shape(output, [x], [value])


def test_transpose_method_name_and_view():
    x = T.tensor("int32", shape=(2, None, 4), name="x")
    assert x.T.type.shape == (4, None, 2)
    assert x.T.name == "x.T"
    assert x.transpose(1, 0, 2).type.shape == (None, 2, 4)
    assert x.transpose((2, 0, 1)).type.shape == (4, 2, None)
    assert isinstance(x.T.owner.op, DimShuffle) and x.T.owner.op.view_map == {0: [0]}
    value = np.arange(24, dtype="int32").reshape(2, 3, 4)
    assert_like_numpy(evaluate(x.T, [x], [value]), value.T)


def test_transpose_bad_axes():
    with pytest.raises(ValueError, match=r"transpose: axes \(0, 0\) are not a permutation"):
        transpose(T.matrix(), (0, 0))
    with pytest.raises(ValueError, match="transpose: axes .* are not a permutation"):
        transpose(T.matrix(), (0,))
    with pytest.raises(ValueError, match="transpose: axis 2 is out of bounds"):
        transpose(T.matrix(), (0, 2))
    with pytest.raises(TypeError, match="transpose: axes must be a list or tuple"):
        transpose(T.matrix(), 1)


# ---------------------------------------------------------------------------------------------
# Alloc

@st.composite
def broadcasts(draw):
    """(value, target shape, static shape of the value's type) with value broadcastable."""
    target = draw(shapes(max_dims=4))
    ndim = draw(st.integers(0, len(target)))
    tail = target[len(target) - ndim:]
    value_shape = tuple(1 if draw(st.booleans()) else n for n in tail)
    dtype = draw(st.sampled_from(NUMERIC_DTYPES))
    value = draw(arrays(dtype, value_shape))
    static = tuple(1 if n == 1 else None for n in value_shape)
    return value, target, static


@given(broadcasts(), st.booleans())
def test_alloc_like_numpy(case, symbolic_lengths):
    value, target, static = case
    v = T.tensor(value.dtype, shape=static)
    lengths = [T.lscalar() for _ in target] if symbolic_lengths else list(target)
    output = alloc(v, *lengths)
    assert output.type.dtype == value.dtype.name
    if not symbolic_lengths:
        assert output.type.shape == target
    inputs = [v] + (lengths if symbolic_lengths else [])
    values = [value] + (list(target) if symbolic_lengths else [])
    result = evaluate(output, inputs, values)
    assert_like_numpy(result, np.broadcast_to(value, target))
    assert result.flags.writeable and not np.shares_memory(result, value)
    check_infer_shape(output, inputs, values)


def test_alloc_static_shapes():
    n = T.lscalar()
    assert alloc(T.tensor("float32", shape=(None, 3)), n, 5, 3).type.shape == (None, 5, 3)
    assert alloc(T.tensor("float32", shape=(4, 1)), 2, n, n).type.shape == (2, 4, None)
    assert alloc(0.0, 2, 3).type == T.tensor_type(config.floatX, (2, 3))
    assert alloc(np.int8(1)).type == T.tensor_type("int8", ())
    x = T.tensor("float64", shape=(None, 3))
    check_infer_shape(alloc(x, n, 4, 3), [x, n], [np.ones((4, 3)), 2])


def test_alloc_run_time_broadcast_rules():
    v, n = T.dvector(), T.lscalar()
    function = sympile.function([v, n], alloc(v, 2, n))
    assert_like_numpy(function(np.arange(3.0), 3), np.tile(np.arange(3.0), (2, 1)))
    # An axis of unknown length is not broadcast, as in Elemwise.
    with pytest.raises(ValueError, match="has length 1 at run time but its type does not say"):
        function(np.ones(1), 3)
    with pytest.raises(ValueError, match=r"shape \(2,\) cannot be broadcast to shape \(2, 3\)"):
        function(np.ones(2), 3)
    with pytest.raises(ValueError, match="negative length in shape"):
        function(np.ones(1), -1)


def test_alloc_bad_input():
    with pytest.raises(ValueError, match="Alloc: the value .* has 2 dimensions, more than"):
        alloc(T.matrix(), 3)
    with pytest.raises(ValueError, match="cannot be broadcast to length 4 at axis 1"):
        alloc(T.tensor("float64", shape=(3,)), 2, 4)
    with pytest.raises(ValueError, match="Alloc: negative length -2 at shape entry 0"):
        alloc(1.0, -2)
    with pytest.raises(TypeError, match="Alloc: shape entry 0 must be an integer scalar"):
        alloc(1.0, T.dscalar())
    with pytest.raises(TypeError, match="Alloc: shape entry 1 must be an int"):
        alloc(1.0, 2, 2.5)


# ---------------------------------------------------------------------------------------------
# zeros, ones, full, the *_like functions, fill

@pytest.mark.parametrize("dtype", [None, "int8", "uint16", "float32", "complex64", "bool"])
def test_zeros_ones_like_numpy(dtype):
    expected_dtype = config.floatX if dtype is None else dtype
    for function, numpy_function in ((zeros, np.zeros), (ones, np.ones)):
        for shape in (3, (2, 3), [], (0, 4)):
            output = function(shape, dtype=dtype)
            expected = numpy_function(shape, dtype=expected_dtype)
            assert output.type == T.tensor_type(expected_dtype, expected.shape)
            assert_like_numpy(evaluate(output), expected)


def test_zeros_symbolic_shapes():
    x, n = T.tensor3(), T.lscalar()
    value = np.ones((2, 0, 3))
    output = zeros(x.shape, dtype="int32")
    assert output.type == T.tensor_type("int32", (None, None, None))
    assert_like_numpy(evaluate(output, [x], [value]), np.zeros((2, 0, 3), dtype="int32"))
    output = ones((n, 2))
    assert output.type.shape == (None, 2)
    assert_like_numpy(evaluate(output, [n], [3]), np.ones((3, 2)))
    assert_like_numpy(evaluate(ones(n), [n], [2]), np.ones(2))
    assert zeros(T.tensor("float64", shape=(4, None)).shape).type.shape == (4, None)
    check_infer_shape(output, [n], [3])


def test_floatx_default():
    with config.change_flags(floatX="float32"):
        assert zeros(2).type.dtype == "float32"
        assert ones((2, 2)).type.dtype == "float32"
        assert eye(2).type.dtype == "float32"
        assert full(2, 1.5).type.dtype == "float32"


@pytest.mark.parametrize("fill_value, dtype", [(7, None), (2.5, None), (True, None),
                                               (1 + 2j, None), (2.7, "int16"),
                                               (np.float32(1.5), None), ([1, 2, 3], None),
                                               ([1.5, 2.5, 3.5], "float32")])
def test_full_like_numpy(fill_value, dtype):
    output = full((2, 3), fill_value, dtype=dtype)
    expected = np.full((2, 3), fill_value, dtype=dtype)
    assert output.type == T.tensor_type(expected.dtype, (2, 3))
    assert_like_numpy(evaluate(output), expected)


def test_full_symbolic_value():
    v = T.fvector()
    output = full((2, 3), v)
    assert output.type == T.tensor_type("float32", (2, 3))
    assert_like_numpy(evaluate(output, [v], [np.arange(3, dtype="float32")]),
                      np.full((2, 3), np.arange(3, dtype="float32")))
    assert full((2,), v[0], dtype="float64").type.dtype == "float64"


@given(any_array(dtypes=REAL_DTYPES), st.sampled_from([None, "int8", "float32"]))
def test_like_functions_like_numpy(value, dtype):
    x = symbolic(value)
    outputs = [zeros_like(x, dtype), ones_like(x, dtype), full_like(x, 3, dtype),
               full_like(x, 1.75, dtype)]
    expected = [np.zeros_like(value, dtype=dtype), np.ones_like(value, dtype=dtype),
                np.full_like(value, 3, dtype=dtype), np.full_like(value, 1.75, dtype=dtype)]
    for output, result, wanted in zip(outputs, evaluate(outputs, [x], [value]), expected):
        assert output.type == T.tensor_type(wanted.dtype, (None,) * value.ndim)
        assert_like_numpy(result, wanted)
    check_infer_shape(outputs[0], [x], [value])


def test_like_functions_static_shape():
    x = T.tensor("int16", shape=(2, None))
    assert zeros_like(x).type == T.tensor_type("int16", (2, None))
    assert ones_like(x, "float32").type == T.tensor_type("float32", (2, None))
    assert full_like(x, T.fscalar()).type == T.tensor_type("int16", (2, None))


def test_second_fill():
    a = T.tensor("float32", shape=(None, 3))
    value = np.ones((2, 3), dtype="float32")
    assert fill is second
    for b, expected_dtype in ((0, "float32"), (1.5, "float32"), (True, "float32"),
                              (T.lscalar(), "int64"), (T.tensor("int8", shape=(3,)), "int8"),
                              (T.tensor("float64", shape=(1, 3)), "float64")):
        output = second(a, b)
        assert output.type == T.tensor_type(expected_dtype, (None, 3))
    b = T.tensor("int8", shape=(3,))
    result = evaluate(fill(a, b), [a, b], [value, np.array([1, 2, 3], dtype="int8")])
    assert_like_numpy(result, np.tile(np.array([1, 2, 3], dtype="int8"), (2, 1)))
    i = T.bmatrix()
    assert fill(i, 1000).type.dtype == "int64"  # does not fit int8: its own dtype
    assert fill(i, 2).type.dtype == "int8"
    check_infer_shape(fill(a, b), [a, b], [value, np.ones(3, dtype="int8")])


def test_second_bad_input():
    with pytest.raises(ValueError, match="second: b .* has more dimensions than a"):
        second(T.vector(), T.matrix())
    with pytest.raises(ValueError, match="cannot be broadcast to length 3"):
        second(T.tensor("float64", shape=(2, 3)), T.tensor("float64", shape=(4,)))


def test_fill_value_bad_input():
    with pytest.raises(ValueError, match="zeros: negative length -1 at shape entry 1"):
        zeros((2, -1))
    with pytest.raises(TypeError, match="full: the fill value must be numbers"):
        full(2, "a")
    with pytest.raises(TypeError, match="zeros: shape entry 0 must be an int"):
        zeros((2.0,))
    with pytest.raises(TypeError, match="zeros: the length of the shape vector .* is not known"):
        zeros(T.lvector())


# ---------------------------------------------------------------------------------------------
# Eye, identity_like

@given(st.integers(0, 5), st.none() | st.integers(0, 5), st.integers(-6, 6),
       st.sampled_from(["int8", "float32", "float64", "bool", "complex64"]))
def test_eye_like_numpy(n, m, k, dtype):
    output = eye(n, m, k, dtype)
    expected = np.eye(n, m, k, dtype=dtype)
    assert output.type == T.tensor_type(dtype, expected.shape)
    assert_like_numpy(evaluate(output), expected)
    sn, sm, sk = T.lscalar(), T.iscalar(), T.bscalar()
    output = eye(sn, sm, sk, dtype)
    assert output.type == T.tensor_type(dtype, (None, None))
    values = [n, n if m is None else m, k]
    assert_like_numpy(evaluate(output, [sn, sm, sk], values), expected)
    check_infer_shape(output, [sn, sm, sk], values)


def test_eye_defaults_and_errors():
    assert eye(3).type == T.tensor_type(config.floatX, (3, 3))
    n = T.lscalar()
    assert_like_numpy(evaluate(eye(n), [n], [2]), np.eye(2))
    assert Eye("int8") == Eye("int8") and Eye("int8") != Eye("int16")
    with pytest.raises(ValueError, match="Eye.*negative length -1"):
        eye(-1)
    with pytest.raises(TypeError, match="Eye.*shape entry k must be an int"):
        eye(2, 2, 0.5)
    with pytest.raises(ValueError, match=r"negative shape \(-2, -2\)"):
        evaluate(eye(n), [n], [-2])


def test_identity_like():
    x = T.tensor("int32", shape=(None, 4))
    output = identity_like(x)
    assert output.type == T.tensor_type("int32", (None, 4))
    value = np.zeros((3, 4), dtype="int32")
    assert_like_numpy(evaluate(output, [x], [value]), np.eye(3, 4, dtype="int32"))
    assert identity_like(x, "float32").type.dtype == "float32"
    with pytest.raises(TypeError, match="identity_like: expected a matrix"):
        identity_like(T.vector())
    # numpy's identity(n) is not defined here: T.identity stays the elementwise copy.
    assert T.identity(x).type == x.type


# ---------------------------------------------------------------------------------------------
# ARange

@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-7, 7).filter(bool))
def test_arange_integers_like_numpy(start, stop, step):
    expected = np.arange(start, stop, step)
    output = arange(start, stop, step)
    assert output.type == T.tensor_type("int64", expected.shape)
    assert_like_numpy(evaluate(output), expected)
    bounds = [T.lscalar(), T.iscalar(), T.bscalar()]
    output = arange(*bounds)
    assert output.type == T.tensor_type("int64", (None,))
    assert_like_numpy(evaluate(output, bounds, [start, stop, step]), expected)
    check_infer_shape(output, bounds, [start, stop, step])


@given(st.floats(-10, 10), st.floats(-10, 10),
       st.floats(-3, 3).filter(lambda step: abs(step) > 0.05))
def test_arange_floats_like_numpy(start, stop, step):
    expected = np.arange(start, stop, step)
    output = arange(start, stop, step)
    assert output.type == T.tensor_type("float64", expected.shape)
    assert_like_numpy(evaluate(output), expected)
    bounds = [T.dscalar(), T.dscalar(), T.dscalar()]
    output = arange(*bounds)
    assert_like_numpy(evaluate(output, bounds, [start, stop, step]), expected)
    check_infer_shape(output, bounds, [start, stop, step])


def test_arange_dtypes():
    assert arange(5).type == T.tensor_type("int64", (5,))
    assert arange(0.0, 1.0, 0.1).type == T.tensor_type("float64", (10,))
    assert arange(T.bscalar()).type.dtype == "int64"
    assert arange(T.fscalar()).type.dtype == "float64"
    assert arange(0, 2.5).type.dtype == "float64"
    assert arange(True).type == T.tensor_type("int64", (1,))
    assert_like_numpy(evaluate(arange(True, 5)), np.arange(True, 5))
    flag = T.tensor("bool", shape=())
    assert_like_numpy(evaluate(arange(flag, 3, flag), [flag], [np.True_]), np.arange(1, 3, 1))
    # numpy promotes uint64 with int64 to float64.
    assert arange(T.tensor("uint64", shape=()), 3).type.dtype == "float64"
    assert arange(5, dtype="float32").type.dtype == "float32"
    assert_like_numpy(evaluate(arange(0.5, 3.7, 1.0, dtype="int16")),
                      np.arange(0.5, 3.7, 1.0, dtype="int16"))
    with config.change_flags(floatX="float32"):
        assert arange(0.0, 1.0, 0.1).type.dtype == "float32"
        assert arange(T.fscalar()).type.dtype == "float32"
        assert arange(T.dscalar()).type.dtype == "float64"
        assert arange(3).type.dtype == "int64"
    assert ARange("int64") == ARange("int64") and ARange("int64") != ARange("int32")


def test_arange_bad_input():
    with pytest.raises(ValueError, match="ARange.*step must not be zero"):
        arange(0, 5, 0)
    step = T.lscalar()
    with pytest.raises(ValueError, match="step must not be zero"):
        evaluate(arange(0, 5, step), [step], [0])
    with pytest.raises(TypeError, match="arange: stop must be a real scalar"):
        arange(T.vector())
    with pytest.raises(TypeError, match="arange: start must be a real scalar"):
        arange(1j, 5)
    with pytest.raises(ValueError, match="the bounds must be finite"):
        arange(0, np.inf)


# ---------------------------------------------------------------------------------------------
# Join, concatenate, stack

@st.composite
def joinable(draw):
    """(arrays of one ndim and equal lengths off `axis`, axis)."""
    base = list(draw(shapes(min_dims=1, max_dims=3)))
    axis = draw(st.integers(-len(base), len(base) - 1))
    count = draw(st.integers(1, 3))
    values = []
    for _ in range(count):
        shape = list(base)
        shape[axis] = draw(st.integers(0, 3))
        values.append(draw(arrays(draw(st.sampled_from(NUMERIC_DTYPES)), tuple(shape))))
    return values, axis


@given(joinable(), st.booleans())
def test_join_like_numpy(case, symbolic_axis):
    values, axis = case
    variables = [symbolic(v, static=True) for v in values]
    expected = np.concatenate(values, axis=axis)
    axis_variable = T.bscalar() if symbolic_axis else axis
    output = join(axis_variable, *variables)
    assert output.type.dtype == expected.dtype.name
    if not symbolic_axis:
        assert output.type.shape == expected.shape
        assert_like_numpy(evaluate(concatenate(variables, axis), variables, values), expected)
    inputs = variables + ([axis_variable] if symbolic_axis else [])
    inputs_values = values + ([axis] if symbolic_axis else [])
    assert_like_numpy(evaluate(output, inputs, inputs_values), expected)
    unknown = [symbolic(v) for v in values]
    check_infer_shape(join(axis_variable, *unknown), unknown + inputs[len(values):],
                      inputs_values)


def test_join_static_shapes():
    a = T.tensor("float32", shape=(2, None))
    b = T.tensor("int16", shape=(None, 3))
    assert join(0, a, b).type == T.tensor_type("float32", (None, 3))
    assert join(1, a, b).type == T.tensor_type("float32", (2, None))
    assert join(-1, a, T.tensor("float64", shape=(2, 4))).type.shape == (2, None)
    assert join(T.lscalar(), a, b).type.shape == (None, None)
    assert join(T.lscalar(), a).type.shape == (2, None)
    assert concatenate([T.ones((2, 3)), T.zeros((1, 3))]).type.shape == (3, 3)


def test_concatenate_axis_none():
    a, b = T.dmatrix(), T.dvector()
    values = [np.arange(6.0).reshape(2, 3), np.arange(2.0)]
    assert_like_numpy(evaluate(concatenate([a, b], axis=None), [a, b], values),
                      np.concatenate(values, axis=None))


def test_join_bad_input():
    with pytest.raises(ValueError, match="same number of dimensions"):
        join(0, T.matrix(), T.vector())
    with pytest.raises(ValueError, match="same number of dimensions .at least 1."):
        join(0, T.dscalar(), T.dscalar())
    with pytest.raises(ValueError, match="Join: axis 2 is out of bounds for 2 dimensions"):
        join(2, T.matrix(), T.matrix())
    with pytest.raises(ValueError, match="axis 1 has lengths \\[3, 4\\]"):
        join(0, T.tensor("float64", shape=(None, 3)), T.tensor("float64", shape=(None, 4)))
    with pytest.raises(TypeError, match="Join: the axis must be an integer scalar"):
        join(0.0, T.matrix())
    with pytest.raises(ValueError, match="need at least one tensor"):
        join(0)
    with pytest.raises(TypeError, match="concatenate: expected a list or tuple"):
        concatenate(T.matrix())


def test_join_run_time_errors():
    a, b, axis = T.dmatrix(), T.dmatrix(), T.lscalar()
    function = sympile.function([a, b, axis], join(axis, a, b))
    assert_like_numpy(function(np.ones((2, 3)), np.ones((2, 1)), -1), np.ones((2, 4)))
    with pytest.raises(ValueError, match="Join: axis 2 is out of bounds for 2 dimensions"):
        function(np.ones((2, 3)), np.ones((2, 3)), 2)
    with pytest.raises(ValueError, match=r"cannot join arrays of shapes \(2, 3\), \(2, 1\) "
                                         r"along axis 0"):
        function(np.ones((2, 3)), np.ones((2, 1)), 0)


@given(any_array(max_dims=3, dtypes=REAL_DTYPES), st.integers(1, 3), st.data())
def test_stack_like_numpy(value, count, data):
    axis = data.draw(st.integers(-value.ndim - 1, value.ndim))
    variables = [symbolic(value) for _ in range(count)]
    values = [value.copy() for _ in range(count)]
    expected = np.stack(values, axis=axis)
    output = stack(variables, axis=axis)
    assert output.type.dtype == expected.dtype.name
    assert output.type.ndim == expected.ndim
    assert_like_numpy(evaluate(output, variables, values), expected)
    check_infer_shape(output, variables, values)


def test_stack_scalars_and_python_values():
    a, b = T.bscalar(), T.fscalar()
    output = stack([a, b, 3])
    assert isinstance(output.owner.op, MakeVector)
    expected = np.stack([np.int8(1), np.float32(2.5), 3])
    assert output.type == T.tensor_type(expected.dtype, (3,))
    assert_like_numpy(evaluate(output, [a, b], [np.int8(1), np.float32(2.5)]), expected)
    assert stack([a, a]).type == T.tensor_type("int8", (2,))
    # as_tensor_variable stacks lists that hold variables.
    nested = T.as_tensor_variable([[a, 2], [3, 4]])
    assert nested.type == T.tensor_type("int64", (2, 2))
    assert_like_numpy(evaluate(nested, [a], [np.int8(5)]), np.array([[5, 2], [3, 4]]))
    v = T.tensor("float64", shape=(3,))
    assert stack([v, np.zeros(3)], axis=1).type.shape == (3, 2)


def test_stack_bad_input():
    with pytest.raises(ValueError, match="stack: need at least one tensor"):
        stack([])
    with pytest.raises(ValueError, match="stack: all tensors must have the same shape"):
        stack([T.vector(), T.matrix()])
    with pytest.raises(ValueError, match="stack: axis 2 is out of bounds for 2 dimensions"):
        stack([T.vector()], axis=2)
    with pytest.raises(TypeError, match="stack: expected a list or tuple"):
        stack({"not": "tensors"})
    # Theano's varargs form: one variable alone is a stack of one.
    assert stack(T.vector()).type.ndim == 2


# ---------------------------------------------------------------------------------------------
# Split

@st.composite
def splittable(draw):
    value = draw(any_array(min_dims=1, max_dims=3, max_side=6))
    axis = draw(st.integers(-value.ndim, value.ndim - 1))
    remaining = value.shape[axis]
    sizes = []
    for _ in range(draw(st.integers(0, 3))):
        size = draw(st.integers(0, remaining))
        sizes.append(size)
        remaining -= size
    sizes.append(remaining)
    return value, sizes, axis


@given(splittable(), st.sampled_from(["constant", "symbolic", "symbolic axis"]))
def test_split_like_numpy(case, kind):
    value, sizes, axis = case
    x = symbolic(value, static=True)
    expected = np.split(value, np.cumsum(sizes[:-1]).astype(int), axis=axis)
    inputs, values = [x], [value]
    if kind == "constant":
        pieces = split(x, sizes, len(sizes), axis)
        for piece, wanted in zip(pieces, expected):
            assert piece.type.shape == wanted.shape
    elif kind == "symbolic":
        lengths = [T.lscalar() for _ in sizes]
        pieces = split(x, lengths, len(sizes), axis)
        inputs, values = [x, *lengths], [value, *sizes]
    else:
        splits, axis_variable = T.lvector(), T.iscalar()
        pieces = split(x, splits, len(sizes), axis_variable)
        inputs, values = [x, splits, axis_variable], [value, np.array(sizes), axis]
    assert isinstance(pieces, list) and len(pieces) == len(sizes)
    for piece, result, wanted in zip(pieces, evaluate(pieces, inputs, values), expected):
        assert piece.type.dtype == value.dtype.name
        assert_like_numpy(result, wanted)
    check_infer_shape(pieces, inputs, values)


def test_split_views_and_props():
    op = Split(3)
    assert op.view_map == {0: [0], 1: [0], 2: [0]}
    assert Split(3) == Split(3) and Split(3) != Split(2)
    x = T.dvector()
    value = np.arange(4.0)
    (whole,) = split(x, [4], 1)
    result = evaluate(whole, [x], [value])
    result[...] = 0  # the function hands out a copy, not the input's memory
    assert value.sum() == 6


def test_split_bad_input():
    x = T.tensor("float64", shape=(None, 5))
    with pytest.raises(ValueError, match=r"split sizes \[2, 2\] add up to 4, but axis 1"):
        split(x, [2, 2], 2, axis=1)
    with pytest.raises(ValueError, match="split sizes must be >= 0"):
        split(x, [-1, 6], 2, axis=1)
    with pytest.raises(ValueError, match="splits has 3 entries, expected 2"):
        split(x, [1, 2, 2], 2, axis=1)
    with pytest.raises(ValueError, match=r"Split\{n_splits=2\}: axis 2 is out of bounds"):
        split(x, [1, 4], 2, axis=2)
    with pytest.raises(TypeError, match="cannot split a 0-d tensor"):
        split(T.dscalar(), [1], 1)
    with pytest.raises(TypeError, match="splits must be an integer vector"):
        Split(2)(x, 0, T.dvector())
    with pytest.raises(ValueError, match="n_splits must be an int >= 1"):
        Split(0)


def test_split_run_time_errors():
    x, splits = T.dvector(), T.lvector()
    function = sympile.function([x, splits], split(x, splits, 2))
    with pytest.raises(ValueError, match=r"split sizes \[1, 1\] add up to 2, but axis 0"):
        function(np.ones(3), np.array([1, 1]))
    with pytest.raises(ValueError, match="splits has 3 entries, expected 2"):
        function(np.ones(3), np.array([1, 1, 1]))
    with pytest.raises(ValueError, match="split sizes must be >= 0"):
        function(np.ones(3), np.array([-1, 4]))


# ---------------------------------------------------------------------------------------------
# tile

@given(any_array(max_dims=3, max_side=3), st.data())
def test_tile_like_numpy(value, data):
    reps = data.draw(st.lists(st.integers(0, 3), max_size=4))
    reps_argument = reps[0] if len(reps) == 1 and data.draw(st.booleans()) else tuple(reps)
    expected = np.tile(value, reps_argument)
    x = symbolic(value, static=data.draw(st.booleans()))
    output = tile(x, reps_argument)
    assert output.type.dtype == value.dtype.name
    assert output.type.ndim == expected.ndim
    if None not in x.type.shape:
        assert output.type.shape == expected.shape
    assert_like_numpy(evaluate(output, [x], [value]), expected)
    check_infer_shape(output, [x], [value])
    lengths = [T.lscalar() for _ in reps]
    output = tile(x, lengths)
    assert_like_numpy(evaluate(output, [x, *lengths], [value, *reps]), np.tile(value, reps))


def test_tile_vector_reps_and_errors():
    x, reps = T.dmatrix(), T.lvector()
    value = np.arange(6.0).reshape(2, 3)
    output = tile(x, T.specify_shape(reps, (3,)))
    assert_like_numpy(evaluate(output, [x, reps], [value, np.array([2, 1, 2])]),
                      np.tile(value, (2, 1, 2)))
    with pytest.raises(ValueError, match="tile: negative length -1"):
        tile(x, (2, -1))
    with pytest.raises(TypeError, match="tile: the length of the shape vector .* is not known"):
        tile(x, reps)
    with pytest.raises(TypeError, match="tile: shape entry 0 must be an int"):
        tile(x, (1.5,))


def test_op_equality():
    assert Alloc() == Alloc() and Join() == Join()


# ---------------------------------------------------------------------------------------------
# Gradients

# transpose, tile and stack (of non-scalars) apply DimShuffles (tensor/elemwise/ops.py): their
# cases wait for its rule.


def random_length(rng):
    return int(rng.integers(1, 4))


def normal_at(*shapes_of):
    """make_point: standard normal arrays; each entry is a fixed shape (a tuple), a number of
    dimensions (an int: random lengths), or a function of the rng returning a shape."""
    def make_point(rng):
        point = []
        for entry in shapes_of:
            if callable(entry):
                entry = entry(rng)
            elif isinstance(entry, int):
                entry = tuple(random_length(rng) for _ in range(entry))
            point.append(rng.standard_normal(entry))
        return point
    return make_point


def joinable_at(ndim, axis, count):
    """make_point: `count` arrays of one random shape of `ndim` dimensions except on `axis`,
    where each has its own random length."""
    def make_point(rng):
        base = [random_length(rng) for _ in range(ndim)]
        point = []
        for _ in range(count):
            base[axis] = random_length(rng)
            point.append(rng.standard_normal(base))
        return point
    return make_point


def grad_case(name, fun, make_point, marks=()):
    case = GradCase(name, fun, make_point)
    return pytest.param(case, marks=marks, id=name) if marks else case


def pieces_rejoined(x, sizes, axis, used=None, join_axis=None):
    """split(x, sizes, axis), the pieces at positions `used` (default: all, reversed) joined
    back (along `join_axis`, default `axis`), so that one output depends on several pieces."""
    pieces = split(x, sizes, len(sizes), axis=axis)
    chosen = [pieces[i] for i in (used if used is not None else reversed(range(len(pieces))))]
    return join(axis if join_axis is None else join_axis, *chosen)


# Points of arange(start, stop, step) away from a change of length: (stop - start) / step is
# at least 0.1 from an integer.
ARANGE_POINTS = {
    "up": lambda rng: [np.array(0.3), np.array(3.2), np.array(0.7)],
    "down": lambda rng: [np.array(2.5), np.array(-1.2), np.array(-0.9)],
    "stop only": lambda rng: [np.array(3.5)],
    "start, stop": lambda rng: [np.array(-1.3), np.array(2.2)],
}

GRAD_CASES = [
    # alloc and the functions built on it: the gradient summed over the broadcast axes.
    grad_case("alloc(0d, 2, 3)", lambda v: alloc(v, 2, 3), normal_at(())),
    grad_case("alloc(1d, 4, n)", lambda v: alloc(v, 4, shape_i(v, 0)), normal_at(1)),
    grad_case("alloc(2d, n, m) (no broadcast)",
              lambda v: alloc(v, shape_i(v, 0), shape_i(v, 1)), normal_at(2)),
    grad_case("alloc(1 x n, 2, 3, n)",
              lambda v: alloc(specify_shape(v, (1, None)), 2, 3, shape_i(v, 1)),
              normal_at(lambda rng: (1, random_length(rng)))),
    grad_case("alloc(n x 1 x m, n, 4, m)",
              lambda v: alloc(specify_shape(v, (None, 1, None)), shape_i(v, 0), 4,
                              shape_i(v, 2)),
              normal_at(lambda rng: (random_length(rng), 1, random_length(rng)))),
    grad_case("alloc(v, w.shape[0], n)", lambda v, w: alloc(v, shape_i(w, 0), shape_i(v, 0)),
              normal_at(1, 2)),
    grad_case("full((2, 3), 0d)", lambda v: full((2, 3), v), normal_at(())),
    grad_case("full(w.shape, 1d)", lambda w, v: full(w.shape, v),
              normal_at((2, 3), (3,))),
    grad_case("full_like(w, 0d)", lambda w, v: full_like(w, v), normal_at(2, ())),
    grad_case("second(2d, 1d)", second, normal_at((3, 2), (2,))),
    grad_case("second(3d, 3d)", second, normal_at((2, 1, 3), (2, 1, 3))),
    grad_case("fill(2d, 0d)", fill, normal_at(2, ())),
    # arange: element i is start + i * step.
    grad_case("arange(start, stop, step)", arange, ARANGE_POINTS["up"]),
    grad_case("arange(start, stop, negative step)", arange, ARANGE_POINTS["down"]),
    grad_case("arange(stop)", arange, ARANGE_POINTS["stop only"]),
    grad_case("arange(start, stop)", arange, ARANGE_POINTS["start, stop"]),
    # join and concatenate: each input gets its piece of the gradient.
    grad_case("join(0, a, b)", lambda a, b: join(0, a, b), joinable_at(2, 0, 2)),
    grad_case("join(1, a, b, c)", lambda a, b, c: join(1, a, b, c), joinable_at(3, 1, 3)),
    grad_case("join(-1, a, b, c)", lambda a, b, c: join(-1, a, b, c), joinable_at(2, 1, 3)),
    grad_case("join(-3, a, b)", lambda a, b: join(-3, a, b), joinable_at(3, 0, 2)),
    grad_case("join(0, a)", lambda a: join(0, a), normal_at(2)),
    grad_case("join(0, a, a)", lambda a: join(0, a, a), normal_at(2)),
    grad_case("join(0, a, constant)",
              lambda a: join(0, a, T.constant(np.ones((2, 3)))), normal_at((1, 3))),
    grad_case("join(0, a, int constant)",
              lambda a: join(0, a, T.constant(np.ones((1, 3), dtype="int8"))),
              normal_at((2, 3))),
    grad_case("join(computed axis -1, a, b)",
              lambda a, b: join(shape_i(a, 0) - shape_i(a, 0) - 1, a, b),
              joinable_at(2, 1, 2)),
    grad_case("concatenate([a, b])", lambda a, b: concatenate([a, b]), joinable_at(1, 0, 2)),
    grad_case("concatenate([a, b], axis=1)", lambda a, b: concatenate([a, b], axis=1),
              joinable_at(3, 1, 2)),
    grad_case("concatenate([a, b], axis=None)",
              lambda a, b: concatenate([a, b], axis=None), normal_at(2, 1)),
    grad_case("stack([a, b, a]) of scalars", lambda a, b: stack([a, b, a]), normal_at((), ())),
    grad_case("stack([a, b])", lambda a, b: stack([a, b]), normal_at((2, 3), (2, 3))),
    grad_case("stack([a, b], axis=-1)", lambda a, b: stack([a, b], axis=-1),
              normal_at((3,), (3,))),
    # split: the pieces' gradients joined back, zeros for unused pieces.
    grad_case("split(x, [1, 2, 1], axis=1), all pieces",
              lambda x: pieces_rejoined(x, [1, 2, 1], 1), normal_at(lambda rng: (2, 4))),
    grad_case("split(x, [2, 1], axis=0)[1]", lambda x: split(x, [2, 1], 2, axis=0)[1],
              normal_at(lambda rng: (3, random_length(rng)))),
    grad_case("split(x, [1, 2, 1], axis=-1), pieces 0 and 2",
              lambda x: pieces_rejoined(x, [1, 2, 1], -1, used=[2, 0]),
              normal_at(lambda rng: (random_length(rng), 2, 4))),
    grad_case("split(x, [2, 1, 1], axis=0), pieces 1 and 2 joined on axis 1",
              lambda x: pieces_rejoined(x, [2, 1, 1], 0, used=[1, 2], join_axis=1),
              normal_at((4, 2))),
    grad_case("split(x, [n - 1, 1]) (symbolic sizes)",
              lambda x: pieces_rejoined(x, [shape_i(x, 0) - 1, 1], 0),
              normal_at(lambda rng: (random_length(rng) + 1, 2))),
    grad_case("split(x, [1, 2], computed axis 1)[0]",
              lambda x: split(x, [1, 2], 2, axis=shape_i(x, 0) - shape_i(x, 0) + 1)[0],
              normal_at(lambda rng: (2, 3))),
    grad_case("split(x, [n], 1)", lambda x: split(x, [shape_i(x, 0)], 1)[0], normal_at(2)),
    # DimShuffles, checked once DimShuffle's rule lands.
    grad_case("transpose(3d)", transpose, normal_at(3)),
    grad_case("transpose(3d, (1, 2, 0))", lambda x: transpose(x, (1, 2, 0)), normal_at(3)),
    grad_case("tile(2d, (2, 3))", lambda x: tile(x, (2, 3)), normal_at(2)),
    grad_case("tile(1d, (2, 1, 2))", lambda x: tile(x, (2, 1, 2)), normal_at(1)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def test_alloc_gradient_sums_over_broadcast_axes():
    v = T.tensor("float64", shape=(1, None))
    output = alloc(v, 2, 3, shape_i(v, 1))
    cotangent = np.arange(24.0).reshape(2, 3, 4)
    actual = evaluate(Lop(output, v, T.constant(cotangent)), [v], [np.ones((1, 4))])
    assert_like_numpy(actual, cotangent.sum(axis=(0, 1)).reshape(1, 4))


def test_arange_gradient_values():
    start, stop, step = T.dscalar("start"), T.dscalar("stop"), T.dscalar("step")
    output = arange(start, stop, step)
    cotangent = T.dvector("u")
    gradients = Lop(output, [start, step], cotangent)
    # arange(0.5, 3.2, 0.7) has 4 elements: d/dstart = sum(u), d/dstep = sum(i * u).
    actual = evaluate(gradients, [start, stop, step, cotangent],
                      [0.5, 3.2, 0.7, np.array([1.0, 2.0, 3.0, 4.0])])
    assert [float(g) for g in actual] == [10.0, 20.0]
    tangent = Rop(output, [start, step], [T.constant(2.0), T.constant(1.0)])
    assert_like_numpy(evaluate(tangent, [start, stop, step], [0.5, 3.2, 0.7]),
                      [2.0, 3.0, 4.0, 5.0])


def test_split_gradient_of_unused_pieces_is_zero():
    x = T.dmatrix("x")
    middle = split(x, [1, 2, 1], 3, axis=1)[1]
    actual = evaluate(grad(T.sum(middle), x), [x], [np.ones((2, 4))])
    assert_like_numpy(actual, np.array([[0.0, 1.0, 1.0, 0.0]] * 2))


@pytest.mark.parametrize("build", [
    pytest.param(lambda x: zeros_like(x), id="zeros_like"),
    pytest.param(lambda x: ones_like(x), id="ones_like"),
    pytest.param(lambda x: zeros(x.shape), id="zeros"),
    pytest.param(lambda x: full_like(x, 2.0), id="full_like of a constant"),
    pytest.param(lambda x: eye(shape_i(x, 0)), id="eye"),
    pytest.param(lambda x: identity_like(x), id="identity_like"),
    pytest.param(lambda x: arange(shape_i(x, 1)), id="arange of a length"),
])
def test_values_built_from_shapes_have_no_gradient(build):
    x = T.dmatrix("x")
    with pytest.raises(DisconnectedInputError, match="does not depend on x"):
        grad(T.sum(build(x)), x)
    with pytest.raises(ValueError, match="does not depend on the wrt variables"):
        Rop(build(x), x, T.dmatrix())


@pytest.mark.parametrize("build", [
    lambda x, y: alloc(x, shape_i(y, 0), shape_i(x, 0)),
    lambda x, y: split(x, [shape_i(y, 0), 1], 2)[0],
    lambda x, y: arange(x[0], y[0], 0.5),
])
def test_shape_arguments_and_stop_are_disconnected(build):
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(DisconnectedInputError, match="does not depend on y"):
        grad(T.sum(build(x, y)), y)


def test_integer_arange_and_integer_inputs_have_no_gradient():
    x = T.dscalar("x")
    with pytest.raises(DisconnectedInputError, match="does not depend on x"):
        grad(T.sum(arange(x, 5.0, dtype="int64")), x)
    node = arange(x, 5.0, dtype="int64").owner
    assert node.op.connection_pattern(node) == [[False], [False], [False]]
    assert node.op.R_op(node.inputs, [T.dscalar(), None, None]) == [None]
    float_node = arange(x, 5.0).owner
    assert float_node.op.connection_pattern(float_node) == [[True], [False], [True]]
    gradients = float_node.op.L_op(float_node.inputs, float_node.outputs, [T.dvector()])
    # The step is the int8 constant 1.
    assert [is_disconnected(g) for g in gradients] == [False, True, True]
    a, n = T.dmatrix("a"), T.bmatrix("n")
    joined = join(0, a, n).owner
    gradients = joined.op.L_op(joined.inputs, joined.outputs, [T.dmatrix()])
    assert [is_disconnected(g) for g in gradients] == [True, False, True]


def test_connection_patterns():
    x, n = T.dmatrix(), T.lscalar()
    eye_node = eye(n).owner
    assert eye_node.op.connection_pattern(eye_node) == [[False]] * 3
    assert all(is_disconnected(g) for g in eye_node.op.L_op(eye_node.inputs, eye_node.outputs,
                                                            [T.dmatrix()]))
    assert eye_node.op.R_op(eye_node.inputs, [T.lscalar(), None, None]) == [None]
    alloc_node = alloc(x, n, 2, 3).owner
    assert alloc_node.op.connection_pattern(alloc_node) == [[True], [False], [False], [False]]
    join_node = join(n, x, x).owner
    assert join_node.op.connection_pattern(join_node) == [[False], [True], [True]]
    split_node = split(x, [1, n], 2, axis=1)[0].owner
    assert split_node.op.connection_pattern(split_node) == [[True, True], [False, False],
                                                            [False, False]]


def test_disconnected_output_gradients_give_disconnected_inputs():
    x = T.dmatrix()
    for node in [alloc(x, 3, 2, 2).owner, join(0, x, x).owner,
                 split(x, [1, 1], 2)[0].owner, arange(T.dscalar(), 3.0).owner]:
        gradients = node.op.L_op(node.inputs, node.outputs,
                                 [disconnected_type() for _ in node.outputs])
        assert all(is_disconnected(g) for g in gradients), node.op


def test_gradient_dtype_is_the_input_dtype():
    a, b = T.fmatrix("a"), T.dmatrix("b")
    gradients = grad(T.sum(join(0, a, b)), [a, b])
    assert [g.type.dtype for g in gradients] == ["float32", "float64"]
    v = T.fscalar("v")
    assert grad(T.sum(alloc(v, 2, 3)), v).type.dtype == "float32"
    start = T.fscalar("start")
    assert grad(T.sum(arange(start, 4.0)), start).type.dtype == "float32"


def assert_keeps_static_lengths(gradient, x):
    """The gradient has x's dtype and ndim and every length x's type knows."""
    assert gradient.type.dtype == x.type.dtype and gradient.type.ndim == x.type.ndim
    for known, own in zip(x.type.shape, gradient.type.shape):
        assert known is None or own == known, f"{gradient.type} loses a length of {x.type}"


@pytest.mark.parametrize("shapes_of, build", [
    ([(1, None)], lambda x: alloc(x, 4, 5)),
    ([(1, None)], lambda x: alloc(x, 3, 4, shape_i(x, 1))),
    ([(None, 1)], lambda x: second(T.dmatrix(), x)),
    ([()], lambda x: alloc(x, 2)),
    ([(1, None), (None, 3)], lambda x, y: join(0, x, y)),
    ([(1, None), (None, 3)], lambda x, y: join(T.lscalar(), x, y)),
    ([(2, None), (None, 1)], lambda x, y: join(-1, x, y)),
    ([(None, 4)], lambda x: split(x, [1, 3], 2, axis=1)[1]),
    ([(1, None)], lambda x: split(x, [1, shape_i(x, 1) - 1], 2, axis=T.lscalar())[0]),
    ([()], lambda x: arange(x, 3.0)),
])
def test_gradient_static_type_matches_the_input(shapes_of, build):
    inputs = [T.tensor("float64", shape=s) for s in shapes_of]
    output = build(*inputs)
    gradients = Lop(output, inputs, output.type(), disconnected_inputs="ignore")
    for gradient, x in zip(gradients, inputs):
        assert_keeps_static_lengths(gradient, x)


@pytest.mark.parametrize("build", [
    pytest.param(lambda a, b: join(0, a, b), id="join"),
    pytest.param(lambda a, b: join(1, *split(b, [1, 2], 2, axis=1)[::-1]), id="split"),
])
def test_gradient_graphs_have_forward_rules(build):
    """The gradient is linear in the cotangent u, so its tangent along u's direction w is the
    gradient at w: Rop(Lop(f, x, u), u, w) == Lop(f, x, w) (second-order derivatives need the
    rules of the ops the gradient rules build)."""
    a, b = T.dmatrix("a"), T.dmatrix("b")
    output = build(a, b)
    cotangent, direction = output.type("u"), output.type("w")
    gradient = Lop(output, b, cotangent)
    tangent = Rop(gradient, cotangent, direction)
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((1, 3)), rng.standard_normal((2, 3))]
    weights = rng.standard_normal(evaluate(output, [a, b], values).shape)
    # The tangent reads u as every input of the differentiated graph (Theano's Rop), but
    # its value does not matter: any u gives the same.
    assert_like_numpy(evaluate(tangent, [a, b, cotangent, direction],
                               values + [rng.standard_normal(weights.shape), weights]),
                      evaluate(gradient, [a, b, cotangent], values + [weights]))
