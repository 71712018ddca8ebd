"""scan_keep_last_steps: a recurrent output read only at its last steps keeps only those
(Scan's kept_steps, a circular buffer); values equal the full buffer's on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery
from sympile.link.c.cmodule import compiler_available
from sympile.scan import Scan, scan, until

PYTHON = Mode(RewriteQuery(include=("fast_run",)), backend="python", name="PYTHON_FAST_RUN")
C = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="C_FAST_RUN")
WITHOUT_REWRITE = Mode(RewriteQuery(include=("fast_run",), exclude=("scan_keep_last_steps",)),
                       backend="python", name="WITHOUT_KEEP_LAST_STEPS")
BACKENDS = [PYTHON, pytest.param(C, marks=pytest.mark.skipif(not compiler_available(),
                                                             reason="no C compiler"))]


def _scan_nodes(function):
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, Scan)]


def _check(inputs, outputs, values, mode, kept_steps):
    """The rewritten Scan keeps `kept_steps`; its results equal the unrewritten graph's."""
    function = sympile.function(inputs, outputs, mode=mode)
    [node] = _scan_nodes(function)
    assert node.op.kept_steps == kept_steps
    reference = sympile.function(inputs, outputs, mode=WITHOUT_REWRITE)
    [reference_node] = _scan_nodes(reference)
    assert not any(reference_node.op.kept_steps)
    for actual, expected in zip(function(*values), reference(*values)):
        assert actual.shape == expected.shape and actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-12)
    return function


def _rnn():
    x, h0 = T.matrix("x"), T.vector("h0")
    states, _ = scan(lambda x_t, h: T.tanh(x_t + 0.9 * h), sequences=x, outputs_info=h0)
    return x, h0, states


@pytest.mark.parametrize("mode", BACKENDS)
@pytest.mark.parametrize("steps", [1, 2, 3, 17])
def test_last_step_only(mode, steps):
    x, h0, states = _rnn()
    rng = np.random.default_rng(steps)
    values = [rng.normal(size=(steps, 3)), rng.normal(size=3)]
    _check([x, h0], [states[-1]], values, mode, (1,))


@pytest.mark.parametrize("mode", BACKENDS)
def test_several_last_steps_and_an_index_after_the_step(mode):
    x, h0, states = _rnn()
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(9, 3)), rng.normal(size=3)]
    _check([x, h0], [states[-1], states[-3, 1:], states[-2] * 2], values, mode, (3,))


@pytest.mark.parametrize("mode", BACKENDS)
def test_several_taps_and_plain_outputs(mode):
    initial = T.matrix("initial")
    n_steps = T.lscalar("n_steps")
    (fibonacci, plain), _ = scan(lambda older, middle, old: [older + middle - 0.5 * old,
                                                             old.sum()],
                                 outputs_info=[dict(initial=initial, taps=[-4, -2, -1]), None],
                                 n_steps=n_steps)
    rng = np.random.default_rng(2)
    start = rng.normal(size=(4, 2)) * 0.1
    for steps in (2, 4, 5, 13):
        function = _check([initial, n_steps], [fibonacci[-1], fibonacci[-2], plain],
                          [start, steps], mode, (2,))
    with pytest.raises(IndexError):
        function(start, 0)


@pytest.mark.parametrize("mode", BACKENDS)
def test_until_loops(mode):
    limit = T.scalar("limit")
    (powers, other), _ = scan(
        lambda previous, total, limit: ([previous * 2, total + previous],
                                        until(previous * 2 > limit)),
        outputs_info=[T.constant(1.0), T.constant(0.0)], non_sequences=limit, n_steps=50)
    for bound in (3.0, 40.0, 1e30):
        _check([limit], [powers[-1], other[-2]], [np.float64(bound)], mode, (1, 2))
    # One step runs: the last step is the first.
    function = _check([limit], [powers[-1]], [np.float64(0.5)], mode, (1,))
    assert function(np.float64(0.5))[0] == 2.0


@pytest.mark.parametrize("mode", BACKENDS)
def test_zero_steps_fail_as_the_full_buffer_does(mode):
    x, h0, states = _rnn()
    function = sympile.function([x, h0], states[-1], mode=mode)
    assert _scan_nodes(function)[0].op.kept_steps == (1,)
    reference = sympile.function([x, h0], states[-1], mode=WITHOUT_REWRITE)
    for candidate in (function, reference):
        with pytest.raises(IndexError):
            candidate(np.zeros((0, 3)), np.zeros(3))


def test_uses_of_other_steps_keep_the_full_buffer():
    x, h0, states = _rnn()
    for outputs in ([states], [states.sum()], [states[0]], [states[-1], states[1:]],
                    [states[-1], states]):
        function = sympile.function([x, h0], outputs, mode=PYTHON)
        assert _scan_nodes(function)[0].op.kept_steps == (0,)


@pytest.mark.parametrize("mode", BACKENDS)
def test_gradients_through_a_last_step_output(mode):
    x, h0, states = _rnn()
    cost = (states[-1] ** 2).sum()
    gradients = sympile.grad(cost, [x, h0])
    function = sympile.function([x, h0], [cost, *gradients], mode=mode)
    rng = np.random.default_rng(3)
    values = [rng.normal(size=(6, 3)), rng.normal(size=3)]
    reference = sympile.function([x, h0], [cost, *gradients], mode=WITHOUT_REWRITE)
    for actual, expected in zip(function(*values), reference(*values)):
        np.testing.assert_allclose(actual, expected, rtol=1e-12)

    def numeric_cost(xs, h):
        for x_t in xs:
            h = np.tanh(x_t + 0.9 * h)
        return (h ** 2).sum()

    epsilon = 1e-6
    for position, gradient in enumerate(function(*values)[1:]):
        direction = rng.normal(size=values[position].shape)
        plus, minus = list(values), list(values)
        plus[position] = values[position] + epsilon * direction
        minus[position] = values[position] - epsilon * direction
        numeric = (numeric_cost(*plus) - numeric_cost(*minus)) / (2 * epsilon)
        np.testing.assert_allclose((gradient * direction).sum(), numeric, rtol=1e-6)


def test_the_outer_output_holds_only_the_kept_steps():
    x, h0, states = _rnn()
    function = sympile.function([x, h0], states[-1], mode=PYTHON)
    [node] = _scan_nodes(function)
    storage = [[None]]
    xs, start = np.ones((1000, 3)), np.zeros(3)
    node.op.perform(node, [np.int64(1000), xs, start[np.newaxis]], storage)
    assert storage[0][0].shape == (1, 3)
    np.testing.assert_allclose(storage[0][0][0], function(xs, start))


def test_kept_steps_must_fit_the_recurrent_outputs():
    *_, states = _rnn()
    op = states.owner.op
    with pytest.raises(ValueError, match="kept_steps"):
        Scan(op.inner_inputs, op.inner_outputs, op.n_sequence_inputs, op.recurrent_taps,
             op.n_plain_outputs, op.n_non_sequences, op.has_until, kept_steps=(1, 2))
    with pytest.raises(ValueError, match="kept_steps"):
        Scan(op.inner_inputs, op.inner_outputs, op.n_sequence_inputs, op.recurrent_taps,
             op.n_plain_outputs, op.n_non_sequences, op.has_until, kept_steps=(-1,))


def test_infer_shape_gives_the_kept_steps():
    x, h0, states = _rnn()
    function = sympile.function([x, h0], states[-1], mode=PYTHON)
    [node] = _scan_nodes(function)
    n_steps = T.lscalar("n_steps")
    fake_node = node.op.make_node(n_steps, *node.inputs[1:])
    [shape] = node.op.infer_shape(None, fake_node, [(), (n_steps, 3), (1, 3)])
    rows = sympile.function([n_steps], shape[0], mode=PYTHON, on_unused_input="ignore")
    assert [int(rows(steps)) for steps in (0, 1, 5)] == [0, 1, 1]


def test_a_scan_that_kept_only_its_last_steps_refuses_gradients():
    x, h0, states = _rnn()
    function = sympile.function([x, h0], states[-1], mode=PYTHON)
    [node] = _scan_nodes(function)
    assert any(node.op.kept_steps)
    with pytest.raises(NotImplementedError, match="L_op: this Scan keeps only the last steps"):
        sympile.grad(node.outputs[0][-1].sum(), node.inputs[1])
    with pytest.raises(NotImplementedError, match="R_op: this Scan keeps only the last steps"):
        node.op.R_op(node.inputs, [None] + [T.zeros_like(i) for i in node.inputs[1:]])
