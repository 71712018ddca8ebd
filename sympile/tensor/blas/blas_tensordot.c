/* numpy.tensordot of @dtype@ arrays into *out: perm_a orders a's axes as its free axes, then
   the n_axes summed ones; perm_b orders b's as the summed axes (paired in order with a's),
   then its free ones. Transposed and reshaped (a copy where numpy's reshape copies), they
   are the two matrices of one BLAS call, whose C-ordered result is the output. */
int @NAME@_tensordot(const char *op, PyArrayObject *a, PyArrayObject *b,
                     int n_axes, const int *perm_a, const int *perm_b,
                     PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), ndim = 0, status = -1;
    npy_intp dims[2 * NPY_MAXDIMS], order_a[NPY_MAXDIMS], order_b[NPY_MAXDIMS];
    npy_intp rows = 1, inner = 1, cols = 1;
    for (int i = 0; i < n_axes; i++) {
        int axis_a = perm_a[a_ndim - n_axes + i], axis_b = perm_b[i];
        if (PyArray_DIM(a, axis_a) != PyArray_DIM(b, axis_b))
            return sympile_blas_shape_error(op, a, b, "are not aligned: axis %d of a has "
                                            "length %zd, axis %d of b has length %zd", axis_a,
                                            (Py_ssize_t)PyArray_DIM(a, axis_a), axis_b,
                                            (Py_ssize_t)PyArray_DIM(b, axis_b));
    }
    for (int i = 0; i < a_ndim; i++) {
        order_a[i] = perm_a[i];
        if (i < a_ndim - n_axes)
            rows *= dims[ndim++] = PyArray_DIM(a, perm_a[i]);
        else
            inner *= PyArray_DIM(a, perm_a[i]);
    }
    for (int i = 0; i < b_ndim; i++) {
        order_b[i] = perm_b[i];
        if (i >= n_axes)
            cols *= dims[ndim++] = PyArray_DIM(b, perm_b[i]);
    }
    if (!sympile_blas_lengths_fit(op, rows, inner, cols)
            || sympile_prepare_output(out, ndim, dims, @npy@))
        return -1;
    if (rows == 0 || cols == 0)
        return 0;
    if (inner == 0) {
        memset(PyArray_BYTES(*out), 0, (size_t)(rows * cols) * sizeof(@type@));
        return 0;
    }
    npy_intp shape_a[2] = {rows, inner}, shape_b[2] = {inner, cols}, batch_stride;
    PyArray_Dims transpose_a = {order_a, a_ndim}, transpose_b = {order_b, b_ndim};
    PyArray_Dims reshape_a = {shape_a, 2}, reshape_b = {shape_b, 2};
    PyArrayObject *a_view, *b_view = NULL, *a_matrix_array = NULL, *b_matrix_array = NULL;
    PyArrayObject *a_copy = NULL, *b_copy = NULL;
    sympile_blas_matrix a_matrix, b_matrix, c = {PyArray_BYTES(*out), rows, cols, cols, 1};
    a_view = (PyArrayObject *)PyArray_Transpose(a, &transpose_a);
    b_view = a_view ? (PyArrayObject *)PyArray_Transpose(b, &transpose_b) : NULL;
    a_matrix_array = b_view
        ? (PyArrayObject *)PyArray_Newshape(a_view, &reshape_a, NPY_CORDER) : NULL;
    b_matrix_array = a_matrix_array
        ? (PyArrayObject *)PyArray_Newshape(b_view, &reshape_b, NPY_CORDER) : NULL;
    if (b_matrix_array != NULL
            && !sympile_blas_operand(a_matrix_array, 0, NULL, &a_matrix, &batch_stride, &a_copy)
            && !sympile_blas_operand(b_matrix_array, 0, NULL, &b_matrix, &batch_stride,
                                     &b_copy)) {
        sympile_blas_multiply_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
        status = 0;
    }
    Py_XDECREF(a_view);
    Py_XDECREF(b_view);
    Py_XDECREF(a_matrix_array);
    Py_XDECREF(b_matrix_array);
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    return status;
}
