/* numpy.dot of 1-d or 2-d @dtype@ arrays (a 1-d a is a row, a 1-d b a column) into *out.
   Returns 0, or -1 with an exception set. */
int @NAME@_dot(const char *op, PyArrayObject *a, PyArrayObject *b,
               PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), ndim = 0, status = -1;
    npy_intp k = PyArray_DIM(a, a_ndim - 1), m = a_ndim == 2 ? PyArray_DIM(a, 0) : 1;
    npy_intp n = b_ndim == 2 ? PyArray_DIM(b, 1) : 1, dims[2], batch_stride;
    if (k != PyArray_DIM(b, 0))
        return sympile_blas_shape_error(op, a, b, "are not aligned: axis %d of a has length "
                                        "%zd, axis 0 of b has length %zd", a_ndim - 1,
                                        (Py_ssize_t)k, (Py_ssize_t)PyArray_DIM(b, 0));
    if (a_ndim == 2)
        dims[ndim++] = m;
    if (b_ndim == 2)
        dims[ndim++] = n;
    if (!sympile_blas_lengths_fit(op, m, k, n)
            || sympile_prepare_output(out, ndim, dims, @npy@))
        return -1;
    if (m == 0 || n == 0)
        return 0;
    if (k == 0) {
        memset(PyArray_BYTES(*out), 0, (size_t)(m * n) * sizeof(@type@));
        return 0;
    }
    PyArrayObject *a_copy = NULL, *b_copy = NULL;
    sympile_blas_matrix a_matrix, b_matrix, c = {PyArray_BYTES(*out), m, n, n, 1};
    if (!sympile_blas_operand(a, 0, NULL, &a_matrix, &batch_stride, &a_copy)
            && !sympile_blas_operand(b, 1, NULL, &b_matrix, &batch_stride, &b_copy)) {
        sympile_blas_multiply_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
        status = 0;
    }
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    return status;
}
