/* Join (numpy.concatenate): `count` arrays of `ndim` dimensions joined along `axis` (negative
   counts from the end) into *output, a C-contiguous array of type `typenum`. perform's checks
   with its messages (`op` names the op): the axis in range, equal lengths off the axis. Each
   tensor goes into its slab: block copies (memcpy) for a C-contiguous tensor of the output's
   type, otherwise one converting, broadcast-free copy (PyArray_CopyInto) into a view of the
   slab. Needs shape_text.h. Returns 0, or -1 with a Python exception set. */
static int sympile_join(PyArrayObject **output, PyArrayObject *const *tensors, int count,
                        int ndim, npy_int64 axis, int typenum, const char *op)
{
    if (axis < -ndim || axis >= ndim) {
        PyErr_Format(PyExc_ValueError, "%s: axis %lld is out of bounds for %d dimensions", op,
                     (long long)axis, ndim);
        return -1;
    }
    if (axis < 0) axis += ndim;
    npy_intp dims[NPY_MAXDIMS];
    for (int dimension = 0; dimension < ndim; ++dimension)
        dims[dimension] = PyArray_DIM(tensors[0], dimension);
    dims[axis] = 0;
    int mismatch = 0;
    for (int which = 0; which < count; ++which) {
        for (int dimension = 0; dimension < ndim; ++dimension)
            if (dimension != axis && PyArray_DIM(tensors[which], dimension) != dims[dimension])
                mismatch = 1;
        dims[axis] += PyArray_DIM(tensors[which], axis);
    }
    if (mismatch) {
        const size_t size = (size_t)count * 1600 + 1;
        char *shapes = (char *)malloc(size);
        if (shapes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        size_t used = 0;
        shapes[0] = '\0';
        for (int which = 0; which < count; ++which) {
            if (which) used += (size_t)snprintf(shapes + used, size - used, ", ");
            sympile_shape_text(shapes + used, size - used, ndim, PyArray_DIMS(tensors[which]));
            used += strlen(shapes + used);
        }
        PyErr_Format(PyExc_ValueError, "%s: cannot join arrays of shapes %s along axis %lld: "
                     "their other lengths differ", op, shapes, (long long)axis);
        free(shapes);
        return -1;
    }
    if (sympile_prepare_output(output, ndim, dims, typenum) != 0)
        return -1;
    /* The output is C-contiguous: `outer` blocks (the axes before `axis`), each holding every
       tensor's slab in turn; `inner` bytes per step along the axis (from the lengths: the
       strides of an empty array need not say). */
    npy_intp outer = 1, inner = PyArray_ITEMSIZE(*output);
    for (int dimension = 0; dimension < axis; ++dimension) outer *= dims[dimension];
    for (int dimension = (int)axis + 1; dimension < ndim; ++dimension) inner *= dims[dimension];
    const npy_intp output_block = inner * dims[axis];
    char *slab = PyArray_BYTES(*output);
    for (int which = 0; which < count; ++which) {
        PyArrayObject *tensor = tensors[which];
        const npy_intp tensor_block = inner * PyArray_DIM(tensor, (int)axis);
        if (PyArray_TYPE(tensor) == typenum && PyArray_IS_C_CONTIGUOUS(tensor)) {
            const char *source = PyArray_BYTES(tensor);
            for (npy_intp block = 0; block < outer; ++block)
                memcpy(slab + block * output_block, source + block * tensor_block,
                       (size_t)tensor_block);
        } else {
            Py_INCREF(PyArray_DESCR(*output));
            PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
                &PyArray_Type, PyArray_DESCR(*output), ndim, PyArray_DIMS(tensor),
                PyArray_STRIDES(*output), slab, NPY_ARRAY_WRITEABLE, NULL);
            if (view == NULL)
                return -1;
            int status = PyArray_CopyInto(view, tensor);
            Py_DECREF(view);
            if (status < 0)
                return -1;
        }
        slab += tensor_block;
    }
    return 0;
}
