"""The C that the C backend runs for the dense products (sympile.tensor.blas: Dot, MatMul,
TensorDot) and the BLAS updates (sympile.tensor.blas.gemm: Gemm, Gemv, Ger): float32 and float64,
through the BLAS routines the backend loads from scipy.

Every operand is seen as a matrix (a 1-d one as a row or a column), and every product as
c = alpha * a @ b + beta * c, done by one dot, gemv, ger or gemm call as its shape allows.
BLAS is column-major; a row-major matrix is the column-major matrix of its transpose, so C- and
Fortran-ordered operands, and those with spaced rows (or columns), are read in place with the
transpose flag their layout asks for. An operand BLAS cannot read (negative, zero or non-unit
inner strides, misaligned data) is copied in C order first. A length past INT_MAX (BLAS's int)
is an OverflowError.

Results equal perform()'s: empty products are zeros (BLAS is not called with a zero length);
beta * z is computed elementwise (so beta = 0 still gives nan where z is nan, and never reads
an uninitialised output); where BLAS would skip alpha * x @ y (alpha = 0, or k = 0), that term
is computed and added anyway, so that 0 * inf gives nan as in numpy.

Skinny products (c with at most 64 rows, or an inner length of at most 64: a small batch's
layer products) go to sympile's own kernels instead of gemm (sympile.tensor.blas.skinny,
config.blas_skinny).

Threads: a BLAS call of fewer than config.blas_parallel_minsize multiply-adds runs on one
thread. With OpenMP (config.openmp), a larger one is split among OpenMP threads by bands of
c's columns (or rows), each band one call of the library on one thread, so that the module
has one pool of threads: OpenBLAS's own, woken beside OpenMP's (elementwise loops, the
skinny kernels), spin after their work and take the cores each other waits for (a 784 x 500
SGD update, a product then an elementwise loop, took 8 ms instead of 0.15). Without OpenMP,
larger calls run on as many threads as the library is set to use (OpenBLAS, scipy's or
another, found next to the routines scipy exports; other libraries choose for themselves).
On a heavily loaded machine threads cost far more (a woken thread waits milliseconds for a
core): raise the flag there. The library's thread count is set back after each call, so
code that shares the library (scipy.linalg) keeps its own.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from sympile.config import config
from sympile.cpu import vector_target
from sympile.graph.ccode import CCode, c_file, c_string, library_code, render, served_by
from sympile.tensor.blas.skinny import skinny_code

__all__ = ["BLAS_C_DTYPES", "blas_call", "blas_threads_support", "c_string", "dot_c_code",
           "update_c_code"]

BLAS_C_DTYPES = ("float32", "float64")

_COMMON = c_file(__file__, "blas_common.c")

_THREADS = c_file(__file__, "blas_threads.c")

_SHORT_LINES = c_file(__file__, "blas_short_lines.c")

_MULTIPLY = c_file(__file__, "blas_multiply.c")

_DOT = c_file(__file__, "blas_dot.c")

_MATMUL = c_file(__file__, "blas_matmul.c")

_TENSORDOT = c_file(__file__, "blas_tensordot.c")

_UPDATE = c_file(__file__, "blas_update.c")

_ENTRIES = c_file(__file__, "blas_entries.h")

_NODES = c_file(__file__, "blas_nodes.c")

# Each piece: its C, the pieces it calls, the BLAS routines it calls ('@p@' is s or d).
_PIECES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "blas_common": (_COMMON, (), ()),
    "blas_threads": (_THREADS, (), ()),
    "blas_short_lines": (_SHORT_LINES, (), ()),
    "blas_multiply": (_MULTIPLY, ("blas_common", "blas_threads", "blas_short_lines"),
                      ("@p@dot", "@p@gemv", "@p@ger", "@p@gemm")),
    "dot": (_DOT, ("blas_multiply",), ()),
    "matmul": (_MATMUL, ("dot",), ()),
    "tensordot": (_TENSORDOT, ("blas_multiply",), ()),
    "blas_update": (_UPDATE, ("blas_multiply",), ()),
}

_SUBSTITUTIONS = {
    "float32": {"dtype": "float32", "type": "float", "p": "s", "npy": "NPY_FLOAT32"},
    "float64": {"dtype": "float64", "type": "double", "p": "d", "npy": "NPY_FLOAT64"},
}


# The short-line loop vectorized (gcc's -O2 leaves loops of unknown length scalar), for this
# machine's widest vectors.
_TARGET = vector_target()
VECTORIZE = ('__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")'
             + (f", {_TARGET}" if _TARGET else "") + "))")


def _specialize(text: str, dtype: str) -> str:
    return render(text, {**_SUBSTITUTIONS[dtype], "minsize": f"{config.blas_parallel_minsize}.0",
                         "vectorize": VECTORIZE})


def _collect(name: str, dtype: str, support: list[str], blas: list[str],
             units: list[str]) -> None:
    """Append piece `name`, after the pieces it calls, unless already there (blas_multiply
    also brings the skinny kernels' dispatcher and its library unit)."""
    text, calls, routines = _PIECES[name]
    for called in calls:
        _collect(called, dtype, support, blas, units)
    if name == "blas_multiply":
        skinny, declaration, unit = skinny_code(dtype, float(config.blas_parallel_minsize),
                                                config.blas_skinny)
        if declaration not in support:
            support.append(declaration)
        if unit is not None and unit not in units:
            units.append(unit)
        text = render(text, {"skinny": skinny})
    piece = _specialize(text, dtype)
    if piece not in support:
        support.append(piece)
    for routine in routines:
        routine = _specialize(routine, dtype)
        if routine not in blas:
            blas.append(routine)


def blas_threads_support(dtype: str) -> str:
    """blas_threads.c for `dtype`: the thread split of BLAS calls, for other families that
    call the BLAS (sympile_blas_threads_begin / _restore)."""
    return _specialize(_THREADS, dtype)


@functools.lru_cache(maxsize=8)
def _library(dtype: str, minsize: float, skinny_setting: str
             ) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """(name, declarations, BLAS routines, library units) of the family for `dtype`: its
    entry points (`<name>_dot`, `_matmul`, `_tensordot`, `_blas_update`, as declared by
    blas_entries.h) and their helpers are one library unit, compiled once per cache, so that
    an op unit holds only its call (the helpers took most of its compile time); the skinny
    kernels' unit comes with it. Named by the unit's text, as skinny_code's."""
    support: list[str] = []
    blas: list[str] = []
    units: list[str] = []
    for entry in ("dot", "matmul", "tensordot", "blas_update"):
        _collect(entry, dtype, support, blas, units)
    name, declarations, unit = library_code(
        f"sympile_blas_{dtype}", render(_ENTRIES, {"dtype": dtype}),
        "\n".join([*support, _NODES]))
    return name, declarations, tuple(blas), (*units, unit)


def _configured_library(dtype: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """_library for `dtype` under the current config (its thread split and skinny kernels)."""
    return _library(dtype, float(config.blas_parallel_minsize), config.blas_skinny)


def blas_call(function: str, dtype: str, arguments: Sequence[str], fail: str,
              setup: str = "") -> CCode:
    """The CCode of a node that calls the family's `function` for `dtype` (dot, matmul,
    tensordot, or blas_update; see blas_entries.h) with `arguments` and runs `fail` when it
    returns an error; `setup` comes first (declarations, checks)."""
    name, declarations, blas, units = _configured_library(dtype)
    body = f"{setup}\n        if ({name}_{function}({', '.join(arguments)})) {{ {fail} }}"
    return CCode(body=body, support=(declarations,), blas=blas, units=units)


def dot_c_code(op: str, dtype: str) -> CCode:
    """The CCode of a Dot node: the family's library entry, its table the op's name."""
    name, declarations, blas, units = _configured_library(dtype)
    return served_by((name, declarations, units[-1]), "dot_node", "SympileBlasDot",
                     [c_string(op)], units=units[:-1], blas=blas)


def update_c_code(op: str, dtype: str, n_inputs: int,
                  operands: tuple[int, int, int, int, int | None], y_row: bool,
                  lengths: Sequence[tuple[str, tuple[int, int], tuple[int, int]]],
                  inplace: bool) -> CCode:
    """The CCode of a BLAS update node (see sympile_blas_update), the family's library
    entry: `operands` are the input indices of z, x, y, alpha and beta (None: 1); each of
    `lengths` (what, (input, axis), (input, axis)) is a pair of lengths that must be equal,
    else the ValueError "<op>: <what> have different lengths [first, second]" (perform's
    message)."""
    if n_inputs > 5:
        raise ValueError(f"{op}: a BLAS update has at most 5 inputs (blas_nodes.c), got "
                         f"{n_inputs}")
    name, declarations, blas, units = _configured_library(dtype)
    checks = ", ".join(f"{{{c_string(what)}, {first}, {first_axis}, {second}, {second_axis}}}"
                       for what, (first, first_axis), (second, second_axis) in lengths)
    z, x, y, alpha, beta = operands
    fields = [c_string(op), *map(str, (n_inputs, z, x, y, alpha, -1 if beta is None else beta,
                                       int(y_row), int(inplace), len(lengths))),
              f"(const SympileBlasCheck[]){{{checks or '{0}'}}}"]
    return served_by((name, declarations, units[-1]), "update_node", "SympileBlasUpdate",
                     fields, units=units[:-1], blas=blas)
