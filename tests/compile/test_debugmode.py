"""DEBUG_MODE: FAST_RUN graphs pass its checks; wrong rewrites are caught, named, and leave
shared variables untouched."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile import scalar
from sympile.compile.debugmode import (
    DEBUG_MODE,
    BadRewriteError,
    DebugHistory,
    DebugMode,
    InvalidValueError,
)
from sympile.compile.mode import PREDEFINED_MODES, Mode, get_mode
from sympile.graph.rewriting.basic import SequentialGraphRewriter, in2out, node_rewriter
from sympile.graph.rewriting.db import RewriteQuery
from sympile.graph.rewriting.pattern import PatternNodeRewriter
from sympile.tensor import nnet
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.math import elemwise_of
from sympile.tensor.rewriting import rewrite_db

FAST_RUN_QUERY = RewriteQuery(include=("fast_run",))


def _is(node, scalar_op):
    return isinstance(node.op, Elemwise) and node.op.scalar_op == scalar_op


# Test-only wrong rewrites: they live in the Modes built below, never in rewrite_db.
@node_rewriter([Elemwise])
def local_wrong_exp(fgraph, node):
    """exp(x) -> x + 1 (wrong except at 0)."""
    if _is(node, scalar.exp):
        return [node.inputs[0] + np.float64(1.0)]
    return None


@node_rewriter([Elemwise])
def local_nan_log(fgraph, node):
    """log(x) -> log(x - 1): NaN for x < 1."""
    if _is(node, scalar.log) and node.inputs[0].owner is None:
        return [T.log(node.inputs[0] - np.float64(1.0))]
    return None


@node_rewriter([Elemwise])
def local_wrong_length(fgraph, node):
    """tanh(x) -> tanh(specify_shape(x, 5)): fails unless x has length 5."""
    if _is(node, scalar.tanh) and node.inputs[0].owner is None:
        return [T.tanh(T.specify_shape(node.inputs[0], (5,)))]
    return None


def _debug_mode_with(*rewriters):
    """DEBUG mode running FAST_RUN (without fusion, which would hide the nodes the test
    rewriters look for) and then the given node rewriters."""
    def rewrite(fgraph):
        rewrite_db.query_rewriter(FAST_RUN_QUERY.excluding("fusion"))(fgraph)
        SequentialGraphRewriter([in2out(r) for r in rewriters])(fgraph)
    return DebugMode(rewrite, name="DEBUG_MODE+test")


def test_debug_mode_is_predefined_and_derives_debug_modes():
    assert get_mode("DEBUG_MODE") is DEBUG_MODE
    assert get_mode("DebugMode") is DEBUG_MODE
    assert PREDEFINED_MODES["DEBUG_MODE"].rewriter == FAST_RUN_QUERY
    derived = DEBUG_MODE.excluding("local_constant_folding")
    assert isinstance(derived, DebugMode)
    assert derived.name == "DEBUG_MODE.excluding('local_constant_folding')"
    assert derived.rewriter.exclude == ("local_constant_folding",)
    with sympile.config.change_flags(mode="DEBUG_MODE"):
        assert get_mode(None) is DEBUG_MODE
    with pytest.raises(ValueError, match="DebugMode: the backend must be 'python'"):
        DebugMode(backend="c")


def test_mlp_gradient_passes_and_updates_shared_variables_once():
    rng = np.random.default_rng(0)
    inputs, targets = T.dmatrix("inputs"), T.dmatrix("targets")
    start = [rng.normal(size=(4, 5)), rng.normal(size=(5, 3))]

    def compile_step(mode):
        w1, w2 = sympile.shared(start[0].copy(), "w1"), sympile.shared(start[1].copy(), "w2")
        hidden = T.tanh(T.dot(inputs, w1) * 1.0 + 0.0)
        probabilities = T.sigmoid(T.dot(hidden, w2))
        cost = -T.mean(targets * T.log(probabilities)
                       + (1 - targets) * T.log(1 - probabilities))
        g1, g2 = sympile.grad(cost, [w1, w2])
        step = sympile.function([inputs, targets], [cost, g1], mode=mode,
                                updates=[(w1, w1 - 0.1 * g1), (w2, w2 - 0.1 * g2)])
        return step, w1, w2

    checked, w1, w2 = compile_step("DEBUG_MODE")
    reference, r1, r2 = compile_step("FAST_COMPILE")
    history = checked.maker.fgraph.rewrite_history
    assert isinstance(history, DebugHistory)
    assert len(history.checks) == len(history.records) > 0
    assert len(set(history.names())) > 2
    data = rng.normal(size=(6, 4)), (rng.random((6, 3)) > 0.5).astype(float)
    for _ in range(3):
        cost, g1 = checked(*data)
        expected_cost, expected_g1 = reference(*data)
        np.testing.assert_allclose(cost, expected_cost, rtol=1e-10)
        np.testing.assert_allclose(g1, expected_g1, rtol=1e-10)
        # Checking did not apply the updates a second time.
        np.testing.assert_allclose(w1.get_value(), r1.get_value(), rtol=1e-10)
        np.testing.assert_allclose(w2.get_value(), r2.get_value(), rtol=1e-10)


def test_stabilized_values_and_nan_inputs_pass():
    x = T.dvector("x")
    f = sympile.function([x], T.log(T.sigmoid(x)), mode="DEBUG_MODE")
    # The naive graph gives -inf at -1000; the stabilized one its finite value.
    with np.errstate(over="ignore", divide="ignore"):
        np.testing.assert_allclose(f([-1000.0, 0.0]), [-1000.0, np.log(0.5)])
    g = sympile.function([x], T.exp(x) * 1.0, mode="DEBUG_MODE")
    np.testing.assert_array_equal(g([np.nan, 0.0]), [np.nan, 1.0])


def test_wrong_rewrite_is_named_with_its_variable_and_difference():
    x = T.dvector("x")
    counter = sympile.shared(np.float64(0.0), "counter")
    f = sympile.function([x], T.exp(x).sum(), mode=_debug_mode_with(local_wrong_exp),
                         updates=[(counter, counter + 1)])
    assert "local_wrong_exp" in f.maker.fgraph.rewrite_history.names()
    np.testing.assert_allclose(f([0.0]), 1.0)  # exp(0) = 0 + 1: no difference to see
    assert counter.get_value() == 1.0
    with pytest.raises(BadRewriteError, match=r"rewrite 'local_wrong_exp' replaced .*exp.* "
                                              r"max \|difference\| 4\.389") as caught:
        f([2.0, 0.0])
    assert caught.value.rewrite == "local_wrong_exp"
    assert caught.value.max_difference == pytest.approx(np.exp(2.0) - 3.0)
    assert caught.value.old.owner.op.scalar_op == scalar.exp
    assert counter.get_value() == 1.0  # the failed call updated nothing


def test_rewrite_introducing_nan_raises_invalid_value():
    x = T.dvector("x")
    f = sympile.function([x], T.log(x) * 2.0, mode=_debug_mode_with(local_nan_log))
    with np.errstate(invalid="ignore"), \
            pytest.raises(InvalidValueError, match="rewrite 'local_nan_log' .* computes NaN or "
                                                   "inf where the replaced variable is finite"
                          ) as caught:
        f([0.5])
    assert caught.value.rewrite == "local_nan_log"


def test_rewrite_whose_graph_fails_is_named():
    x = T.dvector("x")
    f = sympile.function([x], T.tanh(x), mode=_debug_mode_with(local_wrong_length))
    np.testing.assert_allclose(f(np.zeros(5)), np.zeros(5))
    with pytest.raises(BadRewriteError, match="rewrite 'local_wrong_length': computing .* "
                                              "failed"):
        f(np.zeros(3))


def test_unrecorded_changes_are_caught_by_the_outputs_and_intermediates():
    x = T.dvector("x")

    def silently_double(fgraph):
        (output,) = fgraph.outputs
        fgraph.replace(output, output * 2.0)

    f = sympile.function([x], x + 1.0, mode=DebugMode(silently_double))
    with pytest.raises(BadRewriteError, match=r"the rewrites \(all together\)' replaced "
                                              r"output 0 .* max \|difference\| 2"):
        f([1.0])

    def overflow_inside(fgraph):
        (output,) = fgraph.outputs
        fgraph.replace(output, T.minimum(T.exp(fgraph.inputs[0] * 1000.0), output))

    g = sympile.function([x], x + 1.0, mode=DebugMode(overflow_inside))
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(g([-1.0]), [0.0])
        with pytest.raises(InvalidValueError, match="the rewritten graph computes NaN or inf "
                                                    "in .*created at"):
            g([1.0])


def test_pattern_rewrites_on_tensors_are_checked():
    neg, exp = elemwise_of(scalar.neg), elemwise_of(scalar.exp)
    x = T.dvector("x")
    double_negation = PatternNodeRewriter((neg, (neg, "x")), "x", name="neg_neg_pattern")
    f = sympile.function([x], T.neg(T.neg(x)) * 3.0, mode=DebugMode(in2out(double_negation)))
    assert f.maker.fgraph.rewrite_history.names() == ["neg_neg_pattern"]
    assert neg not in [node.op for node in f.maker.fgraph.apply_nodes]
    np.testing.assert_array_equal(f([1.0, -2.0]), [3.0, -6.0])
    wrong = PatternNodeRewriter((exp, "x"), (neg, "x"), name="exp_is_neg")
    g = sympile.function([x], T.exp(x), mode=DebugMode(in2out(wrong)))
    with pytest.raises(BadRewriteError,
                       match=r"rewrite 'exp_is_neg' .* max \|difference\| 3\.718"):
        g([0.0, 1.0])


def test_every_new_rule_passes_the_checks_on_ordinary_inputs():
    # Each expression fires one of the canonicalize / stabilize / specialize / shape / nnet
    # rules; DEBUG_MODE recomputes every replacement on these inputs and raises on a change.
    x, y, v = T.dmatrix("x"), T.dmatrix("y"), T.dvector("v")
    softmax = nnet.softmax(x)
    outputs = [
        x * 2 * 3, (x + 1) + 2, x / 4, x / y / v, T.switch(1, x, y), x[:, None].sum(axis=1),
        x.T.sum(axis=0), T.alloc(v, x.shape[0], x.shape[1]) + x, x * -1,
        (x[:, :, None] * y[None, :, :]).sum(axis=1), T.exp(T.log(x)), T.log(T.erfc(x * 10)),
        T.log(1 - T.exp(-x * x - 1e-3)), T.log(T.exp(x) + T.exp(y)), T.exp(x) / (1 + T.exp(x)),
        T.reshape(x, x.shape), T.alloc(x, x.shape[0], x.shape[1]) * 1,
        softmax * (y - (y * softmax).sum(axis=1, keepdims=True)),
    ]
    f = sympile.function([x, y, v], outputs, mode="DEBUG_MODE")
    names = set(f.maker.fgraph.rewrite_history.names())
    assert {"local_combine_constants", "local_div_to_mul", "local_div_div",
            "local_switch_constant_condition", "local_useless_subtensor",
            "local_reduce_dimshuffle", "local_elemwise_alloc", "local_mul_by_minus_one",
            "local_sum_of_product_to_dot", "local_exp_log", "local_log_erfc",
            "local_log1mexp", "local_log_add_exp", "local_exp_over_1_plus_exp",
            "local_softmax_grad"} <= names
    rng = np.random.default_rng(1)
    values = [rng.uniform(0.5, 3.0, (3, 3)), rng.uniform(0.5, 3.0, (3, 3)),
              rng.uniform(0.5, 3.0, 3)]
    results = f(*values)
    expected = sympile.function([x, y, v], outputs, mode=Mode(rewriter=None))(*values)
    for result, wanted in zip(results, expected):
        # log(erfc(10 x)) underflows in the naive graph: there the rewritten one is finite.
        finite = np.isfinite(wanted)
        assert np.isfinite(result).all()
        np.testing.assert_allclose(result[finite], wanted[finite], rtol=1e-12)
