/* PermuteAlongAxis with a permutation of @I@: perform's checks with its messages (equal
   shapes, entries in [0, n), each line along `axis` a permutation), then one pass that
   gathers, out[..., j, ...] = x[..., p[..., j, ...], ...], or when `inverse` scatters,
   out[..., p[..., j, ...], ...] = x[..., j, ...], into the C-contiguous *output of type
   `typenum` (elements copied: every dtype; any strides). Returns 0, or -1 with a Python
   exception set. */
static int sympile_permute_along_axis_@NAME@(PyArrayObject *x, PyArrayObject *permutation,
                                             int axis, int inverse, int typenum,
                                             PyArrayObject **output)
{
    const int ndim = PyArray_NDIM(x);
    if (!PyArray_SAMESHAPE(x, permutation)) {
        PyObject *permutation_shape = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(permutation));
        PyObject *x_shape = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(x));
        if (permutation_shape != NULL && x_shape != NULL)
            PyErr_Format(PyExc_ValueError, "PermuteAlongAxis: permutation has shape %R, x has "
                         "%R", permutation_shape, x_shape);
        Py_XDECREF(permutation_shape);
        Py_XDECREF(x_shape);
        return -1;
    }
    const npy_intp *dims = PyArray_DIMS(x);
    const npy_intp length = dims[axis];
    const npy_intp p_stride = PyArray_STRIDE(permutation, axis);
    /* One line along the axis per position of the other axes (the last one fastest). */
    npy_intp lines = PyArray_SIZE(x) > 0 ? 1 : 0;
    for (int other = 0; other < ndim; ++other)
        if (other != axis) lines *= dims[other];
    npy_intp index[NPY_MAXDIMS] = {0};
    int out_of_range = 0;
    for (npy_intp line = 0; line < lines; ++line) {
        const char *permutation_line = PyArray_BYTES(permutation);
        for (int other = 0; other < ndim; ++other)
            if (other != axis)
                permutation_line += index[other] * PyArray_STRIDE(permutation, other);
        for (npy_intp j = 0; j < length; ++j) {
            const npy_int64 entry = (npy_int64)*(const @I@ *)(permutation_line + j * p_stride);
            if (entry < 0 || entry >= length) out_of_range = 1;
        }
        for (int other = ndim - 1; other >= 0; --other) {
            if (other == axis) continue;
            if (++index[other] < dims[other]) break;
            index[other] = 0;
        }
    }
    if (out_of_range) {
        PyErr_Format(PyExc_ValueError, "PermuteAlongAxis: permutation entries must lie in "
                     "[0, %lld)", (long long)length);
        return -1;
    }
    if (sympile_prepare_output(output, ndim, dims, typenum) != 0)
        return -1;
    int missing = 0;
    if (lines > 0) {
        char *reached = (char *)malloc(length);
        if (reached == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        const npy_intp x_stride = PyArray_STRIDE(x, axis);
        const npy_intp output_stride = PyArray_STRIDE(*output, axis);
        const npy_intp item_size = PyArray_ITEMSIZE(x);
        for (int other = 0; other < ndim; ++other) index[other] = 0;
        for (npy_intp line = 0; line < lines; ++line) {
            const char *permutation_line = PyArray_BYTES(permutation);
            const char *x_line = PyArray_BYTES(x);
            char *output_line = PyArray_BYTES(*output);
            for (int other = 0; other < ndim; ++other) {
                if (other == axis) continue;
                permutation_line += index[other] * PyArray_STRIDE(permutation, other);
                x_line += index[other] * PyArray_STRIDE(x, other);
                output_line += index[other] * PyArray_STRIDE(*output, other);
            }
            memset(reached, 0, length);
            for (npy_intp j = 0; j < length; ++j) {
                const npy_int64 entry = (npy_int64)*(const @I@ *)(permutation_line
                                                                  + j * p_stride);
                reached[entry] = 1;
                const npy_intp source = inverse ? j : entry, target = inverse ? entry : j;
                memcpy(output_line + target * output_stride, x_line + source * x_stride,
                       (size_t)item_size);
            }
            for (npy_intp j = 0; j < length; ++j) if (!reached[j]) missing = 1;
            for (int other = ndim - 1; other >= 0; --other) {
                if (other == axis) continue;
                if (++index[other] < dims[other]) break;
                index[other] = 0;
            }
        }
        free(reached);
    }
    if (missing) {
        PyErr_Format(PyExc_ValueError, "PermuteAlongAxis: permutation is not a permutation "
                     "along axis %d", axis);
        return -1;
    }
    return 0;
}
