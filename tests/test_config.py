"""config: defaults, validation, change_flags, SYMPILE_FLAGS."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.config import Config, config, theano_flag_pairs
from tests.utils import op_name

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = pytest.mark.smoke


def test_defaults_and_validation():
    assert config.floatX == "float64"
    with pytest.raises(ValueError, match="floatX must be"):
        config.floatX = "int32"
    with pytest.raises(AttributeError, match="no flag 'floatx'"):
        config.floatx = "float32"
    with pytest.raises(AttributeError, match="no flag 'nope'"):
        _ = config.nope
    assert config.blas_skinny == "auto"
    with pytest.raises(ValueError, match="blas_skinny must be 'auto', 'avx2' or 'off'"):
        config.blas_skinny = True


def test_change_flags_restores():
    with config.change_flags(floatX="float32"):
        assert T.matrix().dtype == "float32"
        assert T.constant(1.5).dtype == "float32"
    assert config.floatX == "float64"
    assert T.matrix().dtype == "float64"

    @config.change_flags(floatX="float16")
    def make():
        return T.vector()

    assert make().dtype == "float16"
    assert config.floatX == "float64"


def test_environment_flags():
    parsed = Config("floatX=float32, on_unused_input=warn")
    assert parsed.floatX == "float32" and parsed.on_unused_input == "warn"
    with pytest.raises(ValueError):
        Config("floatX=float8")
    assert "floatX" in str(parsed)


def test_a_mistyped_flag_names_the_nearest_and_its_source():
    with pytest.raises(AttributeError, match=r"no flag 'floatx'; did you mean 'floatX'\?"):
        config.floatx = "float32"
    with pytest.raises(AttributeError, match=r"'on_unused_inputs' \(in SYMPILE_FLAGS\); did "
                                             r"you mean 'on_unused_input'\?"):
        Config("on_unused_inputs=warn")
    with pytest.raises(AttributeError, match="flags: floatX"):
        config.completely_unrelated  # noqa: B018


def test_theano_flags_are_read_where_sympile_flags_are_not_set():
    environment = {"THEANO_FLAGS": "floatX=float32,device=cpu,mode=FAST_COMPILE,"
                                   "nvcc.fastmath=True,lib.cnmem=1,optimizer_including=fusion"}
    with pytest.warns(UserWarning, match=r"read THEANO_FLAGS.*ignored there \(Theano-only\): "
                                         r"nvcc.fastmath, lib.cnmem"):
        parsed = Config.from_environment(environment)
    assert (parsed.floatX, parsed.device, parsed.mode) == ("float32", "cpu", "FAST_COMPILE")
    assert parsed.optimizer_including == ("fusion",)
    # SYMPILE_FLAGS wins, and then THEANO_FLAGS is not read at all.
    parsed = Config.from_environment({**environment, "SYMPILE_FLAGS": "floatX=float64"})
    assert parsed.floatX == "float64" and parsed.mode == "Mode"


def test_theano_device_names():
    assert theano_flag_pairs("device=gpu0")[0] == [("device", "cuda0")]
    assert theano_flag_pairs("device=cuda")[0] == [("device", "cuda")]
    assert theano_flag_pairs("device=cpu,lib.cnmem=1")[0] == [("device", "cpu")]


def test_theano_flags_of_machinery_sympile_lacks_warn_once_that_they_change_nothing(
        monkeypatch):
    import importlib

    config_module = importlib.import_module("sympile.config")
    monkeypatch.setattr(config_module, "_NOTED", set())
    with config_module.config.change_flags(cycle_detection="regular"):
        with pytest.warns(UserWarning, match="cycle_detection='fast' changes nothing"):
            config_module.config.cycle_detection = "fast"
        assert config_module.config.cycle_detection == "fast"
    with pytest.raises(ValueError, match="config.cycle_detection: expected 'regular' or"):
        config_module.config.cycle_detection = "slow"
    with pytest.warns(UserWarning, match="conv.assert_shape=False changes nothing") as caught:
        config_module.config.conv.assert_shape = False
    # Named at the line that set it, and what sympile does is what the flag reads.
    assert caught[0].filename == __file__
    assert config_module.config.conv.assert_shape is True
    with pytest.warns(UserWarning, match="cast_policy='numpy\\+floatX' changes nothing: "
                                         "sympile's dtypes for Python numbers are numpy 2's"):
        with config_module.config.change_flags(cast_policy="numpy+floatX"):
            # The rule it describes holds whatever the flag says.
            assert (T.fvector() + 1.5).dtype == "float32"
    with pytest.raises(ValueError, match="config.cast_policy: expected 'custom' or"):
        config_module.config.cast_policy = "numpy"


def test_optimizer_tag_flags_change_the_default_modes_rewrites():
    x = T.dvector("x")
    output = T.exp(x) * 2 + 1
    with config.change_flags(optimizer_excluding="fusion:inplace", compile_async=False):
        assert config.optimizer_excluding == ("fusion", "inplace")
        unfused = sympile.function([x], output)
    fused = sympile.function([x], output)
    assert [op_name(node.op) for node in unfused.maker.fgraph.toposort()] == [
        "exp", "mul", "add"]
    assert len(fused.maker.fgraph.toposort()) == 1
    np.testing.assert_allclose(unfused([0.0, 1.0]), fused([0.0, 1.0]))
    pairs, ignored = theano_flag_pairs("optimizer_including=local_remove_all_assert,"
                                       "nvcc.fastmath=True")
    assert pairs == [("optimizer_including", "local_remove_all_assert")]
    assert ignored == ["nvcc.fastmath"]
