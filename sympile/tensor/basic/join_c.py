"""C code of Join (numpy.concatenate along an axis given as an integer scalar input).

perform's checks (the axis in range, equal lengths off the axis) with its messages, then
each tensor goes into its slab of a C-contiguous output: block copies (memcpy) for a
C-contiguous tensor of the output's dtype, otherwise one converting, broadcast-free copy
(PyArray_CopyInto) into a view of the slab.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames
from sympile.tensor.c_toolkit import SHAPE_TEXT

__all__ = ["join_c_code"]


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
npy_int64 axis = (npy_int64)*(const {C_TYPES[axis_dtype]} *)PyArray_DATA({axis_name});
if (axis < -{ndim} || axis >= {ndim}) {{
    PyErr_Format(PyExc_ValueError, "{op}: axis %lld is out of bounds for {ndim} dimensions",
                 (long long)axis);
    {names.fail}
}}
if (axis < 0) axis += {ndim};
npy_intp dims[{ndim}];
for (int dimension = 0; dimension < {ndim}; ++dimension)
    dims[dimension] = PyArray_DIM(tensors[0], dimension);
dims[axis] = 0;
int mismatch = 0;
for (int which = 0; which < {count}; ++which) {{
    for (int dimension = 0; dimension < {ndim}; ++dimension)
        if (dimension != axis && PyArray_DIM(tensors[which], dimension) != dims[dimension])
            mismatch = 1;
    dims[axis] += PyArray_DIM(tensors[which], axis);
}}
if (mismatch) {{
    char shapes[{count} * 1600 + 1] = "";
    size_t used = 0;
    for (int which = 0; which < {count}; ++which) {{
        if (which) used += (size_t)snprintf(shapes + used, sizeof shapes - used, ", ");
        sympile_shape_text(shapes + used, sizeof shapes - used, {ndim},
                           PyArray_DIMS(tensors[which]));
        used += strlen(shapes + used);
    }}
    PyErr_Format(PyExc_ValueError, "{op}: cannot join arrays of shapes %s along axis %lld: "
                 "their other lengths differ", shapes, (long long)axis);
    {names.fail}
}}
if (sympile_prepare_output(&{output}, {ndim}, dims, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
/* The output is C-contiguous: `outer` blocks (the axes before `axis`), each holding every
   tensor's slab in turn; `inner` bytes per step along the axis (from the lengths: the
   strides of an empty array need not say). */
npy_intp outer = 1, inner = PyArray_ITEMSIZE({output});
for (int dimension = 0; dimension < axis; ++dimension) outer *= dims[dimension];
for (int dimension = axis + 1; dimension < {ndim}; ++dimension) inner *= dims[dimension];
const npy_intp output_block = inner * dims[axis];
char *slab = PyArray_BYTES({output});
for (int which = 0; which < {count}; ++which) {{
    PyArrayObject *tensor = tensors[which];
    const npy_intp tensor_block = inner * PyArray_DIM(tensor, axis);
    if (PyArray_TYPE(tensor) == {NPY_TYPES[dtype]} && PyArray_IS_C_CONTIGUOUS(tensor)) {{
        const char *source = PyArray_BYTES(tensor);
        for (npy_intp block = 0; block < outer; ++block)
            memcpy(slab + block * output_block, source + block * tensor_block,
                   (size_t)tensor_block);
    }} else {{
        Py_INCREF(PyArray_DESCR({output}));
        PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
            &PyArray_Type, PyArray_DESCR({output}), {ndim}, PyArray_DIMS(tensor),
            PyArray_STRIDES({output}), slab, NPY_ARRAY_WRITEABLE, NULL);
        if (view == NULL) {{ {names.fail} }}
        int status = PyArray_CopyInto(view, tensor);
        Py_DECREF(view);
        if (status < 0) {{ {names.fail} }}
    }}
    slab += tensor_block;
}}
""", support=(SHAPE_TEXT,))
