/* SpecifyShape's check with perform's message: each of the `ndim` lengths of x equals its
   entry of `lengths`, a negative entry matching any length. Returns 0, or -1 with a Python
   exception set. */
static int sympile_specify_shape_check(PyArrayObject *x, const npy_int64 *lengths, int ndim)
{
    int matches = 1;
    for (int axis = 0; axis < ndim; ++axis)
        if (lengths[axis] >= 0 && PyArray_DIM(x, axis) != lengths[axis]) matches = 0;
    if (matches)
        return 0;
    /* perform's text: "(2, ?)", "(3,)" */
    char expected[24 * NPY_MAXDIMS + 4];
    int used = 0;
    for (int axis = 0; axis < ndim; ++axis) {
        const char *separator = axis ? ", " : "";
        if (lengths[axis] < 0)
            used += snprintf(expected + used, sizeof(expected) - used, "%s?", separator);
        else
            used += snprintf(expected + used, sizeof(expected) - used, "%s%lld", separator,
                             (long long)lengths[axis]);
    }
    if (ndim == 1) snprintf(expected + used, sizeof(expected) - used, ",");
    PyObject *actual = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(x));
    if (actual != NULL) {
        PyErr_Format(PyExc_ValueError, "specify_shape: expected shape (%s), got %R", expected,
                     actual);
        Py_DECREF(actual);
    }
    return -1;
}

/* Reshape: *output becomes x.reshape(requested), the `ndim` entries of which were read from
   a shape vector of `entries` entries; perform's checks with its messages (`op` names the
   op): the count, entries >= -1 with one -1 at most, the size; the -1 resolved, then
   PyArray_Newshape (a view when x's strides allow one). Returns 0, or -1 with a Python
   exception set. */
static int sympile_reshape(PyArrayObject *x, const npy_intp *requested, npy_intp entries,
                           int ndim, const char *op, PyArrayObject **output)
{
    if (entries != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: the shape has %lld entries, expected %d", op,
                     (long long)entries, ndim);
        return -1;
    }
    npy_intp resolved[NPY_MAXDIMS];
    int valid = 1, open_position = -1;
    npy_intp known_product = 1;
    for (int axis = 0; axis < ndim; ++axis) {
        resolved[axis] = requested[axis];
        if (requested[axis] < -1 || (requested[axis] == -1 && open_position >= 0)) valid = 0;
        if (requested[axis] == -1) open_position = axis;
        else known_product *= requested[axis];
    }
    const npy_intp size = PyArray_SIZE(x);
    int fits = valid;
    if (valid && open_position >= 0) {
        if (known_product == 0 || size % known_product) fits = 0;
        else resolved[open_position] = size / known_product;
    } else if (valid && known_product != size) fits = 0;
    if (!fits) {
        PyObject *requested_shape = PyArray_IntTupleFromIntp(ndim, (npy_intp *)requested);
        PyObject *x_shape = PyArray_IntTupleFromIntp(PyArray_NDIM(x), PyArray_DIMS(x));
        if (requested_shape != NULL && x_shape != NULL) {
            if (!valid)
                PyErr_Format(PyExc_ValueError, "%s: shape %R is invalid: entries must be >= 0, "
                             "with at most one -1", op, requested_shape);
            else
                PyErr_Format(PyExc_ValueError, "%s: cannot reshape an array of shape %R (size "
                             "%lld) into shape %R", op, x_shape, (long long)size,
                             requested_shape);
        }
        Py_XDECREF(requested_shape);
        Py_XDECREF(x_shape);
        return -1;
    }
    PyArray_Dims dims = {resolved, ndim};
    return sympile_assign_output(output, (PyArrayObject *)PyArray_Newshape(x, &dims,
                                                                           NPY_CORDER));
}
