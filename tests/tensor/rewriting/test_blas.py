"""Tests of sympile/tensor/rewriting/blas.py: each BLAS rule's graph after FAST_RUN, its
values against the unrewritten graph, dtypes kept, and the sums it must leave alone
(broadcasting z, mixed dtypes, integers, a product used twice)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.fgraph import FunctionGraph
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.rewriting import rewrite_db
from tests.utils import assert_like_numpy

NO_REWRITE = Mode(rewriter=None, name="no rewrite")


def op_counts(fgraph: FunctionGraph) -> Counter:
    """How many nodes of each kind: Elemwise nodes by scalar op name, others by op class."""
    return Counter(node.op.scalar_op.name if isinstance(node.op, Elemwise)
                   else type(node.op).__name__ for node in fgraph.apply_nodes)


def check(inputs, output, values, expected_ops):
    """FAST_RUN gives `expected_ops` (a subset check on BLAS and products: every op named
    with its count) and the unrewritten graph's values, in the output's Type."""
    fast = sympile.function(inputs, output, mode="FAST_RUN", on_unused_input="ignore")
    naive = sympile.function(inputs, output, mode=NO_REWRITE, on_unused_input="ignore")
    counts = op_counts(fast.maker.fgraph)
    for name, count in expected_ops.items():
        assert counts[name] == count, f"{name}: {counts}"
    assert fast.maker.fgraph.outputs[0].type == output.type
    assert_like_numpy(fast(*values), naive(*values))
    return counts


def _random(rng, dtype, *shapes):
    return [np.asarray(rng.standard_normal(shape), dtype=dtype) for shape in shapes]


def test_position_between_stabilize_and_final_merge():
    names = rewrite_db.names()
    assert names.index("stabilize") < names.index("blas") < names.index("final_merge")
    assert {"blas", "fast_run"} <= rewrite_db.tags_of("blas")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sgd_update_becomes_one_gemm(dtype):
    W, x, g = (T.matrix(name, dtype=dtype) for name in "Wxg")
    lr = T.scalar("lr", dtype=dtype)
    output = W - lr * T.dot(x.T, g)
    rng = np.random.default_rng(0)
    values = _random(rng, dtype, (3, 4), (5, 3), (5, 4)) + [np.asarray(0.1, dtype=dtype)]
    counts = check([W, x, g, lr], output, values, {"Gemm": 1, "Dot": 0, "sub": 0, "mul": 0})
    # What remains: the transpose of x and the negated learning rate.
    assert counts == Counter({"Gemm": 1, "DimShuffle": 1, "neg": 1})
    fast = sympile.function([W, x, g, lr], output)
    assert fast(*values).dtype == dtype


@pytest.mark.parametrize("build, alpha, beta", [
    (lambda z, x, y: z + T.dot(x, y), 1, 1),
    (lambda z, x, y: T.dot(x, y) + z, 1, 1),
    (lambda z, x, y: z - T.dot(x, y), -1, 1),
    (lambda z, x, y: 0.5 * T.dot(x, y) + 2 * z, 0.5, 2),
    (lambda z, x, y: -(3 * z) + T.dot(x, y) * 2, 2, -3),
    (lambda z, x, y: T.dot(x, y) - z * 0.25, 1, -0.25),
], ids=["z+dot", "dot+z", "z-dot", "a*dot+b*z", "-(b*z)+dot*a", "dot-z*b"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_forms(build, alpha, beta, dtype):
    z, x, y = (T.matrix(name, dtype=dtype) for name in "zxy")
    output = build(z, x, y)
    rng = np.random.default_rng(1)
    values = _random(rng, dtype, (2, 3), (2, 4), (4, 3))
    fast = sympile.function([z, x, y], output, mode="FAST_RUN")
    assert op_counts(fast.maker.fgraph) == Counter({"Gemm": 1})
    (node,) = fast.maker.fgraph.apply_nodes
    scales = [float(node.inputs[1].data), float(node.inputs[4].data)]
    assert scales == [alpha, beta]
    zv, xv, yv = values
    assert_like_numpy(fast(*values), (alpha * xv @ yv + beta * zv).astype(dtype))


def test_gemv_forms():
    rng = np.random.default_rng(2)
    y, x = T.vector("y"), T.vector("x")
    a, s = T.matrix("a"), T.scalar("s")
    values = [rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal((3, 2)),
              np.asarray(1.5)]
    check([y, x, a, s], y + s * T.dot(a, x), values, {"Gemv": 1, "Dot": 0})
    # A vector times a matrix: Gemv of the transposed matrix.
    values = [rng.standard_normal(2), rng.standard_normal(3), rng.standard_normal((3, 2)),
              np.asarray(1.5)]
    check([y, x, a, s], y - T.dot(x, a), values, {"Gemv": 1, "Dot": 0, "DimShuffle": 1})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ger_forms(dtype):
    a = T.matrix("a", dtype=dtype)
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    s = T.scalar("s", dtype=dtype)
    rng = np.random.default_rng(3)
    values = _random(rng, dtype, (3, 2), (3,), (2,)) + [np.asarray(0.5, dtype=dtype)]
    counts = check([a, x, y, s], a + s * T.outer(x, y), values, {"Ger": 1, "mul": 0})
    assert counts == Counter({"Ger": 1})
    column, row = x.dimshuffle(0, "x"), y.dimshuffle("x", 0)
    counts = check([a, x, y, s], a - T.dot(column, row), values, {"Ger": 1, "Dot": 0})
    assert counts == Counter({"Ger": 1})
    # A scaled a is no Ger: the dot of the column and the row becomes a Gemm.
    check([a, x, y, s], 2 * a + T.dot(column, row), values, {"Ger": 0, "Gemm": 1})


def test_plain_products_stay_dot():
    x, y = T.matrix("x"), T.matrix("y")
    fast = sympile.function([x, y], 2 * T.dot(x, y))
    assert op_counts(fast.maker.fgraph) == Counter({"Dot": 1, "mul": 1})


@pytest.mark.parametrize("z", [
    T.row("z"), T.col("z"), T.tensor(dtype="float64", shape=(1, 1), name="z"),
    T.matrix("z", dtype="float32"), T.vector("z"),
], ids=["row", "col", "1x1", "float32 z", "vector z"])
def test_broadcasting_or_mixed_z_left_alone(z):
    x, y = T.matrix("x"), T.matrix("y")
    output = z + T.dot(x, y)
    fast = sympile.function([z, x, y], output)
    counts = op_counts(fast.maker.fgraph)
    assert counts["Gemm"] == 0 and counts["Dot"] == 1
    rng = np.random.default_rng(4)
    zv = np.asarray(rng.standard_normal([n or 3 for n in z.type.shape]), dtype=z.type.dtype)
    values = [zv] + _random(rng, "float64", (3, 2), (2, 3))
    assert_like_numpy(fast(*values), values[0] + values[1] @ values[2])


def test_broadcasting_product_left_alone():
    z = T.matrix("z")
    x, y = T.tensor(dtype="float64", shape=(1, None), name="x"), T.matrix("y")
    fast = sympile.function([z, x, y], z + T.dot(x, y))
    assert op_counts(fast.maker.fgraph)["Gemm"] == 0


def test_mixed_operand_dtypes_and_integers_left_alone():
    z = T.matrix("z")
    x, y = T.matrix("x", dtype="float32"), T.matrix("y")
    assert op_counts(sympile.function([z, x, y], z + T.dot(x, y)).maker.fgraph)["Gemm"] == 0
    zi, xi, yi = (T.matrix(name, dtype="int64") for name in "zxy")
    counts = op_counts(sympile.function([zi, xi, yi], zi + T.dot(xi, yi)).maker.fgraph)
    assert counts["Gemm"] == 0 and counts["Dot"] == 1


def test_product_used_twice_left_alone():
    z, x, y = T.matrix("z"), T.matrix("x"), T.matrix("y")
    product = T.dot(x, y)
    fast = sympile.function([z, x, y], [z + product, product])
    counts = op_counts(fast.maker.fgraph)
    assert counts["Gemm"] == 0 and counts["Dot"] == 1


def test_float32_scale_stays_float32():
    W, x, g = (T.matrix(name, dtype="float32") for name in "Wxg")
    output = W - 0.1 * T.dot(x, g)
    fast = sympile.function([W, x, g], output)
    (gemm_node,) = [n for n in fast.maker.fgraph.apply_nodes if type(n.op).__name__ == "Gemm"]
    assert all(v.type.dtype == "float32" for v in gemm_node.inputs + gemm_node.outputs)
    rng = np.random.default_rng(5)
    values = _random(rng, "float32", (2, 2), (2, 3), (3, 2))
    naive = sympile.function([W, x, g], output, mode=NO_REWRITE)
    assert_like_numpy(fast(*values), naive(*values))
