"""CUDA of sort and argsort along the last axis of a C-contiguous (rows x n) array: a bitonic
sorting network, one launch per step, each thread comparing and swapping one pair in global
memory (no synchronisation inside a kernel, so the CPU emulation runs it as it is).
sort_start.cu copies the rows into keys of P (the power of two >= n) places with each
element's position; sort_step.cu is one step. The order is numpy's: NaNs last, ties in
stable order (argsort is stable, as sympile's CPU argsort); float16 sorts as float32
(exactly). log2(P) (log2(P) + 1) / 2 steps. permute.cu is PermuteAlongAxis (the sort's
derivative): a gather or scatter by a permutation, checked to be one.

Parameters: start: total (rows P), n, P, x, keys (the computed dtype), position (int64);
step: pairs (rows P / 2), n, P, k, j, keys, position.
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import (
    CudaKernel,
    computed_dtype,
    cuda_kernel,
    load,
    pointer_parameter,
)

__all__ = ["SORTABLE_DTYPES", "permute_kernel", "sort_start_kernel", "sort_step_kernel",
           "sort_steps"]

SORTABLE_DTYPES = (*C_TYPES, "float16")


def sort_steps(length: int) -> list[tuple[int, int]]:
    """The (k, j) of each step of the network that sorts rows of `length` (a power of 2)."""
    steps = []
    k = 2
    while k <= length:
        j = k // 2
        while j >= 1:
            steps.append((k, j))
            j //= 2
        k *= 2
    return steps


@functools.cache
def sort_start_kernel(dtype: str) -> CudaKernel:
    keys = C_TYPES[computed_dtype(dtype)]
    parameters = ["const npy_int64 total", "const npy_int64 n", "const npy_int64 P",
                  pointer_parameter("x", dtype, False), f"{keys} *const keys",
                  "npy_int64 *const position"]
    body = render(c_file(__file__, "sort_start.cu"), {"LOAD": load(dtype, "x[row * n + i]")})
    return cuda_kernel("sort_start", parameters, body, (), False)


@functools.cache
def sort_step_kernel(dtype: str) -> CudaKernel:
    computed = computed_dtype(dtype)
    floating = computed.startswith("float")
    parameters = ["const npy_int64 pairs", "const npy_int64 n", "const npy_int64 P",
                  "const npy_int64 k", "const npy_int64 j", f"{C_TYPES[computed]} *const keys",
                  "npy_int64 *const position"]
    values = {"V": C_TYPES[computed], "IS_NAN_A": "(a != a)" if floating else "0",
              "IS_NAN_B": "(b != b)" if floating else "0"}
    body = render(c_file(__file__, "sort_step.cu"), values)
    return cuda_kernel("sort_step", parameters, body, (), False)


_PERMUTE_ERRORS = ((1, "PyExc_ValueError", "permutation entries must lie in [0, n)"),
                   (2, "PyExc_ValueError", "permutation is not a permutation along the axis"))


@functools.cache
def permute_kernel(dtype: str, index_dtype: str) -> CudaKernel:
    """PermuteAlongAxis of (lines x n) C-contiguous x of `dtype` by p of `index_dtype`
    (permute.cu): stage, total (lines n), n, inverse, x, p, out, seen (int32, lines n),
    then the error flag."""
    t = "npy_uint16" if dtype == "float16" else C_TYPES[dtype]
    parameters = ["const npy_int64 stage", "const npy_int64 total", "const npy_int64 n",
                  "const npy_int64 inverse", f"const {t} *const x",
                  f"const {C_TYPES[index_dtype]} *const p", f"{t} *const out",
                  "int *const seen", "int *const error"]
    return cuda_kernel("permute", parameters, c_file(__file__, "permute.cu"), (), True,
                       _PERMUTE_ERRORS)
