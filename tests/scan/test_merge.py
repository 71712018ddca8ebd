"""Merging scans (sympile.scan.merge): one Scan left where two ran over the same steps, the
values and gradients of the unmerged graph, and the cases left alone."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.gradient import verify_grad
from sympile.graph.basic import clone_replace
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.db import RewriteQuery
from sympile.ifelse import ifelse
from sympile.link.c.cmodule import compiler_available
from sympile.scan import Scan, scan, until
from sympile.scan.merge import scan_merge
from sympile.scan.rewriting import scan_db
from sympile.tensor.rewriting import MergeRewriter

FAST_RUN = Mode(RewriteQuery(include=("fast_run",)), backend="python", name="FAST_RUN_PYTHON")
WITHOUT_MERGE = FAST_RUN.excluding("scan_merge")

RNG = np.random.default_rng(6)
X = RNG.normal(size=7)
Y = RNG.normal(size=7)


def _scan_nodes(function):
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, Scan)]


def _both(inputs, outputs, points):
    """The functions of `outputs` without and with scan_merge, after asserting that they
    agree on every point."""
    before = sympile.function(inputs, outputs, mode=WITHOUT_MERGE, on_unused_input="ignore")
    after = sympile.function(inputs, outputs, mode=FAST_RUN, on_unused_input="ignore")
    for point in points:
        for expected, actual in zip(before(*point), after(*point)):
            np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
    return before, after


def _two_scans_over(x, h0):
    """A running sum (recurrent) and the squares (plain) of x's elements: two loops."""
    sums, _ = scan(lambda x_t, h: h + x_t, sequences=x, outputs_info=h0)
    squares, _ = scan(lambda x_t: x_t ** 2, sequences=x)
    return sums, squares


def test_registered_with_tags():
    assert {"scan", "fast_run"} <= scan_db.tags_of("scan_merge")


def test_two_scans_over_one_sequence_become_one():
    x = T.dvector("x")
    h0 = T.dscalar("h0")
    sums, squares = _two_scans_over(x, h0)
    before, after = _both([x, h0], [sums, squares], [(X, np.float64(0.5)), (X[:1], 0.0)])
    assert len(_scan_nodes(before)) == 2
    (node,) = _scan_nodes(after)
    # The sequence is passed and read once.
    assert node.op.n_sequence_inputs == 1
    assert node.op.recurrent_taps == ((-1,),)
    assert node.op.n_plain_outputs == 1
    np.testing.assert_allclose(after(X, 0.5)[0], 0.5 + np.cumsum(X))
    np.testing.assert_allclose(after(X, 0.5)[1], X ** 2)


def test_taps_directions_and_different_sequences_with_one_n_steps():
    x, y = T.dvectors("x", "y")
    k = T.iscalar("k")
    # Taps [-1, 1] and a reversed sequence: the outer slices are different variables.
    differences, _ = scan(lambda before, after: after - before,
                          sequences={"input": x, "taps": [-1, 1]}, n_steps=k)
    backwards, _ = scan(lambda x_t, y_t: x_t * y_t, sequences=[x, y], n_steps=k,
                        go_backwards=True)
    powers, _ = scan(lambda h: h * 2, outputs_info=T.constant(1.0, dtype="float64"),
                     n_steps=k)
    before, after = _both([x, y, k], [differences, backwards, powers], [(X, Y, 5), (X, Y, 0)])
    assert len(_scan_nodes(before)) == 3
    assert len(_scan_nodes(after)) == 1
    values = after(X, Y, 5)
    np.testing.assert_allclose(values[0], X[2:7] - X[0:5])
    np.testing.assert_allclose(values[1], (X * Y)[::-1][:5])
    np.testing.assert_allclose(values[2], 2.0 ** np.arange(1, 6))


def test_gradient_through_a_merged_scan():
    x = T.dvector("x")
    h0 = T.dscalar("h0")
    sums, squares = _two_scans_over(x, h0)
    fgraph = FunctionGraph([x, h0], [sums, squares], clone=False)
    # One n_steps variable (each scan computed its own x.shape[0]).
    MergeRewriter().apply(fgraph)
    first, _second = [node for node in fgraph.toposort() if isinstance(node.op, Scan)]
    replacements = scan_merge.transform(fgraph, first)
    assert replacements is not None
    merged_sums, merged_squares = replacements[sums], replacements[squares]
    assert merged_sums.owner is merged_squares.owner
    cost = (T.sin(merged_sums) * merged_squares).sum()

    def merged_cost(x_value, h0_value):
        return clone_replace(cost, {x: x_value, h0: h0_value})

    verify_grad(merged_cost, [X, np.float64(0.3)], rng=np.random.default_rng(0))


def test_gradient_graph_values_with_merging():
    x = T.dvector("x")
    h0 = T.dscalar("h0")
    sums, squares = _two_scans_over(x, h0)
    cost = (T.tanh(sums) * squares).sum()
    gradients = sympile.grad(cost, [x, h0])
    before, after = _both([x, h0], [cost, *gradients], [(X, np.float64(0.2))])
    # The two forward loops merge, and so do the two reverse loops of the gradient.
    assert len(_scan_nodes(after)) < len(_scan_nodes(before))


def test_until_loops_with_the_same_condition_merge():
    x = T.dvector("x")
    stop_at = T.dscalar("stop_at")
    first, _ = scan(lambda x_t, s: (x_t * 2, until(x_t > s)), sequences=x, non_sequences=stop_at)
    second, _ = scan(lambda x_t, s: (x_t + 1, until(x_t > s)), sequences=x,
                     non_sequences=stop_at)
    _, after = _both([x, stop_at], [first, second], [(np.arange(6.0), np.float64(2.5))])
    (node,) = _scan_nodes(after)
    assert node.op.has_until
    values = after(np.arange(6.0), 2.5)
    np.testing.assert_allclose(values[0], np.arange(4.0) * 2)
    np.testing.assert_allclose(values[1], np.arange(4.0) + 1)


def test_left_alone():
    x, y = T.dvectors("x", "y")
    h0 = T.dscalar("h0")
    k = T.iscalar("k")
    points = [(X, Y, np.float64(0.5), 4)]
    cases = {}
    # Different n_steps.
    sums, _ = scan(lambda x_t, h: h + x_t, sequences=x, outputs_info=h0)
    products, _ = scan(lambda y_t: y_t * 3, sequences=y, n_steps=k)
    cases["n_steps"] = [sums, products]
    # The second reads the first's output.
    first, _ = scan(lambda h: h * 2, outputs_info=h0, n_steps=k)
    second, _ = scan(lambda h, last: h + last, outputs_info=h0, non_sequences=first[-1],
                     n_steps=k)
    cases["reads the other"] = [first, second]
    # One loop stops early, the other does not; or the conditions differ.
    stopping, _ = scan(lambda x_t: (x_t * 2, until(x_t > 0)), sequences=x, n_steps=k)
    running, _ = scan(lambda x_t: x_t * 3, sequences=x, n_steps=k)
    cases["until"] = [stopping, running]
    other_stop, _ = scan(lambda x_t: (x_t + 2, until(x_t < 0)), sequences=x, n_steps=k)
    cases["other condition"] = [stopping, other_stop]
    for name, outputs in cases.items():
        _, after = _both([x, y, h0, k], outputs, points)
        assert len(_scan_nodes(after)) == 2, name


def test_a_scan_in_a_branch_is_not_merged_with_one_that_always_runs():
    x = T.dvector("x")
    c = T.iscalar("c")
    k = T.iscalar("k")
    always, _ = scan(lambda x_t: x_t * 2, sequences=x, n_steps=k)
    sometimes, _ = scan(lambda x_t: T.exp(x_t), sequences=x, n_steps=k)
    outputs = [always, ifelse(c, sometimes, always)]
    _, after = _both([x, c, k], outputs, [(X, 1, 3), (X, 0, 3)])
    assert len(_scan_nodes(after)) == 2


@pytest.mark.skipif(not compiler_available(), reason="no C compiler (config.cxx)")
def test_merged_scan_on_the_c_backend():
    x = T.dvector("x")
    h0 = T.dscalar("h0")
    sums, squares = _two_scans_over(x, h0)
    c_mode = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")
    function = sympile.function([x, h0], [sums, squares], mode=c_mode)
    assert len(_scan_nodes(function)) == 1
    values = function(X, 0.5)
    np.testing.assert_allclose(values[0], 0.5 + np.cumsum(X))
    np.testing.assert_allclose(values[1], X ** 2)
