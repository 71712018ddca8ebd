"""What the machine can do, measured in the benchmark's own run: the CPU's model, x86-64
level, cores and caches, and two physical limits — the float32 multiply-add peak (a
register-blocked loop of independent fused multiply-adds on the machine's widest vectors)
and the read bandwidth (a sum over arrays of the workloads' sizes and of one far larger than
most caches) — each on one thread and on every core. A workload's row then says what
fraction of its limit it reaches: bytes per second over the read bandwidth at its data's
size for the memory-bound ones, multiply-add flops per second over the peak for the
products."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from sympile import cache
from sympile.cpu import cpu_level, has_fma, vector_target
from sympile.graph.ccode import c_file, render
from sympile.link.c.cmodule import compile_flags

__all__ = ["READ_SIZES", "cache_sizes", "cpu_model", "kernel_source", "limits", "machine_info",
           "read_limit"]

# The multiply-add loop: ACCUMULATORS independent chains of vectors of LANES floats, each
# step a * m + c (one fused multiply-add where the CPU has them); enough chains to cover
# the instruction's latency on every port.
_ENTRIES = r"""
static PyObject *measure_fma(PyObject *self, PyObject *args)
{
    long steps; int threads; double total = 0.0;
    if (!PyArg_ParseTuple(args, "li", &steps, &threads)) return NULL;
    Py_BEGIN_ALLOW_THREADS
#pragma omp parallel for num_threads(threads) reduction(+:total) schedule(static, 1)
    for (int t = 0; t < threads; ++t) total += fma_chains(steps);
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble(total);
}

static PyObject *measure_read(PyObject *self, PyObject *args)
{
    long long address; long n; int threads; double total = 0.0;
    if (!PyArg_ParseTuple(args, "Lli", &address, &n, &threads)) return NULL;
    const float *x = (const float *)(intptr_t)address;
    const long chunk = (n / threads / 1024 + 1) * 1024;
    Py_BEGIN_ALLOW_THREADS
#pragma omp parallel for num_threads(threads) reduction(+:total) schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
        const long start = t * chunk < n ? t * chunk : n;
        total += read_sum(x + start, (start + chunk < n ? start + chunk : n) - start);
    }
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble(total);
}
"""
_MODULE = r"""
static PyMethodDef methods[] = {{"fma", measure_fma, METH_VARARGS, ""},
                                {"read", measure_read, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, SYMPILE_MODULE_NAME, NULL, -1, methods};
PyMODINIT_FUNC SYMPILE_PYINIT(void) { return PyModule_Create(&module); }
"""


def _vector_shape() -> tuple[int, int]:
    """(bytes per vector, accumulators): 64-byte vectors and 12 chains with AVX-512, else
    32-byte vectors and 10 chains (AVX2's 16 registers)."""
    return (64, 12) if cpu_level() == "x86-64-v4" else (32, 10)


def kernel_source() -> str:
    """machine_limits.c for this machine's vectors (what test_c_files compiles too)."""
    width, accumulators = _vector_shape()
    attribute = f"__attribute__(({vector_target()}))" if vector_target() else ""
    return render(c_file(__file__, "machine_limits.c"),
                  {"BYTES": width, "LANES": width // 4, "ACCUMULATORS": accumulators,
                   "ATTRIBUTE": attribute})


def _kernels() -> Any:
    text = ("#include <Python.h>\n#include <stdint.h>\n#include <string.h>\n"
            + kernel_source() + _ENTRIES + _MODULE)
    return cache.load(text, compile_flags(openmp=True)).module


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU's model name as Linux lists it ('' where it does not)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cache_sizes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[str, str]:
    """The first core's caches ('L1d': '48K', ...) as Linux lists them."""
    sizes = {}
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return sizes
    for entry in entries:
        try:
            with open(os.path.join(root, entry, "level")) as level, \
                    open(os.path.join(root, entry, "type")) as kind, \
                    open(os.path.join(root, entry, "size")) as size:
                kind_text = kind.read().strip()
                suffix = {"Data": "d", "Instruction": "i"}.get(kind_text, "")
                sizes[f"L{level.read().strip()}{suffix}"] = size.read().strip()
        except OSError:
            continue
    return sizes


def machine_info() -> dict[str, Any]:
    return {"cpu": cpu_model(), "isa_level": cpu_level(), "fma": has_fma(),
            "cores": os.cpu_count() or 1, "caches": cache_sizes()}


def _best(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


# The array sizes the read bandwidth is measured at: the elementwise workloads' (1e6 and
# 1e7 float32, which may live in a large L3 cache) and one beyond most caches.
READ_SIZES = (4 << 20, 40 << 20, 1 << 30)


def limits(steps: int = 20_000_000, read_sizes: tuple[int, ...] = READ_SIZES,
           repeats: int = 3) -> dict[str, Any]:
    """The measured float32 multiply-add peak (GFLOP/s, a multiply-add counting two) and
    read bandwidth (GB/s, for each array size in bytes), each on one thread and on every
    core, best of `repeats`."""
    kernels = _kernels()
    width, accumulators = _vector_shape()
    flops = 2 * steps * accumulators * (width // 4)
    threads_measured = sorted({1, os.cpu_count() or 1})
    result: dict[str, Any] = {"fma_gflops": {}, "read_gbs": {}}
    for threads in threads_measured:
        seconds = _best(lambda n=threads: kernels.fma(steps, n), repeats)
        result["fma_gflops"][threads] = threads * flops / seconds / 1e9
    for size in read_sizes:
        data = np.ones(size // 4, dtype=np.float32)
        result["read_gbs"][size] = {}
        for threads in threads_measured:
            seconds = _best(lambda n=threads, a=data: kernels.read(a.ctypes.data, a.size, n),
                            repeats)
            result["read_gbs"][size][threads] = data.nbytes / seconds / 1e9
    return result


def read_limit(measured: dict[str, Any], footprint: float) -> float:
    """The all-core read bandwidth (bytes/s) measured at the smallest size holding
    `footprint` bytes (the largest size past them all)."""
    sizes = sorted(measured["read_gbs"])
    size = next((s for s in sizes if s >= footprint), sizes[-1])
    return max(measured["read_gbs"][size].values()) * 1e9
