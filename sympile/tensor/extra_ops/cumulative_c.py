"""C code of CumOp (cumsum / cumprod along one axis, or over the flattened input).

One pass over x in C order (any strides) writes the C-contiguous output: each element is x's
converted to the output dtype, combined with the output element one step back along the axis
(`inner` elements back; one for the flattened input), except at the start of a line. This is
numpy's sequential accumulate, so float results agree exactly. Signed integers accumulate in
unsigned arithmetic, which wraps as numpy does (signed overflow is undefined in C).
float16 and complex give no C code (perform runs).
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["cumulative_c_code"]


def _combine(mode: str, dtype: str, previous: str, element: str) -> str:
    operator = "+" if mode == "add" else "*"
    if dtype.startswith("int"):
        return (f"({C_TYPES[dtype]})((npy_uint64){previous} {operator} "
                f"(npy_uint64){element})")
    return f"{previous} {operator} {element}"


def cumulative_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of CumOp: see the module docstring."""
    input_dtype = node.inputs[0].type.dtype
    output_dtype = node.outputs[0].type.dtype
    if input_dtype not in C_TYPES or output_dtype not in C_TYPES:
        return None
    (x,) = names.inputs
    (output,) = names.outputs
    ndim = node.inputs[0].type.ndim
    input_type, output_type = C_TYPES[input_dtype], C_TYPES[output_dtype]
    if op.axis is None:
        output_dims = f"npy_intp output_dims[1] = {{PyArray_SIZE({x})}};"
        output_ndim = 1
    else:
        output_dims = f"const npy_intp *output_dims = PyArray_DIMS({x});"
        output_ndim = ndim
    prepare = f"""{output_dims}
if (sympile_prepare_output(&{output}, {output_ndim}, output_dims, {NPY_TYPES[output_dtype]})
        != 0) {{
    {names.fail}
}}
{output_type} *values = ({output_type} *)PyArray_DATA({output});"""
    if ndim == 0:
        return CCode(body=f"""{prepare}
values[0] = ({output_type})*(const {input_type} *)PyArray_DATA({x});
""")
    last = ndim - 1
    if op.axis is None:
        first_of_line, back, inner = "position == 0", "1", ""
    else:
        first_of_line = "i == 0" if op.axis == last else f"counter[{op.axis}] == 0"
        back = "inner"
        inner = f"""npy_intp inner = 1;
for (int axis = {op.axis + 1}; axis < {ndim}; ++axis)
    inner *= PyArray_DIM({x}, axis);"""
    return CCode(body=f"""{prepare}
{inner}
const npy_intp *dims = PyArray_DIMS({x}), *strides = PyArray_STRIDES({x});
npy_intp counter[{ndim}] = {{0}};
npy_intp position = 0;
const char *row = PyArray_BYTES({x});
if (PyArray_SIZE({x}) > 0) for (;;) {{
    for (npy_intp i = 0; i < dims[{last}]; ++i, ++position) {{
        const {output_type} element = ({output_type})*(const {input_type} *)(
            row + i * strides[{last}]);
        values[position] = {first_of_line} ? element
            : {_combine(op.mode, output_dtype, f"values[position - {back}]", "element")};
    }}
    int axis = {last} - 1;
    for (; axis >= 0; --axis) {{
        if (++counter[axis] < dims[axis]) {{
            row += strides[axis];
            break;
        }}
        counter[axis] = 0;
        row -= strides[axis] * (dims[axis] - 1);
    }}
    if (axis < 0) break;
}}
""")
