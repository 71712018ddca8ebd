"""config.compile_async: function() returns before its C is compiled, the first calls run on
the Python backend, and the calls switch to the C code between two calls.

The compiler here is gcc behind a gate (a shell script that waits for a file before running
it), so each test decides when the background build may finish; the gate can also make the
build fail. Every graph carries a constant of its own test, so no test finds another's module
in the cache."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.cache import CompileError
from sympile.config import config
from sympile.link.c.cmodule import compiler_available
from sympile.link.c.linker import CVM
from sympile.link.python.vm import PythonVM

pytestmark = pytest.mark.skipif(not compiler_available(), reason="needs a C compiler")

GATED_COMPILER = """#!/bin/sh
case "$1" in --version) exec {real} "$@";; esac
while [ ! -e "$SYMPILE_TEST_GATE" ]; do sleep 0.01; done
if [ -e "$SYMPILE_TEST_GATE.fail" ]; then echo "the gate refused to compile" >&2; exit 1; fi
exec {real} "$@"
"""


@pytest.fixture(scope="module")
def gated_compiler(tmp_path_factory):
    """The gated compiler's path: one per test module, so its cache entries serve every test
    (the header and the program unit compile once)."""
    path = tmp_path_factory.mktemp("gated") / "gated-cc"
    path.write_text(GATED_COMPILER.format(real=shutil.which(config.cxx)))
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def gate(gated_compiler, tmp_path, monkeypatch):
    """The gate's file (absent: compiles wait); compile_async on, through the gated
    compiler."""
    gate_path = tmp_path / "gate"
    monkeypatch.setenv("SYMPILE_TEST_GATE", str(gate_path))
    with config.change_flags(compile_async=True, cxx=gated_compiler, backend="c"):
        yield gate_path


def training_step(constant: float, **keywords):
    """A least-squares step on a shared matrix (a product, its gradient, an inplace
    update), with `constant` in its graph; returns (function, W)."""
    rng = np.random.default_rng(0)
    W = sympile.shared(rng.standard_normal((5, 3)), name="W")
    x, y = T.matrix("x"), T.matrix("y")
    cost = T.sum((T.tanh(x @ W) - y) ** 2) * constant
    step = sympile.function([x, y], cost, updates=[(W, W - 0.01 * T.grad(cost, W))],
                            name="step", **keywords)
    return step, W


def batches(n):
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((4, 5)), rng.standard_normal((4, 3))) for _ in range(n)]


def test_calls_run_at_once_and_switch_to_c_with_the_same_values(gate):
    step, W = training_step(1.25)
    assert isinstance(step._vm, PythonVM) and step._pending is not None
    data = batches(6)
    costs = [step(x, y) for x, y in data[:3]]
    assert isinstance(step._vm, PythonVM)
    gate.touch()
    step.wait_compiled()
    assert isinstance(step._vm, CVM) and step._pending is None
    costs += [step(x, y) for x, y in data[3:]]

    with config.change_flags(compile_async=False):
        reference, reference_W = training_step(1.25)
    assert isinstance(reference._vm, CVM)
    expected = [reference(x, y) for x, y in data]
    np.testing.assert_allclose(costs, expected, rtol=1e-13)
    np.testing.assert_allclose(W.get_value(), reference_W.get_value(), rtol=1e-13)


def test_the_switch_happens_at_a_call_once_the_build_is_done(gate):
    step, W = training_step(1.5)
    x, y = batches(1)[0]
    step(x, y)
    gate.touch()
    step._pending.exception()  # waits for the build, without switching
    assert isinstance(step._vm, PythonVM)
    before = W.get_value()
    step(x, y)
    assert isinstance(step._vm, CVM)
    assert not np.array_equal(W.get_value(), before)


def test_a_failed_call_changes_nothing_before_and_after_the_switch(gate):
    step, W = training_step(1.75)
    before = W.get_value()
    bad_x = np.ones((4, 6))
    with pytest.raises(ValueError):
        step(bad_x, np.ones((4, 3)))
    np.testing.assert_array_equal(W.get_value(), before)
    gate.touch()
    step.wait_compiled()
    with pytest.raises(ValueError):
        step(bad_x, np.ones((4, 3)))
    np.testing.assert_array_equal(W.get_value(), before)


def test_a_failed_build_is_the_compile_error_of_every_later_call(gate):
    step, W = training_step(2.0)
    x, y = batches(1)[0]
    step(x, y)
    after_first = W.get_value()
    (gate.parent / (gate.name + ".fail")).touch()
    gate.touch()
    with pytest.raises(CompileError, match="the gate refused to compile"):
        step.wait_compiled()
    with pytest.raises(CompileError, match=r"function 'step'.*compile_async"):
        step(x, y)
    np.testing.assert_array_equal(W.get_value(), after_first)


def test_fn_and_trust_input_on_the_interim_backend(gate):
    step, W = training_step(2.25, trust_input=True)
    x, y = batches(1)[0]
    with pytest.raises(TypeError):
        step(x.astype("float32"), y)
    step(x, y)
    step.fn(n_calls=3)
    assert isinstance(step._vm, PythonVM)
    gate.touch()
    with config.change_flags(compile_async=False):
        reference, reference_W = training_step(2.25)
    for _ in range(4):
        reference(x, y)
    np.testing.assert_allclose(W.get_value(), reference_W.get_value(), rtol=1e-13)
    step.wait_compiled()


def test_a_module_already_built_is_used_at_once(gate):
    gate.touch()
    first, _ = training_step(2.5)
    first.wait_compiled()
    again, _ = training_step(2.5)
    assert isinstance(again._vm, CVM) and again._pending is None


def test_off_compiles_before_returning(gated_compiler, tmp_path, monkeypatch):
    gate_path = tmp_path / "gate"
    gate_path.touch()
    monkeypatch.setenv("SYMPILE_TEST_GATE", str(gate_path))
    with config.change_flags(compile_async=False, cxx=gated_compiler, backend="c"):
        step, _ = training_step(2.75)
    assert isinstance(step._vm, CVM) and step._pending is None
    step.wait_compiled()


def test_scan_in_a_function_compiled_in_the_background(gate):
    gate.touch()
    x = T.vector("x")
    total = sympile.shared(np.float64(0.0), name="total")
    sums, updates = sympile.scan(lambda value, acc: acc + value * 3.0, sequences=x,
                                 outputs_info=T.constant(0.0, dtype="float64"))
    f = sympile.function([x], sums, updates=[(total, total + sums[-1])])
    values = np.arange(5.0)
    first = f(values)
    f.wait_compiled()
    second = f(values)
    np.testing.assert_allclose(first, np.cumsum(values * 3.0))
    np.testing.assert_allclose(second, first)
    assert total.get_value() == pytest.approx(60.0)


@pytest.mark.slow
def test_a_program_that_ends_first_still_leaves_the_module_in_the_cache(tmp_path):
    program = textwrap.dedent("""
        import sys
        import numpy as np
        import sympile, sympile.tensor as T
        x = T.vector("x")
        f = sympile.function([x], T.exp(x) * 7.5 + 1)
        print(type(f._vm).__name__, float(f(np.zeros(2))[0]))
    """)
    environment = dict(os.environ, SYMPILE_FLAGS=f"compiledir={tmp_path},backend=c")
    runs = [subprocess.run([sys.executable, "-c", program], env=environment,
                           capture_output=True, text=True, check=True).stdout.split()
            for _ in range(2)]
    assert runs == [["PythonVM", "8.5"], ["CVM", "8.5"]]
