"""CUDA of indexing along axis 0 by an integer array: x[index] (rows_take.cu, any index
shape) and x[index] += y for a vector index (rows_inc.cu, atomic adds: repeated entries
add every occurrence, as numpy.add.at). Both wrap negative entries and report an entry out
of range through the error flag, bit 1.

Parameters: take: n (the output's size), inner (the size of one row of x), rows, the row's
lengths (`inner_ndim` of them), x with its row stride and inner strides, the index
(C-contiguous), the output (C-contiguous); inc: n (the region's size), inner, rows, the row's
lengths, out (a copy of x) with its strides, the index with its stride, y with its stride
along the index and inner strides (0 where it broadcasts); then the error flag.
"""

from __future__ import annotations

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, coordinates, cuda_kernel, offset

__all__ = ["ATOMIC_DTYPES", "inc_rows_kernel", "take_rows_kernel"]

_ERRORS = ((1, "PyExc_IndexError", "an index entry is out of range"),)
_INDEX_ROW = c_file(__file__, "rows_index.cu")
# The types CUDA's atomicAdd takes for each dtype (64-bit integers as unsigned long long,
# whose wrapping sum has the same bits).
_ATOMIC_TYPES = {"float32": "float", "float64": "double", "int32": "int",
                 "uint32": "unsigned int", "int64": "unsigned long long",
                 "uint64": "unsigned long long"}
ATOMIC_DTYPES = tuple(_ATOMIC_TYPES)


def _row(prefix: str, inner_ndim: int) -> dict[str, str]:
    return {"COORDINATES": " ".join(coordinates("t % inner", "c", inner_ndim)),
            "OFFSET": offset(prefix, "c", inner_ndim)}


def _common(inner_ndim: int) -> list[str]:
    return ["const npy_int64 n", "const npy_int64 inner", "const npy_int64 rows",
            *(f"const npy_int64 c_n{a}" for a in range(inner_ndim))]


def take_rows_kernel(dtype: str, index_dtype: str, inner_ndim: int) -> CudaKernel:
    # A copy of the elements' bits: float16 as its 16 bits.
    t = "npy_uint16" if dtype == "float16" else C_TYPES[dtype]
    parameters = [*_common(inner_ndim), f"const {t} *const x", "const npy_int64 x_s0",
                  *(f"const npy_int64 x_c{a}" for a in range(inner_ndim)),
                  f"const {C_TYPES[index_dtype]} *const index", f"{t} *const out",
                  "int *const error"]
    body = render(c_file(__file__, "rows_take.cu"), _row("x", inner_ndim))
    return cuda_kernel("take_rows", parameters, body, (_INDEX_ROW,), True, _ERRORS)


def inc_rows_kernel(dtype: str, index_dtype: str, inner_ndim: int) -> CudaKernel:
    t = C_TYPES[dtype]
    parameters = [*_common(inner_ndim), f"{t} *const out", "const npy_int64 out_s0",
                  *(f"const npy_int64 out_c{a}" for a in range(inner_ndim)),
                  f"const {C_TYPES[index_dtype]} *const index", "const npy_int64 index_s0",
                  f"const {t} *const y", "const npy_int64 y_s0",
                  *(f"const npy_int64 y_c{a}" for a in range(inner_ndim)), "int *const error"]
    values = {**_row("out", inner_ndim), "Y_OFFSET": offset("y", "c", inner_ndim), "T": t,
              "ATOMIC_T": _ATOMIC_TYPES[dtype]}
    body = render(c_file(__file__, "rows_inc.cu"), values)
    return cuda_kernel("inc_rows", parameters, body, (_INDEX_ROW,), True, _ERRORS)
