"""Issue 18's smaller items: the class of a run-time error, the user's line in errors of
rewritten nodes, what trust_input still checks."""

from __future__ import annotations

import signal
import time

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]


@pytest.mark.parametrize("mode", MODES)
def test_a_huge_allocation_is_a_memory_error(mode):
    n = T.lscalar("n")
    f = sympile.function([n], T.zeros((n, n, n)), mode=mode)
    with pytest.raises(MemoryError, match="while computing"):
        f(10 ** 5)


@pytest.mark.parametrize("mode", MODES)
def test_errors_of_rewritten_nodes_name_the_users_line(mode):
    x, y = T.dmatrix("x"), T.lvector("y")
    losses = -T.log(T.nnet.softmax(x))[T.arange(y.shape[0]), y]  # the line to name
    line = f"test_reliability.py:{losses_line()}"
    f = sympile.function([x, y], losses, mode=mode)
    assert "CrossentropySoftmax1Hot" in {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    with pytest.raises(IndexError, match=line):
        f(np.ones((2, 3)), np.array([0, 7]))


def losses_line() -> int:
    import inspect
    source, start = inspect.getsourcelines(test_errors_of_rewritten_nodes_name_the_users_line)
    return start + next(i for i, text in enumerate(source) if "the line to name" in text)


@pytest.mark.parametrize("mode", MODES)
def test_trust_input_checks_dtype_byte_order_and_ndim(mode):
    x = T.dvector("x")
    f = sympile.function([x], x * 2 + 1, mode=mode)
    f.trust_input = True
    np.testing.assert_array_equal(f(np.arange(4.0)), [1.0, 3.0, 5.0, 7.0])
    with pytest.raises(TypeError, match=">f8"):
        f(np.arange(4.0).astype(">f8"))
    with pytest.raises(TypeError, match=r"\(2, 2\)"):
        f(np.ones((2, 2)))
    with pytest.raises(TypeError):
        f(np.arange(4, dtype="float32"))


@pytest.mark.parametrize("mode", MODES)
def test_ctrl_c_stops_fn_n_calls_between_two_calls(mode):
    """SIGINT during fn(n_calls=N) raises KeyboardInterrupt soon (the C backend's loop ran on
    to the end: 56 s of a 200x200 product step); the calls made stay applied whole."""
    counter = sympile.shared(np.zeros(1000))
    x = T.dmatrix("x")
    step = sympile.function([x], T.dot(x, x).sum(), updates={counter: counter + 1.0},
                            mode=mode)
    step(np.ones((120, 120)) / 120)
    # The kernel's timer, as a Ctrl-C comes from outside: a Python thread could not send it
    # while the C loop holds the GIL. Python's SIGINT handler raises KeyboardInterrupt.
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            step.fn(n_calls=10_000_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - start < 5.0
    value = counter.get_value()
    assert value.min() == value.max() and 1 <= value[0] < 10_000_000


@requires_compiler
def test_ctrl_c_stops_a_long_scan_and_its_call_applies_nothing():
    """A scan of 400 million steps (some 20 s) on the C backend stops within a step of
    SIGINT; the function's update of a shared variable is not applied."""
    calls = sympile.shared(np.float64(0.0))
    x = T.dscalar("x")
    steps, _ = sympile.scan(lambda previous: T.sin(previous) + 0.5, outputs_info=x,
                            n_steps=400_000_000)
    loop = sympile.function([x], steps[-1], updates={calls: calls + 1.0}, mode=C_MODE)
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            loop(0.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - start < 5.0
    assert calls.get_value() == 0.0
