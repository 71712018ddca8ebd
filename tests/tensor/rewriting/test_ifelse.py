"""Tests of sympile/tensor/rewriting/ifelse.py: the graph before and after each rule, and the
values both give."""

from __future__ import annotations

import numpy as np

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.ifelse import IfElse, ifelse
from sympile.tensor.rewriting import rewrite_db
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
    # The first output is exp(x) itself; the second still chooses.
    assert fast.maker.fgraph.outputs[0].owner.op == same.owner.op
    assert node.outputs[1] is fast.maker.fgraph.outputs[1]
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
