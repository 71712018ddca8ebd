"""Compile a graph on the C backend and on the Python backend and compare the results."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sympile
from sympile.compile.mode import Mode
from sympile.config import config
from sympile.graph.basic import Variable
from sympile.graph.rewriting.db import RewriteQuery
from sympile.link.c.cmodule import compile_flags, compiler_available
from tests.utils import assert_like_numpy

requires_compiler = pytest.mark.skipif(not compiler_available(),
                                       reason="no C compiler (config.cxx)")

# The memory layouts C code must handle, each a function of a C-contiguous array: the same
# values C-ordered, Fortran-ordered, with a stride of 2 on the last axis, and with negative
# strides.
LAYOUTS = {
    "c": lambda a: a,
    "f": np.asfortranarray,
    "strided": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "negative": lambda a: a[::-1].copy()[::-1],
}


def load_c_library(directory: Path, name: str, source: str,
                   openmp: bool = False) -> ctypes.CDLL:
    """`source` compiled on its own into a shared library in `directory`, with the backend's
    flags but its functions visible to ctypes, and loaded."""
    path = directory / f"{name}.c"
    path.write_text(source)
    library = directory / f"{name}.so"
    subprocess.run([config.cxx, *compile_flags(openmp=openmp), "-fvisibility=default",
                    "-shared", "-o", str(library), str(path)], check=True, capture_output=True)
    return ctypes.CDLL(str(library))


C_MODE = Mode(RewriteQuery(include=("fast_run",)), backend="c", name="FAST_RUN_C")
PYTHON_MODE = Mode(RewriteQuery(include=("fast_run",)), backend="python", name="FAST_RUN_PY")


def compile_c(inputs: Sequence[Variable], outputs: Any, **kwargs: Any):
    """A Function on the C backend (FAST_RUN rewrites)."""
    kwargs.setdefault("on_unused_input", "ignore")
    return sympile.function(list(inputs), outputs, mode=C_MODE, **kwargs)


def compare_backends(outputs: Variable | Sequence[Variable], inputs: Sequence[Variable],
                     values: Sequence[Any], rtol: float | None = None,
                     atol: float | None = None, require_c: bool = True) -> list[Any]:
    """Compute `outputs` on both backends; assert equal shapes, dtypes and values (and, with
    require_c, that every node of the C function ran C code). Returns the C results."""
    single = isinstance(outputs, Variable)
    outputs = [outputs] if single else list(outputs)
    c_function = compile_c(inputs, outputs)
    python_function = sympile.function(list(inputs), outputs, mode=PYTHON_MODE,
                                       on_unused_input="ignore")
    if require_c:
        fallback = getattr(c_function._vm, "fallback_nodes", None)
        assert fallback == [], f"nodes without C code: {fallback}"
    c_results = c_function(*[np.copy(v) for v in values])
    expected = python_function(*[np.copy(v) for v in values])
    for actual, reference in zip(c_results, expected):
        assert_like_numpy(np.asarray(actual), reference, rtol=rtol, atol=atol)
    return c_results[0] if single else c_results


def address_sanitizer_environment() -> dict[str, str]:
    """The environment of a fresh Python whose generated C is built with
    -fsanitize=address, with the repository on its path. Skips when the toolchain has no
    AddressSanitizer runtime. It compiles into the suite's cache, as every test does: the
    cache keys hold the flags, so its entries are its own, and the sanitized program unit
    and precompiled header are built once per run, not once per test."""
    library = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()
    if not os.path.isabs(library) or not os.path.exists(library):
        pytest.skip("the toolchain has no AddressSanitizer runtime (libasan.so)")
    root = str(Path(__file__).resolve().parents[3])
    return dict(
        os.environ, LD_PRELOAD=library, PYTHONMALLOC="malloc",
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=99",
        SYMPILE_FLAGS=(f"cxx=gcc,compiledir={config.compiledir},openmp=False,"
                       f"compile_async=False,"
                       f"cxxflags=-fsanitize=address -fno-omit-frame-pointer"),
        PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))


def assert_clean_under_address_sanitizer(script: str, timeout: int = 900) -> None:
    """Run `script` in a fresh Python whose generated C is built with -fsanitize=address;
    assert that AddressSanitizer reports nothing, the script exits 0 and prints 'clean'.
    Skips when the toolchain has no AddressSanitizer runtime."""
    environment = address_sanitizer_environment()
    root = str(Path(__file__).resolve().parents[3])
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=environment, cwd=root, timeout=timeout)
    report = result.stdout + result.stderr
    assert "AddressSanitizer" not in report, report[-4000:]
    assert result.returncode == 0, report[-4000:]
    assert "clean" in result.stdout, report[-4000:]
