/* What the random ops' bodies share: errors that show a value, reading `size` and the
   parameters. Each function returns 0 (or the array), or -1 (NULL) with an exception set. */

/* A ValueError "label: what, got value" (value as Python's repr of the float). */
static void sympile_random_value_error(const char *label, const char *what, npy_float64 value)
{
    char *text = PyOS_double_to_string(value, 'r', 0, 0, NULL);
    PyErr_Format(PyExc_ValueError, "%s: %s, got %s", label, what, text != NULL ? text : "?");
    PyMem_Free(text);
}

/* A probability given as a one-value float64 array, checked to be in [0, 1]. */
static int sympile_random_check_p(PyArrayObject *p, const char *label)
{
    const npy_float64 value = *(npy_float64 *)PyArray_DATA(p);
    if (!(value >= 0.0 && value <= 1.0)) {
        sympile_random_value_error(label, "p must be in [0, 1]", value);
        return -1;
    }
    return 0;
}

static int sympile_random_size(PyArrayObject *size, int length, npy_intp *dims,
                               npy_int64 *count, const char *label)
{
    if (PyArray_DIM(size, 0) != length) {
        PyErr_Format(PyExc_ValueError, "%s: size has %ld entries, expected %d", label,
                     (long)PyArray_DIM(size, 0), length);
        return -1;
    }
    *count = 1;
    for (int axis = 0; axis < length; ++axis) {
        dims[axis] = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(size, axis);
        if (dims[axis] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: size must have no negative entry, got %ld at "
                         "position %d", label, (long)dims[axis], axis);
            return -1;
        }
        *count *= dims[axis];
    }
    return 0;
}

/* A parameter as a C-contiguous array of `typenum` (a new reference), read with step 0 when
   it holds one value, else 1 when it has the sample's shape `dims`. */
static PyArrayObject *sympile_random_parameter(PyArrayObject *input, int typenum, int ndim,
                                               const npy_intp *dims, npy_intp *step,
                                               const char *label, const char *name)
{
    PyArrayObject *array = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)input, typenum, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (array == NULL)
        return NULL;
    if (PyArray_SIZE(array) == 1) {
        *step = 0;
        return array;
    }
    int same = PyArray_NDIM(array) == ndim;
    for (int axis = 0; same && axis < ndim; ++axis)
        same = PyArray_DIM(array, axis) == dims[axis];
    if (!same) {
        PyErr_Format(PyExc_ValueError, "%s: %s has a shape that does not match size", label,
                     name);
        Py_DECREF(array);
        return NULL;
    }
    *step = 1;
    return array;
}

/* pvals as a C-contiguous float64 array (a new reference) of `categories` per row: one row
   for every sample (step 0, ndim 1) or one per sample (step 1, shape dims + (categories,)). */
static PyArrayObject *sympile_random_rows(PyArrayObject *input, int ndim, const npy_intp *dims,
                                          npy_intp *categories, npy_intp *step,
                                          const char *label)
{
    PyArrayObject *array = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)input, NPY_FLOAT64, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (array == NULL)
        return NULL;
    *categories = PyArray_DIM(array, PyArray_NDIM(array) - 1);
    *step = PyArray_NDIM(array) == 1 ? 0 : 1;
    int same = *step == 0 || PyArray_NDIM(array) == ndim + 1;
    for (int axis = 0; *step && same && axis < ndim; ++axis)
        same = PyArray_DIM(array, axis) == dims[axis];
    if (!same) {
        PyErr_Format(PyExc_ValueError, "%s: pvals has a shape that does not match size", label);
        Py_DECREF(array);
        return NULL;
    }
    return array;
}

static int sympile_random_count_fits(npy_int64 count, const char *label)
{
    if (count > 4294967295LL) {
        PyErr_Format(PyExc_ValueError, "%s: a draw of %lld elements is too large; draw at "
                     "most 4294967295 at once", label, (long long)count);
        return -1;
    }
    return 0;
}
