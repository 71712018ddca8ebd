"""Register-blocked C kernels for the skinny products of small-batch training, used by
sympile.tensor.blas.blas_c in place of BLAS's gemm where they are faster.

A minibatch of b examples makes products whose result has b rows (the forward h @ W and the
backward delta @ W.T) or whose inner length is b (the weight gradient h.T @ delta). BLAS's
gemm packs its operands into panels on every call, which a wide-and-short product does not
repay: on the MLP's 10 x 784 @ 784 x 500 (AVX-512, 2 cores) scipy's OpenBLAS reached 47
GFLOP/s, numpy's 65 and XLA's 41 to 92; these kernels 136. They read the operands in place
and keep a block of the result in registers for the whole inner loop:

- rows: c[i, j] = sum_p a(i, p) b[p, j] with b's rows contiguous (b of another layout is
  copied by rows first), a any strides (packed per block of rows first): a block of R rows
  x 2 vectors of c, each element of a broadcast and multiplied by two vectors of b's row p.
  Used when c has few rows or the inner length is short (b stays in cache; c is walked by
  rows within groups of columns whose part of b fits a quarter of the L2 cache, so that
  c's rows stream in order). With few rows, c is walked a column of blocks at a time, its
  part of b copied 16 KB of steps at a time into a contiguous panel that every block of rows
  reads from the L1 cache (read in place, each step lies in another page of b: 60 x 1000 @
  1000 x 1000 float32 on 2 cores went from 166 to 188 GFLOP/s), the next panel's lines
  prefetched while this one is multiplied.
- dot: c[i, j] = sum_p a[i, p] w[j, p] with both contiguous along p (a @ W.T): a block of
  R rows of a x Q rows of W, accumulated as vectors along p and summed at the end; blocks of
  R rows, the last one shorter (an even split into blocks of 3 rows ran at half speed: 9 x
  500 @ 500 x 784 took 92 us in three blocks of 3, 52 in blocks of 4, 4 and 1). 5 x 5 on
  AVX-512 (5 x 4 before: 60 x 1000 @ 1000 x 1000.T 129-148 -> 155-161 GFLOP/s on 2 cores,
  10 rows 53 -> 51 us).

Products whose c has fewer columns than two vectors' lanes (a 10-class output layer) stay
with BLAS, which wastes no lanes there. The kernels exist for AVX-512 and for AVX2 with FMA;
a unit holds those of the best set this CPU runs (sympile.cpu.cpu_level; config.blas_skinny
'avx2' leaves AVX-512 out), or both, picked when the module loads, where the CPU's level is
unknown. Other CPUs use BLAS.

Threads (OpenMP, above config.blas_parallel_minsize multiply-adds) split the rows of the
layer's weight matrix W in all three products: the steps of h @ W (each thread sums over its
rows of W, the partial sums added at the end), the rows of c in W += h.T @ delta, the
columns of c (rows of W) in delta @ W.T. A thread then finds its part of W in its own core's
cache from one product to the next: split by columns in the forward product instead, a
forward product and an update took 40% longer together than apart.

Sums run in order along p within each lane (the dot kernel then adds its lanes, the threads
their partial sums), as BLAS's kernels do; alpha scales the finished sum.
"""

from __future__ import annotations

import functools

from sympile.cpu import cpu_level, is_x86_64
from sympile.graph.ccode import c_file, content_name, render

__all__ = ["SKINNY_ROWS", "SKINNY_STEPS", "skinny_code"]

# A product goes to these kernels when c has at most SKINNY_ROWS rows, or (rows kernel) the
# inner length is at most SKINNY_STEPS. Measured on AVX-512 (2 cores, float32, k = n =
# 1000): even with gemm at 128 rows of c and at 256, ahead up to 128; with a short inner
# length ahead at 60 steps, behind at 128 (c of 1000 x 1000).
SKINNY_ROWS = 128
SKINNY_STEPS = 64

# Per instruction set: the target attribute, the run-time check, the most rows of c in a
# block of the rows kernel (2 vectors per row, plus 2 of b and 1 broadcast, in the vector
# registers), and the dot kernel's block (rows of a, rows of W).
_ISAS = {
    "avx512": {"target": "avx512f,avx512dq,avx512vl,avx2,fma",
               "check": '__builtin_cpu_supports("avx512f") && '
                        '__builtin_cpu_supports("avx512dq")',
               "rows": 12, "dot_rows": 5, "dot_cols": 5},
    "avx2": {"target": "avx2,fma",
             "check": '__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")',
             "rows": 6, "dot_rows": 3, "dot_cols": 3},
}


def _primitives(isa: str, dtype: str) -> dict[str, object]:
    """The vector primitives of (instruction set, dtype): the vector and mask types, the
    lanes, and C expressions of p (pointer), m (mask), v, x, y, z (vectors), s (scalar), n
    (lanes)."""
    bits = 512 if isa == "avx512" else 256
    lanes = bits // (32 if dtype == "float32" else 64)
    suffix = "ps" if dtype == "float32" else "pd"
    prefix = f"_mm{bits}"
    vector = f"__m{bits}" + ("" if dtype == "float32" else "d")
    primitives: dict[str, object] = {
        "V": vector, "W": lanes,
        "load": f"{prefix}_loadu_{suffix}(p)", "store": f"{prefix}_storeu_{suffix}(p, v)",
        "set1": f"{prefix}_set1_{suffix}(s)", "zero": f"{prefix}_setzero_{suffix}()",
        "fma": f"{prefix}_fmadd_{suffix}(x, y, z)", "mul": f"{prefix}_mul_{suffix}(x, y)",
        "add": f"{prefix}_add_{suffix}(x, y)"}
    if isa == "avx512":
        mask = f"__mmask{lanes}"
        primitives.update({
            "M": mask, "mload": f"{prefix}_maskz_loadu_{suffix}(m, p)",
            "mstore": f"{prefix}_mask_storeu_{suffix}(p, m, v)",
            "sum": f"{prefix}_reduce_add_{suffix}(v)",
            "mask": f"({mask})(n >= {lanes} ? 0x{(1 << lanes) - 1:X}u : (1u << n) - 1)"})
    else:
        # Masks are lanes of all ones, loaded from a table of ones then zeros.
        table = "sympile_skinny_mask32" if dtype == "float32" else "sympile_skinny_mask64"
        primitives.update({
            "M": "__m256i", "mload": f"{prefix}_maskload_{suffix}(p, m)",
            "mstore": f"{prefix}_maskstore_{suffix}(p, m, v)",
            "sum": f"sympile_skinny_sum{lanes}(v)",
            "mask": f"_mm256_loadu_si256((const __m256i *)({table} + {lanes} - n))"})
    return primitives


_COMMON = c_file(__file__, "skinny_common.c")

_HELPERS = c_file(__file__, "skinny_primitives.c")

_ROWS = c_file(__file__, "skinny_rows.c")

_DOT = c_file(__file__, "skinny_dot.c")

_DISPATCH = c_file(__file__, "skinny_dispatch.c")

# The dispatcher's declaration, in the op units that call it.
_DECLARATION = c_file(__file__, "skinny_declaration.h")

# Where the kernels cannot be built, or config.blas_skinny is 'off': every product goes to
# BLAS.
_NO_KERNELS = c_file(__file__, "skinny_none.c")

_TYPES = {"float32": "float", "float64": "double"}


def _instance(isa: str, dtype: str) -> str:
    settings, primitives = _ISAS[isa], _primitives(isa, dtype)
    values: dict[str, object] = {
        "s": f"{isa}_{dtype}", "T": _TYPES[dtype], "V": primitives["V"],
        "M": primitives["M"], "W": primitives["W"],
        "target": f'__attribute__((target("{settings["target"]}")))',
        "rows": settings["rows"], "dot_rows": settings["dot_rows"],
        "dot_cols": settings["dot_cols"], "steps": SKINNY_STEPS}
    for name in ("load", "mload", "store", "mstore", "set1", "zero", "fma", "mul", "add",
                 "sum", "mask"):
        values[name] = primitives[name]
    arguments = "k, packed, b, ldb, c, ldc, alpha, accumulate, m0, m1"
    # One line each, so that the C files' line numbers still hold (ccode.render).
    values["rows_cases"] = " ".join(
        f"    case {2 * rows + masked}: sympile_skinny_rows_block_{isa}_{dtype}({rows}, "
        f"{masked}, {arguments}); break;"
        for rows in range(1, settings["rows"] + 1) for masked in (0, 1))
    values["dot_cases"] = " ".join(
        f"    case {rows}: sympile_skinny_dot_block_{isa}_{dtype}({rows}, columns, k, a, lda, "
        f"w, ldw, c, ldc, alpha, accumulate); break;"
        for rows in range(1, settings["dot_rows"] + 1))
    return render(_HELPERS + _ROWS + _DOT, values)


def _built_isas(setting: str) -> tuple[str, ...]:
    """The instruction sets to build kernels for, best first, under config.blas_skinny's
    `setting` ('avx2' leaves AVX-512 out): where the CPU's level is known, the best one it
    runs (a third of the compile time of building every one); else all, picked at run
    time. None off x86-64."""
    if not is_x86_64():
        return ()
    allowed = [isa for isa in _ISAS if setting == "auto" or isa != "avx512"]
    level = cpu_level()
    if level is None:
        return tuple(allowed)
    runs = {"x86-64-v4": ("avx512", "avx2"), "x86-64-v3": ("avx2",)}.get(level, ())
    return tuple(isa for isa in allowed if isa in runs)[:1]


def _chosen(kernel: str, dtype: str, isas: tuple[str, ...]) -> str:
    """A C function designator for the `kernel` ('dot' or 'rows') of the best of `isas`
    that the CPU runs (the dispatcher's `isa`: 2 for AVX-512, 1 for AVX2)."""
    names = [f"sympile_skinny_{kernel}_{isa}_{dtype}" for isa in isas]
    return names[0] if len(names) == 1 else f"(isa == 2 ? {names[0]} : {names[1]})"


@functools.cache
def skinny_code(dtype: str, minsize: float, setting: str = "auto") -> tuple[str, str, str | None]:
    """(name, support, unit) of the kernels' dispatcher for `dtype` (float32 or float64),
    with `minsize` multiply-adds (config.blas_parallel_minsize) as the threshold for
    threads, under `setting` (config.blas_skinny: 'auto', 'avx2' never uses the AVX-512
    kernels, 'off' none): `int name(m, n, k, alpha, a, a_row, a_column, b, b_row, b_column,
    c, c_row, c_column, accumulate)` (see _DISPATCH), declared by `support` and defined in
    the library unit `unit` (None where there are no kernels: `support` then defines it as
    0, BLAS). Cached: every BLAS node's C code asks for it."""
    isas = _built_isas(setting) if setting != "off" else ()
    if not isas:
        name = f"sympile_no_skinny_{dtype}"
        return name, render(_NO_KERNELS, {"name": name, "T": _TYPES[dtype]}), None
    common = render(_COMMON, {f"{isa}_check": _ISAS[isa]["check"] if isa in isas else "0"
                              for isa in _ISAS} | {"minsize": minsize})
    kernels = "".join(_instance(isa, dtype) for isa in isas)
    # Lanes of the widest vectors: the rows kernel wants c's rows to fill two of them, the
    # dot kernel the inner length to fill one.
    lanes = _primitives("avx512", dtype)["W"]
    unit = common + kernels + render(_DISPATCH, {"dtype": dtype, "T": _TYPES[dtype],
                                                  "rows_max": SKINNY_ROWS, "steps": SKINNY_STEPS,
                                                  "lanes": lanes,
                                                  "dot": _chosen("dot", dtype, isas),
                                                  "rows": _chosen("rows", dtype, isas)})
    # Named by the unit's text: a module links the one unit its op units were made for.
    name = content_name(f"sympile_skinny_{dtype}", unit)
    values = {"name": name, "T": _TYPES[dtype]}
    return name, render(_DECLARATION, values), render(unit, values)
