"""Calls from several threads: each call of a function is atomic with respect to that
function's storage and updates (issue 18)."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.compile.ops import as_op
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler),
         pytest.param(Mode(None, backend="c"), marks=requires_compiler, id="c-unrewritten")]
THREADS, CALLS = 4, 150


@pytest.fixture(autouse=True)
def _switch_threads_often():
    """Python switches threads every 5 ms by default; switching every microsecond makes
    interleavings that a wrong lock lets through show up within a few hundred calls."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def _hammer(call, n_threads=THREADS, n_calls=CALLS):
    """Run call(thread index) n_calls times in each of n_threads threads, started together;
    the results by thread."""
    results = [[] for _ in range(n_threads)]
    start = threading.Barrier(n_threads)

    def work(index):
        start.wait()
        for _ in range(n_calls):
            results[index].append(call(index))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@as_op(itypes=[T.dscalar], otypes=[T.dscalar])
def _in_python(value):
    """A node without C code: the C backend runs it as a Python thunk, where it lets go of
    the GIL and another thread's call can start."""
    return value.copy()


@pytest.mark.parametrize("thunk", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_accumulator_from_threads_loses_no_update(mode, thunk):
    state = sympile.shared(np.float64(0.0), "state")
    x = T.dscalar("x")
    read = _in_python(state) if thunk else state
    accumulate = sympile.function([x], read, updates=[(state, read + x)], mode=mode)
    for _ in range(3):
        state.set_value(np.float64(0.0))
        returned = sorted(v for r in _hammer(lambda i: float(accumulate(1.0))) for v in r)
        assert state.get_value() == THREADS * CALLS
        assert returned == list(map(float, range(THREADS * CALLS)))  # each old value once


@pytest.mark.parametrize("mode", MODES)
def test_scan_functions_from_threads(mode):
    """A scan's inner function is shared by every function built on that scan."""
    total = sympile.shared(np.float64(0.0), "total")
    x = T.dvector("x")
    sums, _ = sympile.scan(lambda v, acc: acc + v, sequences=x,
                           outputs_info=T.constant(np.float64(0.0)))
    add_up = sympile.function([x], sums[-1], updates=[(total, total + sums[-1])], mode=mode)
    scaled = sympile.function([x], sums * 2, mode=mode)
    inputs = [np.arange(n, dtype="float64") for n in (3, 5, 7, 9)]

    def call(index):
        if index % 2:
            return float(add_up(inputs[index]))
        return scaled(inputs[index]).tolist()

    for _ in range(3):
        total.set_value(np.float64(0.0))
        results = _hammer(call)
        for index, values in enumerate(results):
            expected = float(inputs[index].sum()) if index % 2 else \
                (2 * np.cumsum(inputs[index])).tolist()
            assert all(value == expected for value in values), index
        assert total.get_value() == CALLS * (inputs[1].sum() + inputs[3].sum())


def test_fn_n_calls_is_atomic_between_threads():
    state = sympile.shared(np.int64(0), "state")
    step = sympile.function([], state, updates=[(state, state + 1)], mode=PYTHON_MODE)
    step()
    _hammer(lambda i: step.fn(n_calls=10), n_calls=20)
    assert state.get_value() == 1 + THREADS * 20 * 10


@pytest.mark.parametrize("mode", MODES)
def test_functions_updating_one_shared_vector_never_see_it_torn(mode):
    """Two functions add and subtract 1 to every element of one shared vector from four
    threads: each call sees the vector whole (its spread is 0) and each update replaces it
    whole. The Python backend's inplace updates were visible half-done (1,178 of 1,200 calls
    saw a torn vector) and a call's two reads of it could see two versions."""
    vector = sympile.shared(np.zeros(400_000))
    spread = vector.max() - vector.min()
    add = sympile.function([], spread, updates={vector: vector + 1.0}, mode=mode)
    subtract = sympile.function([], spread, updates={vector: vector * 1.0 - 1.0}, mode=mode)
    spreads = []

    def calls(function):
        for _ in range(150):
            spreads.append(float(function()))

    threads = [threading.Thread(target=calls, args=(function,))
               for function in (add, subtract, add, subtract)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    final = vector.get_value()
    assert spreads.count(0.0) == len(spreads) == 600
    # Whole; its value depends on how the calls interleaved, as Python assignments would.
    assert final.max() == final.min()


@requires_compiler
def test_c_backend_function_without_c_code_replaces_its_update_whole():
    """A function none of whose nodes has C code runs on the Python VM under the C backend
    too; its inplace update (erfinv has no C code) must then replace the vector whole, as
    the Python backend's do: a function reading the vector meanwhile sees every element of
    one version (spread 0). Each update maps the constant vector to another constant."""
    vector = sympile.shared(np.full(400_000, 0.5))
    update = sympile.function([], [], updates={vector: T.erfinv(vector)}, mode=C_MODE)
    assert not any(node.op.destroy_map for node in update._vm.fgraph.apply_nodes)
    spread = sympile.function([], vector.max() - vector.min(), mode=C_MODE)
    results = _hammer(lambda index: update() if index % 2 else float(spread()))
    spreads = [value for thread in results[::2] for value in thread]
    assert spreads.count(0.0) == len(spreads) == 2 * CALLS
