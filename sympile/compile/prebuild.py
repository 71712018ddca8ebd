"""The C backend's fixed C, compiled once when the package is built.

setup.py runs `python -m sympile.compile.prebuild <build>/sympile/_prebuilt` after copying
the package: it compiles into that directory, used as a compiledir, the unit header and
every library unit whose text depends on no graph (the program unit, the thread governor,
the entries of the Elemwise, DimShuffle, shape, basic indexing and Alloc nodes, and the
units of the skinny products, the BLAS family, the softmax rows, the convolutions and the
pooling for float32 and float64), and the kernels of the lone elementwise ops most graphs
keep (common_kernel_units), with the flags that a function gets under the default config.
The installed package then holds them, and the cache reads that directory as its prebuilt
tier (sympile.cache.store): the first function on a new install compiles only what its
graph needs (its op units, its other Elemwise nodes' kernels and its main unit), not the 2
to 4 s of CPU the fixed units take. The common kernels are 196 of the 227 units and about
15 of the 25 s of CPU of the build (16 s on 2 cores).

The tier serves the functions whose keys match: the same compiler, flags (config.openmp,
config.cxxflags, config.blas_parallel_minsize, config.blas_skinny), Python and numpy as at
the build. Under other settings, or where the build could not compile (no compiler then),
the units compile into the cache on first use, as before: the tier saves time, it changes no
result.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

from sympile import scalar
from sympile.cache import LOCK_NAME, cache_root
from sympile.cache.store import ROOT_LOCK_NAME
from sympile.config import config
from sympile.link.c import prelude
from sympile.link.c.cmodule import build_units
from sympile.link.c.codegen import library_unit
from sympile.tensor.basic.alloc_c import alloc_library
from sympile.tensor.blas.blas_c import BLAS_C_DTYPES, blas_call
from sympile.tensor.elemwise.elemwise_c import run_library
from sympile.tensor.elemwise.ops import Elemwise
from sympile.tensor.nnet.abstract_conv_c import conv_library
from sympile.tensor.nnet.basic_c import crossentropy_dx_library, crossentropy_library
from sympile.tensor.nnet.rows_c import ROW_KINDS, row_library
from sympile.tensor.shape.shape_c import shape_library
from sympile.tensor.signal.pool_c import pool_library
from sympile.tensor.subtensor.basic_c import view_library
from sympile.tensor.type import tensor_type

__all__ = ["common_kernel_units", "fixed_units", "main", "prebuild"]

# The lone elementwise ops that gradients and updates leave unfused everywhere (a negation, a
# scaled gradient, an inplace update), whose kernels are prebuilt like torch's eager kernels.
_UNARY = ("neg", "exp", "log", "tanh", "sigmoid", "sqr", "sqrt", "abs")
_BINARY = ("add", "sub", "mul", "true_div", "maximum")
# The 0-d int64 arithmetic of shapes.
_SHAPE_ARITHMETIC = ("add", "sub", "mul", "int_div", "maximum", "minimum",
                     "gt", "lt", "ge", "le", "eq", "neq")


def fixed_units() -> list[str]:
    """The sources of the library units a function may link whatever its graph, as the C
    backend generates them under the current config."""
    units = [prelude.PROGRAM_UNIT]
    if config.openmp and config.openmp_follow_load:
        units.append(library_unit(prelude.THREAD_GOVERNOR))
    units += [library_unit(library()[2])
              for library in (run_library, shape_library, view_library, alloc_library)]
    for dtype in BLAS_C_DTYPES:
        code = blas_call("dot", dtype, (), "")
        units += [library_unit(unit, code.blas) for unit in code.units]
        units += [library_unit(row_library(kind, dtype)[2]) for kind in ROW_KINDS]
        units.append(library_unit(pool_library(dtype)[2]))
        _, _, conv, conv_blas = conv_library(dtype)
        units.append(library_unit(conv, conv_blas))
        # The classifiers' losses, for the targets' usual dtypes.
        for target_dtype in ("int32", "int64"):
            units.append(library_unit(crossentropy_library(dtype, target_dtype)[0][2]))
            units.append(library_unit(
                crossentropy_dx_library((dtype, dtype, dtype), target_dtype)[2]))
    return units + common_kernel_units()


def _kernel_unit(op_name: str, dtype: str, pattern: str, written: int | None,
                 strided: bool = False) -> str:
    """The kernel unit of Elemwise(scalar.<op_name>) on inputs of `dtype`, each an array
    ('n') or one element ('s', all axes of length 1) as `pattern` says, its output written
    over input `written` (None: a new array), with a strided kernel (an input is a view) or
    not. The kernels are the same for every rank."""
    ndim = 2 if "n" in pattern else 0
    inputs = [tensor_type(dtype, (None,) * ndim if kind == "n" else (1,) * ndim)()
              for kind in pattern]
    if strided:
        first = pattern.index("n")
        inputs[first] = inputs[first].T
    op = Elemwise(getattr(scalar, op_name), () if written is None else ((0, written),))
    node = op.make_node(*inputs)
    kernels, = (unit for unit in op.c_code(node, None).units if unit != run_library()[2])
    return kernels


def common_kernel_units() -> list[str]:
    """The kernel units of the lone elementwise nodes most graphs have (see _UNARY,
    _BINARY, _SHAPE_ARITHMETIC), new or written over an input, as elemwise_c_code generates
    them under the current config."""
    kernels = []
    for dtype, strided in itertools.product(BLAS_C_DTYPES, (False, True)):
        for name in _UNARY:
            kernels += [_kernel_unit(name, dtype, "n", written, strided)
                        for written in (None, 0)]
        for name in _BINARY:
            for pattern, writable in (("nn", (0, 1)), ("sn", (1,)), ("ns", (0,))):
                kernels += [_kernel_unit(name, dtype, pattern, written, strided)
                            for written in (None, *writable)]
    kernels += [_kernel_unit(name, "int64", "ss", None) for name in _SHAPE_ARITHMETIC]
    return [library_unit(kernel) for kernel in dict.fromkeys(kernels)]


def prebuild(directory: str) -> list[str]:
    """Compile the fixed units and the unit header into `directory` (a compiledir; the
    prebuilt tier when it is the package's `_prebuilt`); returns the entries' keys. The lock
    files, which only builds use, are removed."""
    with config.change_flags(compiledir=directory):
        keys = build_units(tuple(fixed_units()), config.openmp,
                           tuple(config.cxxflags.split()))
        root = cache_root()
    for path in [os.path.join(root, ROOT_LOCK_NAME),
                 *(os.path.join(root, key, LOCK_NAME) for key in keys)]:
        if os.path.isfile(path):
            os.unlink(path)
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sympile.compile.prebuild",
        description="Compile the C backend's fixed units into a directory (the package's "
                    "prebuilt tier).")
    parser.add_argument("directory")
    arguments = parser.parse_args(argv)
    keys = prebuild(os.path.abspath(arguments.directory))
    print(f"sympile: {len(keys)} fixed units compiled into {arguments.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
