"""The C compiler driver: compiles a generated module through the on-disk cache (sympile.cache)
and loads it."""

from __future__ import annotations

import functools
import os
import shutil
import sysconfig
from types import ModuleType

from sympile import cache
from sympile.cache import CompileError
from sympile.config import config
from sympile.link.c import prelude

__all__ = [
    "BASE_FLAGS",
    "MAIN_UNIT_OPTIMIZATION",
    "OPTIMIZATION",
    "CompileError",
    "build_units",
    "compile_flags",
    "compiler_available",
    "toolchain_problem",
    "load_module",
    "module_is_cached",
]

# -fwrapv: signed integer overflow wraps, as numpy's does; -fno-math-errno lets libm calls
# inline (nothing reads errno); -fvisibility=hidden: a module exports its init function only.
BASE_FLAGS = ("-fPIC", "-fwrapv", "-fno-math-errno", "-fvisibility=hidden")
OPTIMIZATION = "-O2"
# A module's main unit is glue (input checks, one call per node, the init function): -O1
# compiles it in about half the time of -O2, and it is compiled for every new function.
MAIN_UNIT_OPTIMIZATION = "-O1"


def compiler_available() -> bool:
    return toolchain_problem() is None


def toolchain_problem() -> str | None:
    """What keeps the C backend from compiling here (no compiler, or no Python headers),
    or None."""
    if not config.cxx or shutil.which(config.cxx) is None:
        return f"no usable C compiler (config.cxx = {config.cxx!r})"
    if not _python_headers_present():
        return (f"Python's headers are not installed ({_PYTHON_H} is missing), so C "
                f"extensions cannot compile")
    return None


_PYTHON_H = os.path.join(sysconfig.get_paths()["include"], "Python.h")


@functools.cache
def _python_headers_present() -> bool:
    return os.path.exists(_PYTHON_H)


def compile_flags(openmp: bool = False, extra_flags: tuple[str, ...] = (),
                  optimization: str = OPTIMIZATION) -> tuple[str, ...]:
    """The flags of every unit: `extra_flags` (config.cxxflags) come last, so that an -O
    there overrides `optimization`."""
    return (optimization, *BASE_FLAGS, *(("-fopenmp",) if openmp else ()), *extra_flags)


def _cache_arguments(source: str, openmp: bool, extra_flags: tuple[str, ...],
                     units: tuple[str, ...]) -> tuple:
    """cache.load's and cache.is_cached's arguments for a module (see load_module)."""
    return (source, compile_flags(openmp, extra_flags), units,
            (prelude.UNIT_HEADER_NAME, prelude.UNIT_HEADER),
            compile_flags(openmp, extra_flags, MAIN_UNIT_OPTIMIZATION))


def module_is_cached(source: str, openmp: bool = False, extra_flags: tuple[str, ...] = (),
                     units: tuple[str, ...] = ()) -> bool:
    """Whether load_module of these arguments would compile nothing."""
    return compiler_available() and cache.is_cached(
        *_cache_arguments(source, openmp, extra_flags, units))


def load_module(source: str, openmp: bool = False, extra_flags: tuple[str, ...] = (),
                units: tuple[str, ...] = (), progress: bool = True) -> ModuleType:
    """The extension module built from `source` (whose init function is SYMPILE_PYINIT, named
    SYMPILE_MODULE_NAME: both are #defined after its first line) and linked with the `units`
    (sources that include prelude.UNIT_HEADER, the program unit among them; the main unit is
    compiled with MAIN_UNIT_OPTIMIZATION when there are units), with
    `__sympile_build__` = {compile_s, load_s, cache_hit} (seconds spent compiling or checking
    the cache, seconds spent loading). progress: a long build may show CompileProgress."""
    if not compiler_available():
        raise CompileError(f"load_module: {toolchain_problem()}")
    result = cache.load(*_cache_arguments(source, openmp, extra_flags, units),
                        progress=progress)
    module = result.module
    if not hasattr(module, "Program"):
        raise CompileError(f"load_module: compiled module {module.__file__} has no Program type")
    module.__sympile_build__ = {"compile_s": result.compile_s, "load_s": result.load_s,
                                "cache_hit": result.cache_hit}
    return module


def build_units(units: tuple[str, ...], openmp: bool = False,
                extra_flags: tuple[str, ...] = ()) -> list[str]:
    """Compile `units` and the unit header into the cache as load_module compiles them for a
    module of these arguments, linking nothing (sympile.compile.prebuild); returns their
    cache keys."""
    if not compiler_available():
        raise CompileError(f"build_units: {toolchain_problem()}")
    return cache.build_units(units, compile_flags(openmp, extra_flags),
                             (prelude.UNIT_HEADER_NAME, prelude.UNIT_HEADER))
