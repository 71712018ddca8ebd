"""C code of Repeat: perform's checks (counts >= 0; a counts vector whose type does not say it
has length 1 has one entry per element) with its messages, then numpy's own C repeat
(PyArray_Repeat) of x, or of x raveled in C order for axis None: numpy's result exactly,
without perform()'s trip through Python.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["repeat_c_code"]


def repeat_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of Repeat: see the module docstring."""
    x_type, repeats_type = node.inputs[0].type, node.inputs[1].type
    if x_type.dtype not in NPY_TYPES or repeats_type.dtype not in C_TYPES:
        return None
    (x, repeats), (output,) = names.inputs, names.outputs
    count_type = C_TYPES[repeats_type.dtype]
    if repeats_type.ndim == 0:
        element = f"*(const {count_type} *)PyArray_DATA({repeats})"
        negative = f"{element} < 0"
        length_check = ""
    else:
        element = (f"*(const {count_type} *)(PyArray_BYTES({repeats}) "
                   f"+ i * PyArray_STRIDE({repeats}, 0))")
        negative = f"0; for (npy_intp i = 0; i < PyArray_DIM({repeats}, 0); ++i) " \
                   f"if ({element} < 0) negative = 1"
        length = f"PyArray_SIZE({x})" if op.axis is None else f"PyArray_DIM({x}, {op.axis})"
        length_check = "" if repeats_type.shape[0] == 1 else f"""
if (PyArray_DIM({repeats}, 0) != {length}) {{
    PyErr_Format(PyExc_ValueError, "repeat: repeats has %lld entries but the repeated axis has "
                 "length %lld; a repeats vector is broadcast only when its type has static "
                 "length 1", (long long)PyArray_DIM({repeats}, 0), (long long){length});
    {names.fail}
}}"""
    if op.axis is None:
        source, axis, keep = f"(PyArrayObject *)PyArray_Ravel({x}, NPY_CORDER)", 0, ""
    else:
        source, axis, keep = x, op.axis, "Py_INCREF(source);"
    return CCode(body=f"""
int negative = {negative};
if (negative) {{
    PyErr_Format(PyExc_ValueError, "repeat: repeats must be >= 0, got %S", {repeats});
    {names.fail}
}}
{length_check}
PyArrayObject *source = {source};
if (source == NULL) {{
    {names.fail}
}}
{keep}
PyObject *repeated = PyArray_Repeat(source, (PyObject *){repeats}, {axis});
Py_DECREF(source);
if (sympile_assign_output(&{output}, (PyArrayObject *)repeated) != 0) {{
    {names.fail}
}}
""")
