"""C code of GroupSum (Repeat's gradient): perform's check with its message (the counts, one
per group of like's length on the axis, or one for all, are >= 0 and add up to y's length),
then each group's entries summed in order along the axis into the C-contiguous output (empty
groups 0). Integers wrap as numpy's; float sums are sequential, where numpy's reduceat sums
a contiguous last axis pairwise (equal to rounding). bool, float16 and complex give no C code.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["group_sum_c_code"]


def group_sum_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of GroupSum: see the module docstring."""
    y_type, repeats_type = node.inputs[0].type, node.inputs[1].type
    dtype = y_type.dtype
    if dtype not in C_TYPES or dtype == "bool" or repeats_type.dtype not in C_TYPES:
        return None
    (y, repeats, like), (output,) = names.inputs, names.outputs
    ndim, axis = y_type.ndim, op.axis
    element_type, count_type = C_TYPES[dtype], C_TYPES[repeats_type.dtype]
    shared = repeats_type.ndim == 0 or repeats_type.shape[0] == 1
    if shared:
        counts = f"""int valid = PyArray_SIZE({repeats}) >= 1;
const npy_int64 shared =
    valid ? (npy_int64)*(const {count_type} *)PyArray_DATA({repeats}) : 0;
for (npy_intp g = 0; g < groups; ++g) counts[g] = shared;"""
    else:
        counts = f"""int valid = PyArray_DIM({repeats}, 0) == groups;
for (npy_intp g = 0; valid && g < groups; ++g)
    counts[g] = (npy_int64)*(const {count_type} *)(PyArray_BYTES({repeats})
                                                  + g * PyArray_STRIDE({repeats}, 0));"""
    other_axes = [other for other in range(ndim) if other != axis]
    opening = "".join(f"for (npy_intp k{other} = 0; k{other} < dims[{other}]; ++k{other}) {{\n"
                      for other in other_axes)

    def offset(array: str) -> str:
        return " + ".join([f"k{other} * PyArray_STRIDE({array}, {other})"
                           for other in other_axes] or ["0"])

    return CCode(body=f"""
const npy_intp groups = PyArray_DIM({like}, {axis});
npy_int64 *counts = (npy_int64 *)malloc((groups > 0 ? groups : 1) * sizeof(npy_int64));
if (counts == NULL) {{
    PyErr_NoMemory();
    {names.fail}
}}
{counts}
npy_int64 total = 0;
for (npy_intp g = 0; valid && g < groups; ++g) {{
    if (counts[g] < 0) valid = 0;
    total += counts[g];
}}
if (!valid || total != PyArray_DIM({y}, {axis})) {{
    free(counts);
    PyErr_Format(PyExc_ValueError, "GroupSum: %lld groups of repeats %S do not split the %lld "
                 "entries of y along axis {axis}", (long long)groups, {repeats},
                 (long long)PyArray_DIM({y}, {axis}));
    {names.fail}
}}
npy_intp dims[{ndim}];
for (int dimension = 0; dimension < {ndim}; ++dimension)
    dims[dimension] = PyArray_DIM({y}, dimension);
dims[{axis}] = groups;
if (sympile_prepare_output(&{output}, {ndim}, dims, {NPY_TYPES[dtype]}) != 0) {{
    free(counts);
    {names.fail}
}}
if (PyArray_SIZE({output}) > 0) {{
    const npy_intp y_stride = PyArray_STRIDE({y}, {axis});
    const npy_intp output_stride = PyArray_STRIDE({output}, {axis});
{opening}const char *y_line = PyArray_BYTES({y}) + {offset(y)};
char *output_line = PyArray_BYTES({output}) + {offset(output)};
npy_intp position = 0;
for (npy_intp g = 0; g < groups; ++g) {{
    {element_type} sum = 0;
    for (npy_int64 c = 0; c < counts[g]; ++c, ++position)
        sum += *(const {element_type} *)(y_line + position * y_stride);
    *({element_type} *)(output_line + g * output_stride) = sum;
}}
{"}" * len(other_axes)}
}}
free(counts);
""")
