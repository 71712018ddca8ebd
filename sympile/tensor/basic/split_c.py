"""C code of Split: perform's checks (the axis in range, the number of sizes, sizes >= 0 and
adding up to x's length on the axis) with its messages, then each piece a view of x (its
base, its strides and writeability) that starts where the previous one ends (view_map).
uint64 axes or sizes give no C code (perform runs).
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, CCode, CNames, c_string

__all__ = ["split_c_code"]


def split_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of Split: see the module docstring."""
    x_type, axis_type, splits_type = (v.type for v in node.inputs)
    if any(t.dtype not in C_TYPES or t.dtype == "uint64" for t in (axis_type, splits_type)):
        return None
    x, axis_name, splits = names.inputs
    ndim, count = x_type.ndim, op.n_splits
    size_type = C_TYPES[splits_type.dtype]
    op_text = c_string(op)
    views = []
    for number, output in enumerate(names.outputs):
        views.append(f"""{{
    npy_intp dims[{ndim}];
    for (int dimension = 0; dimension < {ndim}; ++dimension)
        dims[dimension] = PyArray_DIM({x}, dimension);
    dims[axis] = sizes[{number}];
    Py_INCREF(PyArray_DESCR({x}));
    PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, PyArray_DESCR({x}), {ndim}, dims, PyArray_STRIDES({x}),
        PyArray_BYTES({x}) + (sizes[{number}] > 0 ? start * PyArray_STRIDE({x}, axis) : 0),
        PyArray_FLAGS({x}) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL) {{
        {names.fail}
    }}
    Py_INCREF({x});
    if (PyArray_SetBaseObject(view, (PyObject *){x}) != 0) {{
        Py_DECREF(view);
        {names.fail}
    }}
    if (sympile_assign_output(&{output}, view) != 0) {{
        {names.fail}
    }}
    start += sizes[{number}];
}}""")
    views_code = "\n".join(views)
    return CCode(body=f"""
npy_int64 axis = (npy_int64)*(const {C_TYPES[axis_type.dtype]} *)PyArray_DATA({axis_name});
if (axis < -{ndim} || axis >= {ndim}) {{
    PyErr_Format(PyExc_ValueError, "%s: axis %lld is out of bounds for {ndim} dimensions",
                 {op_text}, (long long)axis);
    {names.fail}
}}
if (axis < 0) axis += {ndim};
if (PyArray_DIM({splits}, 0) != {count}) {{
    PyErr_Format(PyExc_ValueError, "%s: splits has %lld entries, expected {count}", {op_text},
                 (long long)PyArray_DIM({splits}, 0));
    {names.fail}
}}
npy_int64 sizes[{count}];
npy_int64 total = 0;
int negative = 0;
for (int which = 0; which < {count}; ++which) {{
    sizes[which] = (npy_int64)*(const {size_type} *)(PyArray_BYTES({splits})
                                                    + which * PyArray_STRIDE({splits}, 0));
    if (sizes[which] < 0) negative = 1;
    total += sizes[which];
}}
if (negative || total != PyArray_DIM({x}, axis)) {{
    PyObject *size_list = PyList_New({count});
    for (int which = 0; size_list != NULL && which < {count}; ++which)
        PyList_SET_ITEM(size_list, which, PyLong_FromLongLong(sizes[which]));
    PyObject *shape = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({x}));
    if (size_list != NULL && shape != NULL) {{
        if (negative)
            PyErr_Format(PyExc_ValueError, "%s: split sizes must be >= 0, got %R", {op_text},
                         size_list);
        else
            PyErr_Format(PyExc_ValueError, "%s: split sizes %R add up to %lld, but axis %lld "
                         "of the input (shape %R) has length %lld", {op_text}, size_list,
                         (long long)total, (long long)axis, shape,
                         (long long)PyArray_DIM({x}, axis));
    }}
    Py_XDECREF(size_list);
    Py_XDECREF(shape);
    {names.fail}
}}
npy_intp start = 0;
{views_code}
""")
