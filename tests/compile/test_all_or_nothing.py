"""A call that fails changes no shared variable, whatever fails where (issue 18): each
update pattern (plain, inplace BLAS, inplace elementwise, inc_subtensor, scan) with one
update that cannot be computed, on both backends, and fn(n_calls=N)."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]


def _state(**values):
    return {name: sympile.shared(np.asarray(value, dtype="float64"), name)
            for name, value in values.items()}


def _snapshot(shared):
    return {name: variable.get_value().copy() for name, variable in shared.items()}


def _assert_unchanged(shared, before):
    for name, variable in shared.items():
        np.testing.assert_array_equal(variable.get_value(), before[name], err_msg=name)


def _counter():
    return sympile.shared(np.int64(0), "counter")


PATTERNS = {}


def pattern(function):
    PATTERNS[function.__name__] = function
    return function


@pattern
def gemm_in_place():
    """counter, W = W * 2 + 1 and b2 updated; then a dot that cannot be computed."""
    s = _state(W=np.ones((3, 3)), b2=np.ones(3), Z=np.zeros((3, 3)))
    x, y = T.dmatrix("x"), T.dmatrix("y")
    counter = _counter()
    updates = [(counter, counter + 1), (s["W"], s["W"] * 2 + 1), (s["b2"], s["b2"] + 1),
               (s["Z"], s["Z"] - 0.1 * T.dot(x, y))]
    return {**s, "counter": counter}, [x, y], updates, \
        (np.ones((3, 2)), np.ones((3, 3))), (np.ones((3, 2)), np.ones((2, 3)))


@pattern
def momentum_with_a_stale_buffer():
    """SGD with momentum; one velocity buffer has a stale shape."""
    s = _state(Wm=np.ones((4, 3)), vW=np.zeros((4, 3)), bm=np.ones(3), vb=np.zeros(2))
    g, gb = T.dmatrix("g"), T.dvector("gb")
    new_vW = 0.9 * s["vW"] - 0.1 * g
    new_vb = 0.9 * s["vb"] - 0.1 * gb
    updates = [(s["vW"], new_vW), (s["Wm"], s["Wm"] + new_vW), (s["vb"], new_vb),
               (s["bm"], s["bm"] + new_vb)]
    return s, [g, gb], updates, (np.ones((4, 3)), np.ones(3)), None


@pattern
def elementwise_in_place():
    s = _state(a=np.ones(4), b=np.ones(3), c=np.ones(4))
    x = T.dvector("x")
    updates = [(s["a"], s["a"] + x), (s["c"], s["c"] * 2), (s["b"], s["b"] + x)]
    return s, [x], updates, (np.ones(4),), None


@pattern
def gemv_and_ger_in_place():
    s = _state(y=np.ones(3), A=np.ones((3, 2)), B=np.ones((3, 3)))
    u, v = T.dvector("u"), T.dvector("v")
    updates = [(s["y"], s["y"] + T.dot(s["A"], u)), (s["B"], s["B"] + T.outer(v, v)),
               (s["A"], s["A"] + T.outer(s["y"], u))]
    return s, [u, v], updates, (np.ones(3), np.ones(3)), (np.ones(2), np.ones(3))


@pattern
def inc_subtensor_rows():
    """An embedding's rows incremented (advanced index) and a basic-index update."""
    s = _state(E=np.zeros((5, 2)), F=np.zeros((4, 2)), G=np.ones((3, 2)))
    rows, g = T.lvector("rows"), T.dmatrix("g")
    updates = [(s["E"], T.inc_subtensor(s["E"][rows], g)),
               (s["F"], T.inc_subtensor(s["F"][rows], g)),
               (s["G"], T.set_subtensor(s["G"][1:], g[:2]))]
    return s, [rows, g], updates, (np.array([1, 4]), np.ones((2, 2))), \
        (np.array([1, 3]), np.ones((2, 2)))


@pattern
def scan_updates():
    s = _state(total=0.0, W=np.eye(2))
    x = T.dmatrix("x")
    steps, _ = sympile.scan(lambda row, h: T.dot(h, s["W"]) + row, sequences=x,
                            outputs_info=T.zeros((2,)))
    updates = [(s["total"], s["total"] + steps.sum()), (s["W"], s["W"] * 0.5)]
    return s, [x], updates, (np.ones((3, 3)),), (np.ones((3, 2)),)


@pattern
def scan_gradient_step():
    """An RNN's SGD step (the scan's gradient holds lazy ifelses) with a stale bias."""
    s = _state(W=np.eye(2) * 0.5, V=np.ones((2, 2)), b=np.zeros(3))
    x, c = T.dmatrix("x"), T.dvector("c")
    states, _ = sympile.scan(lambda row, h: T.tanh(T.dot(h, s["W"]) + row), sequences=x,
                             outputs_info=T.zeros((2,)))
    cost = T.dot(states, s["V"]).sum() + s["b"].sum()
    gW, gV, gb = sympile.grad(cost, [s["W"], s["V"], s["b"]])
    updates = [(s["W"], s["W"] - 0.1 * gW), (s["V"], s["V"] - 0.1 * gV),
               (s["b"], s["b"] - 0.1 * (gb + c))]
    return s, [x, c], updates, (np.ones((3, 2)), np.ones(2)), (np.ones((3, 2)), np.ones(3))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_a_failed_call_changes_no_shared_variable(name, mode):
    shared, inputs, updates, bad, good = PATTERNS[name]()
    f = sympile.function(inputs, [], updates=updates, mode=mode)
    for _ in range(2):
        before = _snapshot(shared)
        with pytest.raises((ValueError, IndexError)):
            f(*bad)
        _assert_unchanged(shared, before)
    if good is not None:  # the function still works, and does update
        before = _snapshot(shared)
        f(*good)
        assert any(not np.array_equal(v.get_value(), before[k]) for k, v in shared.items())


@pytest.mark.parametrize("mode", MODES)
def test_fn_n_calls_applies_the_calls_before_the_failing_one(mode):
    """fn(n_calls=N) failing at call k: calls 1 .. k-1 applied, nothing of call k."""
    counter = _counter()
    limit = sympile.shared(np.float64(3.0), "limit")
    log = sympile.shared(np.zeros(5), "log")
    # Call k writes log[counter]: the 6th call's row index 5 is out of range.
    f = sympile.function([], [], updates=[(counter, counter + 1),
                                          (log, T.set_subtensor(log[counter], limit))],
                         mode=mode)
    f()
    with pytest.raises(IndexError):
        f.fn(n_calls=10)
    assert counter.get_value() == 5
    np.testing.assert_array_equal(log.get_value(), [3.0] * 5)


@requires_compiler
def test_inplace_updates_stay_in_place():
    """The checks cost no copy: W's storage is still written in place (on the C backend; the
    Python backend replaces each updated value whole, see test_threads)."""
    mode = C_MODE
    W = sympile.shared(np.ones((3, 3)), "W")
    b = sympile.shared(np.ones(3), "b")
    x = T.dmatrix("x")
    f = sympile.function([x], [], updates=[(W, W - 0.1 * T.dot(x.T, x)), (b, b * 2)],
                         mode=mode)
    storage, bias_storage = W.get_value(borrow=True), b.get_value(borrow=True)
    f(np.ones((2, 3)))
    assert W.get_value(borrow=True) is storage and b.get_value(borrow=True) is bias_storage
    np.testing.assert_allclose(W.get_value(), 1 - 0.2)
    kinds = {type(node.op).__name__ for node in f.maker.fgraph.apply_nodes}
    assert "LengthsAgree" in kinds and "GemmInplace" in kinds


def test_the_python_backend_replaces_updated_values_whole():
    """On the Python backend an update is a new array assigned at the end of the call: numpy's
    loops let another thread's function read a shared array half-written in place."""
    W = sympile.shared(np.ones((3, 3)), "W")
    x = T.dmatrix("x")
    f = sympile.function([x], [], updates=[(W, W - 0.1 * T.dot(x.T, x))], mode=PYTHON_MODE)
    storage = W.get_value(borrow=True)
    f(np.ones((2, 3)))
    assert W.get_value(borrow=True) is not storage
    np.testing.assert_allclose(storage, 1.0)
    np.testing.assert_allclose(W.get_value(), 1 - 0.2)
    assert not f.maker.fgraph.destroy_handler.destroyed_inputs()
