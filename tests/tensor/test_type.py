"""Tests of sympile.tensor.type: TensorType (identity, static shapes, filter's conversion
rules, value comparisons) and the Theano/PyTensor constructors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.scalar.basic import ALL_DTYPES
from sympile.tensor import type as tensor_type_module
from sympile.tensor.type import TensorType, tensor_type
from sympile.tensor.variable import TensorConstant, TensorVariable

# -- the type -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype(dtype):
    t = TensorType(np.dtype(dtype), shape=(None, 3, 1))
    assert t.dtype == dtype and t.numpy_dtype == np.dtype(dtype)
    assert t.shape == (None, 3, 1) and t.ndim == 3
    assert t.broadcastable == (False, False, True)
    variable = t("x")
    assert isinstance(variable, TensorVariable) and variable.name == "x"
    assert variable.type is t and variable.dtype == dtype


def test_shape_spellings():
    assert TensorType("float64", shape=[2, np.int64(3)]).shape == (2, 3)
    assert TensorType("float64", broadcastable=(True, False)).shape == (1, None)
    assert TensorType("float64", shape=(True, False)).shape == (1, None)
    assert TensorType("float64", shape=()).ndim == 0
    assert TensorType("float64", shape=(0,)).shape == (0,)


@pytest.mark.parametrize("kwargs, error, message", [
    ({}, TypeError, r"TensorType: give shape \(or broadcastable\)"),
    ({"shape": (None,), "broadcastable": (False,)}, TypeError, "not both"),
    ({"shape": (-1,)}, ValueError, r"a static shape entry must be None or an int >= 0, got -1"),
    ({"shape": (2.0,)}, ValueError, r"got 2.0"),
    ({"shape": ("3",)}, ValueError, r"got '3'"),
    ({"shape": 3}, TypeError, r"a static shape must be a tuple of ints and Nones, got 3"),
    ({"shape": "ab"}, TypeError, r"a static shape must be a tuple"),
])
def test_bad_shapes(kwargs, error, message):
    with pytest.raises(error, match=message):
        TensorType("float64", **kwargs)


@pytest.mark.parametrize("dtype, message", [("float128", "not supported"),
                                            ("str", "not supported"), ("xyz", "not a dtype")])
def test_bad_dtypes(dtype, message):
    with pytest.raises(TypeError, match=message):
        TensorType(dtype, shape=())


def test_equality_and_hash():
    a = TensorType("float32", (None, 3))
    assert a == TensorType(np.float32, [None, 3]) and hash(a) == hash(TensorType("f4", (None, 3)))
    assert a != TensorType("float64", (None, 3))
    assert a != TensorType("float32", (None, None))
    assert a != TensorType("float32", (None, 3, 1))
    assert a != "TensorType"
    assert len({a, TensorType("float32", (None, 3)), TensorType("float32", (2, 3))}) == 2
    assert tensor_type("float32", (None, 3)) is tensor_type(np.float32, [None, 3])


def test_string_forms():
    assert str(TensorType("float32", (None, 3))) == "TensorType(float32, shape=(?, 3))"
    # Theano's names for the all-unknown patterns, its broadcastable tuples, its "3D".
    assert str(TensorType("int8", (None,))) == "TensorType(int8, vector)"
    assert repr(TensorType("bool", ())) == "TensorType(bool, scalar)"
    assert str(TensorType("float64", (1, None))) == "TensorType(float64, row)"
    assert str(TensorType("float64", (None, 1))) == "TensorType(float64, col)"
    assert str(TensorType("float64", (1, None, None))) == \
        "TensorType(float64, (True, False, False))"
    assert str(TensorType("float64", (None,) * 3)) == "TensorType(float64, 3D)"


def test_typed_constructors_are_types():
    """As in Theano, T.dscalar is a TensorType: x.type is T.dscalar."""
    x = T.dscalar("x")
    assert x.type is T.dscalar and x.name == "x" and repr(T.dscalar) == \
        "TensorType(float64, scalar)"
    assert repr(T.fmatrix) == "TensorType(float32, matrix)"
    y = T.dmatrix("y", shape=(None, 3))
    assert y.type.shape == (None, 3) and y.type.dtype == "float64"
    with pytest.raises(ValueError, match="does not refine"):
        T.drow("r", shape=(2, None))


def test_is_super_and_convert_variable():
    general = TensorType("float64", (None, 3))
    specific = TensorType("float64", (2, 3))
    assert general.is_super(specific) and general.is_super(general)
    assert not specific.is_super(general)
    assert not general.is_super(TensorType("float32", (2, 3)))
    assert not general.is_super(TensorType("float64", (2, 3, 1)))
    assert not general.is_super(TensorType("float64", (2, 4)))
    assert not general.is_super(sympile.scalar.get_scalar_type("float64"))
    variable = specific()
    assert general.convert_variable(variable) is variable
    assert specific.convert_variable(general()) is None
    assert specific.convert_variable(TensorType("float32", (2, 3))()) is None


def test_clone():
    t = TensorType("float32", (None, 3))
    assert t.clone() == t
    assert t.clone(dtype="int8") == TensorType("int8", (None, 3))
    assert t.clone(shape=(2, None)) == TensorType("float32", (2, None))


def test_make_variable_and_constant():
    t = TensorType("int16", (2,))
    assert isinstance(t.make_variable("v"), TensorVariable)
    constant = t.make_constant([1, 2], name="c")
    assert isinstance(constant, TensorConstant) and constant.name == "c"
    assert constant.data.dtype == "int16"


# -- filter -------------------------------------------------------------------------------------

def test_filter_takes_an_exact_ndarray_as_is():
    t = TensorType("float32", (None, 2))
    value = np.ones((3, 2), dtype="float32")
    assert t.filter(value) is value
    assert t.filter(value, strict=True) is value
    view = np.ones((2, 4), dtype="float32")[:, ::2]
    assert t.filter(view) is view


def test_filter_makes_foreign_byte_order_native():
    value = np.arange(3, dtype=">f8")
    result = TensorType("float64", (None,)).filter(value)
    assert result.dtype.isnative and result.dtype == np.float64
    assert np.array_equal(result, value)


def test_strict_filter_accepts_only_exact_ndarrays():
    t = TensorType("float64", (None,))
    for value in ([1.0], np.ones(2, "float32"), np.float64(1.0)):
        with pytest.raises(TypeError, match=r"expected an ndarray of dtype float64, got"):
            t.filter(value, strict=True)
    assert t.is_valid_value(np.ones(2)) and not t.is_valid_value([1.0])
    assert not t.is_valid_value(np.ones((2, 2)))


@pytest.mark.parametrize("value, dtype", [
    (np.arange(3, dtype="int8"), "float32"), (np.ones(2, "float32"), "float64"),
    (np.arange(3, dtype="int64"), "float64"), (np.arange(3, dtype="uint8"), "int16"),
    (np.array([True, False]), "int8"), (np.ones(2, "float32"), "complex64"),
    (np.arange(3, dtype="int16"), "complex64"),
])
def test_filter_converts_safe_upcasts(value, dtype):
    result = TensorType(dtype, (None,)).filter(value)
    assert result.dtype == dtype
    assert np.array_equal(result, value)


@pytest.mark.parametrize("value, dtype", [
    ([1, 2, 3], "float32"), ([1.5, -2.25], "float32"), ([1, 2], "int8"), ([True], "int8"),
    ([1.0, 2.0], "int64"), ([float("nan"), float("inf")], "float16"), ([1 + 0j], "float64"),
    ([2 ** 40], "int64"), ([200], "uint8"), ((1, 2), "float64"),
])
def test_filter_converts_python_data_that_survives(value, dtype):
    result = TensorType(dtype, (None,)).filter(value)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, np.asarray(value))


@pytest.mark.parametrize("value, dtype", [
    (np.ones(2), "float32"), (np.ones(2, "int64"), "int32"), (np.ones(2, "int64"), "float32"),
    (np.ones(2, "complex64"), "float32"), (np.ones(2, "uint64"), "int64"),
    (np.ones(2, "float16"), "int32"), (np.array([np.float64(0.5)]), "float32"),
    ([0.1], "float32"), ([300], "int8"), ([-1], "uint8"), ([1.5], "int64"), ([-1], "uint64"),
    ([1e300], "float32"), ([float("inf")], "int32"), ([2], "bool"),
    ([2 ** 60 + 1], "float64"), ([1 + 1j], "float64"),
])
def test_filter_refuses_lossy_conversions(value, dtype):
    t = TensorType(dtype, (None,))
    with pytest.raises(TypeError, match=rf"cannot convert .* to {dtype} without losing "
                                        r"precision; convert it yourself .* or compile with "
                                        r"allow_input_downcast=True"):
        t.filter(value)
    # allow_downcast: numpy's astype, without warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = t.filter(value, allow_downcast=True)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(value).astype(dtype)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, expected)


def test_filter_numpy_scalars_follow_their_dtype():
    t = TensorType("float32", ())
    assert t.filter(np.float16(0.5)).dtype == "float32"
    with pytest.raises(TypeError, match="without losing precision"):
        t.filter(np.float64(0.5))


def test_filter_python_floats_to_floatx():
    with sympile.config.change_flags(floatX="float32"):
        t = TensorType("float32", ())
        result = t.filter(0.1)
        assert result.dtype == "float32" and result == np.float32(0.1)
        with pytest.raises(TypeError, match="without losing precision"):
            t.filter(0.1, allow_downcast=False)
        # Only a Python float, not a list of them.
        with pytest.raises(TypeError, match="without losing precision"):
            TensorType("float32", (None,)).filter([0.1])
    with pytest.raises(TypeError, match="without losing precision"):
        TensorType("float32", ()).filter(0.1)
    assert TensorType("float64", ()).filter(0.1) == 0.1


def test_filter_checks_rank_and_static_lengths():
    t = TensorType("float64", (None, 3))
    with pytest.raises(TypeError, match=r"expected an array with 2 dimensions \(TensorType\("
                                        r"float64, shape=\(\?, 3\)\)\), got one with 1 "
                                        r"\(shape \(3,\)\)"):
        t.filter(np.ones(3))
    with pytest.raises(TypeError, match=r"expected shape \(\?, 3\), got \(2, 4\) \(axis 1 has "
                                        r"length 4, not 3\)"):
        t.filter(np.ones((2, 4)))
    with pytest.raises(TypeError, match=r"expected an array with 0 dimensions"):
        TensorType("float64", ()).filter([1.0])
    assert t.filter(np.ones((0, 3))).shape == (0, 3)


@pytest.mark.parametrize("value, message", [
    ("abc", r"expected numbers of dtype float64, got str 'abc'"),
    (["a", "b"], r"expected numbers of dtype float64"),
    (b"x", r"expected numbers of dtype float64"),
    (None, r"expected numbers of dtype float64, got NoneType None"),
    ({"a": 1}, r"expected numbers of dtype float64"),
    ([[1.0], [1.0, 2.0]], r"cannot convert list .* to an array"),
    (np.array(["1"]), r"expected numbers of dtype float64, got an ndarray of dtype <U1"),
])
def test_filter_refuses_non_numbers(value, message):
    with pytest.raises(TypeError, match=message):
        TensorType("float64", (None,)).filter(value)
    with pytest.raises(TypeError, match=message):
        TensorType("float64", (None,)).filter(value, allow_downcast=True)


def test_filter_refuses_symbolic_variables():
    t = TensorType("float64", (None,))
    with pytest.raises(TypeError, match=r"got the symbolic variable x; to substitute a "
                                        r"variable, use function\(..., givens=...\)"):
        t.filter(T.dvector("x"))


# -- value comparisons --------------------------------------------------------------------------

def test_values_eq():
    t = TensorType("float64", (None,))
    a = np.array([1.0, np.nan, -np.inf])
    assert t.values_eq(a, a.copy())
    assert not t.values_eq(a, np.array([1.0, 2.0, -np.inf]))
    assert not t.values_eq(a, a.astype("float32"))
    assert not t.values_eq(a, a[:2])
    complex_type = TensorType("complex128", (None,))
    z = np.array([complex(np.nan, 1.0), 2 + 0j])
    assert complex_type.values_eq(z, z.copy())
    assert not complex_type.values_eq(z, np.array([complex(np.nan, 2.0), 2 + 0j]))
    ints = TensorType("int8", (None,))
    assert ints.values_eq(np.arange(3, dtype="int8"), np.arange(3, dtype="int8"))
    assert not ints.values_eq(np.arange(3, dtype="int8"), np.ones(3, dtype="int8"))


def test_values_eq_approx():
    float32 = TensorType("float32", (None,))
    a = np.array([1.0, np.nan, np.inf, 0.0], dtype="float32")
    assert float32.values_eq_approx(a, a * (1 + 1e-6))
    assert not float32.values_eq_approx(a, a * (1 + 1e-3))
    assert not float32.values_eq_approx(a, np.array([1.0, np.nan, -np.inf, 0.0], "float32"))
    assert not float32.values_eq_approx(a, a[:3])
    assert not float32.values_eq_approx(a, a + np.float32(1e-4), rtol=0, atol=0)
    assert float32.values_eq_approx(a, a + np.float32(0.5), atol=1.0)
    float64 = TensorType("float64", (None,))
    assert not float64.values_eq_approx(np.ones(2), np.ones(2) * (1 + 1e-5))
    ints = TensorType("int32", (None,))
    assert ints.values_eq_approx(np.arange(3), np.arange(3))
    assert not ints.values_eq_approx(np.arange(3), np.arange(1, 4))


def test_data_signature():
    t = TensorType("float64", (None,))
    assert t.data_signature(np.arange(4.0)) == t.data_signature(np.arange(4.0))
    assert t.data_signature(np.arange(4.0)) != t.data_signature(np.arange(1.0, 5.0))
    big = np.arange(5000.0)
    changed = big.copy()
    changed[1234] = -1
    assert t.data_signature(big) == t.data_signature(big.copy())
    assert t.data_signature(big) != t.data_signature(changed)
    strided = np.arange(10.0)[::2]
    assert t.data_signature(strided) == t.data_signature(strided.copy())


# -- constructors -------------------------------------------------------------------------------

KIND_SHAPES = {"scalar": (), "vector": (None,), "matrix": (None, None), "row": (1, None),
               "col": (None, 1), "tensor3": (None,) * 3, "tensor4": (None,) * 4,
               "tensor5": (None,) * 5, "tensor6": (None,) * 6, "tensor7": (None,) * 7}
PREFIX_DTYPES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
                 "d": "float64", "c": "complex64", "z": "complex128"}


def _plural(name: str) -> str:
    return name[:-6] + "matrices" if name.endswith("matrix") else name + "s"


@pytest.mark.parametrize("kind", sorted(KIND_SHAPES))
def test_generic_constructors_use_floatx(kind):
    constructor = getattr(T, kind)
    variable = constructor("v")
    assert variable.type == TensorType("float64", KIND_SHAPES[kind]) and variable.name == "v"
    with sympile.config.change_flags(floatX="float32"):
        assert constructor().type.dtype == "float32"
        assert getattr(T, _plural(kind))(2)[0].type.dtype == "float32"
    assert constructor(dtype="int8").type.dtype == "int8"
    assert constructor(dtype="floatX").type.dtype == "float64"


@pytest.mark.parametrize("prefix", sorted(PREFIX_DTYPES))
@pytest.mark.parametrize("kind", sorted(KIND_SHAPES))
def test_prefixed_constructors(prefix, kind):
    expected = TensorType(PREFIX_DTYPES[prefix], KIND_SHAPES[kind])
    variable = getattr(T, prefix + kind)("v")
    assert variable.type == expected and variable.name == "v"
    assert getattr(T, prefix + kind)().name is None
    many = getattr(T, _plural(prefix + kind))("a", "b")
    assert [v.name for v in many] == ["a", "b"] and all(v.type == expected for v in many)
    assert {prefix + kind, _plural(prefix + kind)} <= set(tensor_type_module.__all__)


def test_unsigned_scalar_constructors():
    for name, dtype in (("ubscalar", "uint8"), ("uwscalar", "uint16"),
                        ("uiscalar", "uint32"), ("ulscalar", "uint64")):
        assert getattr(T, name)("u").type == TensorType(dtype, ())


def test_plural_forms():
    a, b = T.dmatrices("a", "b")
    assert (a.name, b.name) == ("a", "b") and a.type == T.dmatrix().type and a is not b
    assert len(T.fscalars(3)) == 3 and T.fscalars(3)[0].name is None
    assert [v.name for v in T.ivectors("x, y,z")] == ["x", "y", "z"]
    assert T.lscalars() == []
    assert [v.type.dtype for v in T.matrices("p", "q")] == ["float64", "float64"]
    assert T.dmatrices.__name__ == "dmatrices" and "dmatrices('a', 'b')" in T.dmatrices.__doc__
    with pytest.raises(TypeError, match=r"dvectors: expected names \(str\) or a count \(int\), "
                                        r"got 1.5"):
        T.dvectors(1.5)


def test_constructor_shapes():
    assert T.matrix(shape=(None, 3)).type.shape == (None, 3)
    assert T.dvector(shape=(4,)).type == TensorType("float64", (4,))
    assert T.row(shape=(None, 5)).type.shape == (1, 5)
    assert T.fcol(shape=(2, 1)).type == TensorType("float32", (2, 1))
    with pytest.raises(ValueError, match=r"row: axis 0 of a row has length 1, got shape "
                                         r"\(2, 5\)"):
        T.row(shape=(2, 5))
    with pytest.raises(ValueError, match=r"TensorType\(float64, col\): shape \(\?, 3\) does "
                                         r"not refine the static shape \(\?, 1\)"):
        T.dcol(shape=(None, 3))
    with pytest.raises(ValueError, match=r"matrix: expected a shape of 2 entries, got \(3,\)"):
        T.matrix(shape=(3,))


def test_tensor_constructor():
    x = T.tensor("float32", shape=(None, 3), name="x")
    assert x.type == TensorType("float32", (None, 3)) and x.name == "x"
    named = T.tensor("x", shape=(None, 3))
    assert named.type == TensorType("float64", (None, 3)) and named.name == "x"
    assert T.tensor(dtype="int8", shape=(2,)).type == TensorType("int8", (2,))
    assert T.tensor(np.int16, (None,)).type.dtype == "int16"
    assert T.tensor("float64", (False, True)).type.shape == (None, 1)
    assert T.tensor("int32", broadcastable=(True,)).type.shape == (1,)
    assert T.tensor("float64", ndim=3).type.shape == (None,) * 3
    assert T.tensor().type == TensorType("float64", ())
    with sympile.config.change_flags(floatX="float32"):
        assert T.tensor("floatX", shape=(None,)).type.dtype == "float32"
        assert T.tensor("y", shape=(None,)).type.dtype == "float32"
        assert T.tensor(shape=(2,)).type.dtype == "float32"
    with pytest.raises(ValueError, match=r"tensor: ndim=2 does not match shape \(\?,\)"):
        T.tensor("float64", shape=(None,), ndim=2)
    with pytest.raises(TypeError, match=r"tensor: 'y' is not a dtype \(and name='z' is given\)"):
        T.tensor("y", shape=(None,), name="z")
    with pytest.raises(TypeError, match="not both"):
        T.tensor("float64", shape=(None,), broadcastable=(False,))


def test_module_exports_every_constructor():
    for name in tensor_type_module.__all__:
        assert getattr(T, name) is getattr(tensor_type_module, name)
