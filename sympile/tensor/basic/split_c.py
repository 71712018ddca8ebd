"""C code of Split: the node reads the axis and the sizes, sympile_split_check (split.c)
makes perform's checks (the axis in range, the number of sizes, sizes >= 0 and adding up to
x's length on the axis) with its messages, then each piece is a view of x (its base, its
strides and writeability) that starts where the previous one ends (view_map,
sympile_split_view). uint64 axes or sizes give no C code (perform runs).
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, CCode, CNames, c_file, c_string

__all__ = ["split_c_code"]

_SPLIT = c_file(__file__, "split.c")


def split_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of Split: see the module docstring."""
    x_type, axis_type, splits_type = (v.type for v in node.inputs)
    if any(t.dtype not in C_TYPES or t.dtype == "uint64" for t in (axis_type, splits_type)):
        return None
    x, axis_name, splits = names.inputs
    count = op.n_splits
    outputs = ", ".join(f"&{output}" for output in names.outputs)
    return CCode(body=f"""
npy_int64 axis = (npy_int64)*(const {C_TYPES[axis_type.dtype]} *)PyArray_DATA({axis_name});
const npy_intp entries = PyArray_DIM({splits}, 0);
npy_int64 sizes[{count}];
for (int which = 0; which < {count} && which < entries; ++which)
    sizes[which] = (npy_int64)*(const {C_TYPES[splits_type.dtype]} *)(
        PyArray_BYTES({splits}) + which * PyArray_STRIDE({splits}, 0));
if (sympile_split_check({x}, &axis, entries, sizes, {count}, {c_string(op)}) != 0) {{
    {names.fail}
}}
PyArrayObject **pieces[{count}] = {{{outputs}}};
npy_intp start = 0;
for (int which = 0; which < {count}; ++which) {{
    if (sympile_split_view({x}, (int)axis, start, sizes[which], pieces[which]) != 0) {{
        {names.fail}
    }}
    start += sizes[which];
}}
""", support=(_SPLIT,))
