"""Issue 34: a new function compiles nothing fixed. Once a machine's cache holds the units of
the ops a model uses (the BLAS calls, softmax rows, indexing, the program runtime, ...), a
new training step of those ops with another batch, learning rate and sizes compiles only
what depends on its graph: its main unit, its fused loops (constants folded in), and the
link. (An op this machine has never compiled is built once, on its first use.)"""

from __future__ import annotations

import os
import re

import numpy as np

import sympile
import sympile.tensor as T
from sympile.cache import store
from sympile.config import config
from tests.link.c.utils import C_MODE, requires_compiler


def _training_step(batch: int, hidden: int, rate: float):
    rng = np.random.default_rng(0)
    data = sympile.shared(rng.standard_normal((120, 20)).astype("float32"))
    labels = sympile.shared(rng.integers(0, 3, 120).astype("int64"))
    w1 = sympile.shared((0.1 * rng.standard_normal((20, hidden))).astype("float32"))
    b1 = sympile.shared(np.zeros(hidden, "float32"))
    w2 = sympile.shared((0.1 * rng.standard_normal((hidden, 3))).astype("float32"))
    b2 = sympile.shared(np.zeros(3, "float32"))
    index = T.lscalar("index")
    x = data[index * batch:(index + 1) * batch]
    y = labels[index * batch:(index + 1) * batch]
    probabilities = T.nnet.softmax(T.dot(T.tanh(T.dot(x, w1) + b1), w2) + b2)
    cost = -T.log(probabilities[T.arange(y.shape[0]), y]).mean()
    parameters = [w1, b1, w2, b2]
    gradients = sympile.grad(cost, parameters)
    return sympile.function([index], cost, mode=C_MODE, updates=[
        (p, p - np.float32(rate) * g) for p, g in zip(parameters, gradients)])


@requires_compiler
def test_a_new_function_compiles_only_its_graphs_own_code(tmp_path, monkeypatch):
    compiled: list[str] = []
    run = store.subprocess.run

    def recording(command, *arguments, **keywords):
        sources = [part for part in command if part.endswith(".c")]
        compiled.append(sources[0] if sources else "link")
        return run(command, *arguments, **keywords)

    monkeypatch.setattr(store.subprocess, "run", recording)
    with config.change_flags(compiledir=str(tmp_path), compile_async=False):
        _training_step(10, 16, 0.1)(0)
        fixed = len(compiled)
        compiled.clear()
        step = _training_step(6, 12, 0.05)
        assert np.isfinite(step(1))
    # The first function built the fixed units (the precompiled header, the program, the
    # products, softmax, indexing...); the second none of them.
    assert fixed > 10
    kinds = [os.path.basename(source) if source != "link" else source for source in compiled]
    assert kinds.count("module.c") == 1 and kinds.count("link") == 1
    for source in compiled:
        if source.endswith("unit.c"):
            text = open(source).read()
            assert re.search(r"/\* (Elemwise\{)?composite\{", text), \
                re.findall(r"/\* (.*?) \*/", text)[-3:]
    assert len(compiled) <= 6, kinds


@requires_compiler
def test_the_main_unit_grows_by_table_rows_not_code():
    """A function's main unit, compiled for every new function, is tables (program.h): each
    further node adds a row of numbers, not a C function for gcc to optimise (a 2,000-node
    chain compiled in 7.7 s as code, 0.4 s as tables). Its values stay right."""
    def chain(length: int):
        x = T.dvector("x")
        y = x
        for _ in range(length):
            y = T.cos(y)[::-1] * 0.9
        return sympile.function([x], y, mode=C_MODE), x

    short, _ = chain(5)
    long, _ = chain(105)
    per_node = ((len(long._vm.plan.source) - len(short._vm.plan.source))
                / (len(long._vm.nodes) - len(short._vm.nodes)))
    # About 120 bytes a node now (its row, its cells, the op's name in a comment); a C
    # function per node, as before, took some 300 (the test fails there).
    assert per_node < 200, f"{per_node:.0f} bytes of main unit per node"
    value = np.array([0.1, -0.2, 0.3])
    expected = value
    for _ in range(105):
        expected = (np.cos(expected) * 0.9)[::-1]
    np.testing.assert_allclose(long(value), expected)
