"""CUDA of CumOp (cumsum, cumprod) along the last axis of a C-contiguous (lines x n) array
(cumulative.cu): one thread per line, in numpy's order, so the values are numpy's. Every
dtype but complex; float16 computes each step in float32 and rounds it, as numpy's float16
loops do.

Parameters: lines, n, x, out (C-contiguous, the output's dtype).
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
    stored,
)

__all__ = ["CUMULATIVE_DTYPES", "cumulative_kernel"]

CUMULATIVE_DTYPES = (*C_TYPES, "float16")


@functools.cache
def cumulative_kernel(mode: str, dtype: str, out_dtype: str) -> CudaKernel:
    """mode 'add' (cumsum) or 'mul' (cumprod) of x of `dtype` into `out_dtype`."""
    computed = C_TYPES[computed_dtype(out_dtype)]
    operator = "+" if mode == "add" else "*"
    parameters = ["const npy_int64 lines", "const npy_int64 n",
                  pointer_parameter("x", dtype, False), pointer_parameter("out", out_dtype, True)]
    values = {"V": computed, "LOAD": load(dtype, "x[line * n + i]"),
              "STEP": f"({computed})(total {operator} value)",
              "STORE": stored(out_dtype, "total"),
              # What the output holds, read back: float16 rounds each step.
              "RELOAD": load(out_dtype, "out[line * n + i]")}
    body = render(c_file(__file__, "cumulative.cu"), values)
    return cuda_kernel(f"cum{mode}", parameters, body, (), False)
