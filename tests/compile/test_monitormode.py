"""MonitorMode, NanGuardMode and printing.Print."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile import MonitorMode, NanGuardError, NanGuardMode
from sympile.printing import Print


def test_monitor_mode_calls_back_around_every_node():
    x = T.dvector("x")
    y = T.exp(x) * 2
    seen = []

    def pre(index, node, fn):
        seen.append(("pre", index, type(node.op).__name__, fn.outputs[0][0] is None))

    def post(index, node, fn):
        seen.append(("post", index, [np.asarray(cell[0]).tolist() for cell in fn.outputs]))

    f = sympile.function([x], y, mode=MonitorMode(pre, post, optimizer=None))
    np.testing.assert_allclose(f([0.0]), [2.0])
    assert seen == [("pre", 0, "Elemwise", True), ("post", 0, [[1.0]]),
                    ("pre", 1, "Elemwise", True), ("post", 1, [[2.0]])]
    derived = MonitorMode(post_func=post).excluding("fusion")
    assert isinstance(derived, MonitorMode) and derived.post_func is post
    with pytest.raises(TypeError, match="pre_func must be callable"):
        MonitorMode(pre_func=3)
    with pytest.raises(ValueError, match="Python backend"):
        MonitorMode(linker="cvm")


def test_nan_guard_mode_stops_at_the_first_bad_value_and_updates_nothing():
    x = T.dvector("x")
    total = sympile.shared(0.0, "total")
    f = sympile.function([x], T.log(x), updates=[(total, total + 1)], mode="NanGuardMode")
    np.testing.assert_allclose(f([1.0]), [0.0])
    assert total.get_value() == 1.0
    with pytest.raises(NanGuardError, match="computed NaN"):
        f([-1.0])
    with pytest.raises(NanGuardError, match="computed an infinity"):
        f([0.0])
    with pytest.raises(NanGuardError, match="reads a value above 1e\\+10"):
        f([1e11])
    assert total.get_value() == 1.0  # no failed call applied its update
    relaxed = sympile.function([x], T.log(x), mode=NanGuardMode(nan_is_error=False,
                                                                 inf_is_error=False,
                                                                 big_is_error=False))
    assert np.isnan(relaxed([-1.0])[0])
    # Integers are never checked.
    i = T.lvector("i")
    np.testing.assert_array_equal(sympile.function([i], i * 2, mode="NanGuardMode")([2 ** 40]),
                                  [2 ** 41])


def test_print_op(capsys):
    x = T.dvector("x")
    shown = Print("doubled", attrs=("shape", "__str__"))(x * 2)
    f = sympile.function([x], shown.sum())
    assert f([1.0, 2.0]) == 6.0
    assert capsys.readouterr().out == "doubled shape = (2,)\ndoubled __str__ = [2. 4.]\n"
    np.testing.assert_array_equal(sympile.grad(shown.sum(), x).eval({x: [1.0, 2.0]}),
                                  [2.0, 2.0])
    collected = []
    quiet = Print("q", global_fn=lambda op, value: collected.append((op.message, value.sum())))
    sympile.function([x], quiet(x))([1.0, 2.0])
    assert collected == [("q", 3.0)]
    c = T.constant(np.array([1.0]))
    sympile.function([], Print("folded?")(c) + 1)()  # not constant-folded away
    assert "folded? __str__ = [1.]" in capsys.readouterr().out
