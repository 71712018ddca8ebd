"""Scan rewrites (sympile.scan.rewriting): the graph before and after, values unchanged."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.basic import io_toposort
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.db import RewriteQuery
from sympile.scan import Scan, scan, until
from sympile.scan.rewriting import scan_db
from sympile.tensor.blas import Dot
from sympile.tensor.blas.gemm import Ger
from sympile.tensor.rewriting import rewrite_db
from sympile.tensor.subtensor import AdvancedIncSubtensor, IncSubtensor, Subtensor

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
                 "scan_push_out_invariants", "scan_push_out_sequence_dot",
                 "scan_push_out_sequence_gather", "scan_push_out_add"):
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


def _embedding_rnn(go_backwards=False):
    tokens = T.lvector("tokens")
    h0 = T.vector("h0")
    embedding = T.matrix("embedding")
    w_rec = T.matrix("w_rec")
    states, _ = scan(lambda token, h, embedding, w_rec: T.tanh(embedding[token] + T.dot(h, w_rec)),
                     sequences=tokens, outputs_info=h0, non_sequences=[embedding, w_rec],
                     go_backwards=go_backwards)
    return [tokens, h0, embedding, w_rec], states


def _embedding_rnn_numpy(tokens, h0, embedding, w_rec, go_backwards=False):
    states, h = [], h0
    for token in (tokens[::-1] if go_backwards else tokens):
        h = np.tanh(embedding[token] + h @ w_rec)
        states.append(h)
    return np.array(states).reshape(len(states), len(h0))


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("tokens", [[2, 0, 4, -1, 2], [3], []])
def test_sequence_gather_becomes_one_gather_before_the_loop(go_backwards, tokens):
    inputs, states = _embedding_rnn(go_backwards)
    before, after = _both(inputs, states, "scan_push_out_sequence_gather")
    (node_before,), (node_after,) = _scan_nodes(before), _scan_nodes(after)
    assert any(isinstance(n.op, Subtensor) for n in _inner_nodes(node_before))
    assert not any(isinstance(n.op, Subtensor) for n in _inner_nodes(node_after))
    assert node_after.op.n_sequence_inputs == node_before.op.n_sequence_inputs + 1
    rng = np.random.default_rng(2)
    values = (np.array(tokens, dtype="int64"), rng.normal(size=3), rng.normal(size=(5, 3)),
              rng.normal(size=(3, 3)) * 0.5)
    expected = _embedding_rnn_numpy(*values, go_backwards=go_backwards)
    np.testing.assert_allclose(after(*values), expected, rtol=1e-12)
    np.testing.assert_allclose(before(*values), expected, rtol=1e-12)


def test_sequence_gather_out_of_range_still_raises():
    inputs, states = _embedding_rnn()
    after = sympile.function(inputs, states, mode=_only("scan_push_out_sequence_gather"))
    with pytest.raises(IndexError):
        after(np.array([1, 5], dtype="int64"), np.zeros(3), np.zeros((5, 3)), np.zeros((3, 3)))


def test_sequence_gather_leaves_a_gather_of_a_state_alone():
    tokens = T.lvector("tokens")
    table0 = T.matrix("table0")
    # The table is a recurrent state, not a non-sequence: nothing to gather before the loop.
    tables, _ = scan(lambda token, table: table * 2 + table[token], sequences=tokens,
                     outputs_info=table0)
    before, after = _both([tokens, table0], tables, "scan_push_out_sequence_gather")
    (node_after,) = _scan_nodes(after)
    assert any(isinstance(n.op, Subtensor) for n in _inner_nodes(node_after))
    values = (np.array([1, 0], dtype="int64"), np.arange(6.0).reshape(2, 3))
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


# -- scan_push_out_add --------------------------------------------------------------------------

WITHOUT_PUSH_OUT_ADD = FAST_RUN.excluding("scan_push_out_add")
RNG = np.random.default_rng(11)


def _push_out_add_pair(inputs, outputs):
    """The function compiled in FAST_RUN without and with scan_push_out_add."""
    return (sympile.function(inputs, outputs, mode=WITHOUT_PUSH_OUT_ADD),
            sympile.function(inputs, outputs, mode=FAST_RUN))


def _recurrent_counts(function) -> list[int]:
    return [len(node.op.recurrent_taps) for node in _scan_nodes(function)]


def _outer_ops(function) -> list[type]:
    return [type(node.op) for node in function.maker.fgraph.toposort()]


def _rnn_gradients(dtype: str, truncate_gradient: int = -1):
    """The paper's RNN: h_t = sigmoid(h_{t-1} W_hh + W_uh[u_t]); its cost and gradients."""
    tokens = T.lvector("tokens")
    w_uh = T.matrix("w_uh", dtype=dtype)
    w_hh = T.matrix("w_hh", dtype=dtype)
    w_hy = T.matrix("w_hy", dtype=dtype)
    h0 = T.zeros((4,), dtype=dtype)
    states, _ = scan(lambda token, h, w_hh, w_uh: T.sigmoid(T.dot(h, w_hh) + w_uh[token]),
                     sequences=tokens, outputs_info=h0, non_sequences=[w_hh, w_uh],
                     truncate_gradient=truncate_gradient)
    cost = (T.tanh(T.dot(states, w_hy)) ** 2).sum()
    return [tokens, w_uh, w_hh, w_hy], [cost, *sympile.grad(cost, [w_uh, w_hh, w_hy])]


def _rnn_values(dtype: str, steps: int):
    return [RNG.integers(0, 6, size=steps).astype("int64"),
            RNG.normal(size=(6, 4)).astype(dtype), (RNG.normal(size=(4, 4)) * 0.5).astype(dtype),
            RNG.normal(size=(4, 3)).astype(dtype)]


@pytest.mark.parametrize("dtype, tolerance", [("float64", 1e-12), ("float32", 2e-5)])
def test_bptt_accumulators_leave_the_loop(dtype, tolerance):
    inputs, outputs = _rnn_gradients(dtype)
    before, after = _push_out_add_pair(inputs, outputs)
    # BPTT: the carried gradient of h and the two weight accumulators; after: the carry only.
    assert sorted(_recurrent_counts(before)) == [1, 3]
    assert sorted(_recurrent_counts(after)) == [1, 1]
    reverse = next(node for node in _scan_nodes(after) if (node.op.name or "").startswith("grad"))
    inner = _inner_nodes(reverse)
    assert not any(isinstance(node.op, (IncSubtensor, AdvancedIncSubtensor, Ger))
                   for node in inner)
    assert [type(node.op) for node in inner].count(Dot) == 1  # W_hh . dpre only
    # After the loop: one product of the stacked states and deltas, one scatter-add of rows.
    products = [node for node in after.maker.fgraph.toposort()
                if isinstance(node.op, Dot) or "Gemm" in str(node.op)]
    assert any(isinstance(variable.owner.op, Scan) for node in products
               for variable in node.inputs if variable.owner is not None)
    assert any(isinstance(node.op, AdvancedIncSubtensor)
               for node in after.maker.fgraph.toposort())
    values = _rnn_values(dtype, 9)
    for result, expected in zip(after(*values), before(*values)):
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("steps", [0, 1])
def test_bptt_with_zero_and_one_step(steps):
    inputs, outputs = _rnn_gradients("float64")
    before, after = _push_out_add_pair(inputs, outputs)
    values = _rnn_values("float64", steps)
    for result, expected in zip(after(*values), before(*values)):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("steps", [2, 3, 8])
def test_bptt_with_truncate_gradient(steps):
    inputs, outputs = _rnn_gradients("float64", truncate_gradient=3)
    before, after = _push_out_add_pair(inputs, outputs)
    assert sorted(_recurrent_counts(after)) == [1, 1]
    values = _rnn_values("float64", steps)
    for result, expected in zip(after(*values), before(*values)):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


def _check_last_step(inputs, output, values, expected, recurrent_after):
    before, after = _push_out_add_pair(inputs, output)
    assert _recurrent_counts(after) == recurrent_after
    np.testing.assert_allclose(after(*values), before(*values), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(after(*values), expected, rtol=1e-12, atol=1e-12)
    return after


def test_outer_products_of_sequences_become_one_product():
    a, b, s0 = T.matrix("a"), T.matrix("b"), T.matrix("s0")
    states, _ = scan(lambda a_t, b_t, s: s + T.outer(a_t, b_t), sequences=[a, b],
                     outputs_info=s0)
    values = [RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4)), RNG.normal(size=(3, 4))]
    expected = values[2] + values[0].T @ values[1]
    after = _check_last_step([a, b, s0], states[-1], values, expected, [])
    # Both factors are sequences: nothing is left to loop over.
    assert not _scan_nodes(after)
    assert Dot in _outer_ops(after) or any("Gemm" in str(node.op)
                                           for node in after.maker.fgraph.toposort())


def test_last_row_read_through_the_shape():
    a, b, s0 = T.matrix("a"), T.matrix("b"), T.matrix("s0")
    states, _ = scan(lambda a_t, b_t, s: s + T.dot(a_t.dimshuffle(0, "x"),
                                                   b_t.dimshuffle("x", 0)),
                     sequences=[a, b], outputs_info=s0)
    values = [RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4)), RNG.normal(size=(3, 4))]
    expected = values[2] + values[0].T @ values[1]
    _check_last_step([a, b, s0], states[states.shape[0] - 1], values, expected, [])


@pytest.mark.parametrize("left_shape, right_shape", [
    ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,))])
def test_products_of_computed_operands(left_shape, right_shape):
    x = T.tensor("float64", shape=(None, *left_shape), name="x")
    y = T.tensor("float64", shape=(None, *right_shape), name="y")
    result_shape = left_shape[:-1] + right_shape[1:]
    s0 = T.tensor("float64", shape=result_shape, name="s0")
    # tanh and exp make the operands computed per step, stored as plain outputs.
    states, _ = scan(lambda x_t, y_t, s: s + T.dot(T.tanh(x_t), T.exp(y_t)),
                     sequences=[x, y], outputs_info=s0)
    values = [RNG.normal(size=(4, *left_shape)), RNG.normal(size=(4, *right_shape)),
              RNG.normal(size=result_shape)]
    expected = values[2] + sum(np.dot(np.tanh(values[0][t]), np.exp(values[1][t]))
                               for t in range(4))
    after = _check_last_step([x, y, s0], states[-1], values, expected, [0])
    (node,) = _scan_nodes(after)
    assert not any(isinstance(inner.op, Dot) for inner in _inner_nodes(node))


def test_product_with_an_invariant_factor():
    x, w, s0 = T.matrix("x"), T.matrix("w"), T.vector("s0")
    states, _ = scan(lambda x_t, s, w: s + T.dot(T.sin(x_t), w), sequences=x, outputs_info=s0,
                     non_sequences=w)
    values = [RNG.normal(size=(6, 3)), RNG.normal(size=(3, 2)), RNG.normal(size=2)]
    expected = values[2] + np.sin(values[0]).sum(axis=0) @ values[1]
    _check_last_step([x, w, s0], states[-1], values, expected, [0])


def test_ger_update():
    a, b, alphas, s0 = T.matrix("a"), T.matrix("b"), T.vector("alphas"), T.matrix("s0")
    states, _ = scan(lambda a_t, b_t, alpha, s: Ger()(s, alpha, T.tanh(a_t), b_t),
                     sequences=[a, b, alphas], outputs_info=s0)
    values = [RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4)), RNG.normal(size=5),
              RNG.normal(size=(3, 4))]
    expected = values[3] + (np.tanh(values[0]) * values[2][:, None]).T @ values[1]
    after = _check_last_step([a, b, alphas, s0], states[-1], values, expected, [0])
    (node,) = _scan_nodes(after)
    assert not any(isinstance(inner.op, (Ger, Dot)) for inner in _inner_nodes(node))


def test_rows_added_into_zeros_become_one_scatter_add():
    rows, y, w = T.lvector("rows"), T.matrix("y"), T.matrix("w")
    s0 = T.zeros_like(w)
    states, _ = scan(lambda row, y_t, s, w: s + T.inc_subtensor(T.zeros_like(w)[row],
                                                                 T.exp(y_t)),
                     sequences=[rows, y], outputs_info=s0, non_sequences=w)
    values = [np.array([1, 3, 1, 0, 1]), RNG.normal(size=(5, 2)), RNG.normal(size=(4, 2))]
    expected = np.zeros((4, 2))
    np.add.at(expected, values[0], np.exp(values[1]))
    after = _check_last_step([rows, y, w], states[-1], values, expected, [0])
    _assert_scattered_after_the_loop(after)


def _assert_scattered_after_the_loop(function):
    """No increment inside the loop; one scatter-add of rows after it."""
    assert any(isinstance(node.op, AdvancedIncSubtensor)
               for node in function.maker.fgraph.toposort())
    (node,) = _scan_nodes(function)
    assert not any(isinstance(inner.op, (IncSubtensor, AdvancedIncSubtensor))
                   for inner in _inner_nodes(node))


@pytest.mark.parametrize("setting", [False, True])
def test_increment_of_the_previous_state_and_set_on_zeros(setting):
    rows, y, s0 = T.lvector("rows"), T.matrix("y"), T.matrix("s0")

    def step(row, y_t, s, *like):
        if setting:
            return s + T.set_subtensor(T.zeros_like(like[0])[row], T.exp(y_t))
        return T.inc_subtensor(s[row], T.exp(y_t))

    states, _ = scan(step, sequences=[rows, y], outputs_info=s0, non_sequences=[s0] * setting)
    values = [np.array([2, 2, 0]), RNG.normal(size=(3, 2)), RNG.normal(size=(4, 2))]
    expected = values[2].copy()
    np.add.at(expected, values[0], np.exp(values[1]))
    after = _check_last_step([rows, y, s0], states[-1], values, expected, [0])
    _assert_scattered_after_the_loop(after)


def test_rows_of_vectors_per_step():
    rows, y, s0 = T.lmatrix("rows"), T.tensor3("y"), T.matrix("s0")
    states, _ = scan(lambda rows_t, y_t, s: T.inc_subtensor(s[rows_t], T.exp(y_t)),
                     sequences=[rows, y], outputs_info=s0)
    values = [np.array([[0, 2], [2, 2], [3, 1]]), RNG.normal(size=(3, 2, 5)),
              RNG.normal(size=(4, 5))]
    expected = values[2].copy()
    np.add.at(expected, values[0].ravel(), np.exp(values[1]).reshape(6, 5))
    after = _check_last_step([rows, y, s0], states[-1], values, expected, [0])
    _assert_scattered_after_the_loop(after)


def test_any_other_term_is_summed_after_the_loop():
    x, s0 = T.matrix("x"), T.vector("s0")
    states, _ = scan(lambda x_t, s: s + x_t ** 2, sequences=x, outputs_info=s0)
    values = [RNG.normal(size=(6, 3)), RNG.normal(size=3)]
    expected = values[1] + (values[0] ** 2).sum(axis=0)
    after = _check_last_step([x, s0], states[-1], values, expected, [0])
    (node,) = _scan_nodes(after)
    assert node.op.n_plain_outputs == 1


def test_until_loop_sums_the_steps_that_ran():
    x, s0, limit = T.vector("x"), T.scalar("s0"), T.scalar("limit")
    states, _ = scan(lambda x_t, s, limit: [s + T.exp(x_t), until(x_t > limit)], sequences=x,
                     outputs_info=s0, non_sequences=limit)
    values = [np.array([0.1, 0.5, 2.0, 0.3, 3.0]), np.float64(1.0), np.float64(1.5)]
    expected = 1.0 + np.exp([0.1, 0.5, 2.0]).sum()
    _check_last_step([x, s0, limit], states[-1], values, expected, [0])


def test_zero_steps_with_a_guard():
    x, s0 = T.matrix("x"), T.vector("s0")
    states, _ = scan(lambda x_t, s: s + x_t ** 2, sequences=x, outputs_info=s0)
    guarded = sympile.ifelse(x.shape[0] > 0, states[-1], s0)
    values = [np.zeros((0, 3)), RNG.normal(size=3)]
    _check_last_step([x, s0], guarded, values, values[1], [0])


@pytest.mark.parametrize("case", ["every step read", "previous read twice", "two taps",
                                  "row before last", "dtype changes"])
def test_left_alone(case):
    x, s0 = T.matrix("x"), T.vector("s0")
    taps = [-2, -1] if case == "two taps" else [-1]
    if case == "two taps":
        s0 = T.matrix("s0")

    def step(x_t, *previous):
        if case == "previous read twice":
            return previous[-1] + x_t * previous[-1]
        if case == "dtype changes":
            return previous[-1] + T.cast(x_t, "float32")
        return previous[-1] + x_t + previous[0] * (case == "two taps")

    states, _ = scan(step, sequences=x, outputs_info={"initial": s0, "taps": taps})
    output = {"every step read": states, "row before last": states[-2]}.get(case, states[-1])
    before, after = _push_out_add_pair([x, s0], output)
    assert _recurrent_counts(after) == [1]
    values = [RNG.normal(size=(5, 3)), RNG.normal(size=(2, 3) if case == "two taps" else 3)]
    np.testing.assert_allclose(after(*values), before(*values))


@pytest.mark.parametrize("with_until", [False, True])
def test_gradient_through_a_rewritten_scan(with_until):
    # Rewrites run when compiling, so nothing differentiates their result today; a scan they
    # built still has a correct gradient.
    x, s0, w = T.matrix("x"), T.vector("s0"), T.vector("w")

    def step(x_t, s, w):
        if with_until:
            return [s + T.tanh(x_t * w), until(x_t.sum() > 2.0)]
        return s + T.tanh(x_t * w)

    states, _ = scan(step, sequences=x, outputs_info=s0, non_sequences=w)
    fgraph = FunctionGraph([x, s0, w], [states[-1]])
    rewrite_db.query_rewriter(RewriteQuery(include=("fast_run",), exclude=("inplace",)))(fgraph)
    (node,) = [node for node in fgraph.toposort() if isinstance(node.op, Scan)]
    assert node.op.recurrent_taps == ()
    rewritten_cost = (fgraph.outputs[0] ** 2).sum()
    cost = (states[-1] ** 2).sum()
    rewritten = sympile.function(fgraph.inputs, sympile.grad(rewritten_cost, fgraph.inputs),
                                 mode=WITHOUT_PUSH_OUT_ADD)
    original = sympile.function([x, s0, w], sympile.grad(cost, [x, s0, w]),
                                mode=WITHOUT_PUSH_OUT_ADD)
    values = [RNG.normal(size=(6, 3)), RNG.normal(size=3), RNG.normal(size=3)]
    values[0][3] += 3.0
    for result, expected in zip(rewritten(*values), original(*values)):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["same row every step", "scalar value broadcast to the row"])
def test_scatter_of_an_invariant_row_and_of_a_broadcast_value(case):
    rows, y, w, row = T.lvector("rows"), T.vector("y"), T.matrix("w"), T.lscalar("row")

    def step(row_t, y_t, s, w, row):
        target = row if case == "same row every step" else row_t
        return s + T.inc_subtensor(T.zeros_like(w)[target], T.exp(y_t))

    states, _ = scan(step, sequences=[rows, y], outputs_info=T.zeros_like(w),
                     non_sequences=[w, row])
    values = [np.array([1, 3, 1]), RNG.normal(size=3), RNG.normal(size=(4, 2)), np.int64(2)]
    expected = np.zeros((4, 2))
    targets = [2, 2, 2] if case == "same row every step" else values[0]
    np.add.at(expected, targets, np.exp(values[1])[:, None])
    before, after = _push_out_add_pair([rows, y, w, row], states[-1])
    np.testing.assert_allclose(after(*values), before(*values), rtol=1e-12)
    np.testing.assert_allclose(after(*values), expected, rtol=1e-12)
    (node,) = _scan_nodes(after)
    assert not node.op.recurrent_taps
    assert not any(isinstance(inner.op, (IncSubtensor, AdvancedIncSubtensor))
                   for inner in _inner_nodes(node))
