"""The C compiler driver: compiles a generated module through the on-disk cache (sympile.cache)
and loads it."""

from __future__ import annotations

import shutil
from types import ModuleType

from sympile import cache
from sympile.cache import CompileError
from sympile.config import config
from sympile.link.c import prelude

__all__ = ["BASE_FLAGS", "CompileError", "compiler_available", "compile_flags", "load_module"]

# -fwrapv: signed integer overflow wraps, as numpy's does; -fno-math-errno lets libm calls
# inline (nothing reads errno); -fvisibility=hidden: a module exports its init function only.
BASE_FLAGS = ("-O2", "-fPIC", "-fwrapv", "-fno-math-errno", "-fvisibility=hidden")


def compiler_available() -> bool:
    return bool(config.cxx) and shutil.which(config.cxx) is not None


def compile_flags(openmp: bool = False, extra_flags: tuple[str, ...] = ()) -> tuple[str, ...]:
    return BASE_FLAGS + (("-fopenmp",) if openmp else ()) + tuple(extra_flags)


def load_module(source: str, openmp: bool = False, extra_flags: tuple[str, ...] = (),
                units: tuple[str, ...] = ()) -> ModuleType:
    """The extension module built from `source` (whose init function is SYMPILE_PYINIT, named
    SYMPILE_MODULE_NAME: both are #defined after its first line) and linked with the `units`
    (sources that include prelude.UNIT_HEADER, the program unit among them), with
    `__sympile_build__` = {compile_s, load_s, cache_hit} (seconds spent compiling or checking
    the cache, seconds spent loading)."""
    if not compiler_available():
        raise CompileError(f"load_module: no C compiler (config.cxx={config.cxx!r})")
    result = cache.load(source, compile_flags(openmp, extra_flags), units,
                        (prelude.UNIT_HEADER_NAME, prelude.UNIT_HEADER))
    module = result.module
    if not hasattr(module, "Program"):
        raise CompileError(f"load_module: compiled module {module.__file__} has no Program type")
    module.__sympile_build__ = {"compile_s": result.compile_s, "load_s": result.load_s,
                                "cache_hit": result.cache_hit}
    return module
