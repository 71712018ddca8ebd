"""Tests of sympile/tensor/rewriting/fusion.py: the Elemwise trees that become one
Elemwise(Composite) node, the ones that must not (broadcasting, several clients, graph
outputs, the input bound), and the values and gradients of fused graphs against the
unrewritten ones."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.rewriting import rewrite_db
from sympile.tensor.rewriting.fusion import MAX_FUSED_INPUTS, MAX_FUSED_NODES
from tests.utils import assert_like_numpy

FUSED = get_mode("FAST_RUN").including("fusion")
NO_REWRITE = Mode(rewriter=None, name="no rewrite")


def elemwise_nodes(function):
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, Elemwise)]


def composites(function):
    return [node for node in elemwise_nodes(function) if isinstance(node.op.scalar_op, Composite)]


def wave(x):
    return T.exp(-x * x) * T.sin(x) + T.tanh(x) * 0.5


def test_registration():
    assert "local_elemwise_fusion" in rewrite_db
    assert rewrite_db.tags_of("local_elemwise_fusion") == frozenset({"fusion", "fast_run"})
    names = rewrite_db.names()
    # The reduction fusion takes in what elemwise fusion built, the centered square sum what
    # the reduction fusion built; then the GPU placement moves each fused node as one kernel.
    assert names.index("local_elemwise_fusion") == names.index("local_careduce_fusion") - 1
    assert names.index("local_careduce_fusion") == names.index("local_centered_square_sum") - 1
    assert names.index("local_centered_square_sum") == names.index("gpu_placement") - 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_expression_becomes_one_node_with_equal_values(dtype):
    x = T.tensor(dtype=dtype, shape=(None, None), name="x")
    fused = sympile.function([x], wave(x), mode=FUSED)
    naive = sympile.function([x], wave(x), mode=NO_REWRITE)
    assert len(fused.maker.fgraph.apply_nodes) == 1
    (node,) = composites(fused)
    assert node.inputs == fused.maker.fgraph.inputs
    assert len(elemwise_nodes(naive)) == 8
    value = np.random.default_rng(0).normal(size=(4, 5)).astype(dtype)
    result = fused(value)
    assert result.dtype == dtype
    assert_like_numpy(result, naive(value))
    assert_like_numpy(result, np.exp(-value * value) * np.sin(value)
                      + np.tanh(value) * np.asarray(0.5, dtype))


def test_fast_run_fuses_unless_excluded():
    x = T.dmatrix("x")
    assert composites(sympile.function([x], wave(x), mode="FAST_RUN"))
    assert not composites(sympile.function([x], wave(x), mode=FUSED.excluding("fusion")))


def test_row_is_not_recomputed_for_each_row_of_a_matrix():
    row, matrix = T.row("r"), T.matrix("m")
    output = T.exp(row) * T.sin(matrix) + 1.0
    fused = sympile.function([row, matrix], output, mode=FUSED)
    nodes = elemwise_nodes(fused)
    assert len(nodes) == 2
    exp_node = next(node for node in nodes if node.op.scalar_op.name == "exp")
    fgraph_row, fgraph_matrix = fused.maker.fgraph.inputs
    assert exp_node.inputs == [fgraph_row]
    (node,) = composites(fused)
    assert set(node.inputs) == {exp_node.outputs[0], fgraph_matrix}
    r = np.linspace(-1, 1, 4).reshape(1, 4).astype(sympile.config.floatX)
    m = np.arange(12.0).reshape(3, 4).astype(sympile.config.floatX)
    assert_like_numpy(fused(r, m), np.exp(r) * np.sin(m) + 1.0)


def test_same_broadcasting_fuses_across_inputs_of_different_static_lengths():
    x, y = T.dmatrix("x"), T.tensor(dtype="float64", shape=(3, None), name="y")
    fused = sympile.function([x, y], T.exp(x) * T.log(y), mode=FUSED)
    assert len(composites(fused)) == len(elemwise_nodes(fused)) == 1
    assert fused.maker.fgraph.outputs[0].type.shape == (3, None)
    a, b = np.ones((3, 2)), np.full((3, 2), 2.0)
    assert_like_numpy(fused(a, b), np.exp(a) * np.log(b))


def test_intermediate_with_several_clients_is_computed_once():
    x = T.dvector("x")
    shared_part = T.exp(x)
    outputs = [shared_part * 2.0 + 1.0, T.sin(shared_part) - x]
    fused = sympile.function([x], outputs, mode=FUSED)
    exp_nodes = [node for node in elemwise_nodes(fused) if node.op.scalar_op.name == "exp"]
    assert len(exp_nodes) == 1
    assert not any("exp" in str(node.op) for node in composites(fused))
    assert len(composites(fused)) == 2
    value = np.linspace(-1, 1, 5)
    first, second = fused(value)
    assert_like_numpy(first, np.exp(value) * 2.0 + 1.0)
    assert_like_numpy(second, np.sin(np.exp(value)) - value)


def test_intermediate_that_is_an_output_is_kept():
    x = T.dvector("x")
    middle = T.exp(x)
    fused = sympile.function([x], [middle, T.sqr(middle) + 1.0], mode=FUSED)
    value = np.array([0.0, 1.0, -2.0])
    first, second = fused(value)
    assert_like_numpy(first, np.exp(value))
    assert_like_numpy(second, np.exp(value) ** 2 + 1.0)
    assert any(node.op.scalar_op.name == "exp" for node in elemwise_nodes(fused))


def test_input_used_twice_is_read_once():
    x, y = T.dvector("x"), T.dvector("y")
    fused = sympile.function([x, y], T.sin(x * y) + T.cos(x) * y, mode=FUSED)
    (node,) = composites(fused)
    assert sorted(node.inputs, key=str) == fused.maker.fgraph.inputs
    assert node.op.scalar_op.nin == 2


def test_number_of_inputs_is_bounded():
    count = MAX_FUSED_INPUTS + 8
    inputs = [T.dvector(f"x{i}") for i in range(count)]
    total = T.exp(inputs[0])
    for variable in inputs[1:]:
        total = total + T.exp(variable)
    fused = sympile.function(inputs, total, mode=FUSED)
    nodes = elemwise_nodes(fused)
    assert len(nodes) < count
    assert all(len(node.inputs) <= MAX_FUSED_INPUTS for node in nodes)
    values = [np.full(3, i / count) for i in range(count)]
    np.testing.assert_allclose(fused(*values), sum(np.exp(v) for v in values), rtol=1e-12)


def test_integer_and_mixed_dtypes():
    i, f = T.tensor(dtype="int16", shape=(None,), name="i"), T.fvector("f")
    output = T.cast((i * 3 + 1), "float32") / (f + 2.0) > 0.5
    fused = sympile.function([i, f], output, mode=FUSED)
    naive = sympile.function([i, f], output, mode=NO_REWRITE)
    assert len(composites(fused)) == 1
    a, b = np.array([1, -2, 30], dtype="int16"), np.array([0.5, 1.0, -1.5], dtype="float32")
    assert_like_numpy(fused(a, b), naive(a, b))


def test_runtime_shape_error_still_raised():
    x, y = T.dvector("x"), T.dvector("y")
    fused = sympile.function([x, y], T.exp(x) + T.sin(y), mode=FUSED)
    assert len(composites(fused)) == 1
    with pytest.raises(ValueError, match="cannot be broadcast"):
        fused(np.ones(3), np.ones(4))


def test_gradient_of_fused_graph():
    x = T.dmatrix("x")
    cost = wave(x).sum()
    gradient = T.grad(cost, x)
    fused = sympile.function([x], [cost, gradient], mode=FUSED)
    naive = sympile.function([x], [cost, gradient], mode=NO_REWRITE)
    assert composites(fused)
    value = np.random.default_rng(1).normal(size=(3, 4))
    for a, b in zip(fused(value), naive(value)):
        assert_like_numpy(a, b)


def test_fused_graph_under_debug_mode():
    x = T.dmatrix("x")
    mode = get_mode("DEBUG_MODE").including("fusion")
    checked = sympile.function([x], wave(x), mode=mode)
    value = np.linspace(-1, 1, 6).reshape(2, 3)
    assert_like_numpy(checked(value), np.exp(-value * value) * np.sin(value)
                      + np.tanh(value) * 0.5)


def test_a_chain_of_thousands_of_ops_fuses_without_recursion():
    """Fusion walks iteratively (a chain of 500 ops hit Python's recursion limit), takes each
    node in once, and splits the chain into loops of at most MAX_FUSED_NODES scalar nodes."""
    x = T.dvector("x")
    y, expected = x, np.linspace(-1.0, 1.0, 5)
    for step in range(3000):
        y = T.sin(y) if step % 2 else y * 1.0001 + 0.5
        expected = np.sin(expected) if step % 2 else expected * 1.0001 + 0.5
    f = sympile.function([x], y)
    fused = [node.op.scalar_op for node in f.maker.fgraph.apply_nodes
             if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)]
    assert len(fused) >= 3000 * 3 // 2 // MAX_FUSED_NODES
    assert all(len(composite.nodes) <= MAX_FUSED_NODES for composite in fused)
    np.testing.assert_allclose(f(np.linspace(-1.0, 1.0, 5)), expected, rtol=1e-12)
