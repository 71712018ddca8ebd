"""The numpy twins of fastmath.h (sympile/scalar/fastmath_numpy.py): fmaf rounds once, as
libm's does; the twins of logf, sinf and cosf stay within their C versions' ulp bounds of
numpy's (their bit equality with the C is checked through the float32 normal draws,
tests/tensor/random/test_philox.py)."""

import ctypes
import ctypes.util

import numpy as np
import pytest

from sympile.scalar.fastmath_numpy import fast_cosf, fast_logf, fast_sinf, fmaf

RNG = np.random.default_rng(0)


def _libm_fmaf():
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    function = libm.fmaf
    function.restype = ctypes.c_float
    function.argtypes = [ctypes.c_float] * 3
    return function


def _float32s(count):
    """Float32 values of every magnitude and sign, and the hard cases: near cancellations."""
    values = (RNG.standard_normal(count) * 2.0 ** RNG.integers(-30, 30, count))
    return values.astype(np.float32)


def test_fmaf_rounds_once_as_libm():
    reference = _libm_fmaf()
    a, b = _float32s(20000), _float32s(20000)
    c = np.concatenate([_float32s(10000), (-(a[:10000].astype(np.float64) * b[:10000])
                                           ).astype(np.float32)])
    got = fmaf(a, b, c)
    want = np.array([reference(x, y, z) for x, y, z in zip(a.tolist(), b.tolist(),
                                                          c.tolist())], np.float32)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32


def _ulps(got, want):
    return np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))


@pytest.mark.parametrize("twin, reference, values", [
    (fast_logf, np.log, np.concatenate([RNG.random(5000), RNG.random(100) * 1e-40,
                                        np.exp(RNG.uniform(-80, 80, 5000))])),
    (fast_sinf, np.sin, RNG.uniform(-7, 7, 10000)),
    (fast_cosf, np.cos, RNG.uniform(0, 6.3, 10000)),
])
def test_twins_stay_within_their_ulp_bounds(twin, reference, values):
    values = values.astype(np.float32)
    want = reference(values.astype(np.float64)).astype(np.float32)
    # Near a zero of sin or cos an ulp of the argument is many of the result's: compare
    # there with an absolute tolerance.
    far = np.abs(want) > 1e-3
    got = twin(values)
    assert _ulps(got[far], want[far]).max() <= 2
    np.testing.assert_allclose(got[~far], want[~far], atol=1e-7, rtol=0)


def test_logf_edges():
    values = np.array([0.0, -0.0, -1.0, np.inf, np.nan, 1.0], np.float32)
    got = fast_logf(values)
    assert got[0] == got[1] == -np.inf and np.isnan(got[2]) and got[3] == np.inf
    assert np.isnan(got[4]) and got[5] == 0.0
