"""C code of x[rows] (one integer vector indexing axis 0 of an array of any rank: the lookup
of an embedding table) and of its writes, inc_subtensor (accumulating as numpy.add.at) and
set_subtensor (the last occurrence wins); and the pieces the index ops' C code shares: the
check that a value broadcasts to the indexed region, and loops over the trailing axes.

Entries out of range are an IndexError naming the op, the entry, the axis and its length,
raised before anything is written, with perform's message. Other indices give no C code.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, c_string
from sympile.tensor.subtensor.index_kinds import ARRAY

__all__ = ["VALUE_CHECK_SUPPORT", "advanced_rows_read_c_code", "advanced_rows_write_c_code",
           "c_string", "trailing_loops", "update_target", "value_check"]

# The errors of _IncOp.check_value, with the shapes printed as Python tuples.
_VALUE_SHAPE_ERROR = c_file(__file__, "value_shape_error.h")

# The support piece that the C of value_check calls.
VALUE_CHECK_SUPPORT = _VALUE_SHAPE_ERROR


def update_target(op, x: str, output: str, ndim: int, dtype: str, fail: str) -> str:
    """C that makes `output` the array an inc/set op writes into: x itself when the op works
    in place (x must be writeable), else a copy of x in the output's reused buffer."""
    if op.destroy_map:
        return f"""if (!PyArray_ISWRITEABLE({x})) {{
    PyErr_Format(PyExc_ValueError, "%s: the input it updates in place is read-only",
                 {c_string(op)});
    {fail}
}}
Py_INCREF({x});
sympile_assign_output(&{output}, {x});"""
    return f"""if (sympile_prepare_output(&{output}, {ndim}, PyArray_DIMS({x}),
                           {NPY_TYPES[dtype]}) != 0
        || PyArray_CopyInto({output}, {x}) < 0) {{
    {fail}
}}"""


def value_check(op, node: Apply, y: str, region: str, region_ndim: int, fail: str) -> str:
    """C that checks that y (input 1 of node) broadcasts to the region, whose lengths are in
    the C array `region`, as _IncOp.check_value does: only an axis the type says has
    length 1 is broadcast. It also declares `y_strides[region_ndim]`: y's byte strides per
    region axis, 0 along the axes it is broadcast over."""
    y_type = node.inputs[1].type
    offset = region_ndim - y_type.ndim
    lines = [f"npy_intp y_strides[{max(region_ndim, 1)}];"]
    lines += [f"y_strides[{axis}] = 0;" for axis in range(offset)]
    for axis, static in enumerate(y_type.shape):
        region_axis = offset + axis
        declared = "1" if static == 1 else "0"
        lines.append(f"""{{
    const npy_intp y_length = PyArray_DIM({y}, {axis});
    if (y_length != {region}[{region_axis}] && !{declared}) {{
        sympile_index_value_shape_error({c_string(op)}, {y}, {region_ndim}, {region}, {axis},
                                        y_length == 1);
        {fail}
    }}
    y_strides[{region_axis}] = y_length == 1 ? 0 : PyArray_STRIDE({y}, {axis});
}}""")
    return "\n".join(lines)


def trailing_loops(first_axis: int, ndim: int, dims: str, pointers: dict[str, tuple[str, str]],
                   statement: str) -> str:
    """Nested C loops over axes first_axis..ndim-1 of lengths `dims[axis]`; inside them,
    `statement` sees `char *name` for each entry name: (start, strides), the address of the
    current element given the start address and the C array of byte strides."""
    axes = range(first_axis, ndim)
    opening = "".join(f"for (npy_intp k{axis} = 0; k{axis} < {dims}[{axis}]; ++k{axis}) {{\n"
                      for axis in axes)
    declarations = "\n".join(
        f"char *{name} = (char *)({start}"
        + "".join(f" + k{axis} * {strides}[{axis}]" for axis in axes) + ");"
        for name, (start, strides) in pointers.items())
    return f"{{\n{opening}{declarations}\n{statement}\n" + "}" * len(axes) + "\n}"


def _is_rows_index(op, node: Apply, first_index: int) -> bool:
    indices = node.inputs[first_index:]
    return (tuple(op.idx_list) == (ARRAY,) and len(indices) == 1
            and indices[0].type.ndim == 1 and indices[0].type.dtype in C_TYPES
            and indices[0].type.dtype not in ("bool", "uint64")
            and node.inputs[0].type.ndim >= 1 and node.inputs[0].type.dtype in NPY_TYPES)


def _bounds_checks(op, node: Apply, x: str, rows: str, word: str, fail: str) -> str:
    """C that sets `count` and `x_length` and checks every entry of the index vector."""
    index_type = C_TYPES[node.inputs[-1].type.dtype]
    return f"""
#define ROW(i) ((npy_int64)*(const {index_type} *)(PyArray_BYTES({rows}) \\
                                                  + (i) * PyArray_STRIDE({rows}, 0)))
const npy_intp count = PyArray_DIM({rows}, 0), x_length = PyArray_DIM({x}, 0);
for (npy_intp i = 0; i < count; ++i) {{
    const npy_int64 row = ROW(i);
    if (row < -x_length || row >= x_length) {{
        PyErr_Format(PyExc_IndexError, "%s: index %lld is out of bounds for axis 0 with "
                     "{word} %lld", {c_string(op)}, (long long)row, (long long)x_length);
        {fail}
    }}
}}
"""


def _region_dims(x: str, ndim: int) -> str:
    return (f"npy_intp region[{ndim}];\nregion[0] = count;\n"
            + "".join(f"region[{axis}] = PyArray_DIM({x}, {axis});\n"
                      for axis in range(1, ndim)))


def advanced_rows_read_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AdvancedSubtensor for x[rows] (an integer vector on axis 0): whole rows
    copied with memcpy when x's rows are C-contiguous, element by element otherwise."""
    if not _is_rows_index(op, node, first_index=1):
        return None
    x, rows = names.inputs
    (output,) = names.outputs
    ndim = node.inputs[0].type.ndim
    dtype = node.outputs[0].type.dtype
    copy = trailing_loops(1, ndim, "region", {"target": ("destination", "output_strides"),
                                              "source": ("origin", "x_strides")},
                          "memcpy(target, source, item_size);")
    return CCode(body=f"""
{_bounds_checks(op, node, x, rows, "size", names.fail)}
{_region_dims(x, ndim)}
if (sympile_prepare_output(&{output}, {ndim}, region, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
{{
    const npy_intp item_size = PyArray_ITEMSIZE({x});
    const npy_intp *x_strides = PyArray_STRIDES({x});
    const npy_intp *output_strides = PyArray_STRIDES({output});
    /* A row is one block when its strides are C order's (a length-1 axis has any). */
    npy_intp row_bytes = item_size;
    int contiguous_rows = 1;
    for (int axis = {ndim - 1}; axis >= 1; --axis) {{
        if (region[axis] != 1 && x_strides[axis] != row_bytes) contiguous_rows = 0;
        row_bytes *= region[axis];
    }}
    for (npy_intp i = 0; i < count; ++i) {{
        npy_int64 row = ROW(i);
        if (row < 0) row += x_length;
        const char *origin = PyArray_BYTES({x}) + row * x_strides[0];
        char *destination = PyArray_BYTES({output}) + i * output_strides[0];
        if (contiguous_rows) memcpy(destination, origin, row_bytes);
        else {copy}
    }}
}}
#undef ROW
""")


def advanced_rows_write_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AdvancedIncSubtensor (and its inplace form, per destroy_map) for
    x[rows] += y (every occurrence of a repeated row adds, as numpy.add.at) or x[rows] = y
    (the last occurrence wins); None for other indices, for ignore_duplicates, and for
    increments of bool or of dtypes without C arithmetic."""
    if not _is_rows_index(op, node, first_index=2) or op.ignore_duplicates:
        return None
    dtype = node.outputs[0].type.dtype
    if not op.set_instead_of_inc and (dtype == "bool" or dtype not in C_TYPES):
        return None
    x, y, rows = names.inputs
    (output,) = names.outputs
    ndim = node.inputs[0].type.ndim
    target = update_target(op, x, output, ndim, dtype, names.fail)
    if op.set_instead_of_inc:
        statement = "memcpy(target, source, item_size);"
    else:
        element_type = C_TYPES[dtype]
        statement = f"*({element_type} *)target += *(const {element_type} *)source;"
    write = trailing_loops(1, ndim, "region", {"target": ("destination", "output_strides"),
                                               "source": ("origin", "y_strides")}, statement)
    return CCode(support=(_VALUE_SHAPE_ERROR,), body=f"""
{_bounds_checks(op, node, x, rows, "length", names.fail)}
{_region_dims(x, ndim)}
{value_check(op, node, y, "region", ndim, names.fail)}
{target}
{{
    const npy_intp item_size = PyArray_ITEMSIZE({x});
    const npy_intp *output_strides = PyArray_STRIDES({output});
    for (npy_intp i = 0; i < count; ++i) {{
        npy_int64 row = ROW(i);
        if (row < 0) row += x_length;
        char *destination = PyArray_BYTES({output}) + row * output_strides[0];
        const char *origin = PyArray_BYTES({y}) + i * y_strides[0];
        {write}
    }}
}}
#undef ROW
""")
