"""sympile.graph.ccode's reading of the CPU: the x86-64 level from Linux's CPU flags, and the
target attribute and fused multiply-adds the kernels are generated for."""

from __future__ import annotations

import ctypes
import platform

import pytest

from sympile.graph import ccode
from tests.link.c.utils import load_c_library, requires_compiler

V3 = "avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"
V4 = V3 + " avx512f avx512bw avx512cd avx512dq avx512vl"


def cpuinfo(tmp_path, flags: str | None) -> str:
    """A /proc/cpuinfo of two processors with `flags` (no flags line when None)."""
    line = "" if flags is None else f"flags\t\t: fpu sse sse2 {flags}\n"
    text = "".join(f"processor\t: {n}\nmodel name\t: Test CPU\n{line}\n" for n in range(2))
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return str(path)


@pytest.fixture
def on_x86_64(monkeypatch):
    monkeypatch.setattr(ccode.platform, "machine", lambda: "x86_64")
    cached = ccode.cpu_level
    cached.cache_clear()
    yield
    cached.cache_clear()


@pytest.mark.parametrize("flags, level", [
    (V4, "x86-64-v4"),
    (V3, "x86-64-v3"),
    # v4's flags without one of v3's: the levels build on each other.
    (V4.replace("movbe ", ""), "x86-64"),
    (V4.replace(" avx512vl", ""), "x86-64-v3"),
    ("sse4_1 sse4_2", "x86-64"),
])
def test_level_from_the_cpu_flags(tmp_path, on_x86_64, flags, level):
    assert ccode.cpu_level(cpuinfo(tmp_path, flags)) == level


def test_no_level_without_flags_or_the_file(tmp_path, on_x86_64):
    assert ccode.cpu_level(cpuinfo(tmp_path, None)) is None
    assert ccode.cpu_level(str(tmp_path / "missing")) is None


def test_no_level_on_another_architecture(tmp_path, monkeypatch):
    monkeypatch.setattr(ccode.platform, "machine", lambda: "aarch64")
    ccode.cpu_level.cache_clear()
    try:
        assert ccode.cpu_level(cpuinfo(tmp_path, V4)) is None
        assert ccode.vector_target() == ""
        assert ccode.has_fma()
    finally:
        ccode.cpu_level.cache_clear()


@pytest.mark.parametrize("level, target, fma", [
    ("x86-64-v4", 'target("arch=x86-64-v4")', True),
    ("x86-64-v3", 'target("arch=x86-64-v3")', True),
    ("x86-64", "", False),
    (None, 'target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")', False),
])
def test_target_and_fma_follow_the_level(monkeypatch, on_x86_64, level, target, fma):
    monkeypatch.setattr(ccode, "cpu_level", lambda: level)
    assert ccode.vector_target() == target
    assert ccode.has_fma() is fma


@pytest.mark.skipif(platform.system() != "Linux"
                    or platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the level is read from Linux's /proc/cpuinfo on x86-64")
def test_this_machine_has_a_level():
    assert ccode.cpu_level() in ("x86-64", "x86-64-v3", "x86-64-v4")


C_STRINGS = ['plain', 'quote " and backslash \\', "newline\nand\ttab", "trigraph ??= ??/",
             "non-ASCII: € é 漢", "octal run \x01" + "7", "", "Elemwise{add,no_inplace}"]


@requires_compiler
def test_c_string_gives_the_utf8_bytes_in_c(tmp_path):
    """Each literal, compiled by the C compiler, holds exactly the text's UTF-8 bytes."""
    functions = "\n".join(f"const char *text_{i}(void) {{ return {ccode.c_string(text)}; }}"
                          for i, text in enumerate(C_STRINGS))
    library = load_c_library(tmp_path, "c_strings", functions)
    for i, text in enumerate(C_STRINGS):
        function = getattr(library, f"text_{i}")
        function.restype = ctypes.c_char_p
        assert function() == text.encode("utf-8")


def test_c_string_escapes():
    assert ccode.c_string('a"b') == '"a\\"b"'
    assert ccode.c_string("??=") == '"\\?\\?="'
    assert ccode.c_string("\x017") == '"\\0017"'
    assert ccode.c_string(3) == '"3"'
