"""CUDA of 2d pooling (float32 and float64): Pool's forward pass (pool_forward.cu) and the
gradient of every mode (pool_backward.cu, MaxPoolGrad's and AveragePoolGrad's), with
pool.c's windows (pool_window.cu) and arithmetic. The arrays are C-contiguous, their
leading axes flattened into planes.

Parameters: n (the threads' work: the output's size forward, the input's backward), rows,
cols, out_rows, out_cols, ws0, ws1, s0, s1, p0, p1, mode (pool_c.py's numbers); forward: x,
out; backward: x, maxout (read in mode 0 only), gz, gx.
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, cuda_kernel

__all__ = ["MODES", "pool_backward_kernel", "pool_forward_kernel"]

MODES = {"max": 0, "sum": 1, "average_inc_pad": 2, "average_exc_pad": 3}
_WINDOW = c_file(__file__, "pool_window.cu")
_GEOMETRY = ("n", "rows", "cols", "out_rows", "out_cols", "ws0", "ws1", "s0", "s1", "p0", "p1",
             "mode")


def _parameters(dtype: str, arrays: tuple[str, ...]) -> list[str]:
    t = C_TYPES[dtype]
    return [*(f"const npy_int64 {name}" for name in _GEOMETRY),
            *(f"const {t} *const {name}" for name in arrays[:-1]), f"{t} *const {arrays[-1]}"]


@functools.cache
def pool_forward_kernel(dtype: str) -> CudaKernel:
    body = render(c_file(__file__, "pool_forward.cu"), {"T": C_TYPES[dtype]})
    return cuda_kernel("pool", _parameters(dtype, ("x", "out")), body, (_WINDOW,), False)


@functools.cache
def pool_backward_kernel(dtype: str) -> CudaKernel:
    body = render(c_file(__file__, "pool_backward.cu"), {"T": C_TYPES[dtype]})
    return cuda_kernel("pool_grad", _parameters(dtype, ("x", "maxout", "gz", "gx")), body,
                       (_WINDOW,), False)
