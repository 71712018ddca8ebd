"""CUDA of indexing by integer arrays on x's first axes, broadcast together (any shape):
x[index0, index1, ...] (rows_take.cu) and x[index0, ...] += y (rows_inc.cu, atomic adds:
repeated positions add every occurrence, as numpy.add.at). Both wrap negative entries and
report an entry out of range through the error flag: bit a for axis a.

Parameters: n (the output's or the region's size), inner (the size of what one broadcast
position reaches), the broadcast shape's lengths, each indexed axis's length (rows0..), the
inner lengths (`inner_ndim` of them); take: x with its strides along the indexed axes and
the inner ones, each index array with its strides in the broadcast shape (0 where it is
broadcast), the output (C-contiguous); inc: out (a copy of x) with its strides, the index
arrays, y with its strides along the broadcast and the inner axes (0 where it
broadcasts); then the error flag.
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, coordinates, cuda_kernel, offset

__all__ = ["ATOMIC_DTYPES", "MAX_INDEXED_AXES", "inc_rows_kernel", "set_rows_kernel",
           "take_rows_kernel"]

# The error flag's bit a: an entry out of range for axis a (a signed int holds 31 bits).
MAX_INDEXED_AXES = 31
_ERRORS = tuple((1 << a, "PyExc_IndexError", f"an index entry is out of range for axis {a}")
                for a in range(MAX_INDEXED_AXES))
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


def _index_rows(parameters: list[str], index_dtypes: tuple[str, ...], broadcast_ndim: int,
                target: str, flat_row: bool = False) -> str:
    """Adds each index array's parameters (the array, its strides in the broadcast shape);
    the statements that read each array's entry and add its row to `position` (in `target`'s
    strides) or set the entry's bit of `bad`; with flat_row, also the row's number among
    the indexed axes' rows (C order) in `row`."""
    rows = []
    for j, index_dtype in enumerate(index_dtypes):
        parameters += [f"const {C_TYPES[index_dtype]} *const index{j}",
                       *(f"const npy_int64 index{j}_b{a}" for a in range(broadcast_ndim))]
        rows.append(f"const npy_int64 row{j} = sympile_index_row("
                    f"(npy_int64)index{j}[{offset(f'index{j}', 'b', broadcast_ndim)}], rows{j}); "
                    f"bad |= (row{j} < 0) << {j}; position += row{j} * {target}_s{j};"
                    + (f" row = row * rows{j} + row{j};" if flat_row else ""))
    return " ".join(rows)


def _geometry(index_dtypes: tuple[str, ...], broadcast_ndim: int, inner_ndim: int
              ) -> list[str]:
    return ["const npy_int64 n", "const npy_int64 inner",
            *(f"const npy_int64 b_n{a}" for a in range(broadcast_ndim)),
            *(f"const npy_int64 rows{j}" for j in range(len(index_dtypes))),
            *(f"const npy_int64 c_n{a}" for a in range(inner_ndim))]


@functools.cache
def take_rows_kernel(dtype: str, index_dtypes: tuple[str, ...], broadcast_ndim: int,
                     inner_ndim: int) -> CudaKernel:
    """x[index0, ...] for len(index_dtypes) integer arrays (of those dtypes) broadcast to a
    shape of `broadcast_ndim` (>= 1) axes, the rest of x's axes `inner_ndim` (>= 1) axes."""
    # A copy of the elements' bits: float16 as its 16 bits.
    t = "npy_uint16" if dtype == "float16" else C_TYPES[dtype]
    axes = range(len(index_dtypes))
    parameters = [*_geometry(index_dtypes, broadcast_ndim, inner_ndim),
                  f"const {t} *const x", *(f"const npy_int64 x_s{j}" for j in axes),
                  *(f"const npy_int64 x_c{a}" for a in range(inner_ndim))]
    rows = _index_rows(parameters, index_dtypes, broadcast_ndim, "x")
    parameters += [f"{t} *const out", "int *const error"]
    values = {**_row("x", inner_ndim), "ROWS": rows,
              "BROADCAST_COORDINATES": " ".join(coordinates("i", "b", broadcast_ndim))}
    body = render(c_file(__file__, "rows_take.cu"), values)
    return cuda_kernel("take_rows", parameters, body, (_INDEX_ROW,), True, _ERRORS)


def _write_rows_kernel(kind: str, dtype: str, index_dtypes: tuple[str, ...],
                       broadcast_ndim: int, inner_ndim: int) -> CudaKernel:
    """rows_inc.cu (kind 'inc') or rows_set.cu ('set'): out (a copy of x) with y added to
    or written into x[index0, ...]; y has strides along the broadcast and the inner axes."""
    t = "npy_uint16" if dtype == "float16" and kind == "set" else C_TYPES[dtype]
    axes = range(len(index_dtypes))
    parameters = [*(["const npy_int64 stage"] if kind == "set" else []),
                  *_geometry(index_dtypes, broadcast_ndim, inner_ndim), f"{t} *const out",
                  *(f"const npy_int64 out_s{j}" for j in axes),
                  *(f"const npy_int64 out_c{a}" for a in range(inner_ndim))]
    rows = _index_rows(parameters, index_dtypes, broadcast_ndim, "out", kind == "set")
    parameters += [f"const {t} *const y",
                   *(f"const npy_int64 y_b{a}" for a in range(broadcast_ndim)),
                   *(f"const npy_int64 y_c{a}" for a in range(inner_ndim)),
                   *(["npy_int64 *const winner"] if kind == "set" else []), "int *const error"]
    values = {**_row("out", inner_ndim), "ROWS": rows, "T": t,
              "BROADCAST_COORDINATES": " ".join(coordinates("i", "b", broadcast_ndim)),
              "Y_BROADCAST_OFFSET": offset("y", "b", broadcast_ndim),
              "Y_OFFSET": offset("y", "c", inner_ndim),
              "ATOMIC_T": _ATOMIC_TYPES.get(dtype, "")}
    body = render(c_file(__file__, f"rows_{kind}.cu"), values)
    return cuda_kernel(f"{kind}_rows", parameters, body, (_INDEX_ROW,), True, _ERRORS)


@functools.cache
def inc_rows_kernel(dtype: str, index_dtypes: tuple[str, ...], broadcast_ndim: int,
                    inner_ndim: int) -> CudaKernel:
    """x[index0, ...] += y (atomic adds) for the arrays of take_rows_kernel."""
    return _write_rows_kernel("inc", dtype, index_dtypes, broadcast_ndim, inner_ndim)


@functools.cache
def set_rows_kernel(dtype: str, index_dtypes: tuple[str, ...], broadcast_ndim: int,
                    inner_ndim: int) -> CudaKernel:
    """x[index0, ...] = y, the last of repeated positions winning (rows_set.cu's three
    stages; winner: one int64 per row of x's indexed axes)."""
    return _write_rows_kernel("set", dtype, index_dtypes, broadcast_ndim, inner_ndim)
