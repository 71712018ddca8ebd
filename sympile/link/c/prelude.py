"""The fixed parts of every generated module: helpers for op bodies, BLAS prototypes, and the
Program type that holds a compiled function's storage and runs it."""

from __future__ import annotations

from sympile.graph.ccode import c_file, render

_INCLUDES = c_file(__file__, "includes.h")
_OUTPUT_HELPERS = c_file(__file__, "output_helpers.h")
_PROGRAM_DECLARATIONS = c_file(__file__, "program.h")

# The header of every unit but the program unit: op units (one node function each) and each
# module's main unit, compiled and cached one by one; gcc loads it precompiled.
# UNIT_HEADER_NAME is what the units #include.
UNIT_HEADER_NAME = "sympile_unit.h"
UNIT_HEADER = ("#pragma once\n#define NO_IMPORT_ARRAY\n" + _INCLUDES + _OUTPUT_HELPERS
               + _PROGRAM_DECLARATIONS)

# Fortran BLAS prototypes of the routines ops may ask for (scipy.linalg.cython_blas names).
_REAL_BLAS = {
    "gemm": "void (*)(char *, char *, int *, int *, int *, T *, T *, int *, T *, int *, T *, "
            "T *, int *)",
    "gemv": "void (*)(char *, int *, int *, T *, T *, int *, T *, int *, T *, T *, int *)",
    "ger": "void (*)(int *, int *, T *, T *, int *, T *, int *, T *, int *)",
    "dot": "T (*)(int *, T *, int *, T *, int *)",
    "axpy": "void (*)(int *, T *, T *, int *, T *, int *)",
    "scal": "void (*)(int *, T *, T *, int *)",
    "trsm": "void (*)(char *, char *, char *, char *, int *, int *, T *, T *, int *, T *, "
            "int *)",
}
# And the LAPACK routines (scipy.linalg.cython_lapack names), reached the same way.
_REAL_LAPACK = {
    "potrf": "void (*)(char *, int *, T *, int *, int *)",
    "trtrs": "void (*)(char *, char *, char *, int *, int *, T *, int *, T *, int *, int *)",
    "getrf": "void (*)(int *, int *, T *, int *, int *, int *)",
    "getrs": "void (*)(char *, int *, int *, T *, int *, int *, T *, int *, int *)",
    "getri": "void (*)(int *, T *, int *, int *, T *, int *, int *)",
    "potrs": "void (*)(char *, int *, int *, T *, int *, T *, int *, int *)",
    "sytrf": "void (*)(char *, int *, T *, int *, int *, T *, int *, int *)",
    "sytrs": "void (*)(char *, int *, int *, T *, int *, int *, T *, int *, int *)",
    "syevd": "void (*)(char *, char *, int *, T *, int *, T *, T *, int *, int *, int *, "
             "int *)",
}
LAPACK_ROUTINES = {prefix + name for prefix in ("s", "d") for name in _REAL_LAPACK}
BLAS_PROTOTYPES = {prefix + name: prototype.replace("T", c_type)
                   for prefix, c_type in (("s", "float"), ("d", "double"))
                   for name, prototype in {**_REAL_BLAS, **_REAL_LAPACK}.items()}


def blas_declaration(name: str, external: bool = False) -> str:
    """The pointer variable `sympile_blas_<name>`, filled in by the module's init: defined in
    the main unit, declared `external` in the op units that call it."""
    prototype = BLAS_PROTOTYPES[name]
    declaration = prototype.replace("(*)", f"(*sympile_blas_{name})", 1)
    return f"extern {declaration};" if external else f"{declaration};"


def blas_loader(names: list[str]) -> str:
    """C for the module init (one line, for module_init.c's @BLAS_LOADS@): load each
    routine's pointer from scipy.linalg.cython_blas (cython_lapack for LAPACK's)."""
    lines = []
    for module, group in (("cython_blas", [n for n in names if n not in LAPACK_ROUTINES]),
                          ("cython_lapack", [n for n in names if n in LAPACK_ROUTINES])):
        if not group:
            continue
        loads = " ".join(
            f'if (sympile_load_blas(capi, "{name}", (void **)&sympile_blas_{name})) goto fail;'
            for name in group)
        lines.append(f'{{ PyObject *blas = PyImport_ImportModule("scipy.linalg.{module}"); '
                     'PyObject *capi = blas ? PyObject_GetAttrString(blas, "__pyx_capi__") '
                     f": NULL; if (capi == NULL) goto fail; {loads} Py_DECREF(capi); "
                     "Py_DECREF(blas); }")
    return " ".join(lines)


# The Program type and what the generated code calls, the same for every module: compiled once
# and cached, then linked into each module. It defines numpy's C-API table (no NO_IMPORT_ARRAY)
# and reads each module's tables (program.h) and sympile_run_once.
PROGRAM_UNIT = _INCLUDES + _OUTPUT_HELPERS + _PROGRAM_DECLARATIONS + c_file(__file__, "program.c")

# The thread governor of a module that runs OpenMP code and follows the load: a library unit
# (its functions are declared in program.h).
THREAD_GOVERNOR = render(c_file(__file__, "thread_governor.c"), {"PERIOD": "0.1"})

# The end of each module's main unit: its init function.
MODULE_INIT = c_file(__file__, "module_init.c")
