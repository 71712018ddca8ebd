static void sympile_index_value_shape_error(const char *op, PyArrayObject *value,
                                            int region_ndim, const npy_intp *region,
                                            int axis, int undeclared_broadcast)
{
    PyObject *value_shape = PyArray_IntTupleFromIntp(PyArray_NDIM(value),
                                                     PyArray_DIMS(value));
    PyObject *region_shape = PyArray_IntTupleFromIntp(region_ndim, (npy_intp *)region);
    if (value_shape != NULL && region_shape != NULL) {
        if (undeclared_broadcast)
            PyErr_Format(PyExc_ValueError, "%s: the value has shape %R and the indexed region "
                         "%R: axis %d of the value has length 1 at run time but its type does "
                         "not say it is broadcastable; declare it (row/col, dimshuffle('x', "
                         "...), specify_shape or a static shape) to broadcast it", op,
                         value_shape, region_shape, axis);
        else
            PyErr_Format(PyExc_ValueError, "%s: a value of shape %R cannot be broadcast to "
                         "the indexed region of shape %R", op, value_shape, region_shape);
    }
    Py_XDECREF(value_shape);
    Py_XDECREF(region_shape);
}
