"""C code of PermuteAlongAxis (sort's derivative rules): perform's checks with its messages
(equal shapes, entries in [0, n), each line along the axis a permutation), then one pass
that gathers, out[..., j, ...] = x[..., p[..., j, ...], ...], or with inverse scatters,
out[..., p[..., j, ...], ...] = x[..., j, ...], into a C-contiguous output (elements copied:
every dtype; any strides).
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["permute_along_axis_c_code"]


def _lines(ndim: int, axis: int, body: str) -> str:
    """Nested C loops over every axis but `axis` (counters k0, k1, ...), around `body`."""
    axes = [other for other in range(ndim) if other != axis]
    opening = "".join(f"for (npy_intp k{other} = 0; k{other} < dims[{other}]; ++k{other}) {{\n"
                      for other in axes)
    return opening + body + "\n" + "}" * len(axes)


def _offset(array: str, ndim: int, axis: int) -> str:
    """The byte offset in `array` of the current line's start (counters of _lines)."""
    return " + ".join([f"k{other} * PyArray_STRIDE({array}, {other})"
                       for other in range(ndim) if other != axis] or ["0"])


def permute_along_axis_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of PermuteAlongAxis: see the module docstring."""
    x_type, permutation_type = node.inputs[0].type, node.inputs[1].type
    if x_type.dtype not in NPY_TYPES or permutation_type.dtype not in C_TYPES:
        return None
    (x, permutation), (output,) = names.inputs, names.outputs
    ndim, axis = x_type.ndim, op.axis
    item_size = np.dtype(x_type.dtype).itemsize
    index_type = C_TYPES[permutation_type.dtype]
    entry = (f"(npy_int64)*(const {index_type} *)(permutation_line "
             f"+ j * PyArray_STRIDE({permutation}, {axis}))")
    range_check = f"""const char *permutation_line = PyArray_BYTES({permutation})
    + {_offset(permutation, ndim, axis)};
for (npy_intp j = 0; j < length; ++j) {{
    const npy_int64 entry = {entry};
    if (entry < 0 || entry >= length) out_of_range = 1;
}}"""
    if op.inverse:
        source, target = "j", "entry"
    else:
        source, target = "entry", "j"
    write = f"""const char *permutation_line = PyArray_BYTES({permutation})
    + {_offset(permutation, ndim, axis)};
const char *x_line = PyArray_BYTES({x}) + {_offset(x, ndim, axis)};
char *output_line = PyArray_BYTES({output}) + {_offset(output, ndim, axis)};
memset(reached, 0, length);
for (npy_intp j = 0; j < length; ++j) {{
    const npy_int64 entry = {entry};
    reached[entry] = 1;
    memcpy(output_line + {target} * output_stride, x_line + {source} * x_stride, {item_size});
}}
for (npy_intp j = 0; j < length; ++j) if (!reached[j]) missing = 1;"""
    return CCode(body=f"""
if (!PyArray_SAMESHAPE({x}, {permutation})) {{
    PyObject *permutation_shape = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({permutation}));
    PyObject *x_shape = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({x}));
    if (permutation_shape != NULL && x_shape != NULL)
        PyErr_Format(PyExc_ValueError, "PermuteAlongAxis: permutation has shape %R, x has %R",
                     permutation_shape, x_shape);
    Py_XDECREF(permutation_shape);
    Py_XDECREF(x_shape);
    {names.fail}
}}
const npy_intp *dims = PyArray_DIMS({x});
const npy_intp length = dims[{axis}];
int out_of_range = 0;
if (PyArray_SIZE({x}) > 0) {{
    {_lines(ndim, axis, range_check)}
}}
if (out_of_range) {{
    PyErr_Format(PyExc_ValueError, "PermuteAlongAxis: permutation entries must lie in "
                 "[0, %lld)", (long long)length);
    {names.fail}
}}
if (sympile_prepare_output(&{output}, {ndim}, dims, {NPY_TYPES[x_type.dtype]}) != 0) {{
    {names.fail}
}}
int missing = 0;
if (PyArray_SIZE({x}) > 0) {{
    char *reached = (char *)malloc(length);
    if (reached == NULL) {{
        PyErr_NoMemory();
        {names.fail}
    }}
    const npy_intp x_stride = PyArray_STRIDE({x}, {axis});
    const npy_intp output_stride = PyArray_STRIDE({output}, {axis});
    {_lines(ndim, axis, write)}
    free(reached);
}}
if (missing) {{
    PyErr_SetString(PyExc_ValueError, "PermuteAlongAxis: permutation is not a permutation "
                    "along axis {axis}");
    {names.fail}
}}
""")
