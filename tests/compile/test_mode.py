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


def test_predefined_modes_query_the_rewrite_database():
    from sympile.graph.rewriting.db import RewriteQuery
    assert get_mode("FAST_RUN").rewriter == RewriteQuery(include=("fast_run",))
    assert get_mode("FAST_COMPILE").rewriter == RewriteQuery(include=("fast_compile",))
    x = T.dvector("x")
    y = x * (T.constant(2.0) + 1.0) + x * (T.constant(2.0) + 1.0)
    modes = {"FAST_RUN": get_mode("FAST_RUN").excluding("fusion"),
             "FAST_COMPILE": "FAST_COMPILE"}
    counts = {name: len(sympile.function([x], y, mode=mode).maker.fgraph.apply_nodes)
              for name, mode in modes.items()}
    # FAST_COMPILE merges the duplicate x * (2 + 1) (add, DimShuffle, mul) under the final
    # add; FAST_RUN also folds 2 + 1 and its broadcast (and then fuses the rest: excluded).
    assert counts == {"FAST_RUN": 2, "FAST_COMPILE": 4}


def test_including_excluding_requiring():
    fast_run = get_mode("FAST_RUN")
    no_folding = fast_run.excluding("local_constant_folding")
    assert no_folding.name == "FAST_RUN.excluding('local_constant_folding')"
    assert no_folding.rewriter.exclude == ("local_constant_folding",)
    assert get_mode("FAST_COMPILE").including("constant_folding").rewriter.include == \
        ("fast_compile", "constant_folding")
    assert fast_run.requiring("merge").rewriter.require == ("merge",)
    x = T.dvector("x")
    y = x * (T.constant(2.0) + 1.0)
    folded = sympile.function([x], y, mode=fast_run)
    kept = sympile.function([x], y, mode=no_folding)
    assert len(folded.maker.fgraph.apply_nodes) == 1
    assert len(kept.maker.fgraph.apply_nodes) == 3
    np.testing.assert_array_equal(folded([1.0]), kept([1.0]))
    with pytest.raises(TypeError, match="does not select its rewrites by a RewriteQuery"):
        Mode(rewriter=print).excluding("merge")
    with pytest.raises(TypeError, match="rewriter must be a callable, a RewriteQuery or None"):
        Mode(rewriter="fast_run")


def test_record_history():
    x = T.dvector("x")
    mode = get_mode("FAST_RUN").including()
    assert not hasattr(sympile.function([x], x * 1.0, mode=mode).maker.fgraph,
                       "rewrite_history")
    recorded = Mode(get_mode("FAST_RUN").rewriter, record_history=True)
    f = sympile.function([x], x * (T.constant(2.0) + 1.0), mode=recorded)
    assert "local_constant_folding" in f.maker.fgraph.rewrite_history.names()
