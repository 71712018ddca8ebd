/* What op bodies and the node functions use to read and write their cells. */
static inline int sympile_prepare_output(PyArrayObject **out, int ndim, const npy_intp *dims,
                                         int typenum)
{
    PyArrayObject *old = *out;
    /* Reuse only an array nothing else refers to: a user or a view may hold any other. */
    if (old != NULL && Py_REFCNT(old) == 1 && PyArray_NDIM(old) == ndim
            && PyArray_TYPE(old) == typenum && PyArray_BASE(old) == NULL
            && PyArray_IS_C_CONTIGUOUS(old) && PyArray_ISWRITEABLE(old)) {
        int same = 1;
        for (int axis = 0; axis < ndim; axis++)
            same &= PyArray_DIMS(old)[axis] == dims[axis];
        if (same)
            return 0;
    }
    Py_XDECREF(old);
    *out = (PyArrayObject *)PyArray_EMPTY(ndim, (npy_intp *)dims, typenum, 0);
    return *out == NULL ? -1 : 0;
}

static inline int sympile_assign_output(PyArrayObject **out, PyArrayObject *value)
{
    Py_XDECREF(*out);
    *out = value;
    return value == NULL ? -1 : 0;
}

static inline PyArrayObject *sympile_take_output(PyObject *cell)
{
    PyObject *value = PyList_GET_ITEM(cell, 0);
    if (value == Py_None)
        return NULL;
    /* The cell's reference moves to the node, so an array nobody else holds has count 1. */
    Py_INCREF(Py_None);
    PyList_SET_ITEM(cell, 0, Py_None);
    if (!PyArray_Check(value)) {
        Py_DECREF(value);
        return NULL;
    }
    return (PyArrayObject *)value;
}

static inline void sympile_store_output(PyObject *cell, PyArrayObject *value)
{
    PyObject *old = PyList_GET_ITEM(cell, 0);
    PyList_SET_ITEM(cell, 0, (PyObject *)value);
    Py_XDECREF(old);
}
