"""Scan's loop in C (CVM.run_steps): every scan feature gives the Python backend's values and
a numpy loop's on random inputs, with no Python call per step; errors inside the inner graph
name the inner node and leave shared variables untouched."""

from __future__ import annotations

import textwrap
import weakref

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.graph.fgraph import FunctionGraph
from sympile.scan import Scan, scan, until
from sympile.scan import op as scan_op
from sympile.scan.c_loop import invariant_boundary
from sympile.tensor.elemwise import Elemwise
from tests.link.c.utils import (
    C_MODE,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    requires_compiler,
)

pytestmark = requires_compiler


def _python_loop(*args, **kwargs):
    raise AssertionError("the Python loop (Scan._run_steps) ran on the C backend")


def _both(inputs, outputs, values, updates=None):
    """Results on the C backend, where the Python loop must not run, and on the Python
    backend."""
    results = []
    for mode in (C_MODE, PYTHON_MODE):
        function = sympile.function(inputs, outputs, mode=mode, updates=updates,
                                    on_unused_input="ignore")
        python_loop = Scan._run_steps
        if mode is C_MODE:
            Scan._run_steps = _python_loop
        try:
            results.append(function(*[np.copy(value) for value in values]))
        finally:
            Scan._run_steps = python_loop
    return results


def _assert_all_close(actual, expected, rtol=1e-10):
    if isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for one, other in zip(actual, expected):
            _assert_all_close(one, other, rtol)
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_tanh_rnn_against_numpy(seed):
    rng = np.random.default_rng(seed)
    steps, hidden = int(rng.integers(1, 30)), int(rng.integers(1, 9))
    x, h0, w = T.matrix("x"), T.vector("h0"), T.matrix("w")
    states, _ = scan(lambda x_t, h, w: T.tanh(x_t + T.dot(h, w)), sequences=x,
                     outputs_info=h0, non_sequences=w)
    values = (rng.normal(size=(steps, hidden)), rng.normal(size=hidden),
              rng.normal(size=(hidden, hidden)) * 0.5)
    expected, h = [], values[1]
    for x_t in values[0]:
        h = np.tanh(x_t + h @ values[2])
        expected.append(h)
    on_c, on_python = _both([x, h0, w], states, values)
    _assert_all_close(on_c, np.array(expected))
    _assert_all_close(on_c, on_python, rtol=0)


@pytest.mark.parametrize("seed", range(3))
def test_sequence_taps_several_recurrent_taps_and_plain_outputs(seed):
    rng = np.random.default_rng(seed)
    length, width = int(rng.integers(4, 20)), int(rng.integers(1, 5))
    x, initial, scale = T.matrix("x"), T.matrix("initial"), T.vector("scale")
    (state, plain), _ = scan(
        lambda before, now, after, older, old, scale: [
            T.tanh(before + now * scale + 0.5 * older - 0.25 * old), (after - old).sum()],
        sequences=dict(input=x, taps=[-1, 0, 2]),
        outputs_info=[dict(initial=initial, taps=[-3, -1]), None], non_sequences=scale)
    values = (rng.normal(size=(length, width)), rng.normal(size=(3, width)),
              rng.normal(size=width))
    xs, rows, weights = values
    rows, plains = list(rows), []
    for step in range(length - 3):
        before, now, after = xs[step], xs[step + 1], xs[step + 3]
        rows.append(np.tanh(before + now * weights + 0.5 * rows[-3] - 0.25 * rows[-1]))
        plains.append((after - rows[-2]).sum())
    on_c, on_python = _both([x, initial, scale], [state, plain], values)
    _assert_all_close(on_c, [np.array(rows[3:]).reshape(-1, width), np.array(plains)])
    _assert_all_close(on_c, on_python, rtol=0)


def test_until_stops_and_zero_steps():
    limit, n_steps = T.scalar("limit"), T.lscalar("n_steps")
    (powers, count), _ = scan(
        lambda previous, limit: ([previous * 2, T.cast(previous, "int32")],
                                 until(previous * 2 > limit)),
        outputs_info=[T.constant(1.0), None], non_sequences=limit, n_steps=n_steps)
    function = sympile.function([limit, n_steps], [powers, count], mode=C_MODE)
    values, counts = function(np.float64(40), 50)
    _assert_all_close(values, np.array([2.0, 4, 8, 16, 32, 64]))
    _assert_all_close(counts, np.array([1, 2, 4, 8, 16, 32], dtype="int32"))
    values, counts = function(np.float64(40), 3)
    _assert_all_close(values, np.array([2.0, 4, 8]))
    values, counts = function(np.float64(40), 0)
    assert values.shape == (0,) and counts.shape == (0,) and counts.dtype == np.int32


def test_go_backwards_strided_and_negative_stride_sequences():
    x = T.matrix("x")
    total, _ = scan(lambda x_t, previous: previous + x_t[::-1] * 2,
                    sequences=x, outputs_info=T.zeros_like(x[0]), go_backwards=True)
    rng = np.random.default_rng(4)
    base = rng.normal(size=(6, 8))
    for value in (base, base[:, ::2], base[::-1], np.asfortranarray(base)):
        on_c, on_python = _both([x], total, [value])
        expected = np.cumsum(value[::-1, ::-1] * 2, axis=0)
        _assert_all_close(on_c, expected)
        _assert_all_close(on_c, on_python, rtol=0)


def test_outputs_that_are_inputs_or_their_views():
    x, h0 = T.matrix("x"), T.vector("h0")
    (copied, reversed_row, state), _ = scan(
        lambda x_t, h: [x_t, x_t[::-1], h], sequences=x,
        outputs_info=[None, None, h0])
    value, start = np.arange(12.0).reshape(4, 3), np.array([1.0, 2.0, 3.0])
    on_c, on_python = _both([x, h0], [copied, reversed_row, state], [value, start])
    _assert_all_close(on_c, [value, value[:, ::-1], np.tile(start, (4, 1))])
    _assert_all_close(on_c, on_python, rtol=0)


def test_float32_matrix_states_and_scalar_sequences():
    a, coefficients = T.fmatrix("a"), T.fvector("coefficients")
    powers, _ = scan(lambda c, previous, a: T.dot(previous, a) * c, sequences=coefficients,
                     outputs_info=a, non_sequences=a)
    rng = np.random.default_rng(5)
    values = ((rng.normal(size=(3, 3)) * 0.5).astype("float32"),
              rng.normal(size=5).astype("float32"))
    on_c, on_python = _both([a, coefficients], powers, values)
    expected, state = [], values[0].astype("float64")
    for c in values[1]:
        state = state @ values[0] * c
        expected.append(state)
    assert on_c.dtype == np.float32
    np.testing.assert_allclose(on_c, expected, rtol=1e-4, atol=1e-5)
    _assert_all_close(on_c, on_python, rtol=0)


def test_nested_scan():
    x = T.matrix("x")

    def row_cumsum(row):
        sums, _ = scan(lambda value, previous: previous + value, sequences=row,
                       outputs_info=T.constant(0.0))
        return sums

    result, _ = scan(row_cumsum, sequences=x)
    value = np.random.default_rng(6).normal(size=(4, 5))
    on_c, on_python = _both([x], result, [value])
    _assert_all_close(on_c, np.cumsum(value, axis=1))
    _assert_all_close(on_c, on_python, rtol=0)


def test_gradients_through_the_loop():
    x, h0, w = T.matrix("x"), T.vector("h0"), T.matrix("w")
    states, _ = scan(lambda x_t, h, w: T.tanh(x_t + T.dot(h, w)), sequences=x,
                     outputs_info=h0, non_sequences=w)
    cost = (states ** 2).sum() + states[-1].sum()
    gradients = sympile.grad(cost, [x, h0, w])
    rng = np.random.default_rng(7)
    values = (rng.normal(size=(6, 4)), rng.normal(size=4), rng.normal(size=(4, 4)) * 0.5)
    on_c, on_python = _both([x, h0, w], gradients, values)
    _assert_all_close(on_c, on_python, rtol=1e-12)

    def numeric_cost(xs, h, weights):
        total = 0.0
        for x_t in xs:
            h = np.tanh(x_t + h @ weights)
            total += (h ** 2).sum()
        return total + h.sum()

    epsilon = 1e-6
    for gradient, position in zip(on_c, range(3)):
        direction = rng.normal(size=values[position].shape)
        shifted = [list(values), list(values)]
        shifted[0][position] = values[position] + epsilon * direction
        shifted[1][position] = values[position] - epsilon * direction
        numeric = (numeric_cost(*shifted[0]) - numeric_cost(*shifted[1])) / (2 * epsilon)
        np.testing.assert_allclose((gradient * direction).sum(), numeric, rtol=1e-6)


def test_an_error_at_step_k_names_the_inner_node_and_leaves_shared_untouched():
    messages = []
    for mode in (C_MODE, PYTHON_MODE):
        lengths, vector = T.lvector("lengths"), T.vector("vector")
        offset = sympile.shared(np.ones(3), name="offset")
        sums, _ = scan(lambda length, vector, offset: vector[:length] + offset,
                       sequences=lengths, non_sequences=[vector, offset])
        function = sympile.function([lengths, vector], sums, mode=mode,
                                    updates=[(offset, offset + 1)])
        good = function(np.array([3, 3]), np.arange(5.0))
        _assert_all_close(good, np.array([[1.0, 2, 3], [1, 2, 3]]))
        with pytest.raises(ValueError) as raised:
            function(np.array([3, 3, 4, 3]), np.arange(5.0))
        # Raised by the inner add at step 2, then wrapped by the outer Scan node.
        assert isinstance(raised.value.node.op, Scan)
        assert str(raised.value.__cause__.node.op) == "Elemwise{add,no_inplace}"
        assert "while computing Elemwise{add,no_inplace}" in str(raised.value)
        assert "input shapes: (4,), (3,)" in str(raised.value)
        messages.append(str(raised.value).replace(str(mode.name), ""))
        _assert_all_close(offset.get_value(), np.full(3, 2.0))
        _assert_all_close(function(np.array([3]), np.arange(5.0)), np.array([[2.0, 3, 4]]))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("mode", [C_MODE, PYTHON_MODE])
def test_a_step_result_that_does_not_fit_its_state_is_an_error(mode):
    h0 = T.vector("h0")
    states, _ = scan(lambda h: T.concatenate([h, h]), outputs_info=h0, n_steps=2)
    function = sympile.function([h0], states, mode=mode)
    with pytest.raises(ValueError, match="broadcast"):
        function(np.ones(2))


def test_the_loop_makes_no_python_call_per_step(monkeypatch):
    """The inner Function is not called from Python at all on the C backend."""
    x = T.vector("x")
    sums, _ = scan(lambda value, previous: previous + value, sequences=x,
                   outputs_info=T.constant(0.0))
    function = sympile.function([x], sums, mode=C_MODE)
    node = next(node for node in function.maker.fgraph.toposort()
                if isinstance(node.op, Scan))
    function(np.ones(2))
    inner = node.op._compiled(node)
    assert scan_op._runs_steps_in_c(inner)

    def no_call(*args):
        raise AssertionError("the inner function was called from Python")
    for inner_function in (inner, node.op._c_loop(inner).step):
        monkeypatch.setattr(inner_function._vm, "call", no_call)
        monkeypatch.setattr(inner_function._vm, "run", no_call)
    _assert_all_close(function(np.arange(5.0)), np.cumsum(np.arange(5.0)))


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.scan import scan, until
    from tests.link.c.utils import C_MODE

    x, h0, w, limit = T.matrix("x"), T.matrix("h0"), T.matrix("w"), T.scalar("limit")
    (states, plain), _ = scan(
        lambda before, now, older, old, w, limit: (
            [T.tanh(now + T.dot(old, w) - older), (before * now).sum()],
            until(old.sum() > limit)),
        sequences=dict(input=x, taps=[-1, 0]),
        outputs_info=[dict(initial=h0, taps=[-2, -1]), None], non_sequences=[w, limit])
    cost = states.sum() + plain.sum()
    f = sympile.function([x, h0, w, limit], [states, plain, *sympile.grad(cost, [x, w])],
                         mode=C_MODE)
    rng = np.random.default_rng(0)
    for steps in (1, 2, 9):
        f(rng.normal(size=(steps, 4)), rng.normal(size=(2, 4)), rng.normal(size=(4, 4)),
          np.float64(1e9))
    f(rng.normal(size=(9, 4)), rng.normal(size=(2, 4)), rng.normal(size=(4, 4)), -1e9)
    last = sympile.function([x, h0, w, limit], [states[-1], states[-2]], mode=C_MODE)
    for steps in (3, 4, 11):
        last(rng.normal(size=(steps, 4)), rng.normal(size=(2, 4)), rng.normal(size=(4, 4)),
             np.float64(1e9))
    lengths, vector = T.lvector("lengths"), T.vector("vector")
    sums, _ = scan(lambda n, v: v[:n] + v[:3], sequences=lengths, non_sequences=vector)
    g = sympile.function([lengths, vector], sums, mode=C_MODE)
    try:
        g(np.array([3, 4]), np.arange(5.0))
    except ValueError:
        pass
    else:
        raise AssertionError("a shape mismatch was accepted")
    print("clean")
""")


@pytest.mark.slow
def test_the_loop_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)


def test_rows_whose_alignment_changes_from_step_to_step():
    """A row stride that is no multiple of the itemsize: the views' aligned flag is recomputed
    after each move (row 1 of this layout is aligned, rows 0 and 2 are not)."""
    x, h0 = T.matrix("x"), T.vector("h0")
    states, _ = scan(lambda x_t, h: T.tanh(x_t + 0.5 * h), sequences=x, outputs_info=h0)
    function = sympile.function([x, h0], states, mode=C_MODE)
    node = next(node for node in function.maker.fgraph.toposort()
                if isinstance(node.op, Scan))
    values = np.random.default_rng(8).normal(size=(5, 3))
    odd = np.ndarray((5, 3), dtype=np.float64, buffer=np.zeros(200, dtype=np.uint8),
                     offset=7, strides=(25, 8))
    odd[...] = values
    assert [odd[row].flags.aligned for row in range(3)] == [False, True, False]
    storage = [[None]]
    node.op.perform(node, [np.int64(5), odd, np.zeros((1, 3))], storage)
    assert scan_op._runs_steps_in_c(node.op._compiled(node))
    expected, state = [], np.zeros(3)
    for row in values:
        state = np.tanh(row + 0.5 * state)
        expected.append(state)
    _assert_all_close(storage[0][0], np.array(expected))


def test_an_in_place_output_leaves_its_buffer_to_be_reused_at_the_next_step():
    """The inner output is written over the Gemv's result (tanh in place): run_steps empties
    the output's cell after each step, so that the Gemv finds its array held by its own cell
    alone and computes into it again, at every step and across calls."""
    x, h0, w = T.matrix("x"), T.vector("h0"), T.matrix("w")
    states, _ = scan(lambda x_t, h, w: T.tanh(x_t + T.dot(h, w)), sequences=x,
                     outputs_info=h0, non_sequences=w)
    function = sympile.function([x, h0, w], states, mode=C_MODE)
    node = next(node for node in function.maker.fgraph.toposort()
                if isinstance(node.op, Scan))
    rng = np.random.default_rng(9)
    values = (rng.normal(size=(7, 4)), rng.normal(size=4), rng.normal(size=(4, 4)) * 0.5)
    function(*values)
    step = node.op._c_loop(node.op._compiled(node)).step
    (in_place,) = [inner_node for inner_node in step.maker.fgraph.toposort()
                   if inner_node.op.destroy_map]
    ((destroyed,),) = in_place.op.destroy_map.values()
    cell = step._vm.storage[in_place.inputs[destroyed]]
    assert isinstance(cell[0], np.ndarray)
    # A weak reference: a strong one would be one more holder, and the Gemv would not reuse it.
    computed_into = weakref.ref(cell[0])
    expected, h = [], values[1]
    for x_t in values[0]:
        h = np.tanh(x_t + h @ values[2])
        expected.append(h)
    _assert_all_close(function(*values), np.array(expected))
    assert cell[0] is computed_into()


def test_what_the_inner_rewrites_make_invariant_runs_once_per_call():
    """dot(h, w) becomes a Gemv of w's transpose in the inner graph: the transpose is computed
    by the loop's prologue, once per call, and follows w from call to call."""
    x, h0, w = T.matrix("x"), T.vector("h0"), T.matrix("w")
    states, _ = scan(lambda x_t, h, w: T.tanh(x_t + T.dot(h, w)), sequences=x,
                     outputs_info=h0, non_sequences=w)
    function = sympile.function([x, h0, w], states, mode=C_MODE)
    node = next(node for node in function.maker.fgraph.toposort()
                if isinstance(node.op, Scan))
    rng = np.random.default_rng(10)
    xs, start = rng.normal(size=(6, 4)), rng.normal(size=4)
    for weights in (rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5):
        expected, h = [], start
        for x_t in xs:
            h = np.tanh(x_t + h @ weights)
            expected.append(h)
        _assert_all_close(function(xs, start, weights), np.array(expected))
    loop = node.op._c_loop(node.op._compiled(node))
    prologue_ops = [str(inner.op) for inner in loop.prologue.maker.fgraph.toposort()]
    step_ops = [str(inner.op) for inner in loop.step.maker.fgraph.toposort()]
    assert prologue_ops == ["DimShuffle{1,0}"]
    assert "DimShuffle{1,0}" not in step_ops and "Gemv" in step_ops


def test_an_invariant_that_a_step_overwrites_stays_in_the_step():
    """exp(w) only reads the non-sequence w, but the step adds x_t over its transpose in place:
    computed once, it would hold the sum at the next step."""
    x_t, w = T.vector("x_t"), T.matrix("w")
    exponential = T.exp(w)
    transposed = exponential.T
    sum_node = (transposed[0] + x_t).owner
    add_in_place = Elemwise(sum_node.op.scalar_op, inplace_pattern=((0, 0),))
    written = add_in_place(transposed, x_t.dimshuffle("x", 0))
    graph = FunctionGraph([x_t, w], [written, T.exp(w) + x_t])
    boundary = invariant_boundary(graph, [graph.inputs[1]])
    # Only the second exp(w): the first is written over through its transpose.
    assert [str(variable.owner.op) for variable in boundary] == ["Elemwise{exp,no_inplace}"]
    overwritten_exponential = graph.outputs[0].owner.inputs[0].owner.inputs[0]
    assert str(overwritten_exponential.owner.op) == "Elemwise{exp,no_inplace}"
    assert boundary[0] is not overwritten_exponential
    untouched = FunctionGraph([x_t, w], [T.exp(w).T + x_t])
    assert [str(variable.owner.op) for variable in
            invariant_boundary(untouched, [untouched.inputs[1]])] == ["DimShuffle{1,0}"]
