"""Tests of sympile.tensor.variable: TensorVariable's operators (against numpy, with tensors,
Python scalars, numpy scalars and arrays on either side) and methods, as_tensor_variable,
constant and TensorConstant."""

from __future__ import annotations

import itertools
import operator
import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.variable import TensorConstant, TensorVariable, as_tensor_variable, constant
from tests.utils import assert_like_numpy, check_infer_shape, evaluate

BINARY_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv,
                    operator.floordiv, operator.mod, operator.pow, operator.and_, operator.or_,
                    operator.xor, operator.lshift, operator.rshift, operator.lt, operator.le,
                    operator.gt, operator.ge]
DTYPES = ["bool", "int8", "uint8", "int32", "float32", "float64", "complex64"]


def _values(dtype: str, seed: int) -> np.ndarray:
    """Small non-negative values (valid exponents and shift counts), never all zero."""
    values = np.random.default_rng(seed).integers(1, 4, size=5)
    if dtype == "bool":
        return values % 2 == 1
    return values.astype(dtype)


def _numpy(function, *arguments):
    if function is operator.pow:
        # ndarray.__pow__ takes shortcuts (bool ** 2 is np.square, int8); ** is np.power.
        function = np.power
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(function(*arguments))


@pytest.mark.parametrize("function", BINARY_OPERATORS, ids=lambda f: f.__name__)
def test_binary_operators_between_tensors(function):
    for x_dtype, y_dtype in itertools.product(DTYPES, repeat=2):
        x, y = T.tensor(x_dtype, shape=(None,)), T.tensor(y_dtype, shape=(None,))
        a, b = _values(x_dtype, 0), _values(y_dtype, 1)
        try:
            expected = _numpy(function, a, b)
        except TypeError:
            with pytest.raises(TypeError, match="is not defined for inputs of dtype"):
                function(x, y)
            continue
        output = function(x, y)
        assert isinstance(output, TensorVariable)
        assert_like_numpy(evaluate(output, [x, y], [a, b]), expected)


@pytest.mark.parametrize("function", BINARY_OPERATORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [2, 1.5, True, 1j, np.float64(2.0), np.int8(3),
                                   np.array([1, 2, 3, 1, 2], dtype="int16"), [1.0, 2.0, 1.0, 2.0,
                                                                             3.0]],
                         ids=["int", "float", "bool", "complex", "np.float64", "np.int8",
                              "array", "list"])
def test_operators_with_other_operands_on_both_sides(function, other):
    """x op other uses __op__, other op x the reflected __rop__ (numpy defers to it)."""
    for dtype in ("int8", "uint8", "float32", "bool"):
        x = T.tensor(dtype, shape=(None,))
        a = _values(dtype, 2)
        for arguments, values in (((x, other), (a, other)), ((other, x), (other, a))):
            try:
                expected = _numpy(function, *values)
            except TypeError:
                with pytest.raises(TypeError, match="is not defined for inputs of dtype"):
                    function(*arguments)
                continue
            output = function(*arguments)
            assert isinstance(output, TensorVariable), (function, arguments)
            assert_like_numpy(evaluate(output, [x], [a]), expected)


@pytest.mark.parametrize("expression, reference", [
    (lambda x: 2 - x, lambda a: 2 - a), (lambda x: 2 ** x, lambda a: 2 ** a),
    (lambda x: 1 / x, lambda a: 1 / a), (lambda x: 7 // x, lambda a: 7 // a),
    (lambda x: 7 % x, lambda a: 7 % a), (lambda x: 1.5 * x, lambda a: 1.5 * a),
    (lambda x: 1 << x, lambda a: 1 << a), (lambda x: 64 >> x, lambda a: 64 >> a),
    (lambda x: 5 & x, lambda a: 5 & a), (lambda x: 5 | x, lambda a: 5 | a),
    (lambda x: 5 ^ x, lambda a: 5 ^ a), (lambda x: 2 < x, lambda a: 2 < a),
    (lambda x: -x, lambda a: -a), (lambda x: abs(x), np.abs), (lambda x: ~x, lambda a: ~a),
    (lambda x: +x, lambda a: +a),
])
def test_python_scalar_expressions_on_int8(expression, reference):
    x = T.bvector("x")
    a = np.array([1, 2, 3, 4], dtype="int8")
    output = expression(x)
    with np.errstate(all="ignore"):
        expected = reference(a)
    assert output.type.dtype == expected.dtype.name
    assert_like_numpy(evaluate(output, [x], [a]), expected)


def test_unary_operators():
    x = T.fvector("x")
    assert +x is x
    a = np.array([-1.5, 0.0, 2.0], dtype="float32")
    assert_like_numpy(evaluate(-x, [x], [a]), -a)
    assert_like_numpy(evaluate(abs(x), [x], [a]), np.abs(a))
    b = T.vector(dtype="bool")
    assert_like_numpy(evaluate(~b, [b], [np.array([True, False])]), np.array([False, True]))
    with pytest.raises(TypeError, match="neg is not defined for inputs of dtype bool"):
        _ = -b
    with pytest.raises(TypeError, match="invert is not defined for inputs of dtype float32"):
        _ = ~x


def test_divmod_and_round():
    x = T.lvector("x")
    a = np.array([-7, 7, 9])
    quotient, remainder = divmod(x, 4)
    assert_like_numpy(evaluate(quotient, [x], [a]), a // 4)
    assert_like_numpy(evaluate(remainder, [x], [a]), a % 4)
    quotient, remainder = divmod(20, x)
    assert_like_numpy(evaluate(quotient, [x], [a]), 20 // a)
    assert_like_numpy(evaluate(remainder, [x], [a]), 20 % a)
    f = T.dvector("f")
    assert_like_numpy(evaluate(round(f), [f], [np.array([0.5, 1.5, -2.5])]),
                      np.round(np.array([0.5, 1.5, -2.5])))
    with pytest.raises(TypeError, match="only ndigits=None"):
        round(f, 2)


def test_equality_is_identity_and_eq_is_elementwise():
    x, y = T.dvector("x"), T.dvector("y")
    same = x
    assert (x == same) is True and (x == y) is False and (x != y) is True
    assert {x: 1, y: 2}[x] == 1
    a, b = np.array([1.0, 2.0, np.nan]), np.array([1.0, 3.0, np.nan])
    assert_like_numpy(evaluate(x.eq(y), [x, y], [a, b]), a == b)
    assert_like_numpy(evaluate(x.neq(y), [x, y], [a, b]), a != b)
    assert_like_numpy(evaluate(x.eq(2), [x], [a]), a == 2)


def test_comparison_operators_build_graphs():
    x = T.ivector("x")
    for function in (operator.lt, operator.le, operator.gt, operator.ge):
        output = function(x, 2)
        assert isinstance(output, TensorVariable) and output.type.dtype == "bool"
    # The reflected comparison: 2 < x is x > 2.
    a = np.array([1, 2, 3], dtype="int32")
    assert_like_numpy(evaluate(2 < x, [x], [a]), 2 < a)
    assert_like_numpy(evaluate(np.int64(2) >= x, [x], [a]), np.int64(2) >= a)


def test_attributes():
    x = T.tensor("int16", shape=(None, 1, 3), name="x")
    assert x.ndim == 3 and x.dtype == "int16" and x.broadcastable == (False, True, False)
    assert x.type == T.tensor_type("int16", (None, 1, 3)) and x.name == "x"


@pytest.mark.parametrize("static, shape", [((None, None), (2, 3)), ((None,), (4,)), ((), ()),
                                           ((None, 1, 3), (2, 1, 3))])
def test_transpose_property(static, shape):
    x = T.tensor("float64", shape=static)
    value = np.arange(float(np.prod(shape))).reshape(shape)
    assert x.T.type.shape == tuple(reversed(static))
    assert_like_numpy(evaluate(x.T, [x], [value]), value.T)
    assert_like_numpy(evaluate(x.transpose(), [x], [value]), value.T)


def test_astype():
    x = T.dvector("x")
    a = np.array([1.7, -2.5, 300.0])
    for dtype in ("int8", "uint8", "float16", "bool", "complex64"):
        output = x.astype(dtype)
        assert output.type == T.tensor_type(dtype, (None,))
        with np.errstate(all="ignore"):
            assert_like_numpy(evaluate(output, [x], [a]), a.astype(dtype))
    assert x.astype("float64") is x


def test_dimshuffle_method():
    x = T.dcol("x")
    value = np.arange(3.0).reshape(3, 1)
    for pattern, expected in (((1, 0), value.T), ((0,), value[:, 0]),
                              (("x", 0, 1), value[None]), (([1, "x", 0],), value.T[:, None])):
        output = x.dimshuffle(*pattern)
        assert isinstance(output.owner.op, DimShuffle)
        assert_like_numpy(evaluate(output, [x], [value]), expected)
        check_infer_shape(output, [x], [value])
    with pytest.raises(ValueError, match="cannot drop axis 0"):
        x.dimshuffle(1)
    with pytest.raises(ValueError, match="repeats an axis"):
        x.dimshuffle(0, 0, 1)
    with pytest.raises(ValueError, match="neither 'x' nor an axis"):
        x.dimshuffle(0, 2)


def test_truth_value_as_in_theano():
    """Variables are true (`if not W:` tests for None, as the SdA/RBM tutorials do), except
    the results of comparison operators, whose truth is unknown until the function runs."""
    x = T.dscalar("x")
    assert bool(x) and bool(x * 2) and (x or None) is x
    with pytest.raises(TypeError, match=r"the truth value of symbolic comparison .* is unknown "
                                        r"until the function runs"):
        if x > 0:
            pass
    with pytest.raises(TypeError, match="truth value"):
        _ = 0 < x < 1
    with pytest.raises(TypeError, match="truth value"):
        bool(x <= 2)


def test_iteration_and_len_with_a_static_length():
    x = T.tensor("float64", shape=(3, None), name="x")
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3
    value = np.arange(6.0).reshape(3, 2)
    for index, row in enumerate(rows):
        assert_like_numpy(evaluate(row, [x], [value]), value[index])
    _, _, third = x
    assert_like_numpy(evaluate(third, [x], [value]), value[2])


def test_iteration_and_len_without_a_static_length():
    x = T.dmatrix("x")
    with pytest.raises(TypeError, match=r"len\(\) of x .* is not known statically; use "
                                        r"\.shape\[0\]"):
        len(x)
    with pytest.raises(TypeError, match=r"cannot iterate over x .*: its length is not known "
                                        r"statically"):
        iter(x)
    with pytest.raises(TypeError, match="len"):
        len(T.dscalar())


def test_items_cannot_be_assigned():
    x = T.dvector()
    with pytest.raises(TypeError, match=r"symbolic variables are immutable: use "
                                        r"sympile.tensor.set_subtensor"):
        x[0] = 1.0


def test_eval():
    x, y = T.dvector("x"), T.dvector("y")
    output = x * 2 + y
    a, b = np.array([1.0, 2.0]), np.array([0.5, 0.5])
    assert_like_numpy(output.eval({x: a, y: b}), a * 2 + b)
    assert_like_numpy(output.eval({y: b, x: a}), a * 2 + b)
    assert_like_numpy(output.eval({x: [3.0, 4.0], y: b}), np.array([6.5, 8.5]))
    assert_like_numpy((T.constant(2.0) * 3).eval(), np.asarray(6.0))
    with pytest.raises(sympile.MissingInputError):
        output.eval({x: a})


def test_copy():
    x = T.dvector("x")
    duplicate = x.copy(name="dup")
    assert duplicate is not x and duplicate.name == "dup" and duplicate.type == x.type
    value = np.array([1.0, 2.0])
    result = evaluate(duplicate, [x], [value])
    assert_like_numpy(result, value)
    assert not np.shares_memory(result, value)


# -- as_tensor_variable and constant ------------------------------------------------------------

@pytest.mark.parametrize("value, dtype, shape", [
    (3, "int64", ()), (True, "bool", ()), (1.5, "float64", ()), (1j, "complex128", ()),
    ([1, 2, 3], "int64", (3,)), ([[1.0, 2.0]], "float64", (1, 2)), ((1, 2.5), "float64", (2,)),
    (np.float32(2.0), "float32", ()), (np.arange(6, dtype="uint16").reshape(2, 3), "uint16",
                                       (2, 3)),
    (np.array(5, dtype="int8"), "int8", ()), ([True, False], "bool", (2,)), (2 ** 63, "uint64", ()),
])
def test_as_tensor_variable_of_data(value, dtype, shape):
    result = as_tensor_variable(value)
    assert isinstance(result, TensorConstant)
    assert result.type == T.tensor_type(dtype, shape)
    np.testing.assert_array_equal(result.data, np.asarray(value))
    assert T.as_tensor is as_tensor_variable


def test_python_floats_become_floatx():
    with sympile.config.change_flags(floatX="float32"):
        assert as_tensor_variable(1.5).type.dtype == "float32"
        assert as_tensor_variable([1.5, 2]).type.dtype == "float32"
        assert as_tensor_variable(np.float64(1.5)).type.dtype == "float64"
        assert as_tensor_variable(2).type.dtype == "int64"


def test_as_tensor_variable_options_and_errors():
    x = T.dmatrix("x")
    assert as_tensor_variable(x) is x
    assert as_tensor_variable(x, ndim=2) is x
    with pytest.raises(TypeError, match=r"expected a 1-d tensor, got x of type"):
        as_tensor_variable(x, ndim=1)
    assert as_tensor_variable(3, dtype="int8").type == T.tensor_type("int8", ())
    assert as_tensor_variable(3, ndim=2).type.shape == (1, 1)
    assert as_tensor_variable([1, 2], name="c").name == "c"
    with pytest.raises(TypeError, match=r"cannot convert str 'abc' to a tensor variable"):
        as_tensor_variable("abc")
    with pytest.raises(TypeError, match=r"cannot convert object"):
        as_tensor_variable(object())
    with pytest.raises(TypeError, match=r"cannot convert \[\[1\], \[1, 2\]\] to a tensor"):
        as_tensor_variable([[1], [1, 2]])
    with pytest.raises(TypeError, match=r"myop, input 2: cannot convert"):
        as_tensor_variable(None, op="myop", argument=2)
    with pytest.raises(TypeError, match="expected a tensor, got"):
        as_tensor_variable(sympile.tensor.type_other.none_type_t())
    # A scalar-typed variable becomes a 0-d tensor (Theano's tensor_from_scalar).
    assert as_tensor_variable(sympile.scalar.get_scalar_type("float64")()).type.ndim == 0
    with pytest.raises(TypeError, match=r"cannot convert 1180591620717411303424"):
        as_tensor_variable(2 ** 70)


def test_lists_containing_variables_are_stacked():
    x, y = T.dscalar("x"), T.dscalar("y")
    stacked = as_tensor_variable([x, y, 1.0])
    assert stacked.type == T.tensor_type("float64", (3,))
    assert_like_numpy(stacked.eval({x: 2.0, y: 3.0}), np.array([2.0, 3.0, 1.0]))
    a = T.dvector("a")
    rows = as_tensor_variable([a, [1.0, 2.0]])
    assert rows.type.ndim == 2
    assert_like_numpy(rows.eval({a: np.array([5.0, 6.0])}), np.array([[5.0, 6.0], [1.0, 2.0]]))


def test_constant_copies_and_is_read_only():
    value = np.arange(3.0)
    c = constant(value, name="c")
    assert c.name == "c" and c.type == T.tensor_type("float64", (3,))
    assert not np.shares_memory(c.data, value)
    value[0] = 99.0
    assert c.data[0] == 0.0
    with pytest.raises(ValueError, match="read-only"):
        c.data[0] = 1.0
    assert value.flags.writeable
    # Made through the type, it copies too.
    direct = T.tensor_type("float64", (3,)).make_constant(value)
    assert not np.shares_memory(direct.data, value) and value.flags.writeable
    clone = c.clone()
    assert clone.data is c.data and clone.name == "c" and clone.equals(c)
    assert isinstance(clone, TensorConstant)


def test_constant_options_and_errors():
    assert constant([1, 2], dtype="float32").type == T.tensor_type("float32", (2,))
    assert constant(5, ndim=1).type.shape == (1,)
    with pytest.raises(ValueError, match=r"constant: value of shape \(2,\) cannot have ndim 0"):
        constant([1, 2], ndim=0)
    with pytest.raises(ValueError, match=r"constant: 1000 does not fit in dtype int8"):
        constant(1000, dtype="int8")
    with pytest.raises(TypeError, match="constant: x is already symbolic"):
        constant(T.dscalar("x"))
    with pytest.raises(TypeError, match="cannot make a tensor constant"):
        constant({"a": 1})


def test_constants_compare_by_value_and_print():
    assert constant([1.0, 2.0]).equals(constant(np.array([1.0, 2.0])))
    assert not constant([1.0, 2.0]).equals(constant([1.0, 2.0], dtype="float32"))
    assert not constant([1.0, 2.0]).equals(constant([1.0, 3.0]))
    assert str(constant([1, 2, 3])) == "[1, 2, 3]"
    assert str(constant(np.arange(100))) == "[ 0,  1, ..., 98, 99]"
    assert str(constant(1.5, name="half")) == "half"


def test_constants_have_the_operators():
    c = constant(np.array([1.0, 2.0]))
    x = T.dvector("x")
    assert_like_numpy(evaluate(c * x + c.T, [x], [np.array([3.0, 4.0])]),
                      np.array([4.0, 10.0]))
    assert c.ndim == 1 and c.dtype == "float64"


# Every method and attribute of Theano 1.0.5's _tensor_py_operators (theano/tensor/var.py).
THEANO_METHODS = """
__abs__ __neg__ __lt__ __le__ __gt__ __ge__ __bool__ __invert__ __and__ __or__ __xor__
__rand__ __ror__ __rxor__ __add__ __sub__ __mul__ __pow__ __mod__ __divmod__ __truediv__
__floordiv__ __rtruediv__ __rfloordiv__ __radd__ __rsub__ __rmul__ __rmod__ __rdivmod__
__rpow__ T transpose shape size any all reshape dimshuffle flatten ravel diagonal transfer
arccos arccosh arcsin arcsinh arctan arctanh ceil cos cosh deg2rad exp exp2 expm1 floor log
log10 log1p log2 rad2deg sin sinh sqrt tan tanh trunc astype __getitem__ take copy __iter__
ndim broadcastable dtype __dot__ __rdot__ dot sum prod norm mean var std min max argmin argmax
nonzero nonzero_values sort argsort clip conj conjugate repeat round trace __array_priority__
get_scalar_constant_value zeros_like cumsum cumprod ptp swapaxes fill choose squeeze compress
""".split()

ELEMENTWISE_METHODS = {
    "arccos": (-0.9, 0.9), "arccosh": (1.1, 3.0), "arcsin": (-0.9, 0.9), "arcsinh": (-3, 3),
    "arctan": (-3, 3), "arctanh": (-0.9, 0.9), "ceil": (-3, 3), "cos": (-3, 3),
    "cosh": (-3, 3), "deg2rad": (-360, 360), "exp": (-3, 3), "exp2": (-3, 3),
    "expm1": (-3, 3), "floor": (-3, 3), "log": (0.1, 3), "log10": (0.1, 3),
    "log1p": (-0.9, 3), "log2": (0.1, 3), "rad2deg": (-3, 3), "sin": (-3, 3),
    "sinh": (-3, 3), "sqrt": (0, 3), "tan": (-1.5, 1.5), "tanh": (-3, 3), "trunc": (-3, 3),
}


@pytest.mark.parametrize("make", [T.dmatrix, lambda: constant(np.ones((2, 2))),
                                  lambda: sympile.shared(np.ones((2, 2)))])
def test_theano_methods_exist(make):
    variable = make()
    assert [name for name in THEANO_METHODS if not hasattr(variable, name)] == []


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_METHODS))
def test_elementwise_methods(name):
    low, high = ELEMENTWISE_METHODS[name]
    value = np.random.default_rng(0).uniform(low, high, size=(3, 4))
    x = T.dmatrix("x")
    assert_like_numpy(evaluate(getattr(x, name)(), [x], [value]), getattr(np, name)(value))


@pytest.mark.parametrize("order", [1, 2, 3, 0.5, 0, np.inf, -np.inf])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_norm_like_numpy_vector_norms(order, axis):
    value = np.random.default_rng(1).normal(size=(3, 4))
    value[0, 1] = 0.0
    x = T.dmatrix("x")
    expected = np.linalg.norm(value.ravel() if axis is None else value, ord=order, axis=axis)
    assert_like_numpy(evaluate(x.norm(order, axis=axis), [x], [value]), expected)
    with pytest.raises(TypeError, match="norm: L must be a number"):
        x.norm("fro")


def test_norm_gradient():
    from sympile.gradient import verify_grad
    rng = np.random.default_rng(2)
    for order in (1, 2, 3):
        verify_grad(lambda a, order=order: a.norm(order, axis=1), [rng.normal(size=(2, 3))],
                    rng=rng)


def test_array_methods_like_numpy():
    rng = np.random.default_rng(3)
    value = rng.normal(size=(2, 3, 4))
    value[0, 0, 0] = 0.0
    x = T.dtensor3("x")
    cases = [
        (x.ptp(axis=1), np.ptp(value, axis=1)),
        (x.ptp(), np.ptp(value)),
        (x.swapaxes(0, -1), value.swapaxes(0, -1)),
        (x.nonzero_values(), value[value != 0]),
        (x.nonzero(return_matrix=True), np.array(np.nonzero(value))),
        (x.conjugate(), value.conjugate()),
        (x.fill(2.0), np.full_like(value, 2.0)),
        (x.zeros_like(dtype="int8"), np.zeros_like(value, dtype="int8")),
        (x.transfer("cpu"), value),
        (x.sum(axis=0, acc_dtype="float32"), value.sum(axis=0, dtype="float32")
         .astype("float64")),
        (x.mean(acc_dtype="float64", dtype="float32"), np.float32(value.mean())),
        (x.sort(order=None), np.sort(value)),
        (x.argsort(axis=0, kind="quicksort"), np.argsort(value, axis=0, kind="stable")),
    ]
    results = evaluate([case for case, _ in cases], [x], [value])
    for (_, expected), result in zip(cases, results):
        assert_like_numpy(result, expected, rtol=1e-6)
    rows = x.nonzero()
    assert len(rows) == 3
    assert_like_numpy(evaluate(rows[1], [x], [value]), np.nonzero(value)[1])
    with pytest.raises(ValueError, match="transfer: unknown target 'cuda'"):
        x.transfer("cuda")
    with pytest.raises(ValueError, match="sort: order applies to numpy's structured arrays"):
        x.sort(order="field")


def test_dot_pseudo_operators():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    values = [np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)]
    expected = values[0] @ values[1]
    assert_like_numpy(evaluate(a.__dot__(b), [a, b], values), expected)
    assert_like_numpy(evaluate(b.__rdot__(a), [a, b], values), expected)
    assert T.dmatrix().__array_priority__ == 1000
