"""C code of Tril and Triu (numpy.tril / numpy.triu): one pass over the C-contiguous output,
each element of the matrices in the last two axes copied from x (any strides) where it lies on
the kept side of diagonal k (column - row <= k for tril, >= k for triu), zero bytes
elsewhere (zero in every dtype). A vector x is the row of every row of a square matrix.
Every dtype has C code (elements are copied, not computed); uint64 k gives none.
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["triangle_c_code"]


def triangle_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of Tril (op.lower) and Triu: see the module docstring."""
    x_type, k_type = node.inputs[0].type, node.inputs[1].type
    if x_type.dtype not in NPY_TYPES or k_type.dtype not in C_TYPES or k_type.dtype == "uint64":
        return None
    x, k = names.inputs
    (output,) = names.outputs
    ndim = x_type.ndim
    item_size = np.dtype(x_type.dtype).itemsize
    kept = "column - row <= k" if op.lower else "column - row >= k"
    if ndim == 1:
        dims = f"npy_intp dims[2] = {{PyArray_DIM({x}, 0), PyArray_DIM({x}, 0)}};"
        row_stride, column_stride = "0", f"PyArray_STRIDE({x}, 0)"
    else:
        dims = f"const npy_intp *dims = PyArray_DIMS({x});"
        row_stride = f"PyArray_STRIDE({x}, {ndim - 2})"
        column_stride = f"PyArray_STRIDE({x}, {ndim - 1})"
    output_ndim = max(ndim, 2)
    batch_axes = range(output_ndim - 2)
    opening = "".join(f"for (npy_intp b{axis} = 0; b{axis} < dims[{axis}]; ++b{axis}) {{\n"
                      for axis in batch_axes)
    matrix = f"PyArray_BYTES({x})" + "".join(f" + b{axis} * PyArray_STRIDE({x}, {axis})"
                                             for axis in batch_axes)
    return CCode(body=f"""
{dims}
if (sympile_prepare_output(&{output}, {output_ndim}, dims, {NPY_TYPES[x_type.dtype]}) != 0) {{
    {names.fail}
}}
const npy_int64 k = (npy_int64)*(const {C_TYPES[k_type.dtype]} *)PyArray_DATA({k});
const npy_intp rows = dims[{output_ndim - 2}], columns = dims[{output_ndim - 1}];
const npy_intp row_stride = {row_stride}, column_stride = {column_stride};
char *destination = PyArray_BYTES({output});
if (PyArray_SIZE({output}) > 0) {{
{opening}const char *matrix = {matrix};
for (npy_intp row = 0; row < rows; ++row) {{
    const char *source = matrix + row * row_stride;
    for (npy_intp column = 0; column < columns; ++column) {{
        if ({kept}) memcpy(destination, source + column * column_stride, {item_size});
        else memset(destination, 0, {item_size});
        destination += {item_size};
    }}
}}
{"}" * len(batch_axes)}
}}
""")
