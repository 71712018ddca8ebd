"""function(..., profile=True) and ProfileStats.summary()."""

from __future__ import annotations

import io

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from tests.link.c.test_linker import add_one, twice
from tests.link.c.utils import requires_compiler


def test_python_backend_profile_counts_calls_and_nodes():
    x = T.dvector("x")
    f = sympile.function([x], T.exp(x) * 2 + 1, mode=Mode(None, backend="python"),
                         profile=True, name="small")
    for _ in range(3):
        f(np.zeros(4))
    f.fn(n_calls=2)
    stats = f.profile
    assert stats.calls == 5 and stats.call_s > 0
    assert [calls for _, _, calls, _ in stats.node_times()] == [5] * len(f._vm.nodes)
    text = io.StringIO()
    stats.summary(file=text)
    report = text.getvalue()
    assert "Function profile: small" in report and "5 calls" in report
    assert "Elemwise{exp}" in report and "rewrite" in report


def test_without_profile_there_is_no_profile():
    x = T.dvector("x")
    assert sympile.function([x], x + 1).profile is None


@requires_compiler
def test_c_backend_profile_names_perform_nodes_and_splits_compile_time():
    x = T.dvector("x")
    f = sympile.function([x], twice(add_one(x)), mode=Mode(None, backend="c"), profile=True)
    f(np.ones(2))
    stats = f.profile
    fallbacks = [node for node, _, _, fallback in stats.node_times() if fallback]
    assert [type(node.op).__name__ for node in fallbacks] == ["Twice"]
    assert set(stats.link_times) >= {"codegen", "compile", "load"}
    text = io.StringIO()
    stats.summary(file=text)
    report = text.getvalue()
    assert "backend c: 2 nodes, 1 ran perform()" in report
    assert "nodes without C code" in report and "test_profiling.py" in report
    assert "C compile" in report


def test_a_failing_call_is_still_counted():
    x = T.dvector("x")
    f = sympile.function([x], x.sum(), profile=True)
    with pytest.raises(TypeError):
        f("not an array")
    assert f.profile.calls == 1
