"""Tests of sympile/tensor/rewriting/basic.py: the merge pass, constant folding, rewrite_db,
and end-to-end compilation in FAST_RUN against the unrewritten graph."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.basic import Apply, Constant
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.op import Op
from sympile.graph.rewriting.basic import RewriteHistory, in2out
from sympile.tensor.rewriting.basic import (
    MAX_FOLDED_SIZE,
    MergeRewriter,
    local_constant_folding,
    rewrite_db,
)
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable
from tests.utils import arrays, assert_like_numpy, op_name, shapes

NO_REWRITE = Mode(rewriter=None, name="no rewrite")


def op_counts(fgraph: FunctionGraph) -> Counter:
    return Counter(op_name(node.op) for node in fgraph.apply_nodes)


def merged(inputs, outputs) -> FunctionGraph:
    fgraph = FunctionGraph(inputs, outputs)
    MergeRewriter().apply(fgraph)
    fgraph.check_integrity()
    return fgraph


def folded(inputs, outputs) -> FunctionGraph:
    fgraph = FunctionGraph(inputs, outputs)
    in2out(local_constant_folding).apply(fgraph)
    fgraph.check_integrity()
    return fgraph


class NoFolding(Op):
    """x + 1, declining constant folding."""

    def make_node(self, x):
        x = as_tensor_variable(x, op=self, argument="x")
        return Apply(self, [x], [tensor_type(x.type.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + 1

    def do_constant_folding(self, fgraph, node):
        return False


class FailsAtRunTime(NoFolding):
    """Raises in perform."""

    def perform(self, node, inputs, output_storage):
        raise ValueError("FailsAtRunTime: always")

    def do_constant_folding(self, fgraph, node):
        return True


# -- merge --------------------------------------------------------------------------------------

def test_merge_duplicate_subexpressions():
    x, y = T.dvector("x"), T.dvector("y")
    # exp(x * y) built twice, and x * y a third time.
    output = T.exp(x * y) + T.exp(x * y) * (x * y)
    fgraph = FunctionGraph([x, y], [output])
    assert op_counts(fgraph) == Counter({"mul": 4, "exp": 2,
                                         "add": 1})
    assert MergeRewriter().apply(fgraph) is True
    fgraph.check_integrity()
    assert op_counts(fgraph) == Counter({"mul": 2, "exp": 1,
                                         "add": 1})
    assert MergeRewriter().apply(fgraph) is False
    values = [np.array([0.5, -1.0]), np.array([2.0, 3.0])]
    f = sympile.function([x, y], output, mode=NO_REWRITE)
    g = sympile.function([x, y], output)
    # Within an ulp: on the C backend exp is c_fastmath's (at most 1 ulp from numpy's).
    np.testing.assert_allclose(g(*values), f(*values), rtol=3e-16, atol=0)


def test_merge_keeps_different_ops_and_inputs_apart():
    x, y = T.dvector("x"), T.dvector("y")
    outputs = [x * y, y * x, x + y, T.sum(x), T.sum(x, keepdims=True)]
    fgraph = merged([x, y], outputs)
    assert len(fgraph.apply_nodes) == 5


def test_merge_equal_constants():
    x = T.dvector("x")
    two_a, two_b = T.constant(np.float64(2.0)), T.constant(np.float64(2.0), name="two")
    other = T.constant(np.float32(2.0))
    fgraph = merged([x], [x * two_a + x * two_b, x * other])
    constants = {v for v in fgraph.variables if isinstance(v, Constant)}
    # The float64 2s became one constant, so the two products became one node; the float32 2
    # is another constant.
    assert len(constants) == 2
    assert op_counts(fgraph)["mul"] == 2


def test_merge_records_history_and_merged_outputs_stay_separate_arrays():
    x = T.dvector("x")
    mode = Mode(rewriter=MergeRewriter(), record_history=True)
    f = sympile.function([x], [x * 2, x * 2, T.exp(x)], mode=mode)
    fgraph = f.maker.fgraph
    assert fgraph.outputs[0] is fgraph.outputs[1]
    assert "merge" in fgraph.rewrite_history.names()
    first, second, _ = f([1.0, 2.0])
    np.testing.assert_array_equal(first, [2.0, 4.0])
    assert first is not second and not np.shares_memory(first, second)
    first[0] = 100.0
    np.testing.assert_array_equal(second, [2.0, 4.0])
    np.testing.assert_array_equal(f([1.0, 2.0])[0], [2.0, 4.0])


# -- constant folding ---------------------------------------------------------------------------

def test_constant_folding_structure_and_values():
    x = T.dvector("x")
    user_array = np.array([1.0, 2.0, 3.0])
    c = T.constant(user_array)
    output = x + T.exp(c) * 2.0
    fgraph = folded([x], [output])
    # exp(c) * 2 (and the DimShuffle of 2.0 for broadcasting) is now one constant.
    assert op_counts(fgraph) == Counter({"add": 1})
    folded_constant = fgraph.outputs[0].owner.inputs[1]
    assert isinstance(folded_constant, T.TensorConstant)
    assert folded_constant.type == T.TensorType("float64", (3,))
    np.testing.assert_allclose(folded_constant.data, np.exp(user_array) * 2.0)
    # Read-only and not shared with the user's array.
    assert not folded_constant.data.flags.writeable
    assert not np.shares_memory(folded_constant.data, user_array)
    # The user's graph is untouched.
    assert op_name(output.owner.inputs[1].owner.op) == "mul"


@given(arrays("float64", shapes(max_dims=3)))
def test_constant_folding_values_match_numpy(value):
    c = T.constant(value)
    output = T.sqrt(T.abs(c) + 1.0) - c * c
    f = sympile.function([], output)
    assert f.maker.fgraph.apply_nodes == set()
    assert_like_numpy(f(), np.sqrt(np.abs(value) + 1.0) - value * value)


def test_constant_folding_is_skipped_when_it_should_be():
    c = T.constant(np.array([1.0, 2.0]))
    declined = NoFolding()(c)
    failing = FailsAtRunTime()(c)
    fgraph = folded([], [declined, failing])
    assert len(fgraph.apply_nodes) == 2
    # A run-time error stays a run-time error.
    f = sympile.function([], failing)
    with pytest.raises(ValueError, match="FailsAtRunTime: always"):
        f()
    np.testing.assert_array_equal(sympile.function([], declined)(), [2.0, 3.0])


def test_constant_folding_size_limit():
    side = int(np.sqrt(MAX_FOLDED_SIZE)) + 1
    large = T.zeros((side, side))
    small = T.zeros((3, 4))
    fgraph = folded([], [large, small])
    assert fgraph.outputs[0].owner is not None
    assert isinstance(fgraph.outputs[1], Constant)
    assert fgraph.outputs[1].type == T.TensorType(large.dtype, (3, 4))


def test_constant_outputs_and_updates_still_work():
    counter = sympile.shared(np.float64(0.0), "counter")
    initial = np.array([1.0, 2.0])
    state = sympile.shared(initial.copy(), "state")
    c = T.constant(np.float64(3.0))
    f = sympile.function([], [c * 2.0, c + 1.0], updates=[(counter, c + 1.0),
                                                          (state, state + c * 0.0)])
    assert all(isinstance(v, Constant) for v in f.maker.fgraph.outputs[:3])
    six, four = f()
    assert six == 6.0 and four == 4.0
    # Returned and stored values are writeable copies of the constants.
    six[...] = 0.0
    assert f()[0] == 6.0
    assert counter.get_value() == 4.0
    counter.get_value(borrow=True)[...] = -1.0
    f()
    assert counter.get_value() == 4.0
    np.testing.assert_array_equal(state.get_value(), initial)


def test_rewrite_db_entries():
    # Other modules register passes between these; this module's three keep their order.
    def own(names):
        return [n for n in names if n in ("merge", "local_constant_folding", "final_merge")]

    assert own(rewrite_db.names()) == ["merge", "local_constant_folding", "final_merge"]
    assert rewrite_db["local_constant_folding"] is local_constant_folding
    # FAST_COMPILE: the merge pass, the inlining of OpFromGraph(inline=True) nodes, and
    # the GPU placement (which does nothing unless compiling for a GPU).
    assert [str(r) for r in rewrite_db.query(include=["fast_compile"]).rewriters] == \
        ["merge", "local_inline_op_from_graph", "gpu_placement"]
    assert own(str(r) for r in rewrite_db.query(include=["fast_run"]).rewriters) == \
        ["merge", "local_constant_folding", "final_merge"]
    assert own(str(r) for r in rewrite_db.query(include=["fast_run"],
                                                 exclude=["constant_folding"]).rewriters) == \
        ["merge", "final_merge"]


def test_fast_run_history_names_every_rewrite():
    x = T.dvector("x")
    mode = sympile.compile.mode.get_mode("FAST_RUN").excluding("fusion")
    mode = Mode(mode.rewriter, record_history=True)
    f = sympile.function([x], x * (T.constant(1.0) + 1.0) + x * (T.constant(1.0) + 1.0),
                         mode=mode)
    history = f.maker.fgraph.rewrite_history
    assert isinstance(history, RewriteHistory)
    assert set(history.names()) == {"merge", "local_constant_folding"}
    np.testing.assert_array_equal(f([1.0, 2.0]), [4.0, 8.0])


# -- end to end ---------------------------------------------------------------------------------

def mlp_gradient_graph():
    rng = np.random.default_rng(0)
    x, target = T.dmatrix("x"), T.dmatrix("target")
    W = sympile.shared(rng.normal(size=(3, 5)), "W")
    b = sympile.shared(np.zeros(5), "b")
    V = sympile.shared(rng.normal(size=(5, 2)), "V")
    c = sympile.shared(np.zeros(2), "c")
    hidden = T.tanh(T.dot(x, W) + b)
    output = T.dot(hidden, V) + c
    cost = ((output - target) ** 2).mean() + 0.01 * (W ** 2).sum()
    params = [W, b, V, c]
    gradients = sympile.grad(cost, params)
    inputs = [x, target]
    values = [rng.normal(size=(4, 3)), rng.normal(size=(4, 2))]
    updates = [(p, p - 0.1 * g) for p, g in zip(params, gradients)]
    return inputs, [cost] + gradients, values, params, updates


def test_mlp_gradient_same_values_fewer_nodes():
    inputs, outputs, values, _, _ = mlp_gradient_graph()
    functions = {name: sympile.function(inputs, outputs, mode=mode)
                 for name, mode in [("none", NO_REWRITE), ("FAST_COMPILE", "FAST_COMPILE"),
                                    ("FAST_RUN", "FAST_RUN")]}
    counts = {name: len(f.maker.fgraph.apply_nodes) for name, f in functions.items()}
    assert counts["FAST_RUN"] < counts["FAST_COMPILE"] < counts["none"]
    expected = functions["none"](*values)
    for name in ("FAST_COMPILE", "FAST_RUN"):
        for actual, reference in zip(functions[name](*values), expected):
            np.testing.assert_allclose(actual, reference, rtol=1e-12, atol=1e-14)
    for f in functions.values():
        f.maker.fgraph.check_integrity()


def test_training_step_with_updates_matches_the_unrewritten_graph():
    results = {}
    for mode in (NO_REWRITE, "FAST_RUN"):
        inputs, outputs, values, params, updates = mlp_gradient_graph()
        step = sympile.function(inputs, outputs[0], updates=updates, mode=mode)
        costs = [step(*values) for _ in range(3)]
        results[str(mode)] = (costs, [p.get_value() for p in params])
    (costs_a, params_a), (costs_b, params_b) = results.values()
    np.testing.assert_allclose(costs_a, costs_b, rtol=1e-12)
    for a, b in zip(params_a, params_b):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("build", [
    lambda x, y: (T.exp(x) + T.exp(x)) * (y + 2.0 * 3.0),
    lambda x, y: T.dot(x, y) + T.dot(x, y).sum(),
    lambda x, y: T.maximum(x * y, x * y) - T.constant(np.arange(3.0)) ** 2,
    lambda x, y: (x + y)[1:] * (x + y)[1:],
])
def test_fast_run_matches_other_modes(build):
    x, y = T.dvector("x"), T.dvector("y")
    output = build(x, y)
    values = [np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -3.0])]
    results = [sympile.function([x, y], output, mode=mode)(*values)
               for mode in (NO_REWRITE, "FAST_COMPILE", "FAST_RUN")]
    for result in results[1:]:
        assert_like_numpy(result, results[0])
    no_rewrite = sympile.function([x, y], output, mode=NO_REWRITE)
    fast_run = sympile.function([x, y], output, mode="FAST_RUN")
    assert len(fast_run.maker.fgraph.apply_nodes) < len(no_rewrite.maker.fgraph.apply_nodes)
