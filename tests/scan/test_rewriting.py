"""Scan rewrites (sympile.scan.rewriting): the graph before and after, values unchanged."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.basic import io_toposort
from sympile.graph.rewriting.db import RewriteQuery
from sympile.scan import Scan, scan, until
from sympile.scan.rewriting import scan_db
from sympile.tensor.blas import Dot

FAST_RUN = Mode(RewriteQuery(include=("fast_run",)), backend="python", name="FAST_RUN_PYTHON")
WITHOUT_SCAN = FAST_RUN.excluding("scan")


def _only(rule):
    """FAST_RUN with, of the scan rewrites, only `rule`."""
    others = [name for name in scan_db.names() if name != rule]
    return FAST_RUN.excluding(*others)


def _scan_nodes(function):
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, Scan)]


def _inner_nodes(node):
    return io_toposort(node.op.inner_inputs, node.op.inner_outputs)


def _both(inputs, outputs, rule):
    return (sympile.function(inputs, outputs, mode=WITHOUT_SCAN),
            sympile.function(inputs, outputs, mode=_only(rule)))


def test_registered_with_tags():
    assert "scan" in sympile.tensor.rewriting.rewrite_db.names()
    for name in ("scan_remove_unused_outputs", "scan_remove_unused_inputs",
                 "scan_push_out_invariants", "scan_push_out_sequence_dot"):
        assert {"scan", "fast_run"} <= scan_db.tags_of(name)


def test_unused_plain_and_recurrent_outputs_are_removed():
    x = T.vector("x")
    h0 = T.scalar("h0")
    g0 = T.scalar("g0")
    # h feeds the used output s; g is read by nothing kept, nor is the plain output x_t ** 3.
    (h, g, s, cube), _ = scan(lambda x_t, h, g: [h + x_t, g * 2, h * x_t, x_t ** 3],
                              sequences=x, outputs_info=[h0, g0, None, None])
    before, after = _both([x, h0, g0], s, "scan_remove_unused_outputs")
    (node_before,), (node_after,) = _scan_nodes(before), _scan_nodes(after)
    assert len(node_before.outputs) == 4
    assert len(node_after.outputs) == 2
    assert node_after.op.recurrent_taps == ((-1,),)
    assert node_after.op.n_plain_outputs == 1
    assert any("pow" in str(node.op) for node in _inner_nodes(node_before))
    assert not any("pow" in str(node.op) for node in _inner_nodes(node_after))
    values = (np.arange(1.0, 6.0), np.float64(0.5), np.float64(3.0))
    np.testing.assert_allclose(after(*values), before(*values))


def test_state_read_by_the_until_condition_is_kept():
    h0 = T.scalar("h0")
    c0 = T.scalar("c0")
    limit = T.scalar("limit")
    (h, counter), _ = scan(lambda h, c, limit: [h * 2, c + 1, until(c + 1 >= limit)],
                           outputs_info=[h0, c0], non_sequences=limit, n_steps=20)
    before, after = _both([h0, c0, limit], h, "scan_remove_unused_outputs")
    (node_after,) = _scan_nodes(after)
    assert len(node_after.outputs) == 2
    values = (np.float64(1.0), np.float64(0.0), np.float64(5.0))
    np.testing.assert_allclose(after(*values), before(*values))
    np.testing.assert_allclose(after(*values), [2, 4, 8, 16, 32])


def test_unused_sequences_and_non_sequences_are_removed():
    x = T.vector("x")
    y = T.vector("y")
    a = T.scalar("a")
    b = T.scalar("b")
    out, _ = scan(lambda x_t, y_t, a, b: x_t * a, sequences=[x, y], non_sequences=[a, b])
    before, after = _both([x, y, a, b], out, "scan_remove_unused_inputs")
    (node_before,), (node_after,) = _scan_nodes(before), _scan_nodes(after)
    assert (node_before.op.n_sequence_inputs, node_before.op.n_non_sequences) == (2, 2)
    assert (node_after.op.n_sequence_inputs, node_after.op.n_non_sequences) == (1, 1)
    # y still bounds the number of steps.
    values = (np.arange(5.0), np.arange(3.0), np.float64(2.0), np.float64(7.0))
    result = after(*values)
    assert result.shape == (3,)
    np.testing.assert_allclose(result, before(*values))


def test_invariants_are_pushed_out_of_the_loop():
    x = T.matrix("x")
    h0 = T.vector("h0")
    w = T.matrix("w")
    scale = T.scalar("scale")
    # exp(w) * scale and its transpose depend only on non-sequences.
    states, _ = scan(lambda x_t, h, w, scale: T.tanh(x_t + T.dot(h, T.exp(w) * scale)),
                     sequences=x, outputs_info=h0, non_sequences=[w, scale])
    before, after = _both([x, h0, w, scale], states, "scan_push_out_invariants")
    (node_before,), (node_after,) = _scan_nodes(before), _scan_nodes(after)
    assert any("exp" in str(node.op) for node in _inner_nodes(node_before))
    assert not any("exp" in str(node.op) for node in _inner_nodes(node_after))
    outer = [str(node.op) for node in after.maker.fgraph.toposort()]
    assert any("exp" in name for name in outer)
    rng = np.random.default_rng(0)
    values = (rng.normal(size=(6, 4)), rng.normal(size=4), rng.normal(size=(4, 4)) * 0.3,
              np.float64(0.7))
    np.testing.assert_allclose(after(*values), before(*values))


def test_invariant_inner_output():
    w = T.vector("w")
    n_steps = T.iscalar("n_steps")
    out, _ = scan(lambda w: T.exp(w) + 1, non_sequences=w, n_steps=n_steps)
    before, after = _both([w, n_steps], out, "scan_push_out_invariants")
    (node_after,) = _scan_nodes(after)
    assert node_after.op.inner_outputs[0] in node_after.op.inner_inputs
    values = (np.array([0.0, 1.0, -2.0]), np.int32(3))
    np.testing.assert_allclose(after(*values), before(*values))
    assert after(*values).shape == (3, 3)


def test_sequence_dot_becomes_one_matrix_product():
    x = T.matrix("x")
    h0 = T.vector("h0")
    w_in = T.matrix("w_in")
    w_rec = T.matrix("w_rec")
    states, _ = scan(lambda x_t, h, w_in, w_rec: T.tanh(T.dot(x_t, w_in) + T.dot(h, w_rec)),
                     sequences=x, outputs_info=h0, non_sequences=[w_in, w_rec])
    before, after = _both([x, h0, w_in, w_rec], states, "scan_push_out_sequence_dot")
    (node_before,), (node_after,) = _scan_nodes(before), _scan_nodes(after)
    inner_dots = [node for node in _inner_nodes(node_after) if isinstance(node.op, Dot)]
    assert len([n for n in _inner_nodes(node_before) if isinstance(n.op, Dot)]) == 2
    assert len(inner_dots) == 1
    assert inner_dots[0].inputs[0].type.ndim == 1
    assert node_after.op.n_sequence_inputs == 2
    rng = np.random.default_rng(1)
    values = (rng.normal(size=(7, 3)), rng.normal(size=4), rng.normal(size=(3, 4)),
              rng.normal(size=(4, 4)) * 0.3)
    np.testing.assert_allclose(after(*values), before(*values))


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_all_rewrites_together_match_numpy(steps):
    x = T.matrix("x")
    h0 = T.vector("h0")
    w_in = T.matrix("w_in")
    w_rec = T.matrix("w_rec")
    bias = T.vector("bias")
    unused = T.vector("unused")
    (states, projections), _ = scan(
        lambda x_t, h, w_in, w_rec, bias, unused: [
            T.tanh(T.dot(x_t, w_in) + T.dot(h, w_rec * 0.5) + T.exp(bias)), T.dot(x_t, w_in)],
        sequences=x, outputs_info=[h0, None], non_sequences=[w_in, w_rec, bias, unused])
    function = sympile.function([x, h0, w_in, w_rec, bias, unused], states, mode=FAST_RUN,
                                on_unused_input="ignore")
    (node,) = _scan_nodes(function)
    assert len(node.outputs) == 1
    assert node.op.n_non_sequences == 2  # w_rec * 0.5 and exp(bias), computed outside
    rng = np.random.default_rng(2)
    xs, h0_value, w_in_value, w_rec_value = (rng.normal(size=(steps, 3)), rng.normal(size=4),
                                            rng.normal(size=(3, 4)), rng.normal(size=(4, 4)) * 0.3)
    bias_value = rng.normal(size=4)
    expected, h = [], h0_value
    for x_t in xs:
        h = np.tanh(x_t @ w_in_value + h @ (w_rec_value * 0.5) + np.exp(bias_value))
        expected.append(h)
    result = function(xs, h0_value, w_in_value, w_rec_value, bias_value, np.zeros(2))
    assert result.shape == (steps, 4)
    np.testing.assert_allclose(result, np.reshape(expected, (steps, 4)))
