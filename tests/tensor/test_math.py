"""Tests of sympile.tensor.math: every elementwise function against numpy and scipy.special,
over every dtype, random shapes and values; cast, round, clip, switch and the aliases."""

from __future__ import annotations

import functools
import itertools
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sympile
import sympile.tensor as T
from sympile.scalar.basic import ALL_DTYPES, SCALAR_OPS
from sympile.tensor import math
from tests.utils import (
    ELEMWISE_CASES,
    assert_like_numpy,
    domain_elements,
    domain_values,
    evaluate,
    reference_result,
)

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = pytest.mark.smoke

OP_NAMES = sorted(SCALAR_OPS)
MULTI_INPUT_NAMES = [name for name in OP_NAMES if SCALAR_OPS[name].nin > 1]


def _not_defined(name: str, dtypes) -> str:
    """The build-time TypeError message for `name` on these dtypes (a regex)."""
    return rf"{re.escape(name)} is not defined for inputs of dtype {re.escape(', '.join(dtypes))}"


@functools.cache
def _defined_dtype_tuples(name: str) -> list[tuple[str, ...]]:
    """The input dtype combinations for which numpy (or scipy) defines the op."""
    case = ELEMWISE_CASES[name]
    defined = []
    for dtypes in itertools.product(ALL_DTYPES, repeat=SCALAR_OPS[name].nin):
        try:
            reference_result(case, *(np.zeros(0, dtype=d) for d in dtypes))
        except TypeError:
            continue
        defined.append(dtypes)
    return defined


def test_the_table_covers_every_scalar_op():
    assert set(ELEMWISE_CASES) == set(SCALAR_OPS)
    for name in OP_NAMES:
        assert len(ELEMWISE_CASES[name].domains) == SCALAR_OPS[name].nin, name


@pytest.mark.parametrize("name", OP_NAMES)
def test_every_dtype_matches_numpy(name):
    """Each op on vectors of each dtype: numpy's values (nan/inf included) and dtype, or a
    TypeError at build time where numpy has no such op."""
    case = ELEMWISE_CASES[name]
    function = getattr(T, name)
    for dtype in ALL_DTYPES:
        values = [domain_values(dtype, domain, seed=index)
                  for index, domain in enumerate(case.domains)]
        variables = [T.tensor(dtype, shape=(None,)) for _ in values]
        try:
            expected = reference_result(case, *values)
        except TypeError:
            with pytest.raises(TypeError, match=_not_defined(name, [dtype] * len(values))):
                function(*variables)
            continue
        output = function(*variables)
        assert output.type == T.tensor_type(expected.dtype, (None,)), (name, dtype)
        assert_like_numpy(evaluate(output, variables, values), expected)


@pytest.mark.parametrize("name", MULTI_INPUT_NAMES)
def test_output_dtype_of_every_dtype_combination(name):
    """The promoted output dtype of every combination of input dtypes is numpy's."""
    case = ELEMWISE_CASES[name]
    function = getattr(T, name)
    for dtypes in itertools.product(ALL_DTYPES, repeat=SCALAR_OPS[name].nin):
        variables = [T.tensor(d, shape=(None,)) for d in dtypes]
        try:
            expected = reference_result(case, *(np.zeros(0, dtype=d) for d in dtypes))
        except TypeError:
            with pytest.raises(TypeError, match=_not_defined(name, dtypes)):
                function(*variables)
            continue
        assert function(*variables).type.dtype == expected.dtype.name, (name, dtypes)


@st.composite
def elemwise_inputs(draw, name: str) -> list[np.ndarray]:
    """Arrays of mutually broadcastable random shapes and numpy-defined dtypes, with values in
    the op's domain."""
    case = ELEMWISE_CASES[name]
    dtypes = draw(st.sampled_from(_defined_dtype_tuples(name)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(dtypes), max_dims=3,
                                                    max_side=4))
    return [draw(hnp.arrays(dtype, shape, elements=domain_elements(dtype, domain)))
            for dtype, shape, domain in zip(dtypes, shapes.input_shapes, case.domains)]


def _broadcastable_input(value: np.ndarray):
    """A variable of value's dtype and rank, declaring the length-1 axes (so that they
    broadcast) and leaving the others unknown."""
    return T.tensor(value.dtype, shape=tuple(1 if n == 1 else None for n in value.shape))


# One test per op (79 of them): a quarter of the profile's examples each keeps the file fast;
# test_every_dtype_matches_numpy already covers every dtype deterministically.
@pytest.mark.parametrize("name", OP_NAMES)
@settings(max_examples=max(5, settings.default.max_examples // 4))
@given(data=st.data())
def test_random_inputs_match_numpy(name, data):
    values = data.draw(elemwise_inputs(name))
    variables = [_broadcastable_input(v) for v in values]
    expected = reference_result(ELEMWISE_CASES[name], *values)
    output = getattr(T, name)(*variables)
    assert output.type.dtype == expected.dtype.name
    assert output.type.ndim == expected.ndim
    assert_like_numpy(evaluate(output, variables, values), expected)


def test_floating_point_errors_are_silent():
    """log(0), 0/0 and overflow give -inf, nan and inf without warnings, as compiled code."""
    x, y = T.dvectors("x", "y")
    function = sympile.function([x, y], [T.log(x), x / y, T.exp(x * 1000)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logarithm, ratio, exponential = function(np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    assert logarithm[0] == -np.inf and np.isnan(ratio[0]) and exponential[1] == np.inf


def test_integer_division_by_zero_gives_numpy_values():
    x, y = T.ivectors("x", "y")
    function = sympile.function([x, y], [x // y, x % y])
    a = np.array([7, -7, 0], dtype="int32")
    b = np.zeros(3, dtype="int32")
    with np.errstate(all="ignore"):
        expected = [a // b, a % b]
    for actual, wanted in zip(function(a, b), expected):
        assert_like_numpy(actual, wanted)


def test_integer_to_negative_power_raises_like_numpy():
    x, y = T.lvectors("x", "y")
    function = sympile.function([x, y], x ** y)
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(np.array([2]), np.array([-1]))
    with pytest.raises(ValueError, match="negative integer powers"):
        function(np.array([2]), np.array([-1]))


# -- names --------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias, target", sorted(math._ALIASES.items()))
def test_alias_is_the_function_it_names(alias, target):
    assert getattr(T, alias) is getattr(math, target)
    assert alias in math.__all__


@pytest.mark.parametrize("name", sorted(math.__all__))
def test_public_names_are_exported_by_sympile_tensor(name):
    assert getattr(T, name) is getattr(math, name)


def test_functions_are_named_and_name_their_output():
    assert T.exp.__name__ == "exp" and "elementwise" in T.exp.__doc__
    x = T.dvector()
    assert T.exp(x, name="e").name == "e"
    assert T.add(x, x, x, name="total").name == "total"


# -- variadic add and mul -----------------------------------------------------------------------

@pytest.mark.parametrize("name, reference", [("add", np.add), ("mul", np.multiply)])
def test_add_and_mul_take_several_inputs(name, reference):
    x, y, z = T.bvector("x"), T.fvector("y"), T.wvector("z")
    output = getattr(T, name)(x, y, z, 3)
    values = [np.array([1, -2], dtype="int8"), np.array([0.5, 1.5], dtype="float32"),
              np.array([300, 4], dtype="int16")]
    expected = reference(reference(reference(values[0], values[1]), values[2]), 3)
    assert_like_numpy(evaluate(output, [x, y, z], values), expected)


@pytest.mark.parametrize("name", ["add", "mul"])
def test_add_and_mul_need_two_inputs(name):
    with pytest.raises(TypeError, match=rf"Elemwise{{{name},no_inplace}}: expected at least 2 "
                                        rf"inputs, got 1"):
        getattr(T, name)(T.dvector())


def test_a_binary_function_checks_its_number_of_inputs():
    with pytest.raises(TypeError, match=r"Elemwise{sub,no_inplace}: expected 2 inputs, got 3"):
        T.sub(T.dvector(), T.dvector(), T.dvector())
    with pytest.raises(TypeError, match=r"Elemwise{exp,no_inplace}: expected 1 input, got 2"):
        T.exp(T.dvector(), T.dvector())


# -- round --------------------------------------------------------------------------------------

TIES = [-3.5, -2.5, -1.5, -0.5, -0.4, 0.0, 0.4, 0.5, 1.5, 2.5, 3.5, 0.49999999999999994,
        6e4, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_round_modes(dtype):
    x = T.tensor(dtype, shape=(None,))
    values = np.array(TIES, dtype=dtype)
    half_even = ELEMWISE_CASES["round_half_to_even"].reference(values)
    half_away = ELEMWISE_CASES["round_half_away_from_zero"].reference(values)
    assert_like_numpy(evaluate(T.round(x), [x], [values]), half_even)
    assert_like_numpy(evaluate(T.round(x, mode=None), [x], [values]), half_even)
    assert_like_numpy(evaluate(x.round(), [x], [values]), half_even)
    assert_like_numpy(evaluate(T.round(x, "half_away_from_zero"), [x], [values]), half_away)
    assert_like_numpy(evaluate(x.round(mode="half_away_from_zero"), [x], [values]), half_away)
    # -0.0 keeps its sign, as C's round().
    assert np.signbit(evaluate(T.round(x, "half_away_from_zero"), [x], [values])[4])


def test_round_of_integers_keeps_them():
    x = T.bvector()
    values = np.array([-128, -3, 0, 5, 127], dtype="int8")
    for mode in ("half_to_even", "half_away_from_zero"):
        assert_like_numpy(evaluate(T.round(x, mode), [x], [values]), values)


def test_iround_gives_int64():
    x = T.dvector()
    output = T.iround(x, "half_away_from_zero")
    assert output.type.dtype == "int64"
    assert_like_numpy(evaluate(output, [x], [np.array([0.5, -2.5, 1.4])]),
                      np.array([1, -3, 1]))
    assert_like_numpy(evaluate(T.iround(x), [x], [np.array([0.5, 2.5])]), np.array([0, 2]))


def test_round_errors():
    with pytest.raises(ValueError, match=r"round: mode must be 'half_to_even' or "
                                         r"'half_away_from_zero', got 'up'"):
        T.round(T.dvector(), mode="up")
    with pytest.raises(TypeError, match="round_half_away_from_zero is not defined for inputs "
                                        "of dtype complex128"):
        T.round(T.zvector(), mode="half_away_from_zero")


# -- clip ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("x_dtype, low, high", [
    ("int8", 0, 1.5), ("int8", -1000, 1000), ("float32", np.float64(0.0), 1.0),
    ("float32", 0, 1), ("uint8", 2, 200), ("float64", -np.inf, np.nan), ("bool", 0, 1),
    ("uint8", -5, 1), ("int64", 0, 2 ** 64), ("int16", None, 2 ** 40),
])
def test_clip_with_scalar_bounds_is_numpy_clip(x_dtype, low, high):
    x = T.tensor(x_dtype, shape=(None,))
    values = domain_values(x_dtype, (-100, 100))
    expected = reference_result(ELEMWISE_CASES["clip"], values, low, high)
    assert_like_numpy(evaluate(T.clip(x, low, high), [x], [values]), expected)
    assert_like_numpy(evaluate(x.clip(low, high), [x], [values]), expected)


def test_clip_with_a_bound_out_of_the_integer_range_widens():
    """numpy raises OverflowError for int8 clipped to [200, 300]; we widen to int16, as for
    every weak Python int that the tensor's dtype cannot hold."""
    x = T.bvector("x")
    values = np.array([-100, 5, 100], dtype="int8")
    with pytest.raises(OverflowError):
        np.clip(values, 200, 300)
    assert_like_numpy(evaluate(T.clip(x, 200, 300), [x], [values]),
                      np.full(3, 200, dtype="int16"))


def test_clip_with_tensor_bounds_broadcasts():
    x, low, high = T.fmatrix("x"), T.dcol("low"), T.frow("high")
    values = [np.linspace(-5, 5, 12, dtype="float32").reshape(3, 4),
              np.array([[-1.0], [0.0], [np.nan]]), np.array([[1, 2, 3, np.inf]], "float32")]
    output = T.clip(x, low, high)
    assert output.type == T.tensor_type("float64", (None, None))
    assert_like_numpy(evaluate(output, [x, low, high], values), np.clip(*values))


@pytest.mark.parametrize("low, high", [(None, 2), (-1, None), (None, None), (None, 2.5)])
def test_clip_with_a_missing_bound(low, high):
    x = T.bvector("x")
    values = np.array([-5, 0, 5], dtype="int8")
    assert_like_numpy(evaluate(T.clip(x, low, high), [x], [values]),
                      np.clip(values, low, high))


# -- switch / where -----------------------------------------------------------------------------

CONDITION_DTYPES = ["bool", "int8", "uint64", "float32", "complex64"]
BRANCH_DTYPES = ["bool", "int8", "uint16", "int64", "float16", "float32", "complex128"]


@pytest.mark.parametrize("condition_dtype", CONDITION_DTYPES)
def test_switch_with_mixed_dtypes_is_numpy_where(condition_dtype):
    condition = T.tensor(condition_dtype, shape=(None, 1))
    condition_values = domain_values(condition_dtype, (-1, 1), size=8).reshape(8, 1)
    for true_dtype, false_dtype in itertools.product(BRANCH_DTYPES, repeat=2):
        if_true = T.tensor(true_dtype, shape=(None,))
        if_false = T.tensor(false_dtype, shape=(1, None))
        values = [condition_values, domain_values(true_dtype, (-9, 9), size=8, seed=1),
                  domain_values(false_dtype, (-9, 9), size=8, seed=2).reshape(1, 8)]
        expected = np.where(*values)
        for function in (T.switch, T.where):
            output = function(condition, if_true, if_false)
            assert output.type == T.tensor_type(expected.dtype, (None, None))
            assert_like_numpy(evaluate(output, [condition, if_true, if_false], values),
                              expected)


@pytest.mark.parametrize("if_true, if_false", [(1.5, "x"), ("x", 1000), (1, 2.5), (True, 2),
                                               ("x", np.float64(1.5)), (2, "x")])
def test_switch_condition_does_not_promote_weak_branches(if_true, if_false):
    """The condition's dtype does not take part in promotion: where(float64 condition,
    float32 x, 1.5) is float32, as numpy.where."""
    condition, x = T.dvector("c"), T.fvector("x")
    condition_values = np.array([0.0, 1.0, np.nan])
    x_values = np.array([3.0, 4.0, 5.0], dtype="float32")
    branches = [x if b == "x" else b for b in (if_true, if_false)]
    expected = np.where(condition_values, *(x_values if b is x else b for b in branches))
    output = T.switch(condition, *branches)
    assert_like_numpy(evaluate(output, [condition, x], [condition_values, x_values]), expected)


def test_switch_with_a_python_condition():
    x, y = T.bvector("x"), T.dvector("y")
    values = [np.array([1, 2], dtype="int8"), np.array([0.5, 1.5])]
    for condition in (True, 0, 2.5):
        assert_like_numpy(evaluate(T.switch(condition, x, y), [x, y], values),
                          np.where(condition, *values))


# -- cast ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ALL_DTYPES)
def test_cast_to_every_dtype_is_astype(source):
    x = T.tensor(source, shape=(None,))
    values = domain_values(source, (-300.0, 300.0))
    for target in ALL_DTYPES:
        output = T.cast(x, target)
        assert output.type == T.tensor_type(target, (None,))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = values.astype(target)
        with warnings.catch_warnings():
            # Casting nan to int or complex to real: no warning, as compiled code.
            warnings.simplefilter("error")
            actual = evaluate(output, [x], [values])
        assert_like_numpy(actual, expected)
        assert_like_numpy(evaluate(x.astype(target), [x], [values]), expected)


def test_cast_to_the_same_dtype_is_the_variable():
    x = T.fmatrix()
    assert T.cast(x, "float32") is x
    assert T.cast(x, np.float32) is x
    assert x.astype(np.dtype("float32")) is x


def test_cast_of_python_data_and_dtype_spellings():
    output = T.cast([1.7, -2.2], "int32")
    assert output.type == T.tensor_type("int32", (2,))
    assert_like_numpy(output.eval(), np.array([1, -2], dtype="int32"))
    assert T.cast(T.dvector(), np.int8).type.dtype == "int8"
    assert T.cast(T.dvector(), "f4").type.dtype == "float32"


@pytest.mark.parametrize("dtype, message", [("float128", "dtype float128 is not supported"),
                                            ("str", "dtype str is not supported"),
                                            ("nonsense", "'nonsense' is not a dtype")])
def test_cast_to_an_unsupported_dtype_raises(dtype, message):
    with pytest.raises(TypeError, match=message):
        T.cast(T.dvector(), dtype)


# -- special functions: stability ---------------------------------------------------------------

def test_softplus_and_sigmoid_do_not_overflow():
    x = T.dvector()
    values = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    assert_like_numpy(evaluate(T.softplus(x), [x], [values]),
                      np.array([0.0, np.log1p(np.exp(-30.0)), np.log(2.0),
                                30.0 + np.log1p(np.exp(-30.0)), 1000.0]))
    assert_like_numpy(evaluate(T.sigmoid(x), [x], [values]),
                      1 / (1 + np.exp(-np.clip(values, -700, 700))))
