"""local_careduce_fusion (sympile/tensor/rewriting/fusion.py): the reductions of elementwise
results that become one FusedCAReduce node, the ones that must not (other clients, graph
outputs, dtypes without C code), and the values against the unrewritten graph."""

from __future__ import annotations

import numpy as np

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.graph.rewriting.db import RewriteQuery
from sympile.scalar import basic as scalar
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.reduction import CAReduce, FusedCAReduce
from sympile.tensor.rewriting import rewrite_db
from tests.utils import assert_like_numpy

FAST_RUN = get_mode("FAST_RUN")
UNFUSED = Mode(RewriteQuery(include=("fast_run",), exclude=("local_careduce_fusion",)),
               backend="python", name="FAST_RUN_UNFUSED")
NO_REWRITE = Mode(rewriter=None, name="no rewrite")


def nodes_of(function, op_class) -> list:
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, op_class)]


def test_registration():
    assert rewrite_db.tags_of("local_careduce_fusion") == frozenset({"fusion", "fast_run"})
    names = rewrite_db.names()
    assert names.index("local_elemwise_fusion") < names.index("local_careduce_fusion") \
        < names.index("final_merge")


def test_sum_of_squared_deviations_reads_x_in_two_reductions():
    # Without local_centered_square_sum, which then makes the fused reduction one read of x
    # (tests/tensor/reduction/test_centered.py).
    x = T.fvector("x")
    output = ((x - x.mean()) ** 2).sum()
    function = sympile.function([x], output,
                                mode=FAST_RUN.excluding("local_centered_square_sum"))
    (fused,) = nodes_of(function, FusedCAReduce)
    assert fused.op.scalar_op == scalar.add
    assert isinstance(fused.op.pre_op, Composite)
    assert str(fused.op.pre_op) == "composite{i0, i1 -> sqr(sub(i0, i1))}"
    assert fused.outputs[0] in function.maker.fgraph.outputs
    # The mean's sum is the only other reduction; no elementwise result is reduced.
    (plain,) = nodes_of(function, CAReduce)
    assert plain.inputs[0] is function.maker.fgraph.inputs[0]
    value = np.random.default_rng(0).standard_normal(1000).astype("float32")
    assert_like_numpy(function(value), ((value - value.mean()) ** 2).sum(), rtol=1e-5)
    unfused = sympile.function([x], output, mode=UNFUSED)
    assert not nodes_of(unfused, FusedCAReduce)
    assert_like_numpy(function(value), unfused(value))


def test_single_elementwise_op_and_axes():
    x = T.matrix("x")
    outputs = [T.exp(x).sum(axis=1), T.abs(x * 2).max(axis=0), T.sqr(x - 1).prod()]
    function = sympile.function([x], outputs, mode=FAST_RUN)
    assert len(nodes_of(function, FusedCAReduce)) == 3
    assert not nodes_of(function, Elemwise)
    value = np.random.default_rng(1).standard_normal((4, 5))
    expected = sympile.function([x], outputs, mode=NO_REWRITE)(value)
    for actual, reference in zip(function(value), expected):
        assert_like_numpy(actual, reference)


def test_not_fused_when_the_values_are_used_elsewhere():
    x = T.vector("x")
    squares = T.sqr(x)
    shared = sympile.function([x], [squares.sum(), squares.max()], mode=FAST_RUN)
    assert not nodes_of(shared, FusedCAReduce)
    returned = sympile.function([x], [squares, squares.sum()], mode=FAST_RUN)
    assert not nodes_of(returned, FusedCAReduce)
    value = np.array([1.0, -2.0, 3.0])
    assert [float(v) for v in shared(value)] == [14.0, 9.0]


def test_not_fused_without_c_code():
    half = T.vector("h", dtype="float16")
    complex_vector = T.vector("c", dtype="complex128")
    function = sympile.function([half, complex_vector],
                                [T.exp(half).sum(), T.exp(complex_vector).sum()],
                                mode=FAST_RUN)
    assert not nodes_of(function, FusedCAReduce)
    assert len(nodes_of(function, CAReduce)) == 2


def test_gradient_of_the_source_graph_is_unchanged():
    """Gradients are built before compilation: the fused graph of a cost and its gradient
    gives the unfused values."""
    x = T.vector("x")
    cost = ((x - x.mean()) ** 2).sum()
    gradient = sympile.grad(cost, x)
    function = sympile.function([x], [cost, gradient], mode=FAST_RUN)
    assert nodes_of(function, FusedCAReduce)
    value = np.array([0.5, 2.0, -1.0, 4.0])
    total, slope = function(value)
    assert_like_numpy(total, ((value - value.mean()) ** 2).sum())
    assert_like_numpy(slope, 2 * (value - value.mean()))
