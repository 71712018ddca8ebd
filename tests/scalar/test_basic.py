"""Tests of sympile.scalar.basic: dtypes, ScalarType, the scalar ops (numpy's values and
dtypes on numpy scalars, their algebraic flags) and Cast."""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest

from sympile.scalar import basic as scalar
from sympile.scalar.basic import (
    ALL_DTYPES,
    SCALAR_OPS,
    Cast,
    ScalarType,
    cast_op,
    get_scalar_type,
    normalize_dtype,
    upcast,
)
from tests.utils import ELEMWISE_CASES, assert_like_numpy, domain_values, reference_result

# -- dtypes -------------------------------------------------------------------------------------


def test_dtype_groups():
    assert ALL_DTYPES == ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                          "uint32", "uint64", "float16", "float32", "float64", "complex64",
                          "complex128")
    assert set(scalar.DISCRETE_DTYPES) | set(scalar.CONTINUOUS_DTYPES) == set(ALL_DTYPES)
    assert not set(scalar.DISCRETE_DTYPES) & set(scalar.CONTINUOUS_DTYPES)


@pytest.mark.parametrize("spelling, name", [
    (np.float32, "float32"), ("f4", "float32"), (np.dtype("int16"), "int16"), (bool, "bool"),
    (int, "int64"), (float, "float64"), (complex, "complex128"), ("uint64", "uint64"),
    (np.complex64, "complex64"),
])
def test_normalize_dtype(spelling, name):
    assert normalize_dtype(spelling) == name


@pytest.mark.parametrize("spelling, message", [
    ("nonsense", r"'nonsense' is not a dtype"), ("float128", r"dtype float128 is not supported"),
    (object, r"dtype object is not supported"), ("U3", r"dtype str96 is not supported"),
    ("datetime64[s]", "is not supported"),
])
def test_normalize_dtype_rejects(spelling, message):
    with pytest.raises(TypeError, match=message):
        normalize_dtype(spelling)


def test_upcast_is_numpy_promotion():
    for first, second in itertools.product(ALL_DTYPES, repeat=2):
        assert upcast(first, second) == np.result_type(first, second).name
    assert upcast("int8", "uint8", "float16") == "float16"


# -- ScalarType ---------------------------------------------------------------------------------

def test_scalar_type_identity():
    assert ScalarType("float32") == ScalarType(np.float32)
    assert hash(ScalarType("float32")) == hash(ScalarType("f4"))
    assert ScalarType("float32") != ScalarType("float64")
    assert str(ScalarType("int8")) == "int8" and repr(ScalarType("int8")) == "ScalarType(int8)"
    assert get_scalar_type("float64") is get_scalar_type(np.float64)
    assert get_scalar_type("int8")().type == ScalarType("int8")


def test_scalar_type_filter():
    float32 = ScalarType("float32")
    exact = np.float32(1.5)
    assert float32.filter(exact) is exact
    assert float32.filter(exact, strict=True) is exact
    assert float32.filter(2) == np.float32(2) and float32.filter(2).dtype == "float32"
    assert float32.filter(0.5).dtype == "float32"
    assert float32.filter(np.int8(3)).dtype == "float32"
    assert float32.filter(np.float64(0.1), allow_downcast=True) == np.float32(0.1)
    assert np.isnan(float32.filter(float("nan")))
    with pytest.raises(TypeError, match="expected a numpy scalar of dtype float32"):
        float32.filter(1.5, strict=True)
    with pytest.raises(TypeError, match="without losing precision"):
        float32.filter(np.float64(0.1))
    with pytest.raises(TypeError, match="without losing precision"):
        float32.filter(0.1)
    with pytest.raises(TypeError, match="without losing precision"):
        ScalarType("int8").filter(300)
    for bad in ([1.0, 2.0], "abc", None):
        with pytest.raises(TypeError, match="expected a scalar of dtype float32"):
            float32.filter(bad)


# -- scalar ops ---------------------------------------------------------------------------------

def test_every_op_has_a_name_and_pickles():
    for name, op in SCALAR_OPS.items():
        assert op.name == name == str(op)
        assert pickle.loads(pickle.dumps(op)) == op


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_perform_on_numpy_scalars_matches_numpy(name):
    """Each op on numpy scalars of each dtype where numpy defines it: numpy's value and
    dtype; make_node types the output with numpy's dtype and refuses the other dtypes."""
    op, case = SCALAR_OPS[name], ELEMWISE_CASES[name]
    for dtype in ALL_DTYPES:
        columns = [domain_values(dtype, domain, size=8, seed=index)
                   for index, domain in enumerate(case.domains)]
        variables = [get_scalar_type(dtype)() for _ in columns]
        try:
            expected_dtype = reference_result(case, *(np.zeros(0, dtype) for _ in columns)).dtype
        except TypeError:
            with pytest.raises(TypeError, match=rf"{name} is not defined for inputs of dtype "
                                                rf"{dtype}"):
                op.make_node(*variables)
            continue
        node = op.make_node(*variables)
        assert node.outputs[0].type == get_scalar_type(expected_dtype)
        for row in zip(*columns):
            storage = [[None]]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op.perform(node, list(row), storage)
            expected = reference_result(case, *(np.asarray(v) for v in row))
            assert isinstance(storage[0][0], np.generic)
            assert_like_numpy(np.asarray(storage[0][0]), expected)


def test_make_node_checks_its_inputs():
    x = get_scalar_type("float64")()
    with pytest.raises(TypeError, match="add: expected 2 inputs, got 1"):
        scalar.add.make_node(x)
    from sympile.tensor.type import tensor_type
    with pytest.raises(TypeError, match="expected a scalar variable"):
        scalar.exp.make_node(tensor_type("float64", (None,))())
    # Python numbers become scalar constants of numpy's dtype.
    node = scalar.mul.make_node(x, 2)
    assert node.inputs[1].type == get_scalar_type("int64")
    assert node.outputs[0].type == get_scalar_type("float64")


def _sample(dtype: str) -> np.ndarray:
    return domain_values(dtype, (-5.0, 5.0), size=12)


@pytest.mark.parametrize("name", sorted(n for n, op in SCALAR_OPS.items() if op.commutative))
def test_commutative_ops_commute(name):
    op = SCALAR_OPS[name]
    for dtype in ("int16", "float64", "bool", "complex128"):
        a, b = _sample(dtype), np.roll(_sample(dtype), 5)
        try:
            forward = reference_result(ELEMWISE_CASES[name], a, b)
        except TypeError:
            continue
        with np.errstate(all="ignore"):
            assert_like_numpy(np.asarray(op.impl(b, a)), forward)


@pytest.mark.parametrize("name", sorted(n for n, op in SCALAR_OPS.items() if op.associative))
def test_associative_ops_associate(name):
    op = SCALAR_OPS[name]
    for dtype in ("int32", "uint8", "bool"):
        a, b, c = _sample(dtype), np.roll(_sample(dtype), 3), np.roll(_sample(dtype), 7)
        try:
            left = op.impl(op.impl(a, b), c)
        except TypeError:
            continue
        assert_like_numpy(np.asarray(op.impl(a, op.impl(b, c))), left)


@pytest.mark.parametrize("name", sorted(n for n, op in SCALAR_OPS.items()
                                        if op.identity is not None))
def test_identity_elements(name):
    op = SCALAR_OPS[name]
    for dtype in ("int8", "float32", "bool"):
        x = _sample(dtype)
        result = np.asarray(op.impl(np.asarray(op.identity, dtype=dtype), x))
        expected = x.astype(bool) if op.logical else x
        assert_like_numpy(result, expected)


def test_op_flags():
    assert {n for n, op in SCALAR_OPS.items() if op.comparison} == {"eq", "neq", "lt", "gt",
                                                                    "le", "ge"}
    assert {n for n, op in SCALAR_OPS.items() if op.logical} == {
        "logical_and", "logical_or", "logical_xor", "logical_not"}
    assert scalar.switch.promoted_inputs == (1, 2)
    assert all(op.promoted_inputs is None for n, op in SCALAR_OPS.items() if n != "switch")


def test_identity_copies():
    x = np.array([True, False])
    result = scalar.identity.impl(x)
    assert result.dtype == "bool" and not np.shares_memory(result, x)
    assert_like_numpy(result, x)


def test_softplus_has_exp_dtypes():
    for dtype in ("bool", "int8", "float16", "float32"):
        assert scalar.softplus.output_dtypes(dtype) == scalar.exp.output_dtypes(dtype)


def test_round_half_away_from_zero_finds_ties_exactly():
    values = np.array([0.49999999999999994, -0.49999999999999994, 2.5, -2.5, 4503599627370497.0])
    assert_like_numpy(scalar.round_half_away_from_zero.impl(values),
                      np.array([0.0, -0.0, 3.0, -3.0, 4503599627370497.0]))


# -- Cast ---------------------------------------------------------------------------------------

def test_cast_op():
    op = cast_op("int8")
    assert op is cast_op("int8") and op == Cast(np.int8) and hash(op) == hash(Cast("int8"))
    assert op != cast_op("int16")
    assert str(op) == op.name == "cast_int8"
    assert op.output_dtypes("float64") == ("int8",) == op.output_dtypes("complex64")
    assert pickle.loads(pickle.dumps(op)) == op
    with pytest.raises(TypeError, match="dtype float128 is not supported"):
        Cast("float128")


@pytest.mark.parametrize("source, target", list(itertools.product(
    ["float64", "complex128", "int64", "bool"], ["int8", "uint8", "bool", "float16"])))
def test_cast_is_astype_without_warnings(source, target):
    values = domain_values(source, (-300.0, 300.0))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = values.astype(target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        actual = cast_op(target).impl(values)
    assert_like_numpy(actual, expected)
