"""CUDA of RandomStreams' fixed-count draws: uniform (float32, float64), the float32 normal
and bernoulli (every dtype but float16); and of MRG_RandomStreams' uniforms (mrg_uniform.cu
over mrg_step.h, the CPU's step). They draw the CPU's bits exactly (philox_draws.cu
over philox_core.h, the generator the CPU samplers use). The float32 normal computes its log,
sin and cos with the CPU's own functions (sympile/scalar/fastmath.h, in their fused
multiply-add form, which is the CPU's where it has fused multiply-adds) and no operation
contracted (NVRTC's --fmad=false), so it gives the CPU's bits too. The float64 normal takes
log, sin and cos from libm on the CPU, which a device's do not match to the last bit: it
stays on the host.

Parameters: count, blocks, the stream's state [key, calls] (a device array of two uint64), the
threshold (a Bernoulli draw's floor(p 2**32)), the output (C-contiguous).
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.scalar.c_fastmath import fast_math_support
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, cuda_kernel
from sympile.tensor.random.random_c import MRG_STEP, PHILOX_CORE

__all__ = ["DEVICE_DRAWS", "mrg_uniform_kernel", "philox_draw_kernel", "words_per_element"]

# distribution -> the dtypes the device draws.
DEVICE_DRAWS = {"uniform": ("float32", "float64"), "normal": ("float32",),
                "bernoulli": tuple(d for d in C_TYPES if d != "float16")}
_NORMAL_SUPPORT = (fast_math_support(fma=True), c_file(__file__, "philox_normal.cu"))


def words_per_element(distribution: str, dtype: str) -> int:
    return 2 if distribution == "uniform" and dtype == "float64" else 1


@functools.cache
def philox_draw_kernel(distribution: str, dtype: str) -> CudaKernel:
    per_block = 4 // words_per_element(distribution, dtype)
    support = (PHILOX_CORE,)
    if distribution == "uniform":
        value = ("sympile_philox_float32_closed(w[k])" if dtype == "float32" else
                 "sympile_philox_float64_closed(w[2 * k], w[2 * k + 1])")
    elif distribution == "normal":
        # Element k of the block: the pair of words k & 2, (k & 2) + 1, its cosine or sine.
        value = "sympile_philox_normal_pair_float32(w[k & 2], w[(k & 2) | 1], k & 1)"
        support += _NORMAL_SUPPORT
    else:
        value = f"({C_TYPES[dtype]})((npy_uint64)w[k] < (npy_uint64)threshold)"
    parameters = ["const npy_int64 count", "const npy_int64 blocks",
                  "const npy_uint64 *const state", "const npy_int64 threshold",
                  f"{C_TYPES[dtype]} *const out"]
    body = render(c_file(__file__, "philox_draws.cu"), {"PER_BLOCK": per_block, "VALUE": value})
    return cuda_kernel(f"philox_{distribution}", parameters, body, support, False)


@functools.cache
def mrg_uniform_kernel(dtype: str) -> CudaKernel:
    """MRG_RandomStreams' uniforms of `dtype` (float32, float64): parameters used (the
    streams that draw: min(count, n_streams)), n_streams, count, the states (advanced in
    place), the output (C-contiguous)."""
    norm = "4.6566126e-10f" if dtype == "float32" else "4.656612873077392578125e-10"
    parameters = ["const npy_int64 used", "const npy_int64 n_streams", "const npy_int64 count",
                  "npy_int32 *const states", f"{C_TYPES[dtype]} *const out"]
    body = render(c_file(__file__, "mrg_uniform.cu"), {"T": C_TYPES[dtype], "NORM": norm})
    return cuda_kernel("mrg_uniform", parameters, body, (MRG_STEP,), False)
