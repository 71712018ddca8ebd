"""Tests of sympile/tensor/rewriting/specialize.py: each rule's graph before and after FAST_RUN
(without fusion, so the ops stay countable), its values against the unrewritten graph, and the
cases it must leave alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.graph.basic import Constant, graph_inputs
from sympile.tensor.rewriting import rewrite_db
from sympile.tensor.rewriting.specialize import specialize_db
from tests.utils import assert_like_numpy, op_name

NO_REWRITE = Mode(rewriter=None, name="no rewrite")
FAST = Mode(get_mode("FAST_RUN").excluding("fusion", "inplace").rewriter, name="FAST_RUN-",
            record_history=True)
RNG = np.random.default_rng(7)

X, Y = T.dmatrix("x"), T.dmatrix("y")
F, G = T.fmatrix("f"), T.fmatrix("g")


def _inputs(output):
    return [v for v in graph_inputs([output]) if not isinstance(v, Constant)]


def _ops(function) -> list[str]:
    return [op_name(node.op) for node in function.maker.fgraph.toposort()]


def compare(output, expected_ops, rule, values):
    """FAST_RUN (no fusion) gives expected_ops, names `rule` in its history, and computes
    what the unrewritten graph does on `values`."""
    inputs = _inputs(output)
    fast = sympile.function(inputs, output, mode=FAST)
    assert sorted(_ops(fast)) == sorted(expected_ops)
    assert rule in fast.maker.fgraph.rewrite_history.names()
    expected = sympile.function(inputs, output, mode=NO_REWRITE)(*values)
    assert_like_numpy(fast(*values), expected, rtol=1e-5 if output.type.dtype == "float32"
                      else 1e-12)
    assert fast.maker.fgraph.outputs[0].type == output.type


@pytest.mark.parametrize("output, expected", [
    (X * -1, ["neg"]),
    (-1 * X, ["neg"]),
    (F * np.float32(-1), ["neg"]),
    (T.ivector("i") * -1, ["neg"]),
    (T.ivector("i") * -1.0, ["cast_float64", "neg"]),
])
def test_mul_by_minus_one(output, expected):
    values = [np.arange(-3, 3).astype(v.type.dtype).reshape((2, 3) if v.type.ndim == 2 else 6)
              for v in _inputs(output)]
    compare(output, expected, "local_mul_by_minus_one", values)


def test_mul_by_minus_one_broadcast_constant_allocates():
    row = T.row("row")
    output = row * -np.ones((3, 1))
    f = sympile.function([row], output, mode=FAST)
    assert "local_mul_by_minus_one" in f.maker.fgraph.rewrite_history.names()
    value = np.array([[1.0, -2.0]])
    assert_like_numpy(f(value), value * -np.ones((3, 1)))


def test_mul_by_minus_one_left_alone_for_unsigned():
    u = T.tensor("uint8", shape=(None,), name="u")
    output = u * np.uint8(255)  # 255 is -1 modulo 256, but not the constant -1
    f = sympile.function([u], output, mode=FAST)
    assert "local_mul_by_minus_one" not in f.maker.fgraph.rewrite_history.names()


def _sum_products():
    """(output, its ops after FAST_RUN, the input shapes by name)."""
    return [
        ((X[:, :, None] * Y[None, :, :]).sum(axis=1), ["Dot"], {"x": (3, 4), "y": (4, 5)}),
        ((Y[None, :, :] * X[:, :, None]).sum(axis=1), ["Dot"], {"x": (3, 4), "y": (4, 5)}),
        ((X[:, None, :] * Y[None, :, :]).sum(axis=2), ["DimShuffle{1,0}", "Dot"],
         {"x": (3, 4), "y": (5, 4)}),
        ((X[:, None, :] * Y[:, :, None]).sum(axis=0), ["DimShuffle{1,0}", "Dot"],
         {"x": (3, 4), "y": (3, 5)}),
        ((X.T[:, :, None] * Y[None, :, :]).sum(axis=1), ["DimShuffle{1,0}", "Dot"],
         {"x": (4, 3), "y": (4, 5)}),
        ((F[:, :, None] * G[None, :, :]).sum(axis=1), ["Dot"], {"f": (3, 4), "g": (4, 5)}),
    ]


@pytest.mark.parametrize("index", range(len(_sum_products())))
def test_sum_of_product_to_dot(index):
    output, expected, shapes = _sum_products()[index]
    inputs = _inputs(output)
    values = [RNG.normal(size=shapes[v.name]).astype(v.type.dtype) for v in inputs]
    compare(output, expected, "local_sum_of_product_to_dot", values)


@pytest.mark.parametrize("output", [
    (X[:, :, None] * Y[None, :, :]).sum(axis=(0, 1)),   # two axes summed
    (X[:, :, None] * X[:, :, None]).sum(axis=1),        # both broadcast on one axis
    (X[:, :, None] * T.dtensor3("z")).sum(axis=1),      # not an outer product
    (X[:, :, None] * Y[None, :, :]).max(axis=1),        # not a sum
    (T.lmatrix("a")[:, :, None] * T.lmatrix("b")[None, :, :]).sum(axis=1),  # integers
    (F[:, :, None] * Y[None, :, :]).sum(axis=1),        # mixed dtypes
])
def test_sum_of_product_left_alone(output):
    f = sympile.function(_inputs(output), output, mode=FAST)
    assert "local_sum_of_product_to_dot" not in f.maker.fgraph.rewrite_history.names()


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
       st.permutations([0, 1, 2]), st.booleans())
def test_sum_of_product_random_placements(n, k, m, axes, swap):
    # Axis `summed` is summed; x lives on (row_axis, summed), y on (summed, column_axis).
    row_axis, summed, column_axis = axes
    x_order = ["x"] * 3
    x_order[row_axis], x_order[summed] = 0, 1
    y_order = ["x"] * 3
    y_order[summed], y_order[column_axis] = 0, 1
    factors = [X.dimshuffle(*x_order), Y.dimshuffle(*y_order)]
    output = (factors[1] * factors[0] if swap else factors[0] * factors[1]).sum(axis=summed)
    f = sympile.function([X, Y], output, mode=FAST)
    assert "local_sum_of_product_to_dot" in f.maker.fgraph.rewrite_history.names()
    x_value, y_value = RNG.normal(size=(n, k)), RNG.normal(size=(k, m))
    expected = np.sum(np.transpose(x_value[:, :, None], np.argsort(
        [row_axis, summed, column_axis])) * np.transpose(y_value[None, :, :], np.argsort(
            [row_axis, summed, column_axis])), axis=summed)
    assert_like_numpy(f(x_value, y_value), expected, rtol=1e-12)


def test_registration():
    assert rewrite_db.tags_of("specialize") == {"specialize", "fast_run"}
    names = rewrite_db.names()
    assert names.index("stabilize") < names.index("specialize") < names.index("blas")
    for name in specialize_db.names():
        assert {"specialize", "fast_run"} <= specialize_db.tags_of(name)
        assert specialize_db[name].__doc__
    without = sympile.function([X], X * -1, mode=get_mode("FAST_RUN").excluding(
        "specialize", "fusion", "inplace"))
    assert _ops(without) == ["mul"]
