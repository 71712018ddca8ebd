static void sympile_elemwise_shape_error(const char *op, int count,
                                         PyArrayObject *const *arrays, int axis,
                                         npy_intp first, npy_intp second)
{
    char shapes[1024];
    size_t used = 0;
    shapes[0] = '\0';
    for (int k = 0; k < count && used < sizeof(shapes); k++) {
        int ndim = PyArray_NDIM(arrays[k]);
        used += snprintf(shapes + used, sizeof(shapes) - used, "%s(", k ? ", " : "");
        for (int a = 0; a < ndim && used < sizeof(shapes); a++)
            used += snprintf(shapes + used, sizeof(shapes) - used, "%s%zd", a ? ", " : "",
                             (Py_ssize_t)PyArray_DIMS(arrays[k])[a]);
        if (used < sizeof(shapes))
            used += snprintf(shapes + used, sizeof(shapes) - used, ndim == 1 ? ",)" : ")");
    }
    if (first == 1 || second == 1)
        PyErr_Format(PyExc_ValueError,
                     "%s: input shapes %s differ at axis %d, where one input has length 1 at "
                     "run time but its type does not say the axis is broadcastable; declare "
                     "it (row/col, dimshuffle('x', ...), specify_shape or a static shape) to "
                     "broadcast it", op, shapes, axis);
    else
        PyErr_Format(PyExc_ValueError,
                     "%s: input shapes %s cannot be broadcast together (axis %d has lengths "
                     "%zd and %zd)", op, shapes, axis, (Py_ssize_t)first, (Py_ssize_t)second);
}
