/* GroupSum (Repeat's gradient) of @T@ with counts of @C@: perform's check with its message
   (the counts, one per group of like's length on the axis, or one for all when `shared`, are
   >= 0 and add up to y's length), then each group's entries summed in order along `axis`
   into the C-contiguous *output of type @NPY@ (empty groups 0; integers wrap as numpy's).
   Returns 0, or -1 with a Python exception set. */
static int sympile_group_sum_@NAME@(PyArrayObject *y, PyArrayObject *repeats,
                                    PyArrayObject *like, int axis, int shared,
                                    PyArrayObject **output)
{
    const npy_intp groups = PyArray_DIM(like, axis);
    npy_int64 *counts = (npy_int64 *)malloc((groups > 0 ? groups : 1) * sizeof(npy_int64));
    if (counts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int valid;
    if (shared) {
        valid = PyArray_SIZE(repeats) >= 1;
        const npy_int64 count = valid ? (npy_int64)*(const @C@ *)PyArray_DATA(repeats) : 0;
        for (npy_intp g = 0; g < groups; ++g) counts[g] = count;
    } else {
        valid = PyArray_DIM(repeats, 0) == groups;
        for (npy_intp g = 0; valid && g < groups; ++g)
            counts[g] = (npy_int64)*(const @C@ *)(PyArray_BYTES(repeats)
                                                  + g * PyArray_STRIDE(repeats, 0));
    }
    npy_int64 total = 0;
    for (npy_intp g = 0; valid && g < groups; ++g) {
        if (counts[g] < 0) valid = 0;
        total += counts[g];
    }
    if (!valid || total != PyArray_DIM(y, axis)) {
        free(counts);
        PyErr_Format(PyExc_ValueError, "GroupSum: %lld groups of repeats %S do not split the "
                     "%lld entries of y along axis %d", (long long)groups, repeats,
                     (long long)PyArray_DIM(y, axis), axis);
        return -1;
    }
    const int ndim = PyArray_NDIM(y);
    npy_intp dims[NPY_MAXDIMS];
    for (int dimension = 0; dimension < ndim; ++dimension)
        dims[dimension] = PyArray_DIM(y, dimension);
    dims[axis] = groups;
    if (sympile_prepare_output(output, ndim, dims, @NPY@) != 0) {
        free(counts);
        return -1;
    }
    if (PyArray_SIZE(*output) > 0) {
        const npy_intp y_stride = PyArray_STRIDE(y, axis);
        const npy_intp output_stride = PyArray_STRIDE(*output, axis);
        /* One line along the axis per position of the other axes (the last one fastest). */
        npy_intp index[NPY_MAXDIMS] = {0}, lines = 1;
        for (int other = 0; other < ndim; ++other)
            if (other != axis) lines *= dims[other];
        for (npy_intp line = 0; line < lines; ++line) {
            const char *y_line = PyArray_BYTES(y);
            char *output_line = PyArray_BYTES(*output);
            for (int other = 0; other < ndim; ++other) {
                if (other == axis) continue;
                y_line += index[other] * PyArray_STRIDE(y, other);
                output_line += index[other] * PyArray_STRIDE(*output, other);
            }
            npy_intp position = 0;
            for (npy_intp g = 0; g < groups; ++g) {
                @T@ sum = 0;
                for (npy_int64 c = 0; c < counts[g]; ++c, ++position)
                    sum += *(const @T@ *)(y_line + position * y_stride);
                *(@T@ *)(output_line + g * output_stride) = sum;
            }
            for (int other = ndim - 1; other >= 0; --other) {
                if (other == axis) continue;
                if (++index[other] < dims[other]) break;
                index[other] = 0;
            }
        }
    }
    free(counts);
    return 0;
}
