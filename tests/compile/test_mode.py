"""Modes: lookup by name, config.mode, custom rewriters, unknown backends."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import PREDEFINED_MODES, Mode, get_mode


def test_predefined_and_config_mode():
    assert get_mode("FAST_RUN") is PREDEFINED_MODES["FAST_RUN"]
    assert get_mode("FAST_COMPILE").name == "FAST_COMPILE"
    with sympile.config.change_flags(mode="FAST_COMPILE"):
        assert get_mode(None).name == "FAST_COMPILE"
    custom = Mode(name="mine")
    assert get_mode(custom) is custom
    with pytest.raises(ValueError, match="unknown mode 'nope'"):
        get_mode("nope")
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        Mode(backend="gpu")


def test_custom_rewriter_sees_the_cloned_graph():
    seen = []

    def rewriter(fgraph):
        seen.append(fgraph)

    x = T.dvector("x")
    y = x * 2
    f = sympile.function([x], y, mode=Mode(rewriter=rewriter))
    assert len(seen) == 1
    assert seen[0].outputs[0] is not y  # the user's graph is not the one compiled
    np.testing.assert_array_equal(f([1.0]), [2.0])
