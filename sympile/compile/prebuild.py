"""The C backend's fixed C, compiled once when the package is built.

setup.py runs `python -m sympile.compile.prebuild <build>/sympile/_prebuilt` after copying
the package: it compiles into that directory, used as a compiledir, the unit header and
every library unit whose text depends on no graph (the program unit, the thread governor,
the entries of the Elemwise, DimShuffle, shape, basic indexing and Alloc nodes, and the
units of the skinny products, the BLAS family, the softmax rows, the convolutions and the
pooling for float32 and float64), and the units of the nodes most graphs have
(common_node_units: the kernels of the lone elementwise ops they keep unfused, and the
data-driven op units of reductions, arg-reductions, joins and a classifier's and an
embedding's indexing), with the flags that a function gets under the default config.
The installed package then holds them, and the cache reads that directory as its prebuilt
tier (sympile.cache.store): the first function on a new install compiles only what its
graph needs (its other op units, its other Elemwise nodes' kernels and its main unit), not
the 2 to 4 s of CPU the fixed units take. The common units are 236 of the 266 units and
about 17 of the 28 s of CPU of the build (15 s on 2 cores).

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
from sympile.graph.basic import Apply
from sympile.link.c import prelude
from sympile.link.c.cmodule import build_units
from sympile.link.c.codegen import library_unit, node_units
from sympile.tensor.basic import arange, concatenate
from sympile.tensor.basic.alloc_c import alloc_library
from sympile.tensor.blas.blas_c import BLAS_C_DTYPES, blas_call
from sympile.tensor.elemwise.elemwise_c import run_library
from sympile.tensor.elemwise.ops import Elemwise
from sympile.tensor.nnet.abstract_conv_c import conv_library
from sympile.tensor.nnet.basic_c import crossentropy_dx_library, crossentropy_library
from sympile.tensor.nnet.rows_c import ROW_KINDS, row_library
from sympile.tensor.reduction import argmax, argmin
from sympile.tensor.shape.shape_c import shape_library
from sympile.tensor.signal.pool_c import pool_library
from sympile.tensor.subtensor.basic_c import view_library
from sympile.tensor.subtensor.index_kinds import ARRAY
from sympile.tensor.subtensor.ops import AdvancedIncSubtensor, inc_subtensor, set_subtensor
from sympile.tensor.type import tensor_type

__all__ = ["common_node_units", "fixed_units", "main", "prebuild"]

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
    return list(dict.fromkeys(units + common_node_units()))


def _elemwise_node(op_name: str, dtype: str, pattern: str, written: int | None,
                   strided: bool = False) -> Apply:
    """A node of Elemwise(scalar.<op_name>) on inputs of `dtype`, each an array ('n') or one
    element ('s', all axes of length 1) as `pattern` says, its output written over input
    `written` (None: a new array), with a strided kernel (an input is a view) or not. Its
    kernels are the same for every rank."""
    ndim = 2 if "n" in pattern else 0
    inputs = [tensor_type(dtype, (None,) * ndim if kind == "n" else (1,) * ndim)()
              for kind in pattern]
    if strided:
        first = pattern.index("n")
        inputs[first] = inputs[first].T
    op = Elemwise(getattr(scalar, op_name), () if written is None else ((0, written),))
    return op.make_node(*inputs)


def _common_op_nodes() -> list[Apply]:
    """Nodes of the data-driven op units (one unit per dtype and kind, whatever the axes or
    lengths: a table gives those) that classifiers' and language models' steps have: the
    reductions and arg-reductions (a bias gradient, a row's maximum, an accuracy), the
    labels' arange and p[arange(n), y], an embedding's rows (x[i]) and their gradient
    (inc_subtensor, and scan's scatter of every step's rows), a join of two arrays."""
    outputs = [arange(tensor_type("int64", ())()), tensor_type("int64", (None, None))().sum(0)]
    nodes = []
    for dtype in BLAS_C_DTYPES:
        x, vector = tensor_type(dtype, (None, None))(), tensor_type(dtype, (None,))()
        outputs += [x.sum(0), x.prod(0), x.max(0), x.min(0), argmax(x, 1), argmin(x, 1),
                    concatenate([x, x])]
        for index_dtype in ("int32", "int64"):
            index = tensor_type(index_dtype, (None,))()
            outputs += [x[index], vector[index], x[arange(index.shape[0]), index],
                        inc_subtensor(x[index], x), set_subtensor(x[index], x)]
            nodes.append(AdvancedIncSubtensor((ARRAY,)).make_node(x, x, index))
    return nodes + [output.owner for output in outputs]


def common_node_units() -> list[str]:
    """The units of the nodes most graphs have: the lone elementwise nodes (see _UNARY,
    _BINARY, _SHAPE_ARITHMETIC), new or written over an input, and the data-driven op units
    of _common_op_nodes, as the C backend generates them under the current config."""
    nodes = []
    for dtype, strided in itertools.product(BLAS_C_DTYPES, (False, True)):
        for name in _UNARY:
            nodes += [_elemwise_node(name, dtype, "n", written, strided)
                      for written in (None, 0)]
        for name in _BINARY:
            for pattern, writable in (("nn", (0, 1)), ("sn", (1,)), ("ns", (0,))):
                nodes += [_elemwise_node(name, dtype, pattern, written, strided)
                          for written in (None, *writable)]
    nodes += [_elemwise_node(name, "int64", "ss", None) for name in _SHAPE_ARITHMETIC]
    nodes += _common_op_nodes()
    return list(dict.fromkeys(unit for node in nodes for unit in node_units(node)))


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
