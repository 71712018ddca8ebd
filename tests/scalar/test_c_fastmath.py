"""The vectorisable exp, log, tanh, sin and cos of sympile.scalar.c_fastmath, run through
Elemwise on the C backend: their error in ulp over a million values spread across magnitudes
and over the edge values (signed zeros, subnormals, overflow and underflow thresholds,
infinities, NaN), and the libm fallback of float32 sin and cos for large arguments, in the
contiguous, strided, fused and in-place loops.

Measured maximum errors (this machine, 2e6 values per function): float32 exp 1.0 ulp, log 0.8,
tanh 1.2, sin 0.6, cos 0.6 (against the float64 value of the float32 argument, rounded);
float64 exp 1.0 and log 1.0 (against numpy's float64 libm). With fused multiply-adds, float32
sin and cos compute in float: 0.84 ulp at most over every float32 in [0, 65536], checked
exhaustively once (sin 0.840 at 2.3753064, cos 0.844 at 3703.1443); float32 tanh 1.33 ulp
over every float32 in [1e-3, 12] (at 0.62830955, past the polynomial's range)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.function import In
from sympile.compile.mode import Mode
from sympile.cpu import has_fma, vector_target
from sympile.graph.ccode import c_file, render
from sympile.scalar import basic as scalar
from sympile.scalar import c_fastmath
from sympile.scalar.c_fastmath import FALLBACK_LIMIT_FLOAT32, fast_function, precise_statements
from sympile.tensor.elemwise import Elemwise
from tests.link.c.utils import load_c_library, requires_compiler

pytestmark = requires_compiler

C_PLAIN = Mode(None, backend="c", name="C_PLAIN")
FUNCTIONS = ("exp", "log", "tanh", "sin", "cos")
# The largest error allowed, in ulp of the dtype at the exact value.
BOUNDS = {("float32", "exp"): 2.0, ("float32", "log"): 2.0, ("float32", "tanh"): 2.0,
          ("float32", "sin"): 1.0, ("float32", "cos"): 1.0,
          ("float64", "exp"): 2.0, ("float64", "log"): 2.0, ("float64", "tanh"): 4.0,
          ("float64", "sin"): 1.0, ("float64", "cos"): 1.0}


def ulp_errors(actual: np.ndarray, exact: np.ndarray, dtype: str) -> np.ndarray:
    """|actual - exact| in units of the spacing of `dtype` at exact rounded to `dtype`; 0
    where both are the same infinity or both NaN; inf where only one is NaN or infinite."""
    actual = np.asarray(actual, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    with np.errstate(all="ignore"):
        rounded = exact.astype(dtype).astype(np.float64)
        spacing = np.maximum(np.spacing(np.abs(rounded).astype(dtype)).astype(np.float64),
                             np.finfo(dtype).smallest_subnormal)
        errors = np.abs(actual - exact) / spacing
    same = (np.isnan(actual) & np.isnan(exact)) | (np.isinf(rounded) & (actual == rounded))
    errors[same] = 0.0
    errors[np.isnan(errors)] = np.inf
    return errors


def reference(name: str, values: np.ndarray) -> np.ndarray:
    """numpy's function of the values in float64 (float32 values convert exactly)."""
    with np.errstate(all="ignore"):
        return getattr(np, name)(values.astype(np.float64))


def edge_values(dtype: str) -> np.ndarray:
    info = np.finfo(dtype)
    overflow = np.log(info.max)
    underflow = np.log(info.smallest_subnormal)
    values = [0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal,
              info.smallest_subnormal * 3, info.tiny, info.tiny / 2, -info.tiny, info.max,
              -info.max, info.eps, 1.0, -1.0, 0.5, 0.625, -0.625, 2.0, np.pi / 4, np.pi / 2,
              np.pi, 1e-30, -1e-30, overflow, np.nextafter(overflow, np.inf),
              np.nextafter(overflow, -np.inf), underflow, underflow - 1, underflow / 2,
              88.72, 89.0, -87.3, -103.9, -104.0, -110.0, 709.78, 709.8, -745.1, -745.2,
              np.inf, -np.inf, np.nan, -np.nan]
    return np.array(values, dtype=np.float64).astype(dtype)


def spread_values(dtype: str, size: int, seed: int) -> np.ndarray:
    """Random values of every sign and decade of the dtype, and uniform ones on [-100, 100]."""
    rng = np.random.default_rng(seed)
    decades = 38 if dtype == "float32" else 300
    magnitudes = 10.0 ** rng.uniform(-decades - 6, decades, size)
    spread = magnitudes * rng.choice([-1.0, 1.0], size)
    with np.errstate(over="ignore"):
        return np.concatenate([spread, rng.uniform(-100, 100, size)]).astype(dtype)


@pytest.fixture(scope="module", params=["float32", "float64"])
def compiled(request):
    dtype = request.param
    x = T.vector(dtype=dtype)
    function = sympile.function([x], [getattr(T, name)(x) for name in FUNCTIONS], mode=C_PLAIN)
    assert function._vm.fallback_nodes == []
    return dtype, function


def generated_c(function) -> str:
    """The C of a function's module: its main unit and its op units."""
    plan = function._vm.plan
    return "\n".join([plan.source, *plan.units])


def test_fast_versions_are_the_ones_compiled(compiled):
    dtype, function = compiled
    source = generated_c(function)
    for name in FUNCTIONS:
        fast = fast_function(name, dtype)
        if fast is not None:
            assert f"{fast}(" in source


def test_max_ulp_error_over_a_million_values(compiled):
    dtype, function = compiled
    values = spread_values(dtype, 10 ** 6, seed=0)
    for name, result in zip(FUNCTIONS, function(values)):
        errors = ulp_errors(result, reference(name, values), dtype)
        worst = int(np.argmax(errors))
        assert errors[worst] <= BOUNDS[dtype, name], \
            f"{dtype} {name}({values[worst]!r}) = {result[worst]!r}: {errors[worst]} ulp"


def test_edge_values(compiled):
    """Signed zeros kept, subnormal results rounded, overflow to inf, underflow to 0, NaN
    and infinities as libm gives them."""
    dtype, function = compiled
    values = edge_values(dtype)
    for name, result in zip(FUNCTIONS, function(values)):
        with np.errstate(over="ignore"):
            exact = reference(name, values)
            rounded = exact.astype(dtype)
        errors = ulp_errors(result, exact, dtype)
        worst = int(np.argmax(errors))
        assert errors[worst] <= BOUNDS[dtype, name], \
            f"{dtype} {name}({values[worst]!r}) = {result[worst]!r}: {errors[worst]} ulp"
        zeros = rounded == 0
        np.testing.assert_array_equal(np.signbit(result[zeros]), np.signbit(rounded[zeros]),
                                      err_msg=f"{dtype} {name}: sign of zero")


def large_arguments(size: int) -> np.ndarray:
    """Mostly small float32 values, with arguments past the fast range of sin and cos in
    some blocks: just past the limit, huge, the largest float, infinities, NaN."""
    rng = np.random.default_rng(3)
    values = rng.uniform(-10, 10, size).astype("float32")
    large = np.array([np.nextafter(np.float32(FALLBACK_LIMIT_FLOAT32), np.float32(np.inf)),
                      -2e5, 1e10, 3.4e38, -1e30, np.inf, -np.inf, np.nan], dtype="float32")
    positions = rng.choice(size, len(large), replace=False)
    values[positions] = large
    return values


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_sin_and_cos_of_large_arguments_fall_back_to_libm(layout):
    x = T.fvector("x")
    function = sympile.function([x], [T.sin(x), T.cos(x), T.sin(x) * T.exp(-x * x)],
                                mode=C_PLAIN)
    values = large_arguments(5000)
    argument = values if layout == "contiguous" else np.repeat(values, 2)[::2]
    sine, cosine, product = function(argument)
    for name, result in (("sin", sine), ("cos", cosine)):
        errors = ulp_errors(result, reference(name, values), "float32")
        assert errors.max() <= 1.0, f"{name}: {errors.max()} ulp at {values[errors.argmax()]}"
    with np.errstate(all="ignore"):
        expected = np.sin(values) * np.exp(-values * values)
    np.testing.assert_allclose(product, expected, rtol=1e-6, atol=1e-30)


def test_fused_loop_falls_back_to_libm():
    x = T.fvector("x")
    mode = Mode(sympile.graph.rewriting.db.RewriteQuery(include=("fast_run",)), backend="c")
    function = sympile.function([x], T.exp(-x * x) * T.sin(x) + T.tanh(x) * 0.5, mode=mode)
    values = large_arguments(3000)
    with np.errstate(all="ignore"):
        expected = (np.exp(-values.astype(np.float64) ** 2) * np.sin(values.astype(np.float64))
                    + np.tanh(values.astype(np.float64)) * 0.5)
    np.testing.assert_allclose(function(values), expected, rtol=1e-6, atol=1e-7)


def test_in_place_loop_keeps_the_fast_functions_and_falls_back_per_block():
    """A loop writing over its input computes each block into a buffer: the fast sin, and
    libm's for the blocks holding large arguments, recomputed from the untouched input."""
    x = T.fvector("x")
    in_place = Elemwise(scalar.sin, inplace_pattern=((0, 0),))
    function = sympile.function([In(x, mutable=True)], in_place(x), mode=C_PLAIN,
                                accept_inplace=True)
    assert "sinf(" in generated_c(function)
    assert "sympile_fast_sinf(a)" in generated_c(function)
    values = large_arguments(3000)
    np.testing.assert_allclose(function(values.copy()), np.sin(values), rtol=1e-6, atol=1e-7)


def test_precise_statements_call_libm_and_report_nothing():
    statements = ("{ const npy_float32 a = x0; sympile_fallback |= !(fabsf(a) <= 65536.0f); "
                  "z0 = sympile_fast_sinf(a) + sympile_fast_expf(a); }")
    assert precise_statements(statements) == \
        "{ const npy_float32 a = x0;  z0 = sinf(a) + expf(a); }"
    assert fast_function("sin", "float64") is None
    assert fast_function("exp", "float64") == "sympile_fast_exp"


@pytest.mark.parametrize("fused", [True, False], ids=["float with fma", "double"])
def test_both_ways_of_sin_and_cos(tmp_path, fused):
    """fastmath.h's float32 sin and cos as built with fused multiply-adds (in float) and
    without (in double), whichever this machine's kernels use: within 1 ulp on the spread
    values below the fallback limit and on values next to multiples of pi/2."""
    if fused and not has_fma():
        pytest.skip("this machine's kernels have no fused multiply-adds")
    header = render(c_file(c_fastmath.__file__, "fastmath.h"), {"fma": int(fused)})
    target = vector_target() if fused else ""
    function = load_c_library(tmp_path, "sincos", (
        "#include <math.h>\n#include <stdint.h>\n"
        "typedef float npy_float32; typedef double npy_float64; typedef int32_t npy_int32;\n"
        "typedef uint32_t npy_uint32; typedef uint64_t npy_uint64;\n" + header +
        f"\n__attribute__(({target or 'used'}))\n"
        "void sincos_of(const float *x, float *out, long n, int quarter_turns)\n"
        "{ for (long i = 0; i < n; ++i) out[i] = sympile_fast_sincosf(x[i], quarter_turns); }\n"
    )).sincos_of
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
    spread = spread_values("float32", 10 ** 5, seed=4)
    spread = spread[np.abs(spread) <= FALLBACK_LIMIT_FLOAT32]
    near = (np.arange(-41000, 41000, 7) * (np.pi / 2)).astype("float32")
    near = np.concatenate([near, np.nextafter(near, np.float32(np.inf))])
    values = np.ascontiguousarray(np.concatenate([spread, near]), dtype="float32")
    for name, quarter_turns in (("sin", 0), ("cos", 1)):
        result = np.empty_like(values)
        function(values.ctypes.data, result.ctypes.data, values.size, quarter_turns)
        errors = ulp_errors(result, reference(name, values), "float32")
        worst = int(np.argmax(errors))
        assert errors[worst] <= 1.0, f"{name}({values[worst]!r}): {errors[worst]} ulp"
