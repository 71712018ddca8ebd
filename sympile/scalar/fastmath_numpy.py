"""numpy twins of fastmath.h's float32 log and sin/cos, bit for bit: the same operations in
the same order, each rounded to float32 as C rounds it (no operation contracted, as the
kernels compile with fp-contract=off), and the fused multiply-adds fused (fmaf, emulated
exactly) where the kernels' target has them (sympile.cpu.has_fma), else two roundings, as
SYMPILE_FMAF is then. The Python backend's float32 normal draws (sympile.tensor.random.philox)
use them, so that they give the C sampler's numbers.
"""

from __future__ import annotations

import numpy as np

from sympile.cpu import has_fma

__all__ = ["fast_cosf", "fast_logf", "fast_sinf", "fmaf"]

_F = np.float32


def fmaf(a, b, c) -> np.ndarray:
    """a * b + c of float32 values in one rounding. a * b is exact in float64; the sum is
    rounded to odd in float64 (the TwoSum error moves an inexact result with an even last
    bit one step toward the exact sum), and rounding that to float32 is correctly rounded
    (Boldo and Melquiond: 53 >= 2 * 24 + 2 bits)."""
    product = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    addend = np.asarray(c, np.float64)
    total = product + addend
    virtual_addend = total - product
    error = (product - (total - virtual_addend)) + (addend - virtual_addend)
    bits = total.view(np.int64)
    even_and_inexact = (error != 0) & ((bits & 1) == 0) & np.isfinite(total)
    # The exact sum is larger in magnitude where the error has the sum's sign.
    step = np.where((error > 0) == (total > 0), 1, -1)
    odd = np.where(even_and_inexact, bits + step, bits).view(np.float64)
    return odd.astype(np.float32)


def _fmaf_of_target(a, b, c) -> np.ndarray:
    return fmaf(a, b, c) if has_fma() else _F(a) * _F(b) + _F(c)


def fast_logf(x: np.ndarray) -> np.ndarray:
    """sympile_fast_logf of a float32 array."""
    x = np.asarray(x, np.float32)
    with np.errstate(all="ignore"):   # the select below discards what overflows or is NaN
        return _logf(x)


def _logf(x: np.ndarray) -> np.ndarray:
    fma = _fmaf_of_target
    subnormal = x < _F(1.17549435e-38)
    bits = np.where(subnormal, x * _F(8388608.0), x).view(np.uint32)
    e = ((bits >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int32) - 127 - np.where(
        subnormal, 23, 0).astype(np.int32)
    m = ((bits & np.uint32(0x007FFFFF)) | np.uint32(0x3F800000)).view(np.float32)
    above = m > _F(1.41421356237)
    m = np.where(above, m * _F(0.5), m)
    e = np.where(above, e + 1, e)
    f = m - _F(1.0)
    z = f * f
    fe = e.astype(np.float32)
    y = fma(_F(7.0376836292e-2), f, _F(-1.1514610310e-1))
    for coefficient in (1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                        2.0000714765e-1, -2.4999993993e-1):
        y = fma(y, f, _F(coefficient))
    y = fma(y, f, _F(3.3333331174e-1)) * f * z
    y = y - _F(2.12194440e-4) * fe - _F(0.5) * z
    result = f + y + _F(0.693359375) * fe
    special = np.where(x == 0, _F(-np.inf), np.where(x == np.inf, x, _F(np.nan)))
    return np.where((x > 0) & (x < np.inf), result, np.where(np.isnan(x), x, special))


def _sincosf_fused(x: np.ndarray, quarter_turns: int) -> np.ndarray:
    """fastmath.h's float sin/cos (the fused multiply-add target's)."""
    shifted = x * _F(0.636619772) + _F(12582912.0)
    j = shifted - _F(12582912.0)
    first = fmaf(-j, _F(float.fromhex("0x1.921fb6p+0")), x)
    p2 = _F(-float.fromhex("0x1.777a5cp-25"))
    product = j * p2
    product_error = fmaf(j, p2, -product)
    hi = first - product
    lo = ((first - hi) - product) - fmaf(j, _F(-float.fromhex("0x1.ee59dap-50")),
                                         product_error)
    s = hi * hi
    sine = fmaf(s, _F(1.0) / _F(362880), _F(-1.0) / _F(5040))
    sine = fmaf(sine, s, _F(1.0) / _F(120))
    sine = fmaf(sine, s, _F(-1.0) / _F(6))
    sine = np.copysign(hi + fmaf(hi * s, sine, lo), hi)
    cosine = fmaf(s, _F(-1.0) / _F(3628800), _F(1.0) / _F(40320))
    cosine = fmaf(cosine, s, _F(-1.0) / _F(720))
    cosine = fmaf(cosine, s, _F(1.0) / _F(24))
    s_error = fmaf(hi, hi, -s)
    head = fmaf(s, _F(-0.5), _F(1.0))
    head_error = (_F(1.0) - head) - _F(0.5) * s
    tail = fmaf(-lo, hi, fmaf(_F(-0.5), s_error, head_error))
    cosine = head + fmaf(s * s, cosine, tail)
    return _quadrant(j, quarter_turns, sine, cosine)


def _sincosf_double(x: np.ndarray, quarter_turns: int) -> np.ndarray:
    """fastmath.h's sin/cos computed in double (the target without fused multiply-adds)."""
    d = x.astype(np.float64)
    j = (d * 0.63661977236758134308 + 6755399441055744.0) - 6755399441055744.0
    r = d - j * 1.57079632673412561417
    r = r - j * 6.07710050630396597660e-11
    r = r - j * 2.02226624879595063154e-21
    s = r * r
    sine = s * (-1.0 / 39916800) + 1.0 / 362880
    for coefficient in (-1.0 / 5040, 1.0 / 120, -1.0 / 6):
        sine = sine * s + coefficient
    sine = np.copysign((r * s) * sine + r, r)
    cosine = s * (-1.0 / 3628800) + 1.0 / 40320
    cosine = cosine * s + -1.0 / 720
    cosine = cosine * s + 1.0 / 24
    cosine = (s * s) * cosine + (1.0 - 0.5 * s)
    return _quadrant(j, quarter_turns, sine, cosine).astype(np.float32)


def _quadrant(j, quarter_turns: int, sine, cosine):
    quadrant = j.astype(np.int32) + quarter_turns
    value = np.where(quadrant & 1, cosine, sine)
    return np.where(quadrant & 2, -value, value)


def _sincosf(x, quarter_turns: int) -> np.ndarray:
    x = np.asarray(x, np.float32)
    return (_sincosf_fused if has_fma() else _sincosf_double)(x, quarter_turns)


def fast_sinf(x) -> np.ndarray:
    """sympile_fast_sinf of a float32 array, |x| <= 65536 (c_fastmath.FALLBACK_LIMIT_FLOAT32)."""
    return _sincosf(x, 0)


def fast_cosf(x) -> np.ndarray:
    """sympile_fast_cosf of a float32 array, |x| <= 65536."""
    return _sincosf(x, 1)
