"""config: defaults, validation, change_flags, SYMPILE_FLAGS."""

import pytest

import sympile.tensor as T
from sympile.config import Config, config


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
