"""C code of Alloc: the node reads its lengths and calls sympile_alloc (alloc.c: perform's
checks of the lengths and the value's shape, with its messages, then one broadcasting copy,
PyArray_CopyInto, into the output buffer)."""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import NPY_TYPES, CCode, CNames, c_file, c_string

__all__ = ["alloc_c_code"]

_ALLOC = c_file(__file__, "alloc.c")


def alloc_c_code(op, node: Apply, names: CNames) -> CCode:
    """C code of Alloc: see the module docstring."""
    value, lengths = names.inputs[0], names.inputs[1:]
    ndim = len(lengths)
    read_lengths = "\n".join(
        f"dims[{axis}] = (npy_intp)*(const npy_int64 *)PyArray_DATA({length});"
        for axis, length in enumerate(lengths))
    # The value's axes of static length 1 broadcast by their type: not checked.
    checked = ", ".join(str(int(static != 1)) for static in node.inputs[0].type.shape) or "0"
    return CCode(body=f"""
npy_intp dims[{max(ndim, 1)}];
{read_lengths}
static const unsigned char checked[] = {{{checked}}};
if (sympile_alloc({value}, dims, {ndim}, checked, {NPY_TYPES[node.outputs[0].type.dtype]},
                  {c_string(op)}, &{names.outputs[0]}) != 0) {{
    {names.fail}
}}
""", support=(_ALLOC,))
