/* numpy.matmul of 1-d to 3-d @dtype@ arrays into *out. A batch axis broadcasts when its
   operand lacks it, or has it with length 1 in its type (a_batch_one, b_batch_one). The
   matrices of a batch take one BLAS call each, or one in all when b broadcasts and a's
   matrices follow each other as the rows of one tall matrix. */
int @NAME@_matmul(const char *op, PyArrayObject *a, PyArrayObject *b,
                  int a_batch_one, int b_batch_one, PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), ndim = 0;
    npy_intp *a_dims = PyArray_DIMS(a), *b_dims = PyArray_DIMS(b), dims[3];
    npy_intp k = a_dims[a_ndim - 1], b_rows = b_dims[b_ndim == 1 ? 0 : b_ndim - 2];
    npy_intp m = a_ndim > 1 ? a_dims[a_ndim - 2] : 1, n = b_ndim > 1 ? b_dims[b_ndim - 1] : 1;
    if (k != b_rows)
        return sympile_blas_shape_error(op, a, b, "are not aligned: a has %zd columns, b has "
                                        "%zd rows", (Py_ssize_t)k, (Py_ssize_t)b_rows);
    if (a_ndim < 3 && b_ndim < 3)
        return @NAME@_dot(op, a, b, out);
    int a_broadcasts = a_ndim < 3 || a_batch_one, b_broadcasts = b_ndim < 3 || b_batch_one;
    npy_intp a_batch = a_ndim == 3 ? a_dims[0] : 1, b_batch = b_ndim == 3 ? b_dims[0] : 1;
    if (!a_broadcasts && !b_broadcasts && a_batch != b_batch)
        return sympile_blas_shape_error(op, a, b, "have batch axes that cannot be broadcast "
                                        "together: batch axis 0 has lengths %zd and %zd%s",
                                        (Py_ssize_t)a_batch, (Py_ssize_t)b_batch,
                                        a_batch == 1 || b_batch == 1 ? " (a length-1 batch "
                                        "axis broadcasts only if its type says it has length "
                                        "1)" : "");
    npy_intp batch = !a_broadcasts ? a_batch : !b_broadcasts ? b_batch : 1;
    dims[ndim++] = batch;
    if (a_ndim > 1)
        dims[ndim++] = m;
    if (b_ndim > 1)
        dims[ndim++] = n;
    if (!sympile_blas_lengths_fit(op, m, k, n)
            || sympile_prepare_output(out, ndim, dims, @npy@))
        return -1;
    if (batch == 0 || m == 0 || n == 0)
        return 0;
    if (k == 0) {
        memset(PyArray_BYTES(*out), 0, (size_t)(batch * m * n) * sizeof(@type@));
        return 0;
    }
    PyArrayObject *a_copy = NULL, *b_copy = NULL;
    sympile_blas_matrix a_matrix, b_matrix, c = {PyArray_BYTES(*out), m, n, n, 1};
    npy_intp a_step, b_step, c_step = m * n * (npy_intp)sizeof(@type@);
    if (sympile_blas_operand(a, 0, NULL, &a_matrix, &a_step, &a_copy)
            || sympile_blas_operand(b, 1, NULL, &b_matrix, &b_step, &b_copy)) {
        Py_XDECREF(a_copy);
        Py_XDECREF(b_copy);
        return -1;
    }
    if (a_broadcasts)
        a_step = 0;
    if (b_broadcasts)
        b_step = 0;
    if (b_step == 0 && a_step != 0 && a_matrix.row_major && batch * m <= INT_MAX
            && a_step == m * a_matrix.ld * (npy_intp)sizeof(@type@)) {
        a_matrix.rows = c.rows = batch * m;
        sympile_blas_multiply_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
    } else {
        for (npy_intp i = 0; i < batch; i++) {
            sympile_blas_multiply_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
            a_matrix.data += a_step;
            b_matrix.data += b_step;
            c.data += c_step;
        }
    }
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    return 0;
}
