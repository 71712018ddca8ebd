"""CUDA of RandomStreams' fixed-count draws that need no transcendental function: uniform
(float32, float64) and bernoulli (every dtype but float16). They draw the CPU's bits exactly
(philox_draws.cu over philox_core.h, the generator the CPU samplers use). The normal draw
computes log, sin and cos, which the CPU takes from sympile's vectorised functions: it stays
on the host until those run on the device too.

Parameters: count, blocks, the key's two words, the calls' two words, the threshold (a
Bernoulli draw's floor(p 2**32)), the output (C-contiguous).
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, cuda_kernel
from sympile.tensor.random.random_c import PHILOX_CORE

__all__ = ["DEVICE_DRAWS", "philox_draw_kernel", "words_per_element"]

# distribution -> the dtypes the device draws.
DEVICE_DRAWS = {"uniform": ("float32", "float64"),
                "bernoulli": tuple(d for d in C_TYPES if d != "float16")}


def words_per_element(distribution: str, dtype: str) -> int:
    return 2 if distribution == "uniform" and dtype == "float64" else 1


@functools.cache
def philox_draw_kernel(distribution: str, dtype: str) -> CudaKernel:
    per_block = 4 // words_per_element(distribution, dtype)
    if distribution == "uniform":
        value = ("sympile_philox_float32_closed(w[k])" if dtype == "float32" else
                 "sympile_philox_float64_closed(w[2 * k], w[2 * k + 1])")
    else:
        value = f"({C_TYPES[dtype]})((npy_uint64)w[k] < (npy_uint64)threshold)"
    parameters = ["const npy_int64 count", "const npy_int64 blocks", "const npy_int64 k0",
                  "const npy_int64 k1", "const npy_int64 calls_lo", "const npy_int64 calls_hi",
                  "const npy_int64 threshold", f"{C_TYPES[dtype]} *const out"]
    body = render(c_file(__file__, "philox_draws.cu"), {"PER_BLOCK": per_block, "VALUE": value})
    return cuda_kernel(f"philox_{distribution}", parameters, body, (PHILOX_CORE,), False)
