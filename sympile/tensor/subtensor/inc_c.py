"""C code of SliceLength (the length of a slice on an axis, as Python's slice.indices) and of
the basic indexed write IncSubtensor (x[index] += y or x[index] = y for integers, slices and
newaxis, and its inplace form per destroy_map).

The write takes a view of the target region with Subtensor's view (view.c, through
sympile.tensor.subtensor.basic_c: the same bounds checks and messages), checks that y
broadcasts to it as perform does (only an axis y's type says has length 1 is broadcast), then
adds or copies y elementwise. Without a
destroy_map the target is a copy of x. y never overlaps the target: the inplace form is
refused by the DestroyHandler when y reads x's memory.
float16 and complex give no C code (perform runs).
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, CCode, CNames, c_string, constant_table, served_by
from sympile.tensor.c_toolkit import SHAPE_TEXT
from sympile.tensor.subtensor.basic_c import view_library, view_table
from sympile.tensor.subtensor.rows_c import update_target

__all__ = ["inc_subtensor_c_code", "slice_length_c_code"]

# Integer dtypes whose every value is an npy_int64 (uint64 is not).
_INT64_EXACT = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


def slice_length_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of SliceLength (view.c): perform's errors (a zero step, a negative length),
    then the clamping of Python's slice.indices and the count of range(start, stop, step)."""
    if any(variable.type.dtype not in _INT64_EXACT for variable in node.inputs):
        return None
    given = ", ".join(str(int(flag)) for flag in op.given)
    return served_by(view_library(), "slice_length", "SympileSliceLength",
                     [c_string(op), f"{{{given}}}"])


def _value_checks(op, node: Apply, y: str, region_ndim: int, fail: str) -> str:
    """C that raises perform's ValueError (from _IncOp.check_value) when y does not
    broadcast to `region`: only axes y's type says have length 1 broadcast."""
    y_type = node.inputs[1].type
    offset = region_ndim - y_type.ndim
    checks = []
    for axis, static in enumerate(y_type.shape):
        if static == 1:
            continue
        checks.append(f"""
if (PyArray_DIM({y}, {axis}) != PyArray_DIM(region, {offset + axis})) {{
    char value_shape[1600], region_shape[1600];
    sympile_shape_text(value_shape, sizeof value_shape, {y_type.ndim}, PyArray_DIMS({y}));
    sympile_shape_text(region_shape, sizeof region_shape, {region_ndim},
                       PyArray_DIMS(region));
    if (PyArray_DIM({y}, {axis}) == 1)
        PyErr_Format(PyExc_ValueError, "{op}: the value has shape %s and the indexed region "
                     "%s: axis {axis} of the value has length 1 at run time but its type "
                     "does not say it is broadcastable; declare it (row/col, "
                     "dimshuffle('x', ...), specify_shape or a static shape) to broadcast "
                     "it", value_shape, region_shape);
    else
        PyErr_Format(PyExc_ValueError, "{op}: a value of shape %s cannot be broadcast to "
                     "the indexed region of shape %s", value_shape, region_shape);
    {fail}
}}""")
    return "".join(checks)


def _write_loop(node: Apply, y: str, region_ndim: int, write: str) -> str:
    """C that applies `write` (a statement on `*target` and `*source`, the element
    pointers) to every element of `region` and the matching element of y (with stride 0
    along its missing leading axes and its broadcast ones)."""
    y_type = node.inputs[1].type
    element_type = C_TYPES[node.outputs[0].type.dtype]
    offset = region_ndim - y_type.ndim
    if region_ndim == 0:
        return f"""{{
    {element_type} *target = ({element_type} *)PyArray_DATA(region);
    const {element_type} *source = (const {element_type} *)PyArray_DATA({y});
    {write}
}}"""
    value_strides = []
    for axis in range(region_ndim):
        y_axis = axis - offset
        if y_axis < 0 or y_type.shape[y_axis] == 1:
            value_strides.append("0")
        else:
            value_strides.append(f"PyArray_STRIDE({y}, {y_axis})")
    last = region_ndim - 1
    return f"""{{
    const npy_intp value_strides[{region_ndim}] = {{{", ".join(value_strides)}}};
    const npy_intp *dims = PyArray_DIMS(region), *region_strides = PyArray_STRIDES(region);
    npy_intp counter[{region_ndim}] = {{0}};
    char *region_row = PyArray_BYTES(region);
    const char *value_row = PyArray_BYTES({y});
    if (PyArray_SIZE(region) > 0) for (;;) {{
        for (npy_intp i = 0; i < dims[{last}]; ++i) {{
            {element_type} *target = ({element_type} *)(region_row + i * region_strides[{last}]);
            const {element_type} *source =
                (const {element_type} *)(value_row + i * value_strides[{last}]);
            {write}
        }}
        int axis = {last} - 1;
        for (; axis >= 0; --axis) {{
            if (++counter[axis] < dims[axis]) {{
                region_row += region_strides[axis];
                value_row += value_strides[axis];
                break;
            }}
            counter[axis] = 0;
            region_row -= region_strides[axis] * (dims[axis] - 1);
            value_row -= value_strides[axis] * (dims[axis] - 1);
        }}
        if (axis < 0) break;
    }}
}}"""


def inc_subtensor_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of IncSubtensor (and its inplace form): see the module docstring."""
    dtype = node.outputs[0].type.dtype
    if dtype not in C_TYPES:
        return None
    x, y, *index_names = names.inputs
    (output,) = names.outputs
    read_node = op._read().make_node(node.inputs[0], *node.inputs[2:])
    region_ndim = read_node.outputs[0].type.ndim
    fail = f"{{ Py_XDECREF(region); {names.fail} }}"
    library, declarations, unit = view_library()
    table, table_text = constant_table(library, "SympileSubtensor", view_table(op, read_node))
    target = update_target(op, x, output, node.inputs[0].type.ndim, dtype, names.fail)
    if op.set_instead_of_inc:
        write = "*target = *source;"
    elif dtype == "bool":
        # numpy's += on booleans is a logical or.
        write = "*target = *target | *source;"
    else:
        write = "*target += *source;"
    indices = ", ".join(index_names) or "NULL"
    return CCode(body=f"""
{target}
PyArrayObject *region = NULL;
{{
    PyArrayObject *indices[] = {{{indices}}};
    if ({library}_view(&{table}, {output}, indices, &region)) {fail}
}}
{_value_checks(op, node, y, region_ndim, fail)}
{_write_loop(node, y, region_ndim, write)}
Py_DECREF(region);
""", support=(SHAPE_TEXT, declarations, table_text), units=(unit,))
