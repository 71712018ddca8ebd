"""CUDA of the fused cross-entropy's two row kernels (float32 and float64): the loss picked
from each row (crossentropy_pick.cu) and the gradient with respect to the logits
(crossentropy_dx.cu). The softmax itself is built from the reduction and elementwise
kernels (sympile/gpu/nnet.py). Both kernels report a target outside [0, classes) through
the error flag, bit 1.

Parameters: pick: rows, classes, x and its two strides, m, s, y with their row strides, the
loss (contiguous); dx: rows, classes, sm and its two strides, y, g with their row strides,
the output (C-contiguous); then the error flag.
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, cuda_kernel

__all__ = ["TARGET_ERROR", "crossentropy_dx_kernel", "crossentropy_pick_kernel"]

# The error-flag bit of a target outside [0, classes).
TARGET_ERROR = 1
_ERRORS = ((TARGET_ERROR, "PyExc_IndexError", "a target class index is outside [0, classes)"),)


def _values(dtype: str) -> dict[str, str]:
    return {"T": C_TYPES[dtype], "f": "f" if dtype == "float32" else ""}


@functools.cache
def crossentropy_pick_kernel(dtype: str, target_dtype: str) -> CudaKernel:
    """loss[i] from the logits x, their row maxima m and sums s (all of `dtype`)."""
    t, y = C_TYPES[dtype], C_TYPES[target_dtype]
    parameters = ["const npy_int64 rows", "const npy_int64 classes", f"const {t} *const x",
                  "const npy_int64 x_s0", "const npy_int64 x_s1", f"const {t} *const m",
                  "const npy_int64 m_s0", f"const {t} *const s", "const npy_int64 s_s0",
                  f"const {y} *const y", "const npy_int64 y_s0", f"{t} *const loss",
                  "int *const error"]
    body = render(c_file(__file__, "crossentropy_pick.cu"), _values(dtype))
    return cuda_kernel("crossentropy_pick", parameters, body, (), True, _ERRORS)


@functools.cache
def crossentropy_dx_kernel(probability_dtype: str, grad_dtype: str, out_dtype: str,
                           target_dtype: str) -> CudaKernel:
    """(sm - onehot(y)) * dloss[:, None] in `out_dtype`."""
    y = C_TYPES[target_dtype]
    parameters = ["const npy_int64 rows", "const npy_int64 classes",
                  f"const {C_TYPES[probability_dtype]} *const sm", "const npy_int64 sm_s0",
                  "const npy_int64 sm_s1", f"const {y} *const y", "const npy_int64 y_s0",
                  f"const {C_TYPES[grad_dtype]} *const g", "const npy_int64 g_s0",
                  f"{C_TYPES[out_dtype]} *const out", "int *const error"]
    body = render(c_file(__file__, "crossentropy_dx.cu"), _values(out_dtype))
    return cuda_kernel("crossentropy_dx", parameters, body, (), True, _ERRORS)
