"""Theano's Mode(linker=..., optimizer=...) and the config flags Theano programs set:
optimizer, linker, allow_gc, exception_verbosity, profile, device, warn.round."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.config import Config, config
from sympile.graph.rewriting.db import RewriteQuery
from tests.link.c.utils import requires_compiler


def _n_nodes(f) -> int:
    return len(f.maker.fgraph.apply_nodes)


def test_theano_mode_keywords_choose_rewrites_and_backend():
    x = T.dvector("x")
    y = x * (T.constant(2.0) + 1.0)
    plain = sympile.function([x], y, mode=Mode(linker="py", optimizer=None))
    rewritten = sympile.function([x], y, mode=Mode(linker="py", optimizer="fast_run"))
    assert _n_nodes(plain) == 3 and _n_nodes(rewritten) == 1
    np.testing.assert_array_equal(plain([1.0, 2.0]), [3.0, 6.0])
    np.testing.assert_array_equal(rewritten([1.0, 2.0]), [3.0, 6.0])
    mode = Mode(linker="py", optimizer="fast_compile")
    assert mode.linker == "py" and mode.backend == "python"
    assert mode.optimizer.include == ("fast_compile",)
    assert Mode(linker="c|py").backend is None  # C, as config.backend says
    assert Mode(optimizer=RewriteQuery(include=("merge",))).rewriter.include == ("merge",)
    # including/excluding keep the linker.
    derived = Mode(linker="py", optimizer="fast_run").excluding("local_constant_folding")
    assert derived.linker == "py" and _n_nodes(sympile.function([x], y, mode=derived)) == 3
    with pytest.raises(ValueError, match="Mode: optimizer must be one of .* got .fastest."):
        Mode(optimizer="fastest")
    with pytest.raises(ValueError, match="Mode: linker must be one of .* got .jit."):
        Mode(linker="jit")
    with pytest.raises(TypeError, match="rewriter/backend or Theano's linker/optimizer"):
        Mode(RewriteQuery(include=("merge",)), linker="py")
    with pytest.raises(TypeError, match=r"by keyword: Mode\(linker='py'"):
        Mode("py")


def test_default_mode_follows_config_optimizer_and_linker():
    x = T.dvector("x")
    y = x * (T.constant(2.0) + 1.0)
    assert config.mode == "Mode"
    assert _n_nodes(sympile.function([x], y)) == 1
    with config.change_flags(optimizer=None):
        assert config.optimizer == "None"
        assert _n_nodes(sympile.function([x], y)) == 3
    with config.change_flags(optimizer="merge"):
        assert _n_nodes(sympile.function([x], y)) == 3
    with config.change_flags(linker="py"):
        assert get_mode(None).backend == "python"
    with pytest.raises(ValueError, match="config.optimizer must be one of"):
        config.optimizer = "o9"
    with pytest.raises(ValueError, match="config.linker must be one of"):
        config.linker = "jit"
    parsed = Config("optimizer=fast_compile,linker=py,warn.round=True")
    assert parsed.optimizer == "fast_compile" and parsed.linker == "py"
    assert parsed.warn.round is True


@pytest.mark.parametrize("backend", ["python", pytest.param("c", marks=requires_compiler)])
def test_allow_gc_frees_intermediates(backend):
    x = T.dvector("x")
    hidden = T.exp(x)
    y = hidden * 2 + T.sin(hidden)

    def compiled():
        mode = Mode(None, backend=backend)  # unfused: the intermediates have cells
        return sympile.function([x], y, mode=mode)

    def kept_values(f):
        return [cell[0] for variable, cell in f._vm.storage.items()
                if variable.owner is not None and cell[0] is not None]

    expected = np.exp([1.0, 2.0]) * 2 + np.sin(np.exp([1.0, 2.0]))
    with config.change_flags(allow_gc=True):
        f = compiled()
    for _ in range(2):
        np.testing.assert_allclose(f([1.0, 2.0]), expected)
        assert kept_values(f) == []
    np.testing.assert_allclose(f.fn()[0], expected)
    with config.change_flags(allow_gc=False):
        kept = compiled()
    kept([1.0, 2.0])
    assert kept_values(kept) != []
    with config.change_flags(allow_gc=True):
        assert not Mode(linker="cvm_nogc").allow_gc and Mode(linker="cvm").allow_gc


def test_exception_verbosity_high_shows_the_graph():
    x, y = T.dvector("x"), T.dvector("y")
    f = sympile.function([x, y], T.exp(x) + y, mode=Mode(linker="py", optimizer=None))
    with pytest.raises(ValueError) as low:
        f([1.0, 2.0], [1.0, 2.0, 3.0])
    assert "exception_verbosity='high' also shows" in str(low.value)
    with config.change_flags(exception_verbosity="high"):
        with pytest.raises(ValueError) as high:
            f([1.0, 2.0], [1.0, 2.0, 3.0])
    text = str(high.value)
    assert "the failing node's graph:" in text
    assert "Elemwise{add,no_inplace} [id A]" in text and "Elemwise{exp,no_inplace}" in text
    with pytest.raises(ValueError, match="exception_verbosity must be 'low' or 'high'"):
        config.exception_verbosity = "medium"


def test_config_profile_profiles_every_function_and_prints_at_exit():
    program = textwrap.dedent("""
        import sympile, sympile.tensor as T
        sympile.config.profile = True
        x = T.dvector("x")
        f = sympile.function([x], T.exp(x), name="profiled", mode="FAST_COMPILE")
        f([1.0]); f([2.0])
        assert f.profile is not None and f.profile.calls == 2
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Function profile: profiled" in done.stderr and "2 calls" in done.stderr


def test_device_names_are_theanos():
    # A GPU name is checked for CuPy and the device when set (tests/gpu/test_placement.py).
    assert config.device == "cpu"
    with pytest.raises(ValueError, match="'cpu', 'cuda' or 'cudaN'"):
        config.device = "gpu"


def test_warn_round():
    x = T.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        T.round(x)
    with config.change_flags(**{"warn.round": True}):
        with pytest.warns(UserWarning, match="rounds half to even"):
            T.round(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            T.round(x, mode="half_away_from_zero")
    config.warn.round = True
    try:
        assert config.warn.round is True
    finally:
        config.warn.round = False
    with pytest.raises(AttributeError, match="no flag 'warn.nope'"):
        _ = config.warn.nope


def test_theano_bug_warning_flags():
    """Theano programs turn off warnings about its old bugs (the scan tutorial sets
    warn.subtensor_merge_bug = False); sympile never had them: False only."""
    config.warn.subtensor_merge_bug = False
    assert config.warn.subtensor_merge_bug is False
    with pytest.raises(ValueError, match="config.warn.sum_div_dimshuffle_bug: .* never had it"):
        config.warn.sum_div_dimshuffle_bug = True
    with config.change_flags(**{"warn.ignore_bug_before": "0.9"}):
        assert config.warn.ignore_bug_before == "0.9"
    with pytest.raises(ValueError, match="config.warn.ignore_bug_before: expected"):
        config.warn.ignore_bug_before = "recent"
