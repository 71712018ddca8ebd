"""Vectorisable C versions of exp, log, tanh, sin and cos: static inline, branch-free (range
reduction, a polynomial, selects instead of ifs), so that gcc inlines them into an elementwise
loop and vectorises it, where a libm call per element cannot be.

float32 exp, log and tanh compute in float (Cephes' polynomials, within 2 ulp). float32 sin and
cos (within 1 ulp) work for |x| <= FALLBACK_LIMIT_FLOAT32 and report larger, infinite or NaN
arguments through FALLBACK_FLAG: the loop then recomputes its block with libm
(`precise_statements`). Where the kernels' target has fused multiply-adds (sympile.cpu.has_fma)
sin and cos compute in float, the reduced argument kept in two floats, and the polynomials
use the fused operations; elsewhere sin and cos compute in double, at half the vector width.
float64 exp and log are Taylor polynomials of enough degree in double (within 2 ulp). Edge
values follow libm: NaN in, NaN out; exp overflows to inf and underflows through the
subnormals to 0; log of 0 is -inf, of a negative number NaN.

The measured maximum ulp errors are in tests/scalar/test_c_fastmath.py.
"""

from __future__ import annotations

import re

from sympile.cpu import has_fma
from sympile.graph.ccode import c_file, render

__all__ = ["FALLBACK_FLAG", "FALLBACK_LIMIT_FLOAT32", "FAST_MATH_SUPPORT", "FAST_PREFIX",
           "NEEDS_FALLBACK", "fast_function", "fast_math_support", "precise_statements"]

# The int the statements or-in a nonzero into when an element left the fast path's range.
FALLBACK_FLAG = "sympile_fallback"
# Largest |x| of float32 sin and cos's fast path. In double, j * pi/2 (33 bits) is exact for
# j < 2^20; in float, x - j * P1 (P1 = pi/2 in a float) is a multiple of 2^-23 below 2.
FALLBACK_LIMIT_FLOAT32 = 65536.0

# (C function name, dtype) -> the name of its fast version; the fast name is the libm name
# with the prefix, so precise_statements can undo it.
FAST_PREFIX = "sympile_fast_"
_FAST = {("exp", "float32"), ("log", "float32"), ("tanh", "float32"), ("sin", "float32"),
         ("cos", "float32"), ("exp", "float64"), ("log", "float64")}
# sin and cos: whose fast version needs the fallback.
NEEDS_FALLBACK = frozenset({"sin", "cos"})



def fast_math_support(fma: bool) -> str:
    """fastmath.h for a target with (or without) fused multiply-adds: the CPU kernels'
    (FAST_MATH_SUPPORT), or a GPU's, which always has them."""
    return render(c_file(__file__, "fastmath.h"), {"fma": int(fma)})


FAST_MATH_SUPPORT = fast_math_support(has_fma())


def fast_function(name: str, dtype: str) -> str | None:
    """The C name of the fast version of libm's `name` (exp, log, ...) for `dtype`, or None
    when there is none."""
    if (name, dtype) not in _FAST:
        return None
    return FAST_PREFIX + name + ("f" if dtype == "float32" else "")


def precise_statements(statements: str) -> str:
    """`statements` with every fast function replaced by libm's, and no fallback reports."""
    without_reports = re.sub(rf"\b{FALLBACK_FLAG} \|= [^;]*;", "", statements)
    return re.sub(rf"\b{FAST_PREFIX}(\w+)\(", r"\1(", without_reports)
