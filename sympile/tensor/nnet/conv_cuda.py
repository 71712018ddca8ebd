"""CUDA of convolution's data movement (float32 and float64): im2col (conv_im2col.cu) and
its transpose col2im (conv_col2im.cu). The products are the device's BLAS
(sympile/gpu/conv.py). A 2d convolution is a 3d one of depth 1, as in conv_gemm.c.

The columns are one matrix for the whole batch: (channels x taps) rows, (images x outputs)
columns, so a group's rows are a contiguous block and one product per group covers every
image.

Parameters: n (the threads' work: the columns' size for im2col, the input's for col2im),
images, then GEOMETRY's ints; im2col: the input with its five strides (depth's 0 in 2d), the
columns (C-contiguous); col2im: the columns, the input's gradient (C-contiguous).
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, cuda_kernel

__all__ = ["GEOMETRY", "col2im_kernel", "im2col_kernel"]

GEOMETRY = ("channels", "depth", "rows", "cols", "kernel_depth", "kernel_rows", "kernel_cols",
            "out_depth", "out_rows", "out_cols", "pad_depth", "pad_rows", "pad_cols",
            "stride_depth", "stride_rows", "stride_cols", "dil_depth", "dil_rows", "dil_cols",
            "flip")
_TAPS = c_file(__file__, "conv_taps.cu")


def _common() -> list[str]:
    return ["const npy_int64 n", "const npy_int64 images",
            *(f"const npy_int64 {name}" for name in GEOMETRY)]


@functools.cache
def im2col_kernel(dtype: str) -> CudaKernel:
    t = C_TYPES[dtype]
    parameters = [*_common(), f"const {t} *const x",
                  *(f"const npy_int64 x_s{a}" for a in range(5)), f"{t} *const cols_out"]
    body = render(c_file(__file__, "conv_im2col.cu"), {"T": t})
    return cuda_kernel("im2col", parameters, body, (_TAPS,), False)


@functools.cache
def col2im_kernel(dtype: str) -> CudaKernel:
    t = C_TYPES[dtype]
    parameters = [*_common(), f"const {t} *const cols_in", f"{t} *const gx"]
    body = render(c_file(__file__, "conv_col2im.cu"), {"T": t})
    return cuda_kernel("col2im", parameters, body, (_TAPS,), False)
