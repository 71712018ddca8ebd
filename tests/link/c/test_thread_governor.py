"""The thread governor of compiled functions (config.openmp_follow_load,
sympile/link/c/thread_governor.c): while another process keeps a core busy, a call's OpenMP
code runs on the cores left; when that process stops, on all of them again; the calling
thread's OpenMP thread count is the same after a call as before it."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.graph.basic import Apply
from sympile.graph.ccode import CCode
from sympile.graph.op import Op
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable
from tests.link.c.utils import compile_c, requires_compiler

pytestmark = [
    requires_compiler,
    pytest.mark.alone,  # another worker's test would be load
    pytest.mark.skipif(not sympile.config.openmp, reason="OpenMP is off (config.openmp)"),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not os.path.exists("/proc/stat"),
                       reason="needs 2 cores and /proc/stat"),
]


class ThreadsInCall(Op):
    """The OpenMP thread count a node sees during the call (an int64 scalar); its input
    only orders it."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [as_tensor_variable(x)], [tensor_type("int64", ())()])

    def perform(self, node, inputs, output_storage):
        raise NotImplementedError("ThreadsInCall runs in C only")

    def c_code(self, node, names):
        (z,) = names.outputs
        return CCode(f"""
        if (sympile_prepare_output(&{z}, 0, NULL, NPY_INT64))
            {names.fail}
        *(npy_int64 *)PyArray_DATA({z}) = omp_get_max_threads();
        """, support=("#include <omp.h>",), openmp=True)


def _openmp() -> ctypes.CDLL:
    library = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    library.omp_get_max_threads.restype = ctypes.c_int
    return library


def _calls_until(f, condition, seconds: float = 5.0) -> list[int]:
    """Calls f (100 ms windows of calls) until condition(the thread count a call saw) or
    `seconds` pass; the counts seen."""
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        window = time.monotonic() + 0.12
        while time.monotonic() < window:
            count = int(f(np.ones(1000)))
        seen.append(count)
        if condition(count):
            break
    return seen


def test_calls_run_on_the_cores_another_process_leaves():
    openmp = _openmp()
    budget = openmp.omp_get_max_threads()
    if budget < 2:
        pytest.skip("one OpenMP thread (OMP_NUM_THREADS)")
    x = T.dvector("x")
    f = compile_c([x], ThreadsInCall()(x))
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        seen = _calls_until(f, lambda count: count < budget)
        assert seen[-1] < budget, f"with a core kept busy the calls saw {seen} threads"
        assert openmp.omp_get_max_threads() == budget  # set back after each call
    finally:
        spinner.kill()
        spinner.wait()
    seen = _calls_until(f, lambda count: count == budget)
    assert seen[-1] == budget, f"after the busy process stopped the calls saw {seen} threads"
    with sympile.config.change_flags(openmp_follow_load=False):
        unfollowed = compile_c([x], ThreadsInCall()(x))
    assert "sympile_govern_threads" not in unfollowed._vm.plan.source
    assert "sympile_govern_threads" in f._vm.plan.source


def test_a_first_call_long_after_loading_already_knows_the_load():
    """The governor's first window starts when the module is loaded, and a look after a long
    pause uses the pause's load: a function first called well after loading, while another
    process keeps a core busy, runs its first call on the cores left (before, the first
    0.1 s of calls ran on every thread)."""
    budget = _openmp().omp_get_max_threads()
    if budget < 2:
        pytest.skip("one OpenMP thread (OMP_NUM_THREADS)")
    x = T.dvector("x")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        f = compile_c([x], ThreadsInCall()(x))
        time.sleep(1.5)
        first = int(f(np.ones(1000)))
    finally:
        spinner.kill()
        spinner.wait()
    assert first < budget, f"the first call saw {first} of {budget} threads"


def test_compiling_other_functions_is_not_load():
    """The C compiler's runs for the next function are this process's work: a function called
    first after them, on an idle machine, runs on every thread."""
    budget = _openmp().omp_get_max_threads()
    if budget < 2:
        pytest.skip("one OpenMP thread (OMP_NUM_THREADS)")
    x = T.dvector("x")
    # A graph of its own: the other tests' ThreadsInCall(x) is the module they loaded, whose
    # governor still counts the core their busy process took until its next look.
    f = compile_c([x], ThreadsInCall()(-x))
    # A constant no earlier run used, so that the compiler runs.
    compile_c([x], T.cosh(x * float(np.random.default_rng().uniform(3, 4))))
    assert int(f(np.ones(1000))) == budget
