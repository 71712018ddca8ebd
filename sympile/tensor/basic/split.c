/* Split's checks with perform's messages (`op` names the op): `*axis` in range for x (a
   negative one counting from the end, which this turns into its position), `entries` sizes
   given for `count` pieces, each >= 0 and together x's length on the axis. `sizes` holds
   the first min(entries, count) sizes. Returns 0, or -1 with a Python exception set. */
static int sympile_split_check(PyArrayObject *x, npy_int64 *axis, npy_intp entries,
                               const npy_int64 *sizes, int count, const char *op)
{
    const int ndim = PyArray_NDIM(x);
    if (*axis < -ndim || *axis >= ndim) {
        PyErr_Format(PyExc_ValueError, "%s: axis %lld is out of bounds for %d dimensions", op,
                     (long long)*axis, ndim);
        return -1;
    }
    if (*axis < 0) *axis += ndim;
    if (entries != count) {
        PyErr_Format(PyExc_ValueError, "%s: splits has %lld entries, expected %d", op,
                     (long long)entries, count);
        return -1;
    }
    npy_int64 total = 0;
    int negative = 0;
    for (int which = 0; which < count; ++which) {
        if (sizes[which] < 0) negative = 1;
        total += sizes[which];
    }
    if (!negative && total == PyArray_DIM(x, (int)*axis))
        return 0;
    PyObject *size_list = PyList_New(count);
    for (int which = 0; size_list != NULL && which < count; ++which)
        PyList_SET_ITEM(size_list, which, PyLong_FromLongLong(sizes[which]));
    PyObject *shape = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(x));
    if (size_list != NULL && shape != NULL) {
        if (negative)
            PyErr_Format(PyExc_ValueError, "%s: split sizes must be >= 0, got %R", op,
                         size_list);
        else
            PyErr_Format(PyExc_ValueError, "%s: split sizes %R add up to %lld, but axis %lld "
                         "of the input (shape %R) has length %lld", op, size_list,
                         (long long)total, (long long)*axis, shape,
                         (long long)PyArray_DIM(x, (int)*axis));
    }
    Py_XDECREF(size_list);
    Py_XDECREF(shape);
    return -1;
}

/* *output becomes the piece of x of `size` along `axis` starting at `start`: a view of x (its
   base, strides and writeability). Returns 0, or -1 with a Python exception set. */
static int sympile_split_view(PyArrayObject *x, int axis, npy_intp start, npy_intp size,
                              PyArrayObject **output)
{
    const int ndim = PyArray_NDIM(x);
    npy_intp dims[NPY_MAXDIMS];
    for (int dimension = 0; dimension < ndim; ++dimension)
        dims[dimension] = PyArray_DIM(x, dimension);
    dims[axis] = size;
    Py_INCREF(PyArray_DESCR(x));
    PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, PyArray_DESCR(x), ndim, dims, PyArray_STRIDES(x),
        PyArray_BYTES(x) + (size > 0 ? start * PyArray_STRIDE(x, axis) : 0),
        PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL)
        return -1;
    Py_INCREF(x);
    if (PyArray_SetBaseObject(view, (PyObject *)x) != 0) {
        Py_DECREF(view);
        return -1;
    }
    return sympile_assign_output(output, view);
}
