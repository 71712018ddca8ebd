"""The C kept in .c/.h files beside the Python that uses them (sympile.graph.ccode.c_file):
a compiler error in one names the file and its line, each compiles without a warning under
-Wall -Wextra, and the files ship in the package."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.benchmarks import machine
from sympile.cache import CompileError
from sympile.config import config
from sympile.distributed import collectives
from sympile.graph.ccode import RESUME_LINE, c_file, render, resolve_resume_lines
from sympile.link.c import prelude
from sympile.link.c.cmodule import compile_flags, load_module
from sympile.scalar import c_rules
from sympile.scalar.c_fastmath import FAST_MATH_SUPPORT
from sympile.sparse import kernels as sparse_kernels
from sympile.tensor import c_toolkit
from sympile.tensor.basic import alloc_c, arange_c, join_c, split_c
from sympile.tensor.blas import blas_c
from sympile.tensor.blas.skinny import skinny_code
from sympile.tensor.elemwise import elemwise_c
from sympile.tensor.extra_ops import group_sum_c
from sympile.tensor.linalg import lapack_c
from sympile.tensor.nnet import abstract_conv_c, basic_c, rows_c
from sympile.tensor.random import random_c
from sympile.tensor.reduction import careduce_c, centered_c
from sympile.tensor.shape import shape_c
from sympile.tensor.signal import pool_c
from sympile.tensor.sort import permute_c
from sympile.tensor.subtensor import advanced_c
from sympile.tensor.subtensor import basic_c as subtensor_basic_c
from sympile.tensor.subtensor import rows_c as index_rows_c
from tests.link.c.utils import requires_compiler

ROOT = Path(sympile.__file__).parent


def test_c_file_is_marked_with_its_path_and_resumes():
    text = c_file(blas_c.__file__, "blas_dot.c")
    path = ROOT / "tensor" / "blas" / "blas_dot.c"
    assert text.startswith(f'#line 1 "{path}"\n')
    assert text.endswith(RESUME_LINE + "\n")
    assert text[text.index("\n") + 1:].startswith(path.read_text())


def test_resume_lines_give_the_generated_source_its_own_numbers():
    source = "a\n" + RESUME_LINE + "\nb\n" + RESUME_LINE + "\nc"
    resolved = resolve_resume_lines(source, "/x/unit.c").split("\n")
    assert resolved == ["a", '#line 3 "/x/unit.c"', "b", '#line 5 "/x/unit.c"', "c"]


def test_render_keeps_line_numbers():
    assert render("int @name@ = @value@;", {"name": "x", "value": 3}) == "int x = 3;"
    with pytest.raises(ValueError, match="@cases@ spans lines"):
        render("@cases@", {"cases": "case 1:\ncase 2:"})


@requires_compiler
def test_compile_error_names_the_c_file_and_line(tmp_path):
    kernel = tmp_path / "kernel.c"
    kernel.write_text("static int fine(void) { return 0; }\n\n"
                      "static int broken(void) { return missing_name; }\n")
    source = ("#include <Python.h>\n" + c_file(str(tmp_path / "ops.py"), "kernel.c")
              + "static int generated(void) { return other_missing_name; }\n")
    with config.change_flags(compiledir=str(tmp_path / "cache")):
        with pytest.raises(CompileError) as error:
            load_module(source)
    message = str(error.value)
    assert f"{kernel}:3:" in message and "missing_name" in message
    # What follows the file is attributed to the generated source, at its real line.
    generated = next(line for line in message.splitlines() if "other_missing_name" in line)
    source_path = message.rsplit("source kept at ", 1)[1].splitlines()[0].strip()
    line_number = int(generated.split(f"{source_path}:", 1)[1].split(":", 1)[0])
    assert "other_missing_name" in Path(source_path).read_text().split("\n")[line_number - 1]


def _kernel_sources() -> dict[str, str]:
    """Each C file in the context it is compiled in: the unit header, the BLAS prototypes,
    the pieces it needs."""
    header = prelude.UNIT_HEADER.replace("#pragma once\n", "")

    def op_unit(*pieces: str, blas: tuple[str, ...] = ()) -> str:
        declarations = [prelude.blas_declaration(name, external=True) for name in blas]
        return "\n".join([header, *declarations, *pieces])

    sources = {"program.c": prelude.PROGRAM_UNIT,
               "thread_governor.c": op_unit(prelude.THREAD_GOVERNOR)}
    for dtype in ("float32", "float64"):
        code = blas_c.blas_call("dot", dtype, [], "")
        skinny, library = code.units
        sources[f"skinny unit {dtype}"] = op_unit(skinny)
        sources[f"blas library unit {dtype}"] = op_unit(library, blas=code.blas)
        sources[f"blas entries {dtype}"] = op_unit(*code.support)
        for kind in rows_c.ROW_KINDS:
            sources[f"rows library unit {kind} {dtype}"] = op_unit(
                rows_c.row_library(kind, dtype)[2])
        sources[f"slices {dtype}"] = op_unit(rows_c.row_library("softmax", dtype)[1], render(
            basic_c._SLICES, {"name": "slices", "count": 2, "T": f"npy_{dtype}",
                              "call": f"{rows_c.kernel_name('softmax', dtype)}(length, "
                                      "pointers[0], pointers[1]);"}))
    with config.change_flags(blas_skinny="off"):
        sources["skinny off"] = op_unit(skinny_code("float32", 1e6, "off")[1])
    sources["fastmath.h"] = op_unit(FAST_MATH_SUPPORT)
    sources["random: philox.h, random_common.h, random_draws.c"] = op_unit(
        *random_c.RANDOM_SUPPORT)
    sources["random: mrg.h"] = op_unit(*random_c.MRG_SUPPORT)
    for dtype in ("float32", "float64"):
        sources[f"pool.c, pool.h {dtype}"] = op_unit(pool_c.pool_library(dtype)[2])
        sources[f"linalg/lapack.c {dtype}"] = op_unit(
            lapack_c._support(dtype),
            blas=lapack_c._routines(dtype))
        _, _, conv, conv_blas = abstract_conv_c.conv_library(dtype)
        sources[f"conv_gemm.c, conv_gemm.h {dtype}"] = op_unit(conv, blas=conv_blas)
    sources["elemwise_run.c, elemwise_run.h"] = op_unit(elemwise_c.run_library()[2])
    # Kernels through strides (add) and gathered for the span (tanh, compute-bound).
    for function in (T.add, T.tanh):
        node = function(T.fmatrix(), T.frow()).owner if function is T.add \
            else function(T.fmatrix()).owner
        sources[f"row_offsets.h, {node.op} kernels"] = op_unit(node.op.c_code(node, None).units[0])
    sources["digamma.h, trigamma.h"] = op_unit(c_rules._DIGAMMA, c_rules._TRIGAMMA)
    sources["float_to_int.h"] = op_unit(c_rules.FLOAT_TO_INT)
    for dtype in ("float32", "float64"):
        sources[f"float_division.c {dtype}"] = op_unit(c_rules._float_division_support(dtype))
    sources["indexing"] = op_unit(c_toolkit.SHAPE_ERROR, advanced_c._SLICE_SUPPORT,
                                  advanced_c._BROADCAST_ERROR_SUPPORT,
                                  index_rows_c.VALUE_CHECK_SUPPORT)
    sources["basic: join.c, shape_text.h"] = op_unit(c_toolkit.SHAPE_TEXT, join_c._JOIN)
    sources["basic: split.c"] = op_unit(split_c._SPLIT)
    sources["basic: alloc.c, alloc.h"] = op_unit(alloc_c.alloc_library()[2])
    sources["shape: shape.c, shape.h, integer_value.h"] = op_unit(shape_c.shape_library()[2])
    sources["subtensor: view.c, view.h"] = op_unit(subtensor_basic_c.view_library()[2])
    for dtype, target_dtype in (("float32", "int32"), ("float64", "int64"), ("float64", "uint8")):
        sources[f"nnet: crossentropy.c, targets.c, crossentropy_node.c {dtype} "
                f"{target_dtype}"] = op_unit(
            basic_c.crossentropy_library(dtype, target_dtype)[0][2])
        sources[f"nnet: crossentropy_dx.c, crossentropy_dx_node.c {dtype} {target_dtype}"] = \
            op_unit(basic_c.crossentropy_dx_library(("float32", dtype, dtype), target_dtype)[2])
    for dtype, count_dtype in (("float64", "int64"), ("float32", "int32"), ("int8", "uint8")):
        sources[f"extra_ops: group_sum.c {dtype} {count_dtype}"] = op_unit(
            group_sum_c.group_sum_support(dtype, count_dtype)[1])
    for index_dtype in ("int64", "int32", "uint8"):
        sources[f"sort: permute.c {index_dtype}"] = op_unit(
            permute_c.permute_support(index_dtype)[1])
    for dtype in ("int8", "uint8", "int32", "uint64", "int64", "float32", "float64"):
        for integer_bounds in (True, False):
            sources[f"basic: arange.c {dtype} {integer_bounds}"] = op_unit(
                arange_c.arange_support(dtype, integer_bounds)[1])
    for dtype in ("float32", "float64"):
        sources[f"sparse/kernels.c {dtype}"] = op_unit(sparse_kernels._support(dtype),
                                                       blas=sparse_kernels_blas(dtype))
    for dtype in ("int8", "uint16", "int32", "int64", "float32", "float64"):
        for maximum in (True, False):
            sources[f"reduction/extreme.c {dtype} {'max' if maximum else 'min'}"] = op_unit(
                careduce_c._extreme_helper(dtype, maximum)[1])
    sources["reduction/layout.c, reduction.h"] = op_unit(careduce_c.LAYOUT,
                                                         careduce_c.REDUCTION_TABLE)
    for dtype in ("float32", "float64"):
        sources[f"reduction/centered.c {dtype}"] = op_unit(centered_c.centered_support(dtype))
    sources["benchmarks/machine_limits.c"] = op_unit(machine.kernel_source())
    for dtype in ("int8", "int64", "float32", "float64", "bool"):
        for maximum in (True, False):
            sources[f"reduction/argextreme.c {dtype} {maximum}"] = op_unit(
                *careduce_c._argreduce_helpers(dtype, maximum)[2:])
    for handle in ("int", "void *"):
        sources[f"collectives.c, in_flight.c ({handle} handles)"] = op_unit(
            collectives._in_flight_unit(handle, handle)[0])
    return sources


def sparse_kernels_blas(dtype: str) -> tuple[str, ...]:
    """The BLAS routines sparse/kernels.c calls for `dtype`."""
    prefix = "s" if dtype == "float32" else "d"
    return tuple(name for name in prelude.BLAS_PROTOTYPES if name.startswith(prefix)
                 and f"sympile_blas_{name}" in sparse_kernels._support(dtype))


KERNEL_SOURCES = _kernel_sources()

# Parts of each function's main unit, compiled by every test that compiles a function.
MAIN_UNIT_FILES = {"link/c/module_init.c"}


def test_every_c_file_is_compiled_here():
    """Each .c and .h file of the package is in one of KERNEL_SOURCES (or of the main unit)."""
    covered = {line.split('"')[1] for text in KERNEL_SOURCES.values()
               for line in text.splitlines() if line.startswith('#line 1 "')}
    files = {str(path) for path in ROOT.rglob("*") if path.suffix in (".c", ".h")}
    missing = {path for path in files - covered
               if str(Path(path).relative_to(ROOT)) not in MAIN_UNIT_FILES}
    assert not missing, sorted(missing)


@requires_compiler
@pytest.mark.parametrize("name", sorted(KERNEL_SOURCES))
def test_kernel_files_compile_without_warnings(name, tmp_path):
    """-Wall -Wextra -Werror; unused static functions are allowed, since a piece's helpers
    are called by node bodies that are not in this unit."""
    path = tmp_path / "unit.c"
    path.write_text(resolve_resume_lines(KERNEL_SOURCES[name], str(path)))
    command = [config.cxx, "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
               "-Wno-unused-function", "-I" + sysconfig.get_paths()["include"],
               "-I" + np.get_include(), *compile_flags(openmp=True), str(path)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_every_c_file_is_in_the_wheel(tmp_path):
    """`pip install .` installs from a wheel: every .c, .h and .cu file must be in it, and
    the prebuilt tier setup.py compiles (the unit header and at least the program, skinny
    and BLAS units of both dtypes)."""
    import zipfile

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT.parent)], check=True, timeout=600)
    (wheel,) = tmp_path.glob("sympile-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    files = {str(path.relative_to(ROOT.parent)) for path in ROOT.rglob("*")
             if path.suffix in (".c", ".h", ".cu")}
    assert len(files) >= 20 and files <= shipped, files - shipped
    tier = [name for name in shipped if name.startswith("sympile/_prebuilt/")]
    assert any(name.endswith(".h.gch") for name in tier), sorted(shipped)[:20]
    assert sum(name.endswith("/meta.json") for name in tier) >= 6, tier


# C in a Python string: what the C API, numpy's C names or C statements give away.
_C_TEXT = re.compile(r"PyArray|npy_|PyErr_|Py_[A-Z]|#include|#define|\bstatic\b|for \(|"
                     r"\bconst \w+ \*")
LONGEST_C_LITERAL = 30


def _c_literals(path: Path) -> list[tuple[int, int]]:
    """(first line, lines) of each string literal of `path` holding C (docstrings aside)."""
    text = path.read_text()
    tree = ast.parse(text)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    inside = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
              for part in ast.walk(node) if part is not node}
    lines = [line.encode() for line in text.splitlines()]
    return [(node.lineno, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if (isinstance(node, ast.JoinedStr)
                or (isinstance(node, ast.Constant) and isinstance(node.value, str)))
            and id(node) not in docstrings and id(node) not in inside
            and _C_TEXT.search(_segment(lines, node))]


def _segment(lines: list[bytes], node: ast.expr) -> str:
    """The source of `node` (ast.get_source_segment splits the whole file at each call:
    quadratic over a module's literals); `lines` are the file's, encoded, as the offsets."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first][node.col_offset:node.end_col_offset].decode()
    return b"\n".join([lines[first][node.col_offset:], *lines[first + 1:last],
                        lines[last][:node.end_col_offset]]).decode()


def test_no_c_literal_is_longer_than_thirty_lines():
    """Fixed C lives in .c files; what a generator writes per node is short."""
    long = [f"{path.relative_to(ROOT.parent)}:{line} ({lines} lines)"
            for path in sorted(ROOT.rglob("*.py")) for line, lines in _c_literals(path)
            if lines > LONGEST_C_LITERAL]
    assert not long, long


def test_the_c_literal_check_finds_one(tmp_path):
    module = tmp_path / "kernel_c.py"
    module.write_text('"""Docstring: static npy_intp x;\n' + "\n" * 40 + '"""\n'
                      'BODY = f"""\n' + "static int x;\n" * 31 + '"""\n')
    assert _c_literals(module) == [(43, 33)]
