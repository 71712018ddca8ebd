"""C code of Subtensor (a view: view.c, a library unit, with the node's table), and of the
advanced index x[rows, columns] (two int64 vectors into a matrix: the
pattern -log(p)[arange(n), y] of a cross-entropy makes) and of its write, the gradient's
inc_subtensor (accumulating as numpy.add.at) or set_subtensor.

Both index vectors broadcast against each other as numpy's do (equal lengths, or one of
length 1); negative entries count from the end; an entry out of range is an IndexError naming
the op, the entry, the axis and its length, raised before anything is written. Other indices
give no C code (perform runs).
"""

from __future__ import annotations

import functools

from sympile.graph.basic import Apply
from sympile.graph.ccode import (
    C_TYPES,
    NPY_TYPES,
    CCode,
    CNames,
    c_file,
    c_string,
    library_code,
    served_by,
)
from sympile.tensor.c_toolkit import INTEGER_VALUE
from sympile.tensor.subtensor.index_kinds import ARRAY, SCALAR, IndexSlice

__all__ = ["advanced_pair_read_c_code", "advanced_pair_write_c_code", "subtensor_c_code",
           "view_library", "view_table"]


def _is_pair_index(op, node: Apply, first_index: int) -> bool:
    indices = node.inputs[first_index:]
    return (tuple(op.idx_list) == (ARRAY, ARRAY) and node.inputs[0].type.ndim == 2
            and len(indices) == 2
            and all(v.type.ndim == 1 and v.type.dtype == "int64" for v in indices)
            and node.inputs[0].type.dtype in C_TYPES)


def _index_checks(op, x: str, rows: str, columns: str, fail: str) -> str:
    """C that sets `length` (the broadcast length of the two vectors), the step of each
    through its entries (0 for a broadcast length-1 vector) and checks every entry."""
    return f"""
const npy_intp row_count = PyArray_DIM({rows}, 0), column_count = PyArray_DIM({columns}, 0);
if (row_count != column_count && row_count != 1 && column_count != 1) {{
    PyErr_Format(PyExc_IndexError, "{op}: shape mismatch: indexing arrays could not be "
                 "broadcast together with shapes (%lld,) (%lld,)", (long long)row_count,
                 (long long)column_count);
    {fail}
}}
const npy_intp length = row_count == 1 ? column_count : row_count;
const npy_intp row_step = row_count == 1 ? 0 : PyArray_STRIDE({rows}, 0);
const npy_intp column_step = column_count == 1 ? 0 : PyArray_STRIDE({columns}, 0);
const npy_intp x_rows = PyArray_DIM({x}, 0), x_columns = PyArray_DIM({x}, 1);
const char *row_data = PyArray_BYTES({rows}), *column_data = PyArray_BYTES({columns});
for (npy_intp i = 0; i < length; ++i) {{
    npy_int64 row = *(const npy_int64 *)(row_data + i * row_step);
    npy_int64 column = *(const npy_int64 *)(column_data + i * column_step);
    if (row < -x_rows || row >= x_rows) {{
        PyErr_Format(PyExc_IndexError, "{op}: index %lld is out of bounds for axis 0 with "
                     "size %lld", (long long)row, (long long)x_rows);
        {fail}
    }}
    if (column < -x_columns || column >= x_columns) {{
        PyErr_Format(PyExc_IndexError, "{op}: index %lld is out of bounds for axis 1 with "
                     "size %lld", (long long)column, (long long)x_columns);
        {fail}
    }}
}}
"""


def _element(x: str) -> str:
    """The address of x[row, column] for the (checked) entries `row`, `column` at `i`."""
    return f"""npy_int64 row = *(const npy_int64 *)(row_data + i * row_step);
    npy_int64 column = *(const npy_int64 *)(column_data + i * column_step);
    if (row < 0) row += x_rows;
    if (column < 0) column += x_columns;
    char *element = PyArray_BYTES({x}) + row * PyArray_STRIDE({x}, 0)
                    + column * PyArray_STRIDE({x}, 1);"""


def advanced_pair_read_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AdvancedSubtensor for x[rows, columns], or None for other indices."""
    if not _is_pair_index(op, node, first_index=1):
        return None
    x, rows, columns = names.inputs
    (output,) = names.outputs
    dtype = node.outputs[0].type.dtype
    element_type = C_TYPES[dtype]
    return CCode(body=f"""
{_index_checks(op, x, rows, columns, names.fail)}
if (sympile_prepare_output(&{output}, 1, &length, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
{element_type} *values = ({element_type} *)PyArray_DATA({output});
for (npy_intp i = 0; i < length; ++i) {{
    {_element(x)}
    values[i] = *(const {element_type} *)element;
}}
""")


def advanced_pair_write_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AdvancedIncSubtensor (and its inplace form, per destroy_map) for
    x[rows, columns] += y (every occurrence of a repeated element adds, as numpy.add.at) or
    x[rows, columns] = y (the last occurrence wins); None for other indices, for
    ignore_duplicates, and for increments of bool."""
    if not _is_pair_index(op, node, first_index=2) or op.ignore_duplicates:
        return None
    dtype = node.outputs[0].type.dtype
    if dtype == "bool" and not op.set_instead_of_inc:
        return None
    y_type = node.inputs[1].type
    if y_type.ndim > 1:
        return None
    x, y, rows, columns = names.inputs
    (output,) = names.outputs
    element_type = C_TYPES[dtype]
    # As check_value: only an axis the type says has length 1 is broadcast.
    if y_type.ndim == 0:
        y_check, y_step = "", "0"
    else:
        broadcastable = "1" if y_type.shape[0] == 1 else "0"
        y_check = f"""
if (PyArray_DIM({y}, 0) != length && !{broadcastable}) {{
    PyErr_Format(PyExc_ValueError, "{op}: a value of shape (%lld,) cannot be broadcast to "
                 "the indexed region of shape (%lld,)%s", (long long)PyArray_DIM({y}, 0),
                 (long long)length, PyArray_DIM({y}, 0) == 1 ? " (its type does not say it "
                 "is broadcastable; declare it with specify_shape or a static shape)" : "");
    {names.fail}
}}"""
        y_step = f"(PyArray_DIM({y}, 0) == 1 ? 0 : PyArray_STRIDE({y}, 0))"
    if op.destroy_map:
        target = f"""Py_INCREF({x});
sympile_assign_output(&{output}, {x});"""
    else:
        target = f"""if (sympile_prepare_output(&{output}, 2, PyArray_DIMS({x}),
                           {NPY_TYPES[dtype]}) != 0
        || PyArray_CopyInto({output}, {x}) < 0) {{
    {names.fail}
}}"""
    write = "=" if op.set_instead_of_inc else "+="
    return CCode(body=f"""
{_index_checks(op, x, rows, columns, names.fail)}
{y_check}
{target}
const npy_intp y_step = {y_step};
const char *y_data = PyArray_BYTES({y});
for (npy_intp i = 0; i < length; ++i) {{
    {_element(output)}
    *({element_type} *)element {write} *(const {element_type} *)(y_data + i * y_step);
}}
""")


_VIEW = c_file(__file__, "view.c")
_VIEW_DECLARATIONS = c_file(__file__, "view.h")


@functools.cache
def view_library() -> tuple[str, str, str]:
    """(name, declarations, library unit) of view.c: `<name>_view`, `<name>_subtensor` and
    `<name>_slice_length` (view.h)."""
    return library_code("sympile_subtensor", _VIEW_DECLARATIONS, INTEGER_VALUE + _VIEW)


def view_table(op, node: Apply) -> list[str]:
    """The fields of the SympileSubtensor of `node`, a Subtensor's Apply (or the read of an
    IncSubtensor's region): its idx_list, the k-th SCALAR part (in entry order, start, stop
    then step) read from the node's k-th index input."""
    scalars = iter(range(len(node.inputs)))

    def part(value) -> str:
        if value is None:
            return "{0, 0}"
        if value == SCALAR:
            return f"{{2, {next(scalars)}}}"
        return f"{{1, {int(value)}}}"

    entries = []
    for entry in op.idx_list:
        if entry is None:
            entries.append("{0, {0, 0}, {0, 0}, {0, 0}}")
        elif isinstance(entry, IndexSlice):
            entries.append(f"{{1, {', '.join(part(p) for p in entry.parts)}}}")
        else:
            entries.append(f"{{2, {part(entry)}, {{0, 0}}, {{0, 0}}}}")
    return [c_string(op), str(len(op.idx_list)), str(node.outputs[0].type.ndim),
            str(len(node.inputs) - 1),
            f"(const SympileIndexEntry[]){{{', '.join(entries) or '{0}'}}}"]


def subtensor_c_code(op, node: Apply, names: CNames) -> CCode:
    """C code of Subtensor: view.c's view (the shape, strides and data offset walked from
    idx_list, integers checked against the axis length, slices clamped as Python's
    slice.indices), one view of x sharing its base (view_map)."""
    return served_by(view_library(), "subtensor", "SympileSubtensor", view_table(op, node))
