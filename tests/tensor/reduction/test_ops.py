"""Tests of sympile/tensor/reduction/ops.py against numpy (and scipy for logsumexp)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st

import sympile.tensor as T
from sympile.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    Lop,
    NullTypeGradError,
    Rop,
    grad,
)
from sympile.scalar import basic as scalar
from sympile.tensor.reduction import Argmax, Argmin, CAReduce
from sympile.tensor.reduction import ops as reduction
from tests.utils import (
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    GradCase,
    arrays,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
    shapes,
)

REAL_DTYPES = [d for d in NUMERIC_DTYPES if not d.startswith("complex")]


def symbolic(value: np.ndarray, static: bool = False):
    """A variable for `value`: of unknown shape, or of its full static shape."""
    shape = value.shape if static else (None,) * value.ndim
    return T.tensor(value.dtype.name, shape=shape, name="x")


@st.composite
def reduction_cases(draw, dtypes=NUMERIC_DTYPES, min_side=0):
    """(value, axis, keepdims) with axis None, an int (maybe negative) or a tuple."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(max_dims=3, min_side=min_side, max_side=4))
    value = draw(arrays(dtype, shape))
    ndim = len(shape)
    axis_choices = [st.none()]
    if ndim:
        axis_choices.append(st.integers(-ndim, ndim - 1))
    axis_choices.append(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True,
                                 max_size=ndim).map(tuple))
    axis = draw(st.one_of(*axis_choices))
    return value, axis, draw(st.booleans())


def numpy_reduce_empty_fails(value: np.ndarray, axis) -> bool:
    axes = range(value.ndim) if axis is None else np.atleast_1d(axis)
    return any(value.shape[a] == 0 for a in axes)


def compare(function, numpy_function, value, axis, keepdims, **options):
    x = symbolic(value)
    result = function(x, axis=axis, keepdims=keepdims, **options)
    actual = evaluate(result, [x], [value])
    with np.errstate(all="ignore"):
        expected = numpy_function(value, axis=axis, keepdims=keepdims, **options)
    assert_like_numpy(actual, expected)
    assert result.type.ndim == np.ndim(expected)


# -- values and dtypes against numpy -----------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod", "all", "any", "mean"])
@given(case=reduction_cases())
def test_reductions_with_identity_match_numpy(name, case):
    value, axis, keepdims = case
    compare(getattr(T, name), getattr(np, name), value, axis, keepdims)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "argmax", "argmin"])
@given(case=reduction_cases())
def test_reductions_without_identity_match_numpy(name, case):
    value, axis, keepdims = case
    if name.startswith("arg") and isinstance(axis, tuple):
        # numpy's argmax takes one axis; several are tested in test_argmax_of_several_axes.
        axis = axis[0] if len(axis) == 1 else None
    if numpy_reduce_empty_fails(value, axis):
        x = symbolic(value)
        with pytest.raises(ValueError, match="empty"):
            evaluate(getattr(T, name)(x, axis=axis, keepdims=keepdims), [x], [value])
        return
    compare(getattr(T, name), getattr(np, name), value, axis, keepdims)


@pytest.mark.parametrize("name", ["var", "std"])
@given(case=reduction_cases(min_side=1), ddof=st.sampled_from([0, 1, 2, 0.5]))
def test_var_std_match_numpy(name, case, ddof):
    value, axis, keepdims = case
    compare(getattr(T, name), getattr(np, name), value, axis, keepdims, ddof=ddof)


@given(case=reduction_cases(dtypes=REAL_DTYPES, min_side=1))
def test_logsumexp_matches_scipy(case):
    value, axis, keepdims = case
    x = symbolic(value)
    actual = evaluate(T.logsumexp(x, axis=axis, keepdims=keepdims), [x], [value])
    expected = scipy.special.logsumexp(value, axis=axis, keepdims=keepdims)
    # scipy returns shape (1,) for a 0-d input; numpy's reductions return 0-d.
    expected = np.reshape(expected, np.sum(value, axis=axis, keepdims=keepdims).shape)
    assert_like_numpy(actual, expected)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_result_dtypes_are_numpys(dtype):
    value = np.ones((2, 3), dtype=dtype)
    x = symbolic(value)
    for name in ["sum", "prod", "max", "min", "all", "any", "mean", "var", "std", "argmax",
                 "argmin"]:
        expected = getattr(np, name)(value, axis=0).dtype.name
        assert getattr(T, name)(x, axis=0).type.dtype == expected, name


@pytest.mark.parametrize("dtype, given_dtype", [("int8", "int8"), ("int8", "float32"),
                                                ("float64", "int64"), ("bool", "bool"),
                                                ("float64", "float16"), ("uint8", "int16")])
@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
def test_dtype_argument_matches_numpy(name, dtype, given_dtype):
    value = (np.arange(12).reshape(3, 4) * 37 % 50 - 20).astype(dtype)
    compare(getattr(T, name), getattr(np, name), value, 1, False, dtype=given_dtype)


def test_sum_acc_dtype_accumulates_then_casts():
    value = np.full((3, 100), 100, dtype="int8")
    x = symbolic(value)
    wide = evaluate(T.sum(x, axis=1, dtype="int8", acc_dtype="int32"), [x], [value])
    assert_like_numpy(wide, np.sum(value, axis=1, dtype="int32").astype("int8"))
    narrow = evaluate(T.sum(x, axis=1, acc_dtype="int8"), [x], [value])
    assert_like_numpy(narrow, np.sum(value, axis=1, dtype="int8").astype("int64"))


def test_mean_of_float16_accumulates_in_float32():
    # A float16 sum of these overflows (65504 is float16's largest value).
    value = np.ones(100_000, dtype="float16")
    x = symbolic(value)
    actual = evaluate(T.mean(x), [x], [value])
    assert_like_numpy(actual, np.mean(value))
    assert actual == 1


def test_empty_reductions_with_identity():
    value = np.zeros((0, 3), dtype="float32")
    x = symbolic(value)
    outputs = [T.sum(x, axis=0), T.prod(x, axis=0), T.all(x, axis=0), T.any(x, axis=0),
               T.sum(x)]
    results = evaluate(outputs, [x], [value])
    for actual, expected in zip(results, [np.zeros(3, "float32"), np.ones(3, "float32"),
                                          np.ones(3, bool), np.zeros(3, bool),
                                          np.float32(0)]):
        assert_like_numpy(actual, expected)


def test_mean_of_empty_is_nan():
    value = np.zeros((0, 2))
    x = symbolic(value)
    assert_like_numpy(evaluate(T.mean(x, axis=0), [x], [value]), np.full(2, np.nan))


def test_max_and_min_of_bool():
    value = np.array([[True, False], [False, False]])
    x = symbolic(value)
    results = evaluate([T.max(x, axis=1), T.min(x, axis=0), T.max(x)], [x], [value])
    for actual, expected in zip(results, [np.max(value, 1), np.min(value, 0), np.max(value)]):
        assert_like_numpy(actual, expected)


def test_max_propagates_nan_like_numpy():
    value = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, -np.inf]])
    x = symbolic(value)
    for name in ["max", "min", "argmax", "argmin"]:
        actual = evaluate(getattr(T, name)(x, axis=1), [x], [value])
        assert_like_numpy(actual, getattr(np, name)(value, axis=1))


def test_argmax_with_axis_none_flattens():
    value = np.array([[1, 9, 3], [9, 0, 2]], dtype="int16")
    x = symbolic(value)
    assert_like_numpy(evaluate(T.argmax(x), [x], [value]), np.argmax(value))
    keep = T.argmax(x, keepdims=True)
    assert keep.type.shape == (1, 1)
    assert_like_numpy(evaluate(keep, [x], [value]), np.argmax(value, keepdims=True))


@given(value=arrays("float64", shapes(min_dims=3, max_dims=3, min_side=1, max_side=4)),
       axes=st.sampled_from([(0, 1), (1, 2), (0, 2), (0, 1, 2)]))
def test_argmax_of_several_axes(value, axes):
    """The index is into the C-order flattening of the reduced axes (Theano's rule)."""
    x = symbolic(value)
    kept = [a for a in range(3) if a not in axes]
    merged = np.transpose(value, kept + list(axes)).reshape(
        [value.shape[a] for a in kept] + [-1])
    actual_max, actual_min = evaluate([T.argmax(x, axis=axes), T.argmin(x, axis=axes)], [x],
                                      [value])
    assert_like_numpy(actual_max, np.argmax(merged, axis=-1))
    assert_like_numpy(actual_min, np.argmin(merged, axis=-1))


def test_argmin_of_unsigned_integers():
    value = np.array([0, 1, 255], dtype="uint8")
    x = symbolic(value)
    assert_like_numpy(evaluate(T.argmin(x), [x], [value]), np.argmin(value))


def test_max_and_argmax():
    value = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    x = symbolic(value)
    maximum, index = T.max_and_argmax(x, axis=1)
    results = evaluate([maximum, index], [x], [value])
    assert_like_numpy(results[0], np.max(value, axis=1))
    assert_like_numpy(results[1], np.argmax(value, axis=1))


def test_logsumexp_special_values():
    value = np.array([[-np.inf, -np.inf, -np.inf],
                      [-np.inf, 0.0, -np.inf],
                      [np.inf, 1.0, -np.inf],
                      [1000.0, 1000.0, -1000.0],
                      [np.nan, 1.0, 2.0]])
    x = symbolic(value)
    actual = evaluate(T.logsumexp(x, axis=1), [x], [value])
    expected = np.array([-np.inf, 0.0, np.inf, 1000.0 + np.log(2.0), np.nan])
    assert_like_numpy(actual, expected)
    assert_like_numpy(evaluate(T.logsumexp(x[:1]), [x], [value]), np.float64(-np.inf))


def test_logsumexp_of_integers_is_float64():
    value = np.array([[1, 2], [3, 100]], dtype="int8")
    x = symbolic(value)
    actual = evaluate(T.logsumexp(x, axis=0), [x], [value])
    assert_like_numpy(actual, scipy.special.logsumexp(value, axis=0))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_logsumexp_of_complex(dtype):
    rng = np.random.default_rng(2)
    value = (rng.normal(size=(3, 4)) * 3 + 3j * rng.normal(size=(3, 4))).astype(dtype)
    x = symbolic(value)
    actual = evaluate(T.logsumexp(x, axis=1), [x], [value])
    # The imaginary part of a complex log is defined up to 2 pi: compare the exponentials.
    expected = scipy.special.logsumexp(value, axis=1)
    assert_like_numpy(np.exp(actual), np.exp(expected))


def test_variance_of_complex_is_real():
    value = np.array([[1 + 2j, 3 - 1j, -2j], [0.5j, 2, 1 + 1j]], dtype="complex64")
    x = symbolic(value)
    results = evaluate([T.var(x, axis=1), T.std(x)], [x], [value])
    assert_like_numpy(results[0], np.var(value, axis=1))
    assert_like_numpy(results[1], np.std(value))


def test_methods_delegate_to_functions():
    value = np.arange(6.0).reshape(2, 3)
    x = symbolic(value)
    outputs = [x.sum(axis=0), x.prod(keepdims=True), x.mean(1), x.var(ddof=1), x.std(),
               x.max(0), x.min(), x.argmax(1), x.argmin(), x.all(), x.any(axis=1)]
    expected = [value.sum(axis=0), value.prod(keepdims=True), value.mean(1), value.var(ddof=1),
                value.std(), value.max(0), value.min(), value.argmax(1), value.argmin(),
                value.all(), value.any(axis=1)]
    for actual, wanted in zip(evaluate(outputs, [x], [value]), expected):
        assert_like_numpy(actual, wanted)


# -- static types and infer_shape --------------------------------------------------------------

def test_static_output_shapes():
    x = T.tensor("float32", shape=(2, None, 3))
    assert T.sum(x, axis=1).type.shape == (2, 3)
    assert T.sum(x, axis=(0, -1)).type.shape == (None,)
    assert T.sum(x).type.shape == ()
    assert T.max(x, axis=1, keepdims=True).type.shape == (2, 1, 3)
    assert T.mean(x, axis=(0, 2), keepdims=True).type.shape == (1, None, 1)
    assert T.var(x, axis=2).type.shape == (2, None)
    assert T.argmax(x, axis=-1).type == T.tensor_type("int64", (2, None))
    assert T.argmin(x, keepdims=True).type.shape == (1, 1, 1)
    assert T.logsumexp(x, axis=0).type.shape == (None, 3)
    assert T.logsumexp(x, axis=0, keepdims=True).type.shape == (1, None, 3)
    assert T.sum(x, axis=()).type.shape == (2, None, 3)


def test_axis_is_normalized_in_the_op():
    x = T.matrix("x")
    assert T.sum(x, axis=(-1, 0)).owner.op == CAReduce(scalar.add, (0, 1))
    assert T.sum(x).owner.op == T.sum(x, axis=(1, 0)).owner.op
    assert str(T.sum(x, axis=1).owner.op) == "Sum{axis=(1,)}"


@pytest.mark.parametrize("build", [
    lambda x: T.sum(x, axis=1),
    lambda x: T.prod(x, axis=(0, 2), keepdims=True),
    lambda x: T.max(x),
    lambda x: T.all(x, axis=-1),
    lambda x: T.argmax(x, axis=1),
    lambda x: T.argmin(x, axis=(0, 2)),
    lambda x: T.argmax(x, keepdims=True),
    lambda x: T.mean(x, axis=0),
    lambda x: T.var(x, axis=(1, 2), keepdims=True),
    lambda x: T.std(x, axis=1),
    lambda x: T.logsumexp(x, axis=2),
])
def test_infer_shape(build):
    value = np.random.default_rng(0).normal(size=(2, 3, 4))
    x = symbolic(value)
    check_infer_shape(build(x), [x], [value])


def test_infer_shape_of_the_ops():
    value = np.random.default_rng(1).normal(size=(3, 2, 4))
    x = symbolic(value)
    for op in [CAReduce(scalar.add, (0, 2)), CAReduce(scalar.maximum), Argmax((1,)),
               Argmin(None)]:
        check_infer_shape(op(x), [x], [value])


# -- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "mean", "var",
                                  "std", "argmax", "argmin", "logsumexp"])
def test_bad_axes(name):
    function = getattr(T, name)
    x = T.matrix("x")
    with pytest.raises(ValueError, match=rf"{name}: axis 2 is out of range for a 2-d input"):
        function(x, axis=2)
    with pytest.raises(ValueError, match=rf"{name}: axis -3 is out of range"):
        function(x, axis=(0, -3))
    with pytest.raises(ValueError, match=rf"{name}: axis \(1, -1\) names the same axis"):
        function(x, axis=(1, -1))
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int"):
        function(x, axis=1.0)
    with pytest.raises(TypeError, match=rf"{name}: axis must be known"):
        function(x, axis=T.lscalar("axis"))


def test_axis_of_a_scalar_is_out_of_range():
    with pytest.raises(ValueError, match="sum: axis 0 is out of range for a 0-d input"):
        T.sum(T.scalar("x"), axis=0)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "logsumexp"])
def test_empty_axis_without_identity_is_an_error(name):
    function = getattr(T, name)
    known = T.tensor("float64", shape=(3, 0))
    with pytest.raises(ValueError, match="axis 1 of .* is empty"):
        function(known, axis=1)
    value = np.zeros((3, 0))
    x = symbolic(value)
    output = function(x, axis=1)
    with pytest.raises(ValueError, match="cannot reduce axis 1 of an input of shape \\(3, 0\\)"):
        evaluate(output, [x], [value])
    # An empty output over non-empty reduced axes is fine, as in numpy.
    assert evaluate(function(x, axis=0), [x], [value]).shape == (0,)


def test_careduce_needs_an_associative_binary_op():
    with pytest.raises(TypeError, match="CAReduce: expected a commutative, associative"):
        CAReduce(scalar.sub)
    with pytest.raises(TypeError, match="CAReduce: expected a commutative, associative"):
        CAReduce(scalar.exp)
    with pytest.raises(ValueError, match="CAReduce: axis must be distinct ints"):
        CAReduce(scalar.add, (0, 0))
    with pytest.raises(ValueError, match="cannot reduce axis 2 of x"):
        CAReduce(scalar.add, (2,))(T.matrix("x"))


def test_careduce_axes_from_the_end_and_a_single_int_as_theano_s():
    """CAReduce(op, axis=(-1,)) or axis=1: resolved in make_node, where the rank is known;
    the node's op has its axes non-negative."""
    x = T.dtensor3("x")
    value = np.arange(24.0).reshape(2, 3, 4)
    last = CAReduce(scalar.add, (-1,))(x)
    assert last.owner.op == CAReduce(scalar.add, (2,))
    middle = CAReduce(scalar.maximum, 1)(x)
    assert middle.owner.op.axis == (1,)
    np.testing.assert_array_equal(evaluate(last, [x], [value]), value.sum(-1))
    np.testing.assert_array_equal(evaluate(middle, [x], [value]), value.max(1))
    with pytest.raises(ValueError, match="axis -4 is out of range for a 3-d input"):
        CAReduce(scalar.add, (-4,))(x)
    with pytest.raises(ValueError, match="names the same axis more than once"):
        CAReduce(scalar.add, (-1, 2))(x)


def test_bad_dtype_and_ddof():
    x = T.matrix("x")
    with pytest.raises(TypeError, match="dtype .* is not supported"):
        T.sum(x, dtype="float128")
    with pytest.raises(TypeError, match="var: ddof must be a number"):
        T.var(x, ddof="1")
    with pytest.raises(TypeError, match="std: ddof must be a number"):
        T.std(x, ddof=None)
    with pytest.raises(TypeError, match="sum: cannot convert"):
        T.sum("not a tensor")


def test_python_data_is_accepted():
    assert_like_numpy(evaluate(T.sum([[1, 2], [3, 4]], axis=0)), np.sum([[1, 2], [3, 4]], 0))
    assert_like_numpy(evaluate(reduction.mean(np.float32([1, 2]))),
                      np.mean(np.float32([1, 2])))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_std_is_the_square_root_of_var(dtype):
    value = np.array([[1, 2, 4], [3, 3, 9]], dtype=dtype)
    x = symbolic(value)
    actual = evaluate(T.std(x, axis=1, ddof=1), [x], [value])
    assert_like_numpy(actual, np.std(value, axis=1, ddof=1))


# -- gradients ---------------------------------------------------------------------------------

# Until Elemwise's and DimShuffle's rules land (tensor/elemwise/ops.py), a case with an elementwise
# op or a DimShuffle (keepdims) on the path from input to output cannot be differentiated.
# mean, var and std also divide by a count computed with Shape_i when lengths are unknown:
# Rop needs ShapeI.R_op (tensor/shape/ops.py: no tangent, [None]) as well.


def random_shape(rng: np.random.Generator, ndim: int) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 4, size=ndim))


def normal_values(rng, shape, axis):
    return rng.standard_normal(shape)


def distinct_values(rng, shape, axis):
    """Values at least 0.1 apart, so that the extremum of a slice is unique and stays where it
    is under the finite-difference steps."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(-0.1, 0.1, size) - size * 0.15).reshape(
        shape)


def values_with_zeros(rng, shape, axis):
    """Values of magnitude 0.5 to 1.5 in which slice k (over `axis`) holds k % 3 zeros (as
    many as it has room for): products with no zero, one zero and several zeros."""
    values = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    axes = reduction.normalize_axis(axis, len(shape), "values_with_zeros")
    kept = [a for a in range(len(shape)) if a not in axes]
    slices = np.transpose(values, kept + list(axes)).reshape(-1, int(np.prod(
        [shape[a] for a in axes], dtype=int)))
    for index, row in enumerate(slices):
        row[rng.permutation(row.size)[:index % 3]] = 0
    inverse = np.argsort(kept + list(axes))
    return np.transpose(slices.reshape([shape[a] for a in kept + list(axes)]), inverse)


def reduction_case(function, ndim, axis=None, values=normal_values, marks=(), **options):
    """A GradCase for function(x, axis=axis, **options) at a random x of `ndim` dimensions
    (values(rng, shape, axis) picks the point); `marks` makes it a pytest.param."""
    name = getattr(function, "__name__", str(function))
    details = [f"axis={axis}"] + [f"{key}={value}" for key, value in options.items()]
    label = f"{name}({ndim}d, {', '.join(details)})"

    def fun(x):
        return function(x, axis=axis, **options)

    def make_point(rng):
        return [values(rng, random_shape(rng, ndim), axis)]

    case = GradCase(label, fun, make_point)
    return pytest.param(case, marks=marks, id=label) if marks else case


def first_output(function):
    def first(x, **options):
        return function(x, **options)[0]

    first.__name__ = f"{function.__name__}[0]"
    return first


GRAD_CASES = [
    # sum: the gradient broadcast back over the reduced axes.
    reduction_case(T.sum, 0),
    reduction_case(T.sum, 2),
    reduction_case(T.sum, 2, axis=1),
    reduction_case(T.sum, 3, axis=-1),
    reduction_case(T.sum, 3, axis=(0, 2)),
    reduction_case(T.sum, 2, axis=()),
    reduction_case(T.sum, 4, axis=(1, 3)),
    reduction_case(T.sum, 2, axis=0, acc_dtype="float64"),
    reduction_case(T.sum, 3, axis=1, keepdims=True),
    reduction_case(T.sum, 2, keepdims=True),
    # prod, at points whose slices hold no zero, one zero and two or more zeros.
    reduction_case(T.prod, 0, values=values_with_zeros),
    reduction_case(T.prod, 2, values=values_with_zeros),
    reduction_case(T.prod, 2, axis=1, values=values_with_zeros),
    reduction_case(T.prod, 3, axis=-1, values=values_with_zeros),
    reduction_case(T.prod, 3, axis=(0, 2), values=values_with_zeros),
    reduction_case(T.prod, 2, axis=0, values=normal_values),
    reduction_case(T.prod, 2, axis=0, values=values_with_zeros, dtype="float64",
                   acc_dtype="float64"),
    reduction_case(T.prod, 3, axis=1, keepdims=True, values=values_with_zeros),
    # max and min, away from ties.
    reduction_case(T.max, 0, values=distinct_values),
    reduction_case(T.max, 2, values=distinct_values),
    reduction_case(T.max, 2, axis=1, values=distinct_values),
    reduction_case(T.max, 3, axis=-2, values=distinct_values),
    reduction_case(T.max, 3, axis=(0, 2), values=distinct_values),
    reduction_case(T.min, 2, values=distinct_values),
    reduction_case(T.min, 3, axis=-1, values=distinct_values),
    reduction_case(T.min, 3, axis=(1, 2), values=distinct_values),
    reduction_case(T.amax, 2, axis=0, values=distinct_values),
    reduction_case(T.amin, 2, axis=0, values=distinct_values),
    reduction_case(first_output(T.max_and_argmax), 3, axis=1, values=distinct_values),
    reduction_case(first_output(T.max_and_argmax), 2, values=distinct_values),
    reduction_case(T.max, 3, axis=1, keepdims=True, values=distinct_values),
    reduction_case(T.min, 2, keepdims=True, values=distinct_values),
    reduction_case(first_output(T.max_and_argmax), 2, axis=0, keepdims=True,
                   values=distinct_values),
    # Compositions with elementwise ops.
    reduction_case(T.mean, 2),
    reduction_case(T.mean, 3, axis=(0, 2)),
    reduction_case(T.mean, 2, axis=-1, keepdims=True),
    reduction_case(T.var, 2),
    reduction_case(T.var, 3, axis=1, ddof=1, values=distinct_values),
    reduction_case(T.var, 3, axis=(0, 1), keepdims=True),
    reduction_case(T.std, 2, axis=0, values=distinct_values),
    reduction_case(T.std, 3, axis=(1, 2), ddof=1, values=distinct_values),
    reduction_case(T.logsumexp, 2),
    reduction_case(T.logsumexp, 3, axis=-1),
    reduction_case(T.logsumexp, 3, axis=(0, 2), keepdims=True),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def gradient_of(cost_of, value, **grad_options):
    """d cost_of(x) / dx at `value`, for x a variable of value's dtype and unknown shape."""
    x = symbolic(value)
    return evaluate(grad(cost_of(x), x, **grad_options), [x], [value])


def test_prod_gradient_at_zeros_is_the_product_of_the_others():
    value = np.array([[2.0, 3.0, 4.0], [2.0, 0.0, 4.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]])
    actual = gradient_of(lambda x: T.sum(T.prod(x, axis=1)), value)
    assert_like_numpy(actual, [[12.0, 8.0, 6.0], [0.0, 8.0, 0.0], [0.0] * 3, [0.0] * 3])
    # Over every axis the single zero of [[2, 3], [0, 5]] gets 2 * 3 * 5.
    actual = gradient_of(T.prod, np.array([[2.0, 3.0], [0.0, 5.0]]))
    assert_like_numpy(actual, [[0.0, 0.0], [30.0, 0.0]])
    # A slice of one element: the product of the others is the empty product, 1.
    assert_like_numpy(gradient_of(lambda x: T.sum(T.prod(x, axis=0)), np.zeros((1, 2))),
                      np.ones((1, 2)))


def test_prod_tangent_at_zeros():
    value = np.array([[2.0, 3.0, 4.0], [2.0, 0.0, 4.0], [0.0, 3.0, 0.0]])
    x, v = symbolic(value), symbolic(value)
    tangent = np.array([[1.0, 1.0, 1.0], [0.5, 2.0, -1.0], [1.0, 1.0, 1.0]])
    actual = evaluate(Rop(T.prod(x, axis=1), x, v), [x, v], [value, tangent])
    # Row 0: 12 + 8 + 6; row 1: only the zero's tangent counts, times 2 * 4; row 2: 0.
    assert_like_numpy(actual, [26.0, 16.0, 0.0])


@pytest.mark.parametrize("function", [T.max, T.min])
def test_extremum_gradient_goes_to_every_tied_element(function):
    value = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [5.0, -1.0, 0.0]])
    if function is T.min:
        value = -value
    actual = gradient_of(lambda x: T.sum(function(x, axis=1)), value)
    assert_like_numpy(actual, [[0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    # Forward mode: the tied elements' tangents add up, the transpose of the reverse rule,
    # so <Rop v, u> = <v, Lop u> holds at ties too.
    x, v, u = symbolic(value), symbolic(value), T.dvector("u")
    output = function(x, axis=1)
    tangent = np.arange(9.0).reshape(3, 3)
    cotangent = np.array([1.0, -2.0, 0.5])
    forward, backward = evaluate([Rop(output, x, v), Lop(output, x, u)], [x, v, u],
                                 [value, tangent, cotangent])
    assert_like_numpy(forward, [1.0 + 2.0, 3.0 + 4.0 + 5.0, 6.0])
    assert np.isclose(np.dot(forward, cotangent), np.sum(tangent * backward))


def test_max_gradient_is_zero_on_a_slice_holding_nan():
    value = np.array([[np.nan, 1.0], [3.0, 2.0]])
    actual = gradient_of(lambda x: T.sum(T.max(x, axis=1)), value)
    assert_like_numpy(actual, [[0.0, 0.0], [1.0, 0.0]])


@pytest.mark.parametrize("build", [
    lambda x: T.sum(x, dtype="float64"),
    lambda x: T.sum(x, axis=0, dtype="float64", acc_dtype="float64"),
    lambda x: T.prod(x, axis=1, dtype="float64"),
    lambda x: T.max(x, axis=0),
    lambda x: T.sum(x, acc_dtype="float64"),
])
def test_gradient_has_the_input_dtype(build):
    value = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype="float32")
    x = symbolic(value)
    output = build(x)
    gradient = grad(T.sum(output), x)
    assert gradient.type.dtype == "float32"
    tangent = Rop(output, x, symbolic(value))
    assert tangent.type.dtype == output.type.dtype


@pytest.mark.parametrize("shape", [(1, None), (1, 3), (None, 1), (2, 1, 3)])
@pytest.mark.parametrize("function", [T.sum, T.prod, T.max, T.min])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_gradient_static_type_matches_the_input(function, shape, axis):
    x = T.tensor("float64", shape=shape, name="x")
    output = function(x, axis=axis)
    # A cotangent whose type knows none of the lengths still gives x's type back.
    cotangent = T.tensor("float64", shape=(None,) * output.type.ndim)
    gradient = Lop(output, x, cotangent)
    assert gradient.type == x.type
    assert Rop(output, x, x.type()).type.shape == output.type.shape


def test_bool_and_integer_results_have_zero_gradients_and_indices_none():
    """all, any and an integer sum are piecewise constant: zero gradient, as in Theano. An
    index (argmax, argmin) is disconnected from x. Neither has a tangent."""
    x = T.dmatrix("x")
    value = np.array([[1.0, -2.0, 0.0], [3.5, 0.0, 1.0]])
    for cost in [T.all(x), T.any(x), T.sum(x, dtype="int64")]:
        assert_like_numpy(evaluate(grad(cost, x), [x], [value]), np.zeros((2, 3)))
    for cost in [T.argmax(x), T.argmin(x), T.sum(T.argmax(x, axis=0)),
                 T.max_and_argmax(x, axis=1)[1].sum()]:
        with pytest.raises(DisconnectedInputError, match="does not depend on x"):
            grad(cost, x)
    for cost in [T.all(x), T.any(x), T.argmax(x), T.sum(x, dtype="int64")]:
        with pytest.raises(ValueError, match="does not depend"):
            Rop(cost, x, T.dmatrix("v"))
    node = T.argmax(x, axis=0).owner
    assert node.op.connection_pattern(node) == [[False]]
    assert isinstance(node.op.L_op(node.inputs, node.outputs, [T.lvector()])[0].type,
                      DisconnectedType)
    assert node.op.R_op(node.inputs, [T.dmatrix()]) == [None]


def test_max_and_argmax_differentiates_through_the_max():
    value = np.array([[1.0, 4.0], [3.0, 2.0]])
    x = symbolic(value)
    maximum, _ = T.max_and_argmax(x, axis=1)
    cost = T.sum(maximum)
    assert_like_numpy(evaluate(grad(cost, x), [x], [value]), [[0.0, 1.0], [1.0, 0.0]])


class _Fmax(scalar.ScalarOp):
    """numpy.fmax: an associative reduction for which CAReduce has no derivative rule."""

    nin = 2
    nfunc = staticmethod(np.fmax)
    commutative = True
    associative = True


def test_reduction_without_a_rule_is_not_implemented():
    x = T.dvector("x")
    output = CAReduce(_Fmax())(x)
    with pytest.raises(NullTypeGradError, match="not implemented.*no derivative rule"):
        grad(output, x)
    with pytest.raises(NotImplementedError, match="no R_op rule"):
        Rop(output, x, T.dvector("v"))


def test_theanos_prod_ops():
    """Prod (with no_zeros_in_input's cheaper derivative), ProdWithoutZeros and their
    place in T.elemwise, as Theano's."""
    from sympile.tensor.elemwise import CAReduce as ElemwiseCAReduce
    from sympile.tensor.elemwise import Prod, ProdWithoutZeros

    assert ElemwiseCAReduce is CAReduce and isinstance(Prod(1), CAReduce)
    x = T.dmatrix("x")
    value = np.array([[1.0, 0.0, 3.0], [2.0, 4.0, 0.5], [0.0, 0.0, 0.0]])
    outputs = [Prod(axis=1)(x), ProdWithoutZeros(axis=0)(x), ProdWithoutZeros()(x),
               ProdWithoutZeros(1, dtype="float32")(x)]
    got = evaluate(outputs, [x], [value])
    nonzero = np.where(value == 0, 1.0, value)
    for actual, expected in zip(got, [value.prod(axis=1), nonzero.prod(axis=0), nonzero.prod(),
                                      nonzero.prod(axis=1).astype("float32")]):
        assert_like_numpy(actual, expected)
    positive = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 0.5]])
    cheap = grad(T.prod(x, axis=1, no_zeros_in_input=True).sum(), x)
    assert_like_numpy(evaluate(cheap, [x], [positive]),
                      positive.prod(axis=1, keepdims=True) / positive)
    op = T.prod(x, no_zeros_in_input=True).owner.op
    assert isinstance(op, Prod) and op.no_zeros_in_input
    with pytest.raises(NullTypeGradError, match="no_zeros_in_input=True"):
        grad(ProdWithoutZeros()(x), x)
