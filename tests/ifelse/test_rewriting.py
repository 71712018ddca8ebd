"""Tests of sympile/tensor/rewriting/ifelse.py: the graph before and after each rule, the
values both give, the cases each rule leaves alone, and that the branch not taken still does
not run (Counted ops from tests/test_ifelse.py count their calls or raise)."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.graph.fgraph import FunctionGraph
from sympile.ifelse import IfElse, ifelse
from sympile.ifelse.rewriting import (
    local_ifelse_lift,
    local_ifelse_merge,
    local_ifelse_negated_condition,
    local_ifelse_nested_same_condition,
    local_ifelse_remove_unused_outputs,
)
from sympile.tensor.rewriting import rewrite_db
from tests.ifelse.test_basic import BACKENDS, CALLS, Counted
from tests.utils import assert_like_numpy

NO_REWRITE = Mode(rewriter=None, name="no rewrite")
FAST_RUN = Mode(get_mode("FAST_RUN").rewriter, record_history=True)


def _ops(function) -> list[str]:
    return [type(node.op).__name__ for node in function.maker.fgraph.toposort()]


def test_constant_condition_keeps_the_branch_it_selects():
    x = T.dvector("x")
    values = np.array([0.5, 2.0])
    for condition, expected in ((1, np.exp(values)), (0.0, values * 2)):
        out = ifelse(condition, T.exp(x), x * 2)
        plain = sympile.function([x], out, mode=NO_REWRITE)
        fast = sympile.function([x], out, mode=FAST_RUN)
        assert "IfElse" in _ops(plain)
        assert "IfElse" not in _ops(fast)
        assert len(_ops(fast)) == 1
        assert "local_ifelse_constant_condition" in fast.maker.fgraph.rewrite_history.names()
        assert_like_numpy(plain(values), expected)
        assert_like_numpy(fast(values), expected)


def test_condition_folded_to_a_constant():
    x = T.dvector("x")
    out = ifelse(T.lt(T.constant(2.0), 1.0), T.exp(x), T.log(x))
    fast = sympile.function([x], out, mode=FAST_RUN)
    assert _ops(fast) == ["Elemwise"]
    assert_like_numpy(fast(np.array([1.0, 4.0])), np.log([1.0, 4.0]))


def test_same_branches_become_that_variable():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    same = T.exp(x)
    first, second = ifelse(c, [same, x], [same, y])
    plain = sympile.function([c, x, y], [first, second], mode=NO_REWRITE)
    fast = sympile.function([c, x, y], [first, second], mode=FAST_RUN)
    (node,) = [n for n in fast.maker.fgraph.toposort() if isinstance(n.op, IfElse)]
    # The first output is exp(x) itself; the second still chooses, from a node that no
    # longer has the first (local_ifelse_remove_unused_outputs).
    assert fast.maker.fgraph.outputs[0].owner.op == same.owner.op
    assert node.outputs == [fast.maker.fgraph.outputs[1]]
    assert "local_ifelse_same_branches" in fast.maker.fgraph.rewrite_history.names()
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for condition in (1, 0):
        for actual, expected in zip(fast(condition, xv, yv), plain(condition, xv, yv)):
            assert_like_numpy(actual, expected)


def test_same_branches_equal_after_merging():
    c = T.iscalar("c")
    x = T.dvector("x")
    fast = sympile.function([c, x], ifelse(c, T.exp(x), T.exp(x)), mode=FAST_RUN)
    assert _ops(fast) == ["Elemwise"]
    assert_like_numpy(fast(0, np.array([0.0])), np.array([1.0]))


def test_rules_are_registered_with_their_tags():
    canonicalize = rewrite_db["canonicalize"]
    for name in ("local_ifelse_constant_condition", "local_ifelse_same_branches"):
        assert canonicalize.tags_of(name) >= {"canonicalize", "ifelse", "fast_run"}
    x = T.dvector("x")
    excluded = Mode(get_mode("FAST_RUN").excluding("ifelse").rewriter)
    kept = sympile.function([x], ifelse(1, T.exp(x), x * 2), mode=excluded)
    assert "IfElse" in _ops(kept)
    assert_like_numpy(kept(np.array([0.0])), np.array([1.0]))


# -- lifting, nesting, merging, negated conditions, unused outputs -----------------------------

def _ifelse_nodes(function) -> list:
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, IfElse)]


def _fired(function) -> list[str]:
    return function.maker.fgraph.rewrite_history.names()


def _same_values(inputs, outputs, points) -> tuple:
    """The function of `outputs` in FAST_RUN, after asserting that it agrees with the one
    without rewrites on every point (a tuple of input values)."""
    plain = sympile.function(inputs, outputs, mode=NO_REWRITE, on_unused_input="ignore")
    fast = sympile.function(inputs, outputs, mode=FAST_RUN, on_unused_input="ignore")
    for point in points:
        expected, actual = plain(*point), fast(*point)
        if not isinstance(outputs, list):
            expected, actual = [expected], [actual]
        for value, reference in zip(actual, expected):
            assert_like_numpy(value, reference)
    return fast


def _rule_on_first_ifelse(rule, inputs, outputs):
    """rule's answer for the first IfElse node of a FunctionGraph of outputs (no other
    rewrite runs)."""
    fgraph = FunctionGraph(inputs, outputs)
    node = next(node for node in fgraph.toposort() if isinstance(node.op, IfElse))
    return rule.transform(fgraph, node)


VALUES = np.array([0.5, 2.0, 3.0])


def test_lift_moves_the_elemwise_into_both_branches():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    out = T.exp(ifelse(c, Counted("then")(x), Counted("else")(x)) * y)
    fast = _same_values([c, x, y], out, [(1, VALUES, VALUES + 1), (0, VALUES, VALUES)])
    assert "local_ifelse_lift" in _fired(fast)
    (node,) = _ifelse_nodes(fast)
    # The ifelse is the last node: the product and the exp are inside its branches.
    assert fast.maker.fgraph.outputs[0].owner is node
    then_ops = {type(v.owner.op).__name__ for v in node.inputs[1:2]}
    assert then_ops == {"Elemwise"}
    CALLS.clear()
    fast(1, VALUES, VALUES)
    assert CALLS == {"then": 1}
    fast(0, VALUES, VALUES)
    assert CALLS == {"then": 1, "else": 1}


def test_lift_lets_the_branch_not_taken_simplify():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    out = ifelse(c, T.exp(x), T.ones_like(x)) * y
    fast = _same_values([c, x, y], out, [(1, VALUES, VALUES), (0, VALUES, VALUES + 1)])
    (node,) = _ifelse_nodes(fast)
    # ones * y is y: the else branch computes nothing.
    assert node.inputs[2] is fast.maker.fgraph.inputs[2]


def test_lift_through_two_ifelses_on_one_condition_makes_one():
    c = T.dscalar("c")
    x, y = T.dvectors("x", "y")
    out = ifelse(c, x, y) + ifelse(c, T.exp(y), Counted("boom", fail=True)(x))
    fast = _same_values([c, x, y], out, [(2.0, VALUES, VALUES * 3)])
    (node,) = _ifelse_nodes(fast)
    assert node.op.n_outs == 1
    with pytest.raises(RuntimeError, match="boom ran"):
        fast(0.0, VALUES, VALUES)


def test_lift_through_dimshuffle_and_sum():
    c = T.iscalar("c")
    x = T.dmatrix("x")
    out = ifelse(c, x, T.exp(x)).T.sum(axis=0)
    matrix = np.arange(6.0).reshape(2, 3) / 5
    fast = _same_values([c, x], out, [(1, matrix), (0, matrix)])
    (node,) = _ifelse_nodes(fast)
    assert fast.maker.fgraph.outputs[0].owner is node
    assert node.outputs[0].type.ndim == 1


def test_lift_keeps_other_outputs_of_the_ifelse():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    first, second = ifelse(c, [x, x * 2], [y, y * 3])
    outs = [T.exp(first), second]
    fast = _same_values([c, x, y], outs, [(1, VALUES, VALUES + 1), (0, VALUES, VALUES)])
    (node,) = _ifelse_nodes(fast)
    assert node.op.n_outs == 2
    assert set(fast.maker.fgraph.outputs) == set(node.outputs)


def test_lift_leaves_alone():
    c, d = T.iscalars("c", "d")
    x, y = T.dvectors("x", "y")
    # Different conditions.
    fgraph = FunctionGraph([c, d, x, y], [ifelse(c, x, y) + ifelse(d, y, x)])
    (add_node,) = [n for n in fgraph.toposort() if not isinstance(n.op, IfElse)]
    assert local_ifelse_lift.transform(fgraph, add_node) is None
    # The ifelse output has a client besides the elemwise (here: it is a graph output too).
    chosen = ifelse(c, x, y)
    fgraph = FunctionGraph([c, x, y], [T.exp(chosen), chosen])
    (exp_node,) = [n for n in fgraph.toposort() if not isinstance(n.op, IfElse)]
    assert local_ifelse_lift.transform(fgraph, exp_node) is None
    # A then value of static length 1 where the output's length is unknown: the elemwise
    # would broadcast it in the branch, where it raised before.
    one = T.tensor("float64", shape=(1,), name="one")
    fgraph = FunctionGraph([c, one, x, y], [ifelse(c, one, y) + x])
    (add_node,) = [n for n in fgraph.toposort() if not isinstance(n.op, IfElse)]
    assert local_ifelse_lift.transform(fgraph, add_node) is None


def test_nested_same_condition_takes_the_inner_branch():
    c = T.iscalar("c")
    x, y, z = T.dvectors("x", "y", "z")
    never = Counted("never", fail=True)
    outer_then = ifelse(c, ifelse(c, T.exp(x), never(x)), z)
    outer_else = ifelse(c, z, ifelse(c, never(y), T.log(y)))
    for out in (outer_then, outer_else):
        fast = _same_values([c, x, y, z], out,
                                   [(1, VALUES, VALUES, VALUES), (0, VALUES, VALUES, VALUES)])
        assert "local_ifelse_nested_same_condition" in _fired(fast)
        assert len(_ifelse_nodes(fast)) == 1
        assert not any(isinstance(n.op, Counted) for n in fast.maker.fgraph.toposort())


def test_nested_other_condition_is_left_alone():
    c, d = T.iscalars("c", "d")
    x, y, z = T.dvectors("x", "y", "z")
    out = ifelse(c, ifelse(d, x, y), z)
    assert _rule_on_first_ifelse(local_ifelse_nested_same_condition, [c, d, x, y, z],
                                 [out]) is None
    fast = _same_values([c, d, x, y, z], out,
                               [(c_value, d_value, VALUES, VALUES * 2, VALUES * 3)
                                for c_value in (0, 1) for d_value in (0, 1)])
    assert len(_ifelse_nodes(fast)) == 2


def test_merge_two_ifelses_on_one_condition():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    # Read by both then branches: eager with two nodes, in the then branch once merged.
    both = Counted("both")(x)
    outs = [ifelse(c, both * 2, y), ifelse(c, T.exp(both), T.log(y))]
    fast = _same_values([c, x, y], outs, [(1, VALUES, VALUES), (0, VALUES, VALUES)])
    assert "local_ifelse_merge" in _fired(fast)
    (node,) = _ifelse_nodes(fast)
    assert node.op.n_outs == 2
    CALLS.clear()
    fast(0, VALUES, VALUES)
    assert CALLS == {}
    fast(1, VALUES, VALUES)
    assert CALLS == {"both": 1}


def test_merge_leaves_alone_dependent_and_conditional_ifelses():
    c, d = T.iscalars("c", "d")
    x, y = T.dvectors("x", "y")
    # The second reads the first's output (through an op that is not lifted).
    first = ifelse(c, x, y)
    second = ifelse(c, T.sort(first), y)
    fgraph = FunctionGraph([c, x, y], [second, first])
    for node in [n for n in fgraph.toposort() if isinstance(n.op, IfElse)]:
        assert local_ifelse_merge.transform(fgraph, node) is None
    # One of them runs only when d is true: merged, it would run on every call.
    inner = ifelse(c, Counted("inner")(x), y)
    outs = [ifelse(d, inner, x), ifelse(c, x * 2, y)]
    fast = _same_values([c, d, x, y], outs, [(1, 0, VALUES, VALUES)])
    assert "local_ifelse_merge" not in _fired(fast)
    CALLS.clear()
    fast(1, 0, VALUES, VALUES)
    assert CALLS == {}


@pytest.mark.parametrize("negate", [
    pytest.param(lambda c: T.eq(c, 0), id="eq_zero"),
    pytest.param(lambda c: T.eq(0, c), id="zero_eq"),
    pytest.param(lambda c: T.logical_not(c), id="logical_not"),
    pytest.param(lambda c: T.invert(T.neq(c, 0)), id="invert_bool"),
    pytest.param(lambda c: T.logical_not(T.logical_not(T.logical_not(c))), id="three_nots"),
])
def test_negated_condition_swaps_the_branches(negate):
    c = T.dscalar("c")
    x = T.dvector("x")
    out = ifelse(negate(c), T.exp(x), Counted("else")(x))
    fast = _same_values([c, x], out, [(0.0, VALUES), (2.5, VALUES), (np.nan, VALUES),
                                             (-0.0, VALUES)])
    assert "local_ifelse_negated_condition" in _fired(fast)
    (node,) = _ifelse_nodes(fast)
    assert node.inputs[0] is fast.maker.fgraph.inputs[0]
    CALLS.clear()
    fast(0.0, VALUES)
    assert CALLS == {}


def test_neq_zero_condition_is_the_condition():
    c = T.iscalar("c")
    x = T.dvector("x")
    out = ifelse(T.neq(c, 0), T.exp(x), x)
    fast = _same_values([c, x], out, [(0, VALUES), (-3, VALUES)])
    (node,) = _ifelse_nodes(fast)
    assert node.inputs[0] is fast.maker.fgraph.inputs[0]


def test_invert_of_an_integer_condition_is_left_alone():
    # ~1 is -2, which is true: invert is not a logical not for integers.
    c = T.iscalar("c")
    x = T.dvector("x")
    out = ifelse(T.invert(c), T.exp(x), x)
    assert _rule_on_first_ifelse(local_ifelse_negated_condition, [c, x], [out]) is None
    _same_values([c, x], out, [(1, VALUES), (-1, VALUES)])


def test_unused_outputs_are_no_longer_computed():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    _unused, used = ifelse(c, [Counted("unused")(x), x * 2], [y, y * 3])
    fast = _same_values([c, x, y], used, [(1, VALUES, VALUES), (0, VALUES, VALUES)])
    assert "local_ifelse_remove_unused_outputs" in _fired(fast)
    (node,) = _ifelse_nodes(fast)
    assert node.op.n_outs == 1
    CALLS.clear()
    fast(1, VALUES, VALUES)
    assert CALLS == {}


def test_gradient_through_the_rewritten_ifelses():
    c = T.iscalar("c")
    x = T.dvector("x")
    chosen = ifelse(c, T.exp(x), x ** 2)
    cost = (T.sin(chosen) * 3).sum() + ifelse(T.eq(c, 0), x, T.zeros_like(x)).sum()
    gradient = sympile.grad(cost, x)
    _same_values([c, x], [cost, gradient], [(1, VALUES), (0, VALUES)])


def test_new_rules_are_registered_with_their_tags():
    canonicalize = rewrite_db["canonicalize"]
    for rule in (local_ifelse_lift, local_ifelse_merge, local_ifelse_negated_condition,
                 local_ifelse_nested_same_condition, local_ifelse_remove_unused_outputs):
        assert canonicalize.tags_of(rule.name) >= {"canonicalize", "ifelse", "fast_run"}


@pytest.mark.parametrize("mode", BACKENDS)
def test_rewritten_ifelses_stay_lazy_on_both_backends(mode):
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    both = Counted("both")(x)
    # Lifted (exp, *), merged (two ifelses on c), negated (eq(c, 0)), nested (inner on c).
    outs = [T.exp(ifelse(c, both * 2, y)) * y,
            ifelse(T.eq(c, 0), Counted("else")(y), ifelse(c, both + 1, y))]
    plain = sympile.function([c, x, y], outs, mode=NO_REWRITE)
    fast = sympile.function([c, x, y], outs, mode=mode)
    assert len(_ifelse_nodes(fast)) == 1
    for condition in (0, 1, 0):
        for actual, expected in zip(fast(condition, VALUES, VALUES), plain(condition, VALUES,
                                                                           VALUES)):
            assert_like_numpy(actual, expected)
    CALLS.clear()
    fast(0, VALUES, VALUES)
    assert CALLS == {"else": 1}
    fast(1, VALUES, VALUES)
    assert CALLS == {"else": 1, "both": 1}
