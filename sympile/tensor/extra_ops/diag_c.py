"""C code of the diagonal ops: ExtractDiag (numpy.diagonal, copied), AllocDiag (numpy.diag of
a vector), EmbedDiag (ExtractDiag's transpose) and FillDiagonal (numpy.fill_diagonal on a
copy). Each builds, in C, the strided view of a diagonal that numpy.diagonal describes (the
other axes in order, then the diagonal, whose stride is the sum of the two axes' strides) and
copies through it with PyArray_CopyInto (any dtype, any input strides); the outputs are
C-contiguous, zero-filled first where the op starts from zeros.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import NPY_TYPES, CCode, CNames

__all__ = ["alloc_diag_c_code", "embed_diag_c_code", "extract_diag_c_code",
           "fill_diagonal_c_code"]


def _diagonal_view(array: str, ndim: int, offset: int, axis1: int, axis2: int, writeable: bool,
                   view: str, fail: str) -> str:
    """C that declares `view`: a new PyArrayObject * viewing diagonal `offset` of `array`
    (of `ndim` axes) over (axis1, axis2), as numpy.diagonal lays it out. The caller releases
    it; `array` must outlive it."""
    other_axes = [axis for axis in range(ndim) if axis not in (axis1, axis2)]
    lines = [f"npy_intp {view}_dims[{ndim - 1}], {view}_strides[{ndim - 1}];"]
    for position, axis in enumerate(other_axes):
        lines.append(f"{view}_dims[{position}] = PyArray_DIM({array}, {axis}); "
                     f"{view}_strides[{position}] = PyArray_STRIDE({array}, {axis});")
    rows, columns = f"PyArray_DIM({array}, {axis1})", f"PyArray_DIM({array}, {axis2})"
    if offset >= 0:
        length = f"{columns} - {offset} < {rows} ? {columns} - {offset} : {rows}"
        start = f"{offset} * PyArray_STRIDE({array}, {axis2})"
    else:
        length = f"{rows} + {offset} < {columns} ? {rows} + {offset} : {columns}"
        start = f"{-offset} * PyArray_STRIDE({array}, {axis1})"
    flags = "NPY_ARRAY_WRITEABLE" if writeable else "0"
    lines.append(f"""{{
    const npy_intp length = {length};
    {view}_dims[{ndim - 2}] = length > 0 ? length : 0;
}}
{view}_strides[{ndim - 2}] = PyArray_STRIDE({array}, {axis1}) + PyArray_STRIDE({array}, {axis2});
Py_INCREF(PyArray_DESCR({array}));
PyArrayObject *{view} = (PyArrayObject *)PyArray_NewFromDescr(
    &PyArray_Type, PyArray_DESCR({array}), {ndim - 1}, {view}_dims, {view}_strides,
    PyArray_BYTES({array}) + ({view}_dims[{ndim - 2}] > 0 ? {start} : 0), {flags}, NULL);
if ({view} == NULL) {{
    {fail}
}}""")
    return "\n".join(lines)


def _copy_through(destination: str, source: str, view: str, fail: str) -> str:
    """C that copies source into destination, then releases the diagonal `view`."""
    return f"""{{
    const int copied = PyArray_CopyInto({destination}, {source});
    Py_DECREF({view});
    if (copied < 0) {{
        {fail}
    }}
}}"""


def _zeros(output: str, ndim: int, dims: str, dtype: str, fail: str) -> str:
    return f"""if (sympile_prepare_output(&{output}, {ndim}, {dims}, {NPY_TYPES[dtype]}) != 0) {{
    {fail}
}}
memset(PyArray_DATA({output}), 0, PyArray_NBYTES({output}));"""


def extract_diag_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of ExtractDiag: the diagonal view of x copied into the output."""
    x_type = node.inputs[0].type
    if x_type.dtype not in NPY_TYPES:
        return None
    (x,), (output,) = names.inputs, names.outputs
    ndim = x_type.ndim
    return CCode(body=f"""
{_diagonal_view(x, ndim, op.offset, op.axis1, op.axis2, False, "diagonal", names.fail)}
if (sympile_prepare_output(&{output}, {ndim - 1}, diagonal_dims, {NPY_TYPES[x_type.dtype]})
        != 0) {{
    Py_DECREF(diagonal);
    {names.fail}
}}
{_copy_through(output, "diagonal", "diagonal", names.fail)}
""")


def alloc_diag_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AllocDiag: v copied into the diagonal view of a zero square matrix."""
    dtype = node.inputs[0].type.dtype
    if dtype not in NPY_TYPES:
        return None
    (v,), (output,) = names.inputs, names.outputs
    return CCode(body=f"""
npy_intp size = PyArray_DIM({v}, 0) + {abs(op.offset)};
npy_intp dims[2] = {{size, size}};
{_zeros(output, 2, "dims", dtype, names.fail)}
{_diagonal_view(output, 2, op.offset, 0, 1, True, "diagonal", names.fail)}
{_copy_through("diagonal", v, "diagonal", names.fail)}
""")


def embed_diag_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of EmbedDiag: zeros of like's shape, `diagonal` copied into their diagonal view
    after perform's shape check."""
    dtype = node.outputs[0].type.dtype
    if dtype not in NPY_TYPES:
        return None
    (diagonal, like), (output,) = names.inputs, names.outputs
    ndim = node.inputs[1].type.ndim
    return CCode(body=f"""
{_zeros(output, ndim, f"PyArray_DIMS({like})", dtype, names.fail)}
{_diagonal_view(output, ndim, op.offset, op.axis1, op.axis2, True, "view", names.fail)}
if (!PyArray_SAMESHAPE(view, {diagonal})) {{
    PyObject *diagonal_shape = PyArray_IntTupleFromIntp({ndim - 1}, PyArray_DIMS({diagonal}));
    PyObject *expected = PyArray_IntTupleFromIntp({ndim - 1}, PyArray_DIMS(view));
    PyObject *like_shape = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({like}));
    if (diagonal_shape != NULL && expected != NULL && like_shape != NULL)
        PyErr_Format(PyExc_ValueError, "EmbedDiag: the diagonal has shape %R, expected %R for "
                     "an input of shape %R", diagonal_shape, expected, like_shape);
    Py_XDECREF(diagonal_shape);
    Py_XDECREF(expected);
    Py_XDECREF(like_shape);
    Py_DECREF(view);
    {names.fail}
}}
{_copy_through("view", diagonal, "view", names.fail)}
""")


def fill_diagonal_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of FillDiagonal: a copy of a with val written along its main diagonal (the
    first min(rows, columns) elements for a matrix; all lengths equal for more axes)."""
    dtype = node.inputs[0].type.dtype
    if dtype not in NPY_TYPES:
        return None
    (a, val), (output,) = names.inputs, names.outputs
    ndim = node.inputs[0].type.ndim
    stride = " + ".join(f"PyArray_STRIDE({output}, {axis})" for axis in range(ndim))
    equal = " || ".join(f"PyArray_DIM({a}, {axis}) != PyArray_DIM({a}, 0)"
                        for axis in range(1, ndim))
    check = "" if ndim == 2 else f"""if ({equal}) {{
    PyObject *shape = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({a}));
    if (shape != NULL)
        PyErr_Format(PyExc_ValueError, "fill_diagonal: a {ndim}-d input must have all its "
                     "lengths equal, got shape %R", shape);
    Py_XDECREF(shape);
    {names.fail}
}}"""
    return CCode(body=f"""
{check}
if (sympile_prepare_output(&{output}, {ndim}, PyArray_DIMS({a}), {NPY_TYPES[dtype]}) != 0
        || PyArray_CopyInto({output}, {a}) < 0) {{
    {names.fail}
}}
{{
    const npy_intp count = PyArray_DIM({a}, 0) < PyArray_DIM({a}, 1) ? PyArray_DIM({a}, 0)
                                                                   : PyArray_DIM({a}, 1);
    const npy_intp step = {stride};
    const npy_intp item_size = PyArray_ITEMSIZE({output});
    for (npy_intp i = 0; i < count; ++i)
        memcpy(PyArray_BYTES({output}) + i * step, PyArray_DATA({val}), item_size);
}}
""")
