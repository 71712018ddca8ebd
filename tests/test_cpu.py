"""sympile.cpu: the x86-64 level from Linux's CPU flags, and the target attribute and fused
multiply-adds the kernels are generated for."""

from __future__ import annotations

import platform

import pytest

from sympile import cpu

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
    monkeypatch.setattr(cpu.platform, "machine", lambda: "x86_64")
    cached = cpu.cpu_level
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
    assert cpu.cpu_level(cpuinfo(tmp_path, flags)) == level


def test_no_level_without_flags_or_the_file(tmp_path, on_x86_64):
    assert cpu.cpu_level(cpuinfo(tmp_path, None)) is None
    assert cpu.cpu_level(str(tmp_path / "missing")) is None


def test_no_level_on_another_architecture(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu.platform, "machine", lambda: "aarch64")
    cpu.cpu_level.cache_clear()
    try:
        assert cpu.cpu_level(cpuinfo(tmp_path, V4)) is None
        assert cpu.vector_target() == ""
        assert cpu.has_fma()
    finally:
        cpu.cpu_level.cache_clear()


@pytest.mark.parametrize("level, target, fma", [
    ("x86-64-v4", 'target("arch=x86-64-v4")', True),
    ("x86-64-v3", 'target("arch=x86-64-v3")', True),
    ("x86-64", "", False),
    (None, 'target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")', False),
])
def test_target_and_fma_follow_the_level(monkeypatch, on_x86_64, level, target, fma):
    monkeypatch.setattr(cpu, "cpu_level", lambda: level)
    assert cpu.vector_target() == target
    assert cpu.has_fma() is fma


@pytest.mark.skipif(platform.system() != "Linux"
                    or platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the level is read from Linux's /proc/cpuinfo on x86-64")
def test_this_machine_has_a_level():
    assert cpu.cpu_level() in ("x86-64", "x86-64-v3", "x86-64-v4")
