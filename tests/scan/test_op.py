"""The Scan Op's loop: its inner function follows the outer function's rewrites and backend,
and results match a Python loop over numpy on both backends."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery
from sympile.link.c.cmodule import compiler_available
from sympile.link.c.linker import CVM
from sympile.link.python.vm import PythonVM
from sympile.scan import Scan, scan, until

PYTHON = Mode(RewriteQuery(include=("fast_run",)), backend="python", name="PYTHON_FAST_RUN")
C = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="C_FAST_RUN")
needs_compiler = pytest.mark.skipif(not compiler_available(), reason="no C compiler")
BACKENDS = [PYTHON, pytest.param(C, marks=needs_compiler)]


def _scan_node(function):
    return next(node for node in function.maker.fgraph.toposort() if isinstance(node.op, Scan))


def _rnn():
    x = T.matrix("x")
    h0 = T.vector("h0")
    w = T.matrix("w")
    states, _ = scan(lambda x_t, h_prev, w: T.tanh(x_t + T.dot(h_prev, w)), sequences=x,
                     outputs_info=h0, non_sequences=w)
    return [x, h0, w], states


def _rnn_values(steps=7, hidden=5):
    rng = np.random.default_rng(0)
    return (rng.normal(size=(steps, hidden)), rng.normal(size=hidden),
            rng.normal(size=(hidden, hidden)) * 0.5)


def _numpy_rnn(xs, h0, w):
    states, h = [], h0
    for x_t in xs:
        h = np.tanh(x_t + h @ w)
        states.append(h)
    return np.array(states)


@pytest.mark.parametrize("mode, vm_class", [(PYTHON, PythonVM),
                                            pytest.param(C, CVM, marks=needs_compiler)])
def test_inner_function_runs_on_the_outer_backend(mode, vm_class):
    inputs, states = _rnn()
    function = sympile.function(inputs, states, mode=mode)
    values = _rnn_values()
    np.testing.assert_allclose(function(*values), _numpy_rnn(*values))
    node = _scan_node(function)
    inner = node.op._compiled(node)
    assert isinstance(inner._vm, vm_class)
    assert inner.maker.mode.rewriter == mode.rewriter


@needs_compiler
def test_one_op_in_functions_of_both_backends():
    inputs, states = _rnn()
    on_python = sympile.function(inputs, states, mode=PYTHON)
    on_c = sympile.function(inputs, states, mode=C)
    values = _rnn_values()
    expected = _numpy_rnn(*values)
    np.testing.assert_allclose(on_python(*values), expected)
    np.testing.assert_allclose(on_c(*values), expected)
    python_node, c_node = _scan_node(on_python), _scan_node(on_c)
    assert python_node.op is c_node.op
    assert isinstance(c_node.op._compiled(c_node)._vm, CVM)
    assert isinstance(python_node.op._compiled(python_node)._vm, PythonVM)


@pytest.mark.parametrize("mode", BACKENDS)
def test_results_of_earlier_calls_are_not_overwritten(mode):
    inputs, states = _rnn()
    function = sympile.function(inputs, states, mode=mode)
    first_values = _rnn_values()
    first = function(*first_values)
    second_values = tuple(value * 0.5 for value in first_values)
    second = function(*second_values)
    np.testing.assert_allclose(first, _numpy_rnn(*first_values))
    np.testing.assert_allclose(second, _numpy_rnn(*second_values))


@pytest.mark.parametrize("mode", BACKENDS)
def test_two_taps_scalar_states_and_plain_outputs(mode):
    initial = T.vector("initial")
    n_steps = T.iscalar("n_steps")
    (fibonacci, doubled), _ = scan(lambda older, old: [older + old, 2 * old],
                                   outputs_info=[dict(initial=initial, taps=[-2, -1]), None],
                                   n_steps=n_steps)
    function = sympile.function([initial, n_steps], [fibonacci, doubled], mode=mode)
    start = np.array([1.0, 1.0])
    values, twice = function(start, 6)
    expected = [1.0, 1.0]
    for _ in range(6):
        expected.append(expected[-2] + expected[-1])
    np.testing.assert_allclose(values, expected[2:])
    np.testing.assert_allclose(twice, 2 * np.array(expected[1:7]))
    empty_values, empty_twice = function(start, 0)
    assert empty_values.shape == (0,) and empty_twice.shape == (0,)


@pytest.mark.parametrize("mode", BACKENDS)
def test_until_stops_with_the_steps_that_ran(mode):
    limit = T.scalar("limit")
    powers, _ = scan(lambda previous, limit: (previous * 2, until(previous * 2 > limit)),
                     outputs_info=T.constant(1.0), non_sequences=limit, n_steps=50)
    function = sympile.function([limit], powers, mode=mode)
    np.testing.assert_allclose(function(np.float64(40)), [2, 4, 8, 16, 32, 64])


@pytest.mark.parametrize("mode", BACKENDS)
def test_matrix_states_and_float32(mode):
    a = T.fmatrix("a")
    n_steps = T.iscalar("n_steps")
    powers, _ = scan(lambda previous, a: T.dot(previous, a), outputs_info=a, non_sequences=a,
                     n_steps=n_steps)
    function = sympile.function([a, n_steps], powers, mode=mode)
    value = (np.random.default_rng(1).normal(size=(3, 3)) * 0.5).astype("float32")
    result = function(value, 4)
    assert result.dtype == np.float32
    expected = [np.linalg.matrix_power(value.astype("float64"), k) for k in range(2, 6)]
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5)


def test_perform_without_a_linked_mode_uses_the_default_mode():
    inputs, states = _rnn()
    node = states.owner
    assert isinstance(node.op, Scan)
    xs, h0, w = _rnn_values()
    storage = [[None]]
    # The initial state goes in as a buffer of its one past step.
    node.op.perform(node, [np.int64(xs.shape[0]), xs, h0[np.newaxis], w], storage)
    values = (xs, h0, w)
    np.testing.assert_allclose(storage[0][0], _numpy_rnn(*values))


def test_the_body_and_its_gradient_run_in_the_mode_scan_names():
    """scan(mode=...) is Theano's: the loop's body is compiled with that mode (here the
    Python backend inside a C function), and so are the loops of its gradient."""
    x = T.dvector("x")
    python = Mode(None, backend="python")
    squares, _ = scan(lambda v: v * v, sequences=[x], mode=python)
    f = sympile.function([x], [squares, sympile.grad(squares.sum(), x)],
                         mode=C if compiler_available() else PYTHON)
    values = f(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(values[0], [1.0, 4.0, 9.0])
    np.testing.assert_allclose(values[1], [2.0, 4.0, 6.0])
    scans = [node.op for node in f.maker.fgraph.toposort() if isinstance(node.op, Scan)]
    assert scans and all(op.mode is python for op in scans)
    assert all(backend == "python" for op in scans for _, backend in op._functions)
    with pytest.raises(ValueError, match="unknown mode 'NOPE'"):
        scan(lambda v: v, sequences=[x], mode="NOPE")
