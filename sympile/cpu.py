"""The CPU that generated C is compiled for: its x86-64 level, the vector attribute the
kernels are compiled under, and whether fused multiply-adds are single instructions.

A leaf below every layer that writes C (scalar, tensor, link): what the machine is has
nothing to do with the IR, so it is not in graph/ccode.py, which says how an op describes its
C code.
"""

from __future__ import annotations

import functools
import platform

__all__ = ["cpu_level", "has_fma", "is_x86_64", "vector_target"]


# The x86-64 levels (gcc's -march=x86-64-v3 and -v4) by the flags of /proc/cpuinfo each
# needs on top of the level below.
_LEVELS = (("x86-64-v3", frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm",
                                     "movbe", "xsave"})),
           ("x86-64-v4", frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq",
                                     "avx512vl"})))


def is_x86_64() -> bool:
    """Whether this machine is x86-64 (the skinny kernels' and the levels' architecture)."""
    return platform.machine().lower() in ("x86_64", "amd64")


@functools.cache
def cpu_level(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """This x86-64 machine's level ('x86-64', 'x86-64-v3' or 'x86-64-v4') from the CPU flags
    Linux lists in `cpuinfo`; None elsewhere (another OS or architecture)."""
    if not is_x86_64():
        return None
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as stream:
            flags = next((line.split(":", 1)[1].split() for line in stream
                          if line.startswith("flags")), None)
    except OSError:
        return None
    if flags is None:
        return None
    level = "x86-64"
    for name, needs in _LEVELS:
        if not needs.issubset(flags):
            break
        level = name
    return level


def vector_target() -> str:
    """The attribute (for inside `__attribute__((...))`) under which a vectorised kernel
    uses this machine's widest vectors: `target("arch=x86-64-vN")` for the level of
    cpu_level(). Compiling for this machine only takes a third of the time of cloning for
    every level, and a generated unit names its target in its text, so a cache shared with
    another machine never hands it a unit built for a different CPU. Where the level is
    unknown on x86-64: clones for v4, v3 and the baseline, the one for the CPU picked when
    the module loads. Elsewhere, or on a baseline x86-64: empty."""
    level = cpu_level()
    if level is None:
        return ('target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")' if is_x86_64()
                else "")
    return "" if level == "x86-64" else f'target("arch={level}")'


def has_fma() -> bool:
    """Whether the kernels under vector_target() may call fused multiply-adds
    (`__builtin_fma`) as one instruction: on x86-64 v3 and v4, and on 64-bit ARM."""
    if platform.machine().lower() in ("aarch64", "arm64"):
        return True
    return cpu_level() in ("x86-64-v3", "x86-64-v4")
