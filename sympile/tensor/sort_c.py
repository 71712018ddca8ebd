"""C code of SortOp and ArgSortOp: a stable merge sort of each line along the axis (of the
flattened input for axis None), with numpy's order: NaNs after every number.

Both sort stably, so argsort gives numpy.argsort(x, kind='stable') exactly (ArgSortOp's
definition), and sort's values are numpy's for every kind (sort's values do not depend on the
algorithm; a stable one also keeps -0.0 and 0.0 in their input order, as numpy's stable
kind). Runs of 16 are insertion-sorted, then merged bottom-up between the line and a buffer;
two runs already in order are copied without comparisons.

sort copies x into the C-contiguous output and sorts each line there (in place when the axis
is the last, through a line buffer otherwise); argsort reads the lines of a C-contiguous x
(x itself, or a copy) and writes the permutation of each into the int64 output.
float16 and complex give no C code (perform runs).
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["argsort_c_code", "sort_c_code"]

# Insertion-sorted run length: short runs are faster by insertion than by merging.
_RUN = 16


def _less(dtype: str, left: str, right: str) -> str:
    """C that is true when `left` sorts strictly before `right`: numpy's order, in which a
    NaN comes after every number and equals another NaN."""
    if dtype.startswith("float"):
        return f"({left} < {right} || ({right} != {right} && {left} == {left}))"
    return f"({left} < {right})"


def _merge_sort(name: str, element_type: str, key_type: str | None, key: str, less) -> str:
    """A C function `name(items, buffer, count[, values])` that stably sorts `items` (of C
    type element_type, `count` of them, with a buffer as long), comparing key(item): the
    item itself, or with a key_type, `values[item]`."""
    values_parameter = "" if key_type is None else f", const {key_type} *values"
    return f"""
static void {name}({element_type} *items, {element_type} *buffer, npy_intp count{values_parameter})
{{
    for (npy_intp start = 0; start < count; start += {_RUN}) {{
        const npy_intp end = start + {_RUN} < count ? start + {_RUN} : count;
        for (npy_intp i = start + 1; i < end; ++i) {{
            const {element_type} item = items[i];
            npy_intp j = i;
            while (j > start && {less(key.format("item"), key.format("items[j - 1]"))}) {{
                items[j] = items[j - 1];
                --j;
            }}
            items[j] = item;
        }}
    }}
    {element_type} *source = items, *target = buffer;
    for (npy_intp width = {_RUN}; width < count; width *= 2) {{
        for (npy_intp left = 0; left < count; left += 2 * width) {{
            const npy_intp middle = left + width < count ? left + width : count;
            const npy_intp right = left + 2 * width < count ? left + 2 * width : count;
            if (middle == right
                    || !{less(key.format("source[middle]"), key.format("source[middle - 1]"))}) {{
                memcpy(target + left, source + left, (right - left) * sizeof({element_type}));
                continue;
            }}
            npy_intp i = left, j = middle, k = left;
            while (i < middle && j < right)
                /* Ties take the left run's item first: stable. */
                target[k++] = {less(key.format("source[j]"), key.format("source[i]"))}
                    ? source[j++] : source[i++];
            while (i < middle) target[k++] = source[i++];
            while (j < right) target[k++] = source[j++];
        }}
        {element_type} *swap = source;
        source = target;
        target = swap;
    }}
    if (source != items) memcpy(items, source, count * sizeof({element_type}));
}}
"""


def _sort_support(dtype: str) -> str:
    element_type = C_TYPES[dtype]
    return _merge_sort(f"sympile_merge_sort_{dtype}", element_type, None, "{}",
                       lambda left, right: _less(dtype, left, right))


def _argsort_support(dtype: str) -> str:
    return _merge_sort(f"sympile_merge_argsort_{dtype}", "npy_int64", C_TYPES[dtype],
                       "values[{}]", lambda left, right: _less(dtype, left, right))


def _lines(op, node: Apply, x: str) -> str:
    """C that sets `count` (the length of a line), `outer` and `inner` (the number of lines
    before and the element step along one: C order's)."""
    if op.axis is None:
        return f"const npy_intp count = PyArray_SIZE({x}), outer = 1, inner = 1;"
    ndim = node.inputs[0].type.ndim
    return f"""const npy_intp count = PyArray_DIM({x}, {op.axis});
npy_intp outer = 1, inner = 1;
for (int axis = 0; axis < {op.axis}; ++axis) outer *= PyArray_DIM({x}, axis);
for (int axis = {op.axis + 1}; axis < {ndim}; ++axis) inner *= PyArray_DIM({x}, axis);"""


def _prepare(op, x: str, output: str, ndim: int, typenum: str, fail: str) -> str:
    if op.axis is None:
        return f"""npy_intp output_dims[1] = {{PyArray_SIZE({x})}};
if (sympile_prepare_output(&{output}, 1, output_dims, {typenum}) != 0) {{
    {fail}
}}"""
    return f"""if (sympile_prepare_output(&{output}, {ndim}, PyArray_DIMS({x}), {typenum}) != 0) {{
    {fail}
}}"""


def _buffer_failure(fail: str) -> str:
    return f"""if (buffers == NULL) {{
    PyErr_NoMemory();
    {fail}
}}"""


def sort_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of SortOp: see the module docstring."""
    dtype = node.inputs[0].type.dtype
    if dtype not in C_TYPES:
        return None
    (x,) = names.inputs
    (output,) = names.outputs
    ndim = node.inputs[0].type.ndim
    element_type = C_TYPES[dtype]
    if op.axis is None:
        # A view of the flat output with x's shape receives x in C order.
        copy = f"""{{
    PyArray_Dims x_shape = {{PyArray_DIMS({x}), {ndim}}};
    PyArrayObject *shaped = (PyArrayObject *)PyArray_Newshape({output}, &x_shape, NPY_CORDER);
    const int copied = shaped == NULL ? -1 : PyArray_CopyInto(shaped, {x});
    Py_XDECREF(shaped);
    if (copied < 0) {{
        {names.fail}
    }}
}}"""
    else:
        copy = f"""if (PyArray_CopyInto({output}, {x}) < 0) {{
    {names.fail}
}}"""
    return CCode(support=(_sort_support(dtype),), body=f"""
{_prepare(op, x, output, ndim, NPY_TYPES[dtype], names.fail)}
{copy}
{_lines(op, node, x)}
if (count > 1 && outer * inner > 0) {{
    /* The merge buffer, then (when lines are strided) one line. */
    {element_type} *buffers = ({element_type} *)malloc(
        (inner == 1 ? 1 : 2) * count * sizeof({element_type}));
    {_buffer_failure(names.fail)}
    {element_type} *values = ({element_type} *)PyArray_DATA({output});
    {element_type} *line = buffers + count;
    for (npy_intp o = 0; o < outer; ++o) {{
        for (npy_intp i = 0; i < inner; ++i) {{
            {element_type} *start = values + o * count * inner + i;
            if (inner == 1) {{
                sympile_merge_sort_{dtype}(start, buffers, count);
                continue;
            }}
            for (npy_intp k = 0; k < count; ++k) line[k] = start[k * inner];
            sympile_merge_sort_{dtype}(line, buffers, count);
            for (npy_intp k = 0; k < count; ++k) start[k * inner] = line[k];
        }}
    }}
    free(buffers);
}}
""")


def argsort_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of ArgSortOp: see the module docstring."""
    dtype = node.inputs[0].type.dtype
    if dtype not in C_TYPES:
        return None
    (x,) = names.inputs
    (output,) = names.outputs
    ndim = node.inputs[0].type.ndim
    element_type = C_TYPES[dtype]
    return CCode(support=(_argsort_support(dtype),), body=f"""
{_prepare(op, x, output, ndim, "NPY_INT64", names.fail)}
{_lines(op, node, x)}
if (outer * inner > 0 && count > 0) {{
    PyArrayObject *contiguous = (PyArrayObject *)PyArray_GETCONTIGUOUS({x});
    if (contiguous == NULL) {{
        {names.fail}
    }}
    /* The permutation, the merge buffer, then (when lines are strided) one line's values. */
    npy_int64 *buffers = (npy_int64 *)malloc(2 * count * sizeof(npy_int64)
                                             + (inner == 1 ? 0 : count * sizeof({element_type})));
    if (buffers == NULL) Py_DECREF(contiguous);
    {_buffer_failure(names.fail)}
    npy_int64 *permutation = buffers, *merge_buffer = buffers + count;
    {element_type} *line = ({element_type} *)(buffers + 2 * count);
    const {element_type} *values = (const {element_type} *)PyArray_DATA(contiguous);
    npy_int64 *result = (npy_int64 *)PyArray_DATA({output});
    for (npy_intp o = 0; o < outer; ++o) {{
        for (npy_intp i = 0; i < inner; ++i) {{
            const npy_intp start = o * count * inner + i;
            const {element_type} *keys = values + start;
            if (inner != 1) {{
                for (npy_intp k = 0; k < count; ++k) line[k] = values[start + k * inner];
                keys = line;
            }}
            for (npy_intp k = 0; k < count; ++k) permutation[k] = k;
            sympile_merge_argsort_{dtype}(permutation, merge_buffer, count, keys);
            for (npy_intp k = 0; k < count; ++k) result[start + k * inner] = permutation[k];
        }}
    }}
    free(buffers);
    Py_DECREF(contiguous);
}}
""")
