/* The loop layout every reduction (CAReduce, Argmax/Argmin, FusedCAReduce) walks: the kept
   axes and the reduced axes listed with their lengths and each operand's strides, length-1
   axes dropped and neighbours merged where every operand steps through memory as one, so
   that reducing all of a C-contiguous array, or its innermost contiguous axes, is one flat
   inner loop. */

/* perform's error when an axis that `reduced` flags has length 0 and the reduction has no
   value for an empty axis (`op` names it). Returns 0, or -1 with a Python exception set. */
static int sympile_reduction_check_nonempty(int ndim, const npy_intp *dims, const int *reduced,
                                            const char *op)
{
    for (int axis = 0; axis < ndim; ++axis) {
        if (!reduced[axis] || dims[axis] != 0)
            continue;
        PyObject *input_shape = PyArray_IntTupleFromIntp(ndim, (npy_intp *)dims);
        if (input_shape != NULL) {
            PyErr_Format(PyExc_ValueError, "%s: cannot reduce axis %d of an input of shape %R: "
                         "the axis is empty, and this reduction of an empty axis has no value",
                         op, axis, input_shape);
            Py_DECREF(input_shape);
        }
        return -1;
    }
    return 0;
}

/* The lengths of the kept axes of `dims` into output_dims; returns how many there are, and
   sets *block_size to the product of the reduced lengths. */
static int sympile_reduction_output_shape(int ndim, const npy_intp *dims, const int *reduced,
                                          npy_intp *output_dims, npy_intp *block_size)
{
    int output_ndim = 0;
    *block_size = 1;
    for (int axis = 0; axis < ndim; ++axis) {
        if (reduced[axis])
            *block_size *= dims[axis];
        else
            output_dims[output_ndim++] = dims[axis];
    }
    return output_ndim;
}

/* The kept and the reduced axes of `count` operands broadcast to `dims`, in order: their
   lengths, and the strides of operand k along the i-th of them at [i * count + k] (0 where
   the operand has length 1 on the axis). Length-1 axes are dropped; an axis is merged into
   the previous one of its kind when every operand's stride there is the previous one's
   times the length. */
static void sympile_reduction_merge_axes(PyArrayObject *const *operands, int count, int ndim,
                                         const npy_intp *dims, const int *reduced,
                                         npy_intp *kept_lengths, npy_intp *kept_strides,
                                         int *kept_count, npy_intp *block_lengths,
                                         npy_intp *block_strides, int *block_count)
{
    *kept_count = *block_count = 0;
    for (int axis = 0; axis < ndim; ++axis) {
        const npy_intp length = dims[axis];
        if (length == 1) continue;
        npy_intp *lengths = reduced[axis] ? block_lengths : kept_lengths;
        npy_intp *steps = reduced[axis] ? block_strides : kept_strides;
        int *axis_count = reduced[axis] ? block_count : kept_count;
        int merge = *axis_count > 0;
        for (int k = 0; k < count; ++k) {
            const npy_intp stride = PyArray_DIM(operands[k], axis) == 1 ? 0
                : PyArray_STRIDE(operands[k], axis);
            merge = merge && steps[(*axis_count - 1) * count + k] == stride * length;
        }
        if (merge) {
            lengths[*axis_count - 1] *= length;
        } else {
            lengths[*axis_count] = length;
            ++*axis_count;
        }
        for (int k = 0; k < count; ++k)
            steps[(*axis_count - 1) * count + k] = PyArray_DIM(operands[k], axis) == 1 ? 0
                : PyArray_STRIDE(operands[k], axis);
    }
}

/* Moves the `count` pointers to the next position of `axes` axes (the last fastest), by
   the strides of sympile_reduction_merge_axes; returns 0 when every axis wrapped around
   (the pointers are back at the start). */
static inline int sympile_reduction_step(const char **pointers, int count, npy_intp *index,
                                         const npy_intp *lengths, const npy_intp *strides,
                                         int axes)
{
    for (int axis = axes - 1; axis >= 0; --axis) {
        for (int k = 0; k < count; ++k)
            pointers[k] += strides[axis * count + k];
        if (++index[axis] < lengths[axis])
            return 1;
        for (int k = 0; k < count; ++k)
            pointers[k] -= strides[axis * count + k] * lengths[axis];
        index[axis] = 0;
    }
    return 0;
}
