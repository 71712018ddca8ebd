/* Alloc: *output becomes `value` broadcast to the `ndim` lengths `dims`, in a C-contiguous
   array of type `typenum`, with perform's checks and messages (`op` names the op): no length
   is negative, and each axis of the value whose type does not say it has length 1
   (`checked[axis]`) has the length of its output axis (a value of length 1 there is an
   error, not a silent broadcast). Returns 0, or -1 with a Python exception set. */
static int sympile_alloc(PyArrayObject *value, const npy_intp *dims, int ndim,
                         const unsigned char *checked, int typenum, const char *op,
                         PyArrayObject **output)
{
    const int offset = ndim - PyArray_NDIM(value);
    int bad_axis = -1, negative = 0;
    for (int axis = 0; axis < ndim; ++axis)
        negative |= dims[axis] < 0;
    /* The first axis whose length differs from the shape's, as perform finds it. */
    for (int axis = 0; !negative && bad_axis < 0 && axis < PyArray_NDIM(value); ++axis)
        if (checked[axis] && PyArray_DIM(value, axis) != dims[offset + axis])
            bad_axis = axis;
    if (negative || bad_axis >= 0) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(value), PyArray_DIMS(value));
        PyObject *requested = shape ? PyArray_IntTupleFromIntp(ndim, dims) : NULL;
        if (requested != NULL && negative)
            PyErr_Format(PyExc_ValueError, "%s: negative length in shape %R", op, requested);
        else if (requested != NULL && PyArray_DIM(value, bad_axis) == 1)
            PyErr_Format(PyExc_ValueError, "%s: axis %d of the value (shape %R) has length 1 "
                         "at run time but its type does not say it is broadcastable, so it is "
                         "not broadcast to shape %R; declare it (row/col, dimshuffle('x', "
                         "...), specify_shape or a static shape)", op, bad_axis, shape,
                         requested);
        else if (requested != NULL)
            PyErr_Format(PyExc_ValueError, "%s: a value of shape %R cannot be broadcast to "
                         "shape %R", op, shape, requested);
        Py_XDECREF(shape);
        Py_XDECREF(requested);
        return -1;
    }
    if (sympile_prepare_output(output, ndim, dims, typenum) != 0)
        return -1;
    return PyArray_CopyInto(*output, value) < 0 ? -1 : 0;
}

/* An Alloc node (program.h's SympileNodeFunction), its table a SympileAlloc: the value, then
   one int64 0-d length per output axis. */
int @NAME@_alloc_node(PyObject *const *cells, const void *data)
{
    const SympileAlloc *node = data;
    npy_intp dims[NPY_MAXDIMS];
    for (int axis = 0; axis < node->ndim; ++axis)
        dims[axis] = (npy_intp)*(const npy_int64 *)PyArray_DATA(
            (PyArrayObject *)PyList_GET_ITEM(cells[1 + axis], 0));
    PyArrayObject *output = sympile_take_output(cells[1 + node->ndim]);
    if (sympile_alloc((PyArrayObject *)PyList_GET_ITEM(cells[0], 0), dims, node->ndim,
                      node->checked, node->typenum, node->op, &output) != 0) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[1 + node->ndim], output);
    return 0;
}
