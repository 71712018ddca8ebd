"""Shape, Shape_i, SpecifyShape, Reshape, MakeVector and the shape functions against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import DisconnectedInputError, Lop, Rop, disconnected_type, grad
from sympile.graph.gradient_types import is_disconnected
from sympile.tensor.shape import (
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    SpecifyShape,
    expand_dims,
    flatten,
    reshape,
    shape,
    shape_i,
    size,
    specify_shape,
    squeeze,
)
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


def symbolic(value, static=False):
    """A variable for `value`: of unknown shape, or of its static shape."""
    return T.tensor(value.dtype, shape=value.shape if static else (None,) * value.ndim)


def any_array(min_dims=0, max_dims=4, min_side=0, max_side=4):
    return st.sampled_from(NUMERIC_DTYPES).flatmap(
        lambda dtype: arrays(dtype, shapes(min_dims, max_dims, min_side, max_side)))


# ---------------------------------------------------------------------------------------------
# Shape, Shape_i

@given(any_array())
def test_shape_like_numpy(value):
    x = symbolic(value)
    output = shape(x)
    assert isinstance(output.owner.op, Shape)
    assert output.type == T.tensor_type("int64", (value.ndim,))
    assert_like_numpy(evaluate(output, [x], [value]), np.array(value.shape, dtype="int64"))
    assert_like_numpy(evaluate(x.shape, [x], [value]), np.array(value.shape, dtype="int64"))
    check_infer_shape(output, [x], [value])


def test_shape_i():
    value = np.zeros((2, 3, 4))
    x = T.tensor("float64", shape=(None, None, 4))
    for axis in range(3):
        output = shape_i(x, axis)
        assert output.type == T.tensor_type("int64", ())
        assert int(evaluate(output, [x], [value])) == value.shape[axis]
    assert isinstance(shape_i(x, 2), T.TensorConstant) and int(shape_i(x, -1).data) == 4
    assert isinstance(shape_i(x, -3).owner.op, ShapeI) and shape_i(x, -3).owner.op.axis == 0
    assert ShapeI(1) == ShapeI(1) and ShapeI(1) != ShapeI(2)
    check_infer_shape(ShapeI(1)(x), [x], [value])


def test_shape_i_bad_axis():
    with pytest.raises(ValueError, match=r"Shape_i\{3\}.*no axis 3"):
        ShapeI(3)(T.matrix())


# ---------------------------------------------------------------------------------------------
# SpecifyShape

def test_specify_shape_static_type_and_value():
    x = T.tensor("float32", shape=(None, 3, None))
    y = specify_shape(x, (2, None, None))
    assert y.type == T.tensor_type("float32", (2, 3, None))
    assert isinstance(y.owner.op, SpecifyShape)
    value = np.ones((2, 3, 5), dtype="float32")
    assert_like_numpy(evaluate(y, [x], [value]), value)
    check_infer_shape(y, [x], [value])


def test_specify_shape_symbolic_length():
    x, n = T.vector(), T.lscalar()
    y = specify_shape(x, (n,))
    assert y.type.shape == (None,)
    function = sympile.function([x, n], y)
    assert_like_numpy(function(np.zeros(3), 3), np.zeros(3))
    with pytest.raises(ValueError, match=r"specify_shape: expected shape \(4,\), got \(3,\)"):
        function(np.zeros(3), 4)
    check_infer_shape(y, [x, n], [np.zeros(3), 3])


def test_specify_shape_run_time_mismatch():
    x = T.matrix()
    function = sympile.function([x], specify_shape(x, (None, 2)))
    with pytest.raises(ValueError, match=r"expected shape \(\?, 2\), got \(2, 3\)"):
        function(np.zeros((2, 3)))


def test_specify_shape_bad_input():
    with pytest.raises(ValueError, match="has 2 dimensions, but a shape of 1 entries"):
        specify_shape(T.matrix(), (2,))
    with pytest.raises(ValueError, match="axis 1 .* has length 3, not 4"):
        specify_shape(T.tensor("float64", shape=(None, 3)), (None, 4))
    with pytest.raises(TypeError, match="shape entry 0 must be an integer scalar"):
        specify_shape(T.vector(), (T.dscalar(),))
    with pytest.raises(TypeError, match="not a symbolic vector"):
        specify_shape(T.vector(), T.lvector())


# ---------------------------------------------------------------------------------------------
# MakeVector

def test_make_vector():
    a, b = T.bscalar(), T.lscalar()
    v = MakeVector("int64")(a, b, 3)
    assert v.type == T.tensor_type("int64", (3,))
    assert_like_numpy(evaluate(v, [a, b], [np.int8(-1), 7]), np.array([-1, 7, 3]))
    assert MakeVector("float64")().type.shape == (0,)
    check_infer_shape(v, [a, b], [np.int8(1), 2])


def test_make_vector_bad_input():
    with pytest.raises(TypeError, match="input 0 must be a 0-d tensor"):
        MakeVector("int64")(T.lvector())
    with pytest.raises(TypeError, match="dtype float64 cannot be converted to int64"):
        MakeVector("int64")(T.dscalar())


# ---------------------------------------------------------------------------------------------
# reshape

@st.composite
def reshapes(draw):
    """(array, target shape with maybe one -1, expected shape)."""
    value = draw(any_array(max_dims=4))
    lengths = list(value.shape)
    # Regroup the lengths into consecutive products, sprinkled with 1s.
    target = []
    position = 0
    while position < len(lengths):
        width = draw(st.integers(1, len(lengths) - position))
        target.append(int(np.prod(lengths[position:position + width])))
        position += width
    for _ in range(draw(st.integers(0, 2))):
        target.insert(draw(st.integers(0, len(target))), 1)
    if not target and value.size == 1 and draw(st.booleans()):
        target = [1]
    expected = tuple(target)
    if target and draw(st.booleans()):
        index = draw(st.integers(0, len(target) - 1))
        if np.prod(target[:index] + target[index + 1:]) != 0:
            target[index] = -1
    return value, tuple(target), expected


@given(reshapes(), st.booleans())
def test_reshape_like_numpy(case, static):
    value, target, expected = case
    x = symbolic(value, static)
    output = reshape(x, target)
    assert output.type.dtype == value.dtype.name
    assert output.type.ndim == len(target)
    if static:
        assert output.type.shape == expected
    result = evaluate(output, [x], [value])
    assert_like_numpy(result, value.reshape(target))
    check_infer_shape(output, [x], [value])


@given(reshapes())
def test_reshape_symbolic_shape_like_numpy(case):
    value, target, _ = case
    x = symbolic(value)
    lengths = [T.lscalar() for _ in target]
    output = reshape(x, lengths)
    if value.ndim:  # (a 0-d input has a known size, 1)
        assert output.type.shape == (None,) * len(target)
    assert_like_numpy(evaluate(output, [x, *lengths], [value, *target]), value.reshape(target))
    check_infer_shape(output, [x, *lengths], [value, *target])
    vector = T.lvector()
    output = reshape(x, vector, ndim=len(target))
    target_vector = np.array(target, dtype="int64")
    assert_like_numpy(evaluate(output, [x, vector], [value, target_vector]),
                      value.reshape(target))
    check_infer_shape(output, [x, vector], [value, target_vector])


def test_reshape_static_shapes():
    x = T.tensor("float32", shape=(2, 3, 4))
    n = T.lscalar()
    assert reshape(x, (6, -1)).type.shape == (6, 4)
    assert reshape(x, (-1,)).type.shape == (24,)
    assert reshape(x, (n, 12)).type.shape == (2, 12)  # n must be 2 (or -1) at run time
    assert reshape(x, (n, -1)).type.shape == (None, None)
    assert reshape(x, (n, n)).type.shape == (None, None)
    assert reshape(T.matrix(), (n, 5)).type.shape == (None, 5)
    assert reshape(T.matrix(), (-1, 5)).type.shape == (None, 5)
    assert reshape(T.tensor("float64", shape=(0, None)), (-1, 5)).type.shape == (0, 5)
    y = T.tensor("float64", shape=(4, 6))
    assert reshape(x, y.shape).type.shape == (4, 6)
    assert reshape(x, T.stack([n, 12])).type.shape == (2, 12)
    assert reshape(T.tensor("int8", shape=(1, 1)), ()).type == T.tensor_type("int8", ())
    assert isinstance(reshape(x, (24,)).owner.op, Reshape)
    assert Reshape(2) == Reshape(2) and Reshape(2) != Reshape(3)


def test_reshape_method_and_view():
    x = T.dvector()
    value = np.arange(6.0)
    assert_like_numpy(evaluate(x.reshape(2, 3), [x], [value]), value.reshape(2, 3))
    assert_like_numpy(evaluate(x.reshape((3, 2)), [x], [value]), value.reshape(3, 2))
    assert Reshape(1).view_map == {0: [0]}
    # The result may be a view of the input: the function must not hand out the input itself.
    result = evaluate(x.reshape(3, 2), [x], [value])
    result[...] = 0
    assert value.sum() == 15


def test_reshape_zero_size_and_scalars():
    x = T.tensor3()
    value = np.zeros((0, 3, 4))
    assert_like_numpy(evaluate(reshape(x, (0, 12)), [x], [value]), value.reshape(0, 12))
    assert_like_numpy(evaluate(reshape(x, (5, 0, 7)), [x], [value]), value.reshape(5, 0, 7))
    # As in numpy, -1 is ambiguous next to a 0.
    with pytest.raises(ValueError, match="cannot reshape"):
        evaluate(reshape(x, (5, 0, -1)), [x], [value])
    s = T.dscalar()
    assert_like_numpy(evaluate(reshape(s, (1, 1)), [s], [2.0]), np.ones((1, 1)) * 2)
    v = T.dvector()
    assert_like_numpy(evaluate(reshape(v, ()), [v], [np.array([3.0])]), np.array(3.0))


def test_reshape_build_time_errors():
    x = T.tensor("float64", shape=(2, 3))
    with pytest.raises(ValueError, match=r"cannot reshape an input of shape \(2, 3\) \(size 6\) "
                                         r"into shape \(4,\)"):
        reshape(x, (4,))
    with pytest.raises(ValueError, match="cannot reshape"):
        reshape(x, (4, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        reshape(x, (T.lscalar(), 4))
    with pytest.raises(ValueError, match="cannot reshape"):
        reshape(x, (0, -1))
    with pytest.raises(ValueError, match="at most one shape entry can be -1"):
        reshape(T.matrix(), (-1, -1))
    with pytest.raises(ValueError, match="entries must be >= 0 or -1"):
        reshape(T.matrix(), (-2, 3))
    with pytest.raises(TypeError, match="shape entry 1 must be an int"):
        reshape(T.matrix(), (2, 3.0))
    with pytest.raises(TypeError, match="shape entry 0 must be an integer scalar"):
        reshape(T.matrix(), (T.dscalar(),))
    with pytest.raises(TypeError, match="shape entry 0 must be an integer"):
        reshape(T.matrix(), (True,))
    with pytest.raises(TypeError, match="reshape: a shape must be integers"):
        reshape(T.matrix(), T.dvector())
    with pytest.raises(ValueError, match="not known when the graph is built; pass ndim"):
        reshape(T.matrix(), T.lvector())
    with pytest.raises(ValueError, match="ndim=3 but the shape has 2 entries"):
        reshape(T.matrix(), (2, 3), ndim=3)
    with pytest.raises(ValueError, match="ndim=1 but the shape vector has 2 entries"):
        reshape(T.matrix(), T.matrix().shape, ndim=1)
    with pytest.raises(TypeError, match="the shape must be an integer vector"):
        Reshape(1)(T.matrix(), T.lmatrix())
    with pytest.raises(ValueError, match="the shape has 2 entries, expected 3"):
        Reshape(3)(T.matrix(), np.array([1, 2]))
    with pytest.raises(ValueError, match="ndim must be an int >= 0"):
        Reshape(-1)


def test_reshape_run_time_errors():
    x, n, m = T.matrix(), T.lscalar(), T.lscalar()
    function = sympile.function([x, n, m], reshape(x, (n, m)))
    with pytest.raises(ValueError, match=r"Reshape\{ndim=2\}: cannot reshape an array of shape "
                                         r"\(2, 3\) \(size 6\) into shape \(4, 2\)"):
        function(np.zeros((2, 3)), 4, 2)
    with pytest.raises(ValueError, match="at most one -1"):
        function(np.zeros((2, 3)), -1, -1)
    with pytest.raises(ValueError, match="at most one -1"):
        function(np.zeros((2, 3)), -3, -2)
    vector = T.lvector()
    function = sympile.function([x, vector], reshape(x, vector, ndim=2))
    with pytest.raises(ValueError, match="the shape has 3 entries, expected 2"):
        function(np.zeros((2, 3)), np.array([1, 2, 3]))


# ---------------------------------------------------------------------------------------------
# flatten

@given(any_array(min_dims=0), st.data())
def test_flatten_like_numpy(value, data):
    ndim = data.draw(st.integers(1, max(value.ndim, 1)))
    x = symbolic(value)
    output = flatten(x, ndim)
    expected = value.reshape(value.shape[:ndim - 1] + (-1,)) if value.size \
        else np.zeros(value.shape[:ndim - 1] + (int(np.prod(value.shape[ndim - 1:])),),
                      dtype=value.dtype)
    assert output.type.ndim == ndim
    assert_like_numpy(evaluate(output, [x], [value]), expected)
    assert_like_numpy(evaluate(x.flatten(ndim), [x], [value]), expected)
    if ndim != value.ndim:
        check_infer_shape(output, [x], [value])


def test_flatten_static_shapes():
    assert flatten(T.tensor("float64", shape=(2, 3, 4))).type.shape == (24,)
    assert flatten(T.tensor("float64", shape=(2, None, 4)), 2).type.shape == (2, None)
    assert flatten(T.tensor("float64", shape=(None, 0, None)), 2).type.shape == (None, 0)
    assert flatten(T.tensor("float64", shape=(None, 1, 1)), 2).type.shape == (None, 1)
    assert flatten(T.dscalar()).type.shape == (1,)
    x = T.matrix()
    assert flatten(x, 2) is x
    assert T.dmatrix().ravel().type.ndim == 1


def test_flatten_zero_length_axis():
    x = T.tensor3()
    value = np.zeros((0, 3, 4), dtype=x.dtype)
    assert_like_numpy(evaluate(flatten(x, 2), [x], [value]), np.zeros((0, 12)))
    assert_like_numpy(evaluate(flatten(x, 1), [x], [value]), np.zeros((0,)))


def test_flatten_bad_input():
    with pytest.raises(ValueError, match="flatten: ndim must be between 1 and 2"):
        flatten(T.matrix(), 3)
    with pytest.raises(ValueError, match="flatten: ndim must be between 1 and 2"):
        flatten(T.matrix(), 0)
    with pytest.raises(TypeError, match="flatten: ndim must be an int"):
        flatten(T.matrix(), 1.0)


# ---------------------------------------------------------------------------------------------
# squeeze, expand_dims

def test_squeeze_none_drops_static_ones_only():
    x = T.tensor("int16", shape=(1, None, 1, 3))
    y = squeeze(x)
    assert y.type == T.tensor_type("int16", (None, 3))
    value = np.arange(6, dtype="int16").reshape(1, 2, 1, 3)
    assert_like_numpy(evaluate(y, [x], [value]), value.squeeze())
    # An axis of unknown length is kept even if it is 1 at run time.
    z = T.matrix()
    assert squeeze(z) is z
    check_infer_shape(y, [x], [value])


@given(any_array(min_dims=1), st.data())
def test_squeeze_axis_like_numpy(value, data):
    ones = [axis for axis, length in enumerate(value.shape) if length == 1]
    axes = data.draw(st.lists(st.sampled_from(ones), unique=True) if ones else st.just([]))
    axes = tuple(a - value.ndim if data.draw(st.booleans()) else a for a in axes)
    x = symbolic(value)
    output = squeeze(x, axes)
    assert output.type.ndim == value.ndim - len(axes)
    assert_like_numpy(evaluate(output, [x], [value]), np.squeeze(value, axes))
    assert_like_numpy(evaluate(x.squeeze(axes), [x], [value]), np.squeeze(value, axes))


def test_squeeze_explicit_axis_checked_at_run_time():
    x = T.tensor3()
    y = squeeze(x, (0, -1))
    assert y.type.shape == (None,)
    function = sympile.function([x], y)
    assert_like_numpy(function(np.ones((1, 4, 1))), np.ones(4))
    with pytest.raises(ValueError, match=r"expected shape \(1, \?, 1\), got \(2, 4, 1\)"):
        function(np.ones((2, 4, 1)))
    check_infer_shape(y, [x], [np.ones((1, 4, 1))])
    assert squeeze(x, 1).type.shape == (None, None)


def test_squeeze_bad_axis():
    x = T.tensor("float64", shape=(None, 3))
    with pytest.raises(ValueError, match="cannot squeeze axis 1 .* it has length 3, not 1"):
        squeeze(x, 1)
    with pytest.raises(ValueError, match="squeeze: axis 2 is out of bounds for 2 dimensions"):
        squeeze(x, 2)
    with pytest.raises(ValueError, match="squeeze: repeated axis"):
        squeeze(T.tensor("float64", shape=(1, 3)), (0, -2))
    with pytest.raises(TypeError, match="squeeze: axis must be an int"):
        squeeze(x, 0.0)


@given(any_array(max_dims=3), st.data())
def test_expand_dims_like_numpy(value, data):
    count = data.draw(st.integers(1, 3))
    out_ndim = value.ndim + count
    axes = data.draw(st.lists(st.integers(0, out_ndim - 1), min_size=count, max_size=count,
                              unique=True))
    axes = [a - out_ndim if data.draw(st.booleans()) else a for a in axes]
    axis = axes[0] if count == 1 and data.draw(st.booleans()) else tuple(axes)
    x = symbolic(value)
    output = expand_dims(x, axis)
    expected = np.expand_dims(value, axis)
    assert output.type.shape == tuple(1 if s == 1 and a in
                                      [b % out_ndim for b in np.atleast_1d(axis)] else None
                                      for a, s in enumerate(expected.shape))
    assert_like_numpy(evaluate(output, [x], [value]), expected)
    check_infer_shape(output, [x], [value])


def test_expand_dims_bad_axis():
    with pytest.raises(ValueError, match="expand_dims: axis 3 is out of bounds for 3"):
        expand_dims(T.matrix(), 3)
    with pytest.raises(ValueError, match="expand_dims: repeated axis"):
        expand_dims(T.matrix(), (0, -4))
    with pytest.raises(TypeError, match="expand_dims: axis must be an int"):
        expand_dims(T.matrix(), "0")


# ---------------------------------------------------------------------------------------------
# size

@given(any_array())
def test_size_like_numpy(value):
    x = symbolic(value)
    output = size(x)
    assert output.type == T.tensor_type("int64", ())
    assert_like_numpy(evaluate(output, [x], [value]), np.array(value.size, dtype="int64"))
    assert_like_numpy(evaluate(x.size, [x], [value]), np.array(value.size, dtype="int64"))


def test_size_static():
    assert int(size(T.tensor("float64", shape=(2, 3))).data) == 6
    assert int(size(T.tensor("float64", shape=(None, 0))).data) == 0
    assert int(size(T.dscalar()).data) == 1
    assert not isinstance(size(T.tensor("float64", shape=(None, 3))), T.TensorConstant)


# ---------------------------------------------------------------------------------------------
# Gradients

# squeeze and expand_dims are DimShuffles (tensor/elemwise/ops.py): their cases wait for its rule.


def random_shape(rng, ndim, low=1, high=4):
    return tuple(int(n) for n in rng.integers(low, high + 1, size=ndim))


def normal_at(*shapes_or_ndims):
    """make_point: standard normal arrays, each of a fixed shape (a tuple) or of a random shape
    of that many dimensions (an int)."""
    def make_point(rng):
        return [rng.standard_normal(s if isinstance(s, tuple) else random_shape(rng, s))
                for s in shapes_or_ndims]
    return make_point


def grad_case(name, fun, *shapes_or_ndims, marks=()):
    case = GradCase(name, fun, normal_at(*shapes_or_ndims))
    return pytest.param(case, marks=marks, id=name) if marks else case


def make_float_vector(*scalars):
    return MakeVector("float64")(*scalars)


GRAD_CASES = [
    # reshape: the gradient is reshaped back.
    grad_case("reshape(3d, (-1,))", lambda x: reshape(x, (-1,)), 3),
    grad_case("reshape(2x6, (3, 2, 2))", lambda x: reshape(x, (3, 2, 2)), (2, 6)),
    grad_case("reshape(2x6, (4, -1))", lambda x: reshape(x, (4, -1)), (2, 6)),
    grad_case("reshape(3d, (-1, shape_i(x, 2)))", lambda x: reshape(x, (-1, shape_i(x, 2))), 3),
    grad_case("reshape(3d, (x.shape[1], x.shape[0] * x.shape[2]))",
              lambda x: reshape(x, (shape_i(x, 1), shape_i(x, 0) * shape_i(x, 2))), 3),
    grad_case("reshape(x, shape(y))", lambda x, y: reshape(x, shape(y)), (2, 3), (3, 2)),
    grad_case("reshape(1x1, ())", lambda x: reshape(x, ()), (1, 1)),
    grad_case("reshape(0d, (1, 1, 1))", lambda x: reshape(x, (1, 1, 1)), ()),
    grad_case("x.reshape(4d, (x.shape[0], -1))", lambda x: x.reshape((x.shape[0], -1)), 4),
    grad_case("flatten(3d)", flatten, 3),
    grad_case("flatten(3d, 2)", lambda x: flatten(x, 2), 3),
    grad_case("flatten(4d, 3)", lambda x: flatten(x, 3), 4),
    # specify_shape: the identity.
    grad_case("specify_shape(2x3, (2, None))", lambda x: specify_shape(x, (2, None)), (2, 3)),
    grad_case("specify_shape(2x3, (2, 3))", lambda x: specify_shape(x, (2, 3)), (2, 3)),
    grad_case("specify_shape(2d, (x.shape[0], None))",
              lambda x: specify_shape(x, (shape_i(x, 0), None)), 2),
    grad_case("specify_shape(0d, ())", lambda x: specify_shape(x, ()), ()),
    # make_vector: entry i's gradient goes to scalar i.
    grad_case("make_vector(a, b, c)", make_float_vector, (), (), ()),
    grad_case("make_vector(a)", make_float_vector, ()),
    grad_case("make_vector(a, 2, b, a)",
              lambda a, b: make_float_vector(a, T.constant(np.int8(2)), b, a), (), ()),
    # DimShuffles, checked once DimShuffle's rule lands.
    grad_case("squeeze(3d, axis=1)", lambda x: squeeze(x, axis=1), (3, 1, 2)),
    grad_case("squeeze(specify_shape(x, (None, 1)))",
              lambda x: squeeze(specify_shape(x, (None, 1))), (3, 1)),
    grad_case("expand_dims(2d, (0, -1))", lambda x: expand_dims(x, (0, -1)), 2),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def test_gradient_values():
    x = T.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3)
    weights = np.arange(6.0)
    gradient = Lop(reshape(x, (-1,)), x, T.constant(weights))
    assert_like_numpy(evaluate(gradient, [x], [value]), weights.reshape(2, 3))
    a, b = T.dscalar("a"), T.dscalar("b")
    vector = make_float_vector(a, b, a)
    gradients = Lop(vector, [a, b], T.constant(np.array([1.0, 2.0, 4.0])))
    assert [float(g) for g in evaluate(gradients, [a, b], [1.0, 1.0])] == [5.0, 2.0]
    tangent = Rop(vector, [a, b], [T.constant(3.0), T.constant(5.0)])
    assert_like_numpy(evaluate(tangent, [a, b], [1.0, 1.0]), [3.0, 5.0, 3.0])


@pytest.mark.parametrize("build", [
    lambda x: shape(x),
    lambda x: shape_i(x, 1),
    lambda x: size(x),
])
def test_shapes_have_no_gradient(build):
    x = T.dmatrix("x")
    cost = T.cast(T.sum(build(x)), "float64")
    with pytest.raises(DisconnectedInputError, match="does not depend on x"):
        grad(cost, x)
    assert_like_numpy(evaluate(grad(cost, x, disconnected_inputs="ignore"), [x],
                               [np.ones((2, 3))]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="does not depend on the wrt variables"):
        Rop(build(x), x, T.dmatrix())


@pytest.mark.parametrize("build", [
    lambda x, y: reshape(x, shape(y)),
    lambda x, y: reshape(x, (shape_i(y, 1), -1)),
    lambda x, y: specify_shape(x, (shape_i(y, 0), None)),
])
def test_shape_arguments_are_disconnected(build):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    cost = T.sum(build(x, y))
    with pytest.raises(DisconnectedInputError, match="does not depend on y"):
        grad(cost, y)
    assert_like_numpy(evaluate(grad(cost, x), [x, y], [np.ones((2, 3)), np.ones((2, 3))]),
                      np.ones((2, 3)))


def test_connection_patterns_and_rules_of_integer_inputs():
    x, n = T.dmatrix(), T.lscalar()
    shape_node = shape(x).owner
    assert shape_node.op.connection_pattern(shape_node) == [[False]]
    assert is_disconnected(shape_node.op.L_op(shape_node.inputs, shape_node.outputs,
                                              [T.lvector()])[0])
    assert shape_node.op.R_op(shape_node.inputs, [T.dmatrix()]) == [None]
    shape_i_node = ShapeI(0)(x).owner
    assert shape_i_node.op.connection_pattern(shape_i_node) == [[False]]
    assert shape_i_node.op.R_op(shape_i_node.inputs, [T.dmatrix()]) == [None]
    specified = specify_shape(x, (n, None)).owner
    assert specified.op.connection_pattern(specified) == [[True], [False], [False]]
    gradients = specified.op.L_op(specified.inputs, specified.outputs, [T.dmatrix()])
    assert [is_disconnected(g) for g in gradients] == [False, True, True]
    reshaped = reshape(x, (n, -1)).owner
    assert reshaped.op.connection_pattern(reshaped) == [[True], [False]]
    gradients = reshaped.op.L_op(reshaped.inputs, reshaped.outputs, [T.dmatrix()])
    assert [is_disconnected(g) for g in gradients] == [False, True]
    # An integer make_vector (a shape) carries no gradient or tangent.
    lengths = MakeVector("int64")(n, n).owner
    assert all(is_disconnected(g) for g in lengths.op.L_op(lengths.inputs, lengths.outputs,
                                                           [T.dvector()]))
    assert lengths.op.R_op(lengths.inputs, [T.lscalar(), None]) == [None]


def test_disconnected_output_gradient_gives_disconnected_inputs():
    x, a = T.dmatrix(), T.dscalar()
    for output in [reshape(x, (-1,)), specify_shape(x, (2, None)), make_float_vector(a, a)]:
        node = output.owner
        gradients = node.op.L_op(node.inputs, node.outputs, [disconnected_type()])
        assert all(is_disconnected(g) for g in gradients)


def assert_keeps_static_lengths(gradient, x):
    """The gradient has x's dtype and ndim and every length x's type knows."""
    assert gradient.type.dtype == x.type.dtype and gradient.type.ndim == x.type.ndim
    for known, own in zip(x.type.shape, gradient.type.shape):
        assert known is None or own == known, f"{gradient.type} loses a length of {x.type}"


@pytest.mark.parametrize("x_shape, build", [
    ((2, 3), lambda x: reshape(x, (-1,))),
    ((1, None), lambda x: reshape(x, (-1,))),
    ((None, 1, 4), lambda x: flatten(x, 2)),
    ((1, None), lambda x: specify_shape(x, (None, 3))),
    ((None, None), lambda x: specify_shape(x, (1, None))),
    ((), lambda x: make_float_vector(x, x)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_static_type_matches_the_input(x_shape, build, dtype):
    x = T.tensor(dtype, shape=x_shape)
    output = build(x)
    gradient = Lop(output, x, output.type())
    assert_keeps_static_lengths(gradient, x)
    if not isinstance(output.owner.op, SpecifyShape):
        # specify_shape's gradient may know more lengths than x: those of its output.
        assert gradient.type == x.type
