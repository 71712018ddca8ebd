"""Tests of the algebra of sympile/tensor/rewriting/zeros.py and of local_add_zero /
local_sub_zero on Alloc'd zeros (canonicalize.py): the graph FAST_RUN compiles against the
unrewritten one, the values (and dtypes) both give, and the cases the rules must leave alone
(a float variable times zeros, a zero or nan divisor, a value of several elements)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.graph.basic import Constant, graph_inputs
from sympile.tensor.basic import Alloc
from sympile.tensor.elemwise import Elemwise
from tests.utils import assert_like_numpy, op_name

NO_REWRITE = Mode(rewriter=None, name="no rewrite")
RNG = np.random.default_rng(11)

X = T.dmatrix("x")
Y = T.dmatrix("y")
F = T.fmatrix("f")
ROW = T.drow("row")
I32 = T.imatrix("i32")
U8 = T.tensor("uint8", shape=(None, None), name="u8")
IX = T.lscalar("i")
INDICES = T.lvector("indices")
SCALE = T.dscalar("scale")


def _inputs(output) -> list:
    return [v for v in graph_inputs([output]) if not isinstance(v, Constant)]


def _compile(output, inputs=None):
    mode = Mode(get_mode("FAST_RUN").excluding("fusion", "inplace").rewriter,
                record_history=True)
    return sympile.function(_inputs(output) if inputs is None else inputs, output, mode=mode)


def _ops(function) -> list[str]:
    return sorted(op_name(node.op) for node in function.maker.fgraph.toposort())


def _value(variable) -> np.ndarray:
    if variable.type.ndim == 0:
        return np.asarray(2 if variable.type.dtype == "int64" else 0.5,
                          dtype=variable.type.dtype)
    if variable.name == "indices":
        return np.array([2, 0, 2], dtype="int64")
    shape = tuple(4 if length is None else length for length in variable.type.shape)
    if variable.type.dtype.startswith(("int", "uint")):
        return RNG.integers(1, 5, size=shape).astype(variable.type.dtype)
    return RNG.normal(size=shape).astype(variable.type.dtype)


def _check_values(fast, output, values=None):
    variables = _inputs(output)
    values = [_value(v) for v in variables] if values is None else values
    expected = sympile.function(variables, output, mode=NO_REWRITE)(*values)
    actual = fast(*values)
    assert_like_numpy(actual, expected)
    assert actual.dtype == output.type.dtype


REMOVED = [
    # (name, output, the rule that must fire, FAST_RUN's ops)
    ("int times zeros", I32 * T.zeros_like(I32), "local_mul_zero",
     ["Alloc", "Shape_i{0}", "Shape_i{1}"]),
    ("zeros times uint", T.zeros_like(U8) * U8, "local_mul_zero",
     ["Alloc", "Shape_i{0}", "Shape_i{1}"]),
    ("constant times zeros", np.float64(0.01) * T.zeros_like(X), "local_mul_zero",
     ["Alloc", "Shape_i{0}", "Shape_i{1}"]),
    # A float quotient by a constant is a product by its reciprocal first (local_div_to_mul).
    ("zeros over constant", T.zeros_like(X) / 4.0, "local_mul_zero",
     ["Alloc", "Shape_i{0}", "Shape_i{1}"]),
    ("int zeros over constant", T.zeros_like(I32) / np.int32(4), "local_zero_div",
     ["Alloc", "Shape_i{0}", "Shape_i{1}"]),
    ("zeros int_div constant", T.zeros_like(I32) // np.int32(3), "local_zero_div",
     ["Alloc", "Shape_i{0}", "Shape_i{1}"]),
    ("x plus zeros", X + T.zeros_like(Y), "local_add_zero", []),
    ("zeros plus x", T.zeros_like(Y) + X, "local_add_zero", []),
    ("x minus zeros", X - T.zeros_like(Y), "local_sub_zero", []),
    ("zeros minus x", T.zeros_like(Y) - X, "local_zeros_sub", ["neg"]),
    ("float32 plus float64 zeros", F + T.zeros_like(Y), "local_add_zero", ["cast_float64"]),
    ("x minus learning rate times zeros", X - np.float64(0.01) * T.zeros_like(X),
     "local_mul_zero", []),
]


@pytest.mark.parametrize("output, name, expected_ops", [case[1:] for case in REMOVED],
                         ids=[case[0] for case in REMOVED])
def test_zeros_are_simplified(output, name, expected_ops):
    fast = _compile(output)
    assert name in fast.maker.fgraph.rewrite_history.names()
    assert _ops(fast) == sorted(expected_ops)
    _check_values(fast, output)


def test_broadcast_x_plus_zeros_is_allocated_from_the_zeros_lengths():
    output = ROW + T.zeros_like(X)
    fast = _compile(output)
    assert "local_add_zero" in fast.maker.fgraph.rewrite_history.names()
    # x allocated to the sum's shape, with the lengths the zeros were allocated with: the
    # zeros themselves are no longer computed.
    assert _ops(fast) == ["Alloc", "Shape_i{0}", "Shape_i{1}"]
    (alloc_node,) = [n for n in fast.maker.fgraph.toposort() if isinstance(n.op, Alloc)]
    assert alloc_node.inputs[0].name == "row"
    _check_values(fast, output)


def test_zeros_minus_broadcast_x_is_allocated():
    output = T.zeros_like(X) - ROW
    fast = _compile(output)
    assert "local_zeros_sub" in fast.maker.fgraph.rewrite_history.names()
    assert "neg" in _ops(fast) and "Alloc" in _ops(fast)
    _check_values(fast, output)


def test_times_zero_keeps_the_product_dtype_and_shape():
    output = T.zeros((1, 3), "int32") * I32
    fast = _compile(output)
    assert "local_mul_zero" in fast.maker.fgraph.rewrite_history.names()
    values = [np.arange(12, dtype="int32").reshape(4, 3)]
    result = fast(*values)
    assert result.shape == (4, 3) and result.dtype == np.int32 and not result.any()


LEFT_ALONE = [
    # x * 0 is nan where x is inf or nan: a float variable is not multiplied out.
    ("float variable times zeros", X * T.zeros_like(X), "local_mul_zero"),
    ("constant inf times zeros", np.float64(np.inf) * T.zeros_like(X), "local_mul_zero"),
    ("zeros over zero", T.zeros_like(X) / 0.0, "local_zero_div"),
    ("zeros over nan", T.zeros_like(X) / np.float64(np.nan), "local_zero_div"),
    ("zeros over variable", T.zeros_like(X) / Y, "local_zero_div"),
    ("int zeros int_div zero", T.zeros_like(I32) // np.int32(0), "local_zero_div"),
    ("uint zeros minus x", T.zeros_like(U8) - U8, "local_zeros_sub"),
]


@pytest.mark.parametrize("output, name", [case[1:] for case in LEFT_ALONE],
                         ids=[case[0] for case in LEFT_ALONE])
def test_left_alone(output, name):
    fast = _compile(output)
    assert name not in fast.maker.fgraph.rewrite_history.names()
    variables = _inputs(output)
    values = [_value(v) for v in variables]
    with np.errstate(all="ignore"):
        expected = sympile.function(variables, output, mode=NO_REWRITE)(*values)
        assert_like_numpy(fast(*values), expected)


def test_float_times_zeros_keeps_nan_where_x_is_inf():
    output = X * T.zeros_like(Y)
    fast = _compile(output)
    values = [np.array([[np.inf, 1.0], [np.nan, -2.0]]), np.ones((2, 2))]
    with np.errstate(invalid="ignore"):
        result = fast(*values)
    assert np.isnan(result[0, 0]) and np.isnan(result[1, 0])
    assert result[0, 1] == 0 and result[1, 1] == 0


# -- indexing and broadcasting of an Alloc -----------------------------------------------------

ALLOC_INDEXED = [
    ("last row", T.zeros_like(X)[-1], "local_subtensor_of_alloc"),
    ("slice", T.zeros_like(X)[1:3], "local_subtensor_of_alloc"),
    ("integer and step", T.zeros_like(X)[::2, IX], "local_subtensor_of_alloc"),
    ("newaxis", T.zeros_like(X)[None, :, 0], "local_subtensor_of_alloc"),
    ("advanced rows", T.zeros_like(X)[INDICES], "local_subtensor_of_alloc"),
    ("mask", T.zeros_like(X)[X > 0], "local_subtensor_of_alloc"),
    ("ellipsis", T.zeros_like(X)[..., INDICES], "local_subtensor_of_alloc"),
    ("row and column arrays", T.zeros_like(X)[INDICES[:, None], INDICES],
     "local_subtensor_of_alloc"),
    ("full value", T.full_like(X, 3.0)[IX], "local_subtensor_of_alloc"),
    ("transpose", T.zeros_like(X).T, "local_dimshuffle_of_alloc"),
    ("broadcast axes", T.full_like(X, 2.0).dimshuffle("x", 1, "x", 0),
     "local_dimshuffle_of_alloc"),
    ("dropped axis", T.alloc(np.float64(5.0), 1, X.shape[0])[0],
     "local_subtensor_of_alloc"),
    ("scan's accumulator", T.zeros_like(X).dimshuffle("x", 0, 1)[-1],
     "local_dimshuffle_of_alloc"),
]


@pytest.mark.parametrize("output, name", [case[1:] for case in ALLOC_INDEXED],
                         ids=[case[0] for case in ALLOC_INDEXED])
def test_indexed_alloc_becomes_alloc(output, name):
    fast = _compile(output)
    assert name in fast.maker.fgraph.rewrite_history.names()
    nodes = fast.maker.fgraph.toposort()
    assert [type(node.op).__name__ for node in nodes].count("Alloc") == 1
    assert isinstance(nodes[-1].op, Alloc)
    assert not any(isinstance(node.op, (T.Subtensor, T.AdvancedSubtensor, T.DimShuffle))
                   for node in nodes)
    _check_values(fast, output)


def test_alloc_of_a_vector_is_left_alone():
    output = T.alloc(T.dvector("v"), 3, 4)[0]
    fast = _compile(output)
    names = fast.maker.fgraph.rewrite_history.names()
    assert "local_subtensor_of_alloc" not in names
    _check_values(fast, output, [np.arange(4.0)])


@given(rows=st.integers(1, 5), columns=st.integers(1, 5), start=st.integers(-6, 6),
       stop=st.integers(-6, 6), step=st.sampled_from([1, 2, -1, -3]))
def test_slices_of_zeros_have_numpy_shapes(rows, columns, start, stop, step):
    output = T.zeros_like(X)[start:stop:step]
    fast = _compile(output, [X])
    value = np.ones((rows, columns))
    assert_like_numpy(fast(value), np.zeros_like(value)[start:stop:step])


def test_elemwise_left_over_reads_no_alloc():
    """x - c * (zeros[-1] + zeros) as scan_push_out_add leaves it: everything goes, x stays."""
    accumulator = T.zeros_like(X).dimshuffle("x", 0, 1)[-1]
    output = X - np.float64(0.01) * (accumulator + T.zeros_like(X))
    fast = _compile(output)
    assert _ops(fast) == []
    assert not any(isinstance(node.op, Elemwise) for node in fast.maker.fgraph.toposort())
    _check_values(fast, output)
