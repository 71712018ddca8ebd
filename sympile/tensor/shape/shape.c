/* The shape family's nodes (shape_c.py): a library unit compiled once per cache, whose entry
   points (shape.h) the program calls with each node's cells and table. */

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

int @NAME@_shape(PyObject *const *cells, const void *data)
{
    (void)data;
    PyArrayObject *x = (PyArrayObject *)PyList_GET_ITEM(cells[0], 0);
    PyArrayObject *output = sympile_take_output(cells[1]);
    npy_intp length = PyArray_NDIM(x);
    if (sympile_prepare_output(&output, 1, &length, NPY_INT64) != 0)
        return -1;
    for (int axis = 0; axis < PyArray_NDIM(x); ++axis)
        ((npy_int64 *)PyArray_DATA(output))[axis] = (npy_int64)PyArray_DIM(x, axis);
    sympile_store_output(cells[1], output);
    return 0;
}

int @NAME@_shape_i(PyObject *const *cells, const void *data)
{
    PyArrayObject *x = (PyArrayObject *)PyList_GET_ITEM(cells[0], 0);
    PyArrayObject *output = sympile_take_output(cells[1]);
    if (sympile_prepare_output(&output, 0, NULL, NPY_INT64) != 0)
        return -1;
    *(npy_int64 *)PyArray_DATA(output) = (npy_int64)PyArray_DIM(x, *(const int *)data);
    sympile_store_output(cells[1], output);
    return 0;
}

int @NAME@_view(PyObject *const *cells, const void *data)
{
    (void)data;
    PyObject *x = PyList_GET_ITEM(cells[0], 0);
    Py_INCREF(x);
    sympile_store_output(cells[1], (PyArrayObject *)x);
    return 0;
}

int @NAME@_specify_shape(PyObject *const *cells, const void *data)
{
    const int ndim = *(const int *)data;
    PyArrayObject *x = (PyArrayObject *)PyList_GET_ITEM(cells[0], 0);
    npy_int64 lengths[NPY_MAXDIMS];
    for (int axis = 0; axis < ndim; ++axis)
        lengths[axis] = sympile_integer_value(
            (PyArrayObject *)PyList_GET_ITEM(cells[1 + axis], 0), 0);
    if (sympile_specify_shape_check(x, lengths, ndim) != 0)
        return -1;
    Py_INCREF(x);
    sympile_store_output(cells[1 + ndim], x);
    return 0;
}

int @NAME@_reshape(PyObject *const *cells, const void *data)
{
    const SympileReshape *node = data;
    PyArrayObject *x = (PyArrayObject *)PyList_GET_ITEM(cells[0], 0);
    PyArrayObject *shape = (PyArrayObject *)PyList_GET_ITEM(cells[1], 0);
    const npy_intp entries = PyArray_DIM(shape, 0);
    npy_intp requested[NPY_MAXDIMS];
    for (int axis = 0; axis < node->ndim && axis < entries; ++axis)
        requested[axis] = (npy_intp)sympile_integer_value(shape, axis);
    PyArrayObject *output = sympile_take_output(cells[2]);
    if (sympile_reshape(x, requested, entries, node->ndim, node->op, &output) != 0) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[2], output);
    return 0;
}

/* MakeVector of integer scalars into an int64 vector: *(const int *)data of them. */
int @NAME@_make_vector(PyObject *const *cells, const void *data)
{
    const int count = *(const int *)data;
    PyArrayObject *output = sympile_take_output(cells[count]);
    const npy_intp length = count;
    if (sympile_prepare_output(&output, 1, &length, NPY_INT64) != 0)
        return -1;
    npy_int64 *values = (npy_int64 *)PyArray_DATA(output);
    for (int k = 0; k < count; ++k)
        values[k] = sympile_integer_value((PyArrayObject *)PyList_GET_ITEM(cells[k], 0), 0);
    sympile_store_output(cells[count], output);
    return 0;
}
