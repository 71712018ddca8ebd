"""CUDA of Argmax and Argmin (argreduce.cu): one thread per output scans its reduced values
in order, so the first extreme wins, and for floats the first NaN (numpy's rule). Any input
dtype but complex; float16 compares as float32 (exactly: every float16 is a float32). One
thread per output suits what argmax serves (a classifier's rows); a reduction of a whole
large array runs on one thread.

Parameters, in order: n_out, R, the kept coordinates' lengths (`kept_ndim`), the reduced
coordinates' lengths (`reduced_ndim`), the input with its strides along the kept and the
reduced coordinates (in elements), the output (int64, C-contiguous).
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import (
    CudaKernel,
    computed_dtype,
    coordinates,
    cuda_kernel,
    load,
    offset,
    pointer_parameter,
)

__all__ = ["argreduce_cuda_kernel"]


@functools.cache
def argreduce_cuda_kernel(dtype: str, maximum: bool, kept_ndim: int,
                          reduced_ndim: int) -> CudaKernel:
    compare = ">" if maximum else "<"
    if dtype.startswith("float"):
        better = f"best == best && (value {compare} best || value != value)"
    else:
        better = f"value {compare} best"
    parameters = ["const npy_int64 n_out", "const npy_int64 R",
                  *(f"const npy_int64 k_n{a}" for a in range(kept_ndim)),
                  *(f"const npy_int64 r_n{a}" for a in range(reduced_ndim)),
                  pointer_parameter("x", dtype, False),
                  *(f"const npy_int64 x_k{a}" for a in range(kept_ndim)),
                  *(f"const npy_int64 x_r{a}" for a in range(reduced_ndim)),
                  "npy_int64 *const out"]
    values = {"KEPT_COORDINATES": " ".join(coordinates("o", "k", kept_ndim)),
              "KEPT_OFFSET": offset("x", "k", kept_ndim),
              "REDUCED_COORDINATES": " ".join(coordinates("position", "r", reduced_ndim)),
              "LOAD": load(dtype, f"x[base + {offset('x', 'r', reduced_ndim)}]"),
              "V": C_TYPES[computed_dtype(dtype)], "BETTER": better}
    body = render(c_file(__file__, "argreduce.cu"), values)
    return cuda_kernel("argmax" if maximum else "argmin", parameters, body, (), False)
