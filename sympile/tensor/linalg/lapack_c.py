"""C code of Cholesky, Solve (assume_a 'gen', 'pos', 'sym'), SolveTriangular,
MatrixInverse, Det, SLogDet, Eigh and Eigvalsh: LAPACK's potrf, potrs, getrf, getrs, getri,
sytrf, sytrs and syevd through scipy's pointers, BLAS's trsm for the triangular solves
(lapack.c), float32 and float64, over stacks (split among OpenMP threads); the other
linear-algebra ops run perform. Errors are perform's: numpy's LinAlgError for a matrix that
is not positive definite or is singular, a ValueError for shapes."""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import CCode, CNames, c_file, render
from sympile.tensor.blas.blas_c import blas_threads_support

__all__ = ["cholesky_c_code", "eigh_c_code", "lu_reduction_c_code", "solve_c_code"]

_KERNELS = c_file(__file__, "lapack.c")
_SUBSTITUTIONS = {"float32": {"T": "npy_float32", "p": "s", "npy": "NPY_FLOAT32"},
                  "float64": {"T": "npy_float64", "p": "d", "npy": "NPY_FLOAT64"}}


def _routines(dtype: str) -> tuple[str, ...]:
    """Every routine the kernels name (each op unit holds them all)."""
    prefix = _SUBSTITUTIONS[dtype]["p"]
    return tuple(prefix + name for name in ("potrf", "potrs", "getrf", "getrs", "getri",
                                                   "sytrf", "sytrs", "syevd", "trsm"))


def _support(dtype: str) -> str:
    """The kernels for `dtype`, after blas_threads.c (their thread policy)."""
    return blas_threads_support(dtype) + render(
        _KERNELS, {"dtype": dtype, "minsize": f"{config.blas_parallel_minsize}.0",
                   **_SUBSTITUTIONS[dtype]})


def cholesky_c_code(op, node: Apply, names: CNames) -> CCode | None:
    dtype = node.outputs[0].type.dtype
    if dtype not in _SUBSTITUTIONS or node.inputs[0].type.dtype != dtype:
        return None
    nan = int(op.on_error == "nan")
    return CCode(body=f"""
if (sympile_cholesky_{dtype}({names.inputs[0]}, &{names.outputs[0]}, {int(op.lower)}, {nan})
        < 0) {{
    {names.fail}
}}
""", support=(_support(dtype),), blas=_routines(dtype), openmp=True)


# sympile_solve's kinds (lapack.c's enum)
_SOLVE_KINDS = {"gen": 0, "triangular": 1, "pos": 2, "sym": 3}


def solve_c_code(node: Apply, names: CNames, kind: str, lower: bool = False,
                 trans: int = 0, unit: bool = False) -> CCode | None:
    """kind: 'gen', 'triangular' (lower, trans, unit), 'pos' or 'sym' (the lower or upper
    triangle read)."""
    dtype = node.outputs[0].type.dtype
    if dtype not in _SUBSTITUTIONS:
        return None
    a, b = names.inputs
    return CCode(body=f"""
if (sympile_solve_{dtype}({a}, {b}, &{names.outputs[0]}, {_SOLVE_KINDS[kind]}, {int(lower)},
                          {int(trans)}, {int(unit)}) < 0) {{
    {names.fail}
}}
""", support=(_support(dtype),), blas=_routines(dtype), openmp=True)


def lu_reduction_c_code(kind: str, node: Apply, names: CNames) -> CCode | None:
    """MatrixInverse ('inverse'), Det ('det') and SLogDet ('slogdet'), from an LU factoring."""
    dtype = node.inputs[0].type.dtype
    if dtype not in _SUBSTITUTIONS or any(o.type.dtype != dtype for o in node.outputs):
        return None
    code = {"inverse": 0, "det": 1, "slogdet": 2}[kind]
    second = f"&{names.outputs[1]}" if kind == "slogdet" else "NULL"
    return CCode(body=f"""
if (sympile_lu_reduction_{dtype}({names.inputs[0]}, {code}, &{names.outputs[0]}, {second})
        < 0) {{
    {names.fail}
}}
""", support=(_support(dtype),), blas=_routines(dtype), openmp=True)


def eigh_c_code(node: Apply, names: CNames, lower: bool) -> CCode | None:
    """Eigh (values and vectors) and Eigvalsh (values): syevd on the lower or upper
    triangle."""
    dtype = node.inputs[0].type.dtype
    if dtype not in _SUBSTITUTIONS or any(o.type.dtype != dtype for o in node.outputs):
        return None
    vectors = f"&{names.outputs[1]}" if len(node.outputs) == 2 else "NULL"
    return CCode(body=f"""
if (sympile_eigh_{dtype}({names.inputs[0]}, {int(lower)}, &{names.outputs[0]}, {vectors})
        < 0) {{
    {names.fail}
}}
""", support=(_support(dtype),), blas=_routines(dtype), openmp=True)
