"""C code of Join (numpy.concatenate along an axis given as an integer scalar input): the
node reads the axis and calls sympile_join (join.c: perform's checks with its messages, then
block copies of each tensor into its slab of the output)."""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, c_string
from sympile.tensor.c_toolkit import SHAPE_TEXT

__all__ = ["join_c_code"]

_JOIN = c_file(__file__, "join.c")


def join_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of Join; None for a uint64 axis (not every value is an npy_int64)."""
    axis_dtype = node.inputs[0].type.dtype
    if axis_dtype not in C_TYPES or axis_dtype == "uint64":
        return None
    axis_name, *tensors = names.inputs
    (output,) = names.outputs
    ndim = node.outputs[0].type.ndim
    dtype = node.outputs[0].type.dtype
    count = len(tensors)
    tensor_list = ", ".join(tensors)
    return CCode(body=f"""
PyArrayObject *tensors[{count}] = {{{tensor_list}}};
const npy_int64 axis = (npy_int64)*(const {C_TYPES[axis_dtype]} *)PyArray_DATA({axis_name});
if (sympile_join(&{output}, tensors, {count}, {ndim}, axis, {NPY_TYPES[dtype]},
                 {c_string(op)}) != 0) {{
    {names.fail}
}}
""", support=(SHAPE_TEXT, _JOIN))
