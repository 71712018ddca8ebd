/* out = scale * in, or out += scale * in when `accumulate`, for 1-d or 2-d @dtype@ arrays of
   one shape (in may be out, and may be misaligned). */
static void sympile_blas_scale_@dtype@(PyArrayObject *out, PyArrayObject *in, @type@ scale,
                                       int accumulate)
{
    int matrix = PyArray_NDIM(out) == 2;
    npy_intp rows = PyArray_DIM(out, 0), cols = matrix ? PyArray_DIM(out, 1) : 1;
    npy_intp out_s0 = PyArray_STRIDE(out, 0), out_s1 = matrix ? PyArray_STRIDE(out, 1) : 0;
    npy_intp in_s0 = PyArray_STRIDE(in, 0), in_s1 = matrix ? PyArray_STRIDE(in, 1) : 0;
    if (!accumulate && PyArray_IS_C_CONTIGUOUS(out) && PyArray_IS_C_CONTIGUOUS(in)
            && PyArray_ISALIGNED(in)) {
        /* The common case (a new output from a C-ordered z), as one loop the compiler
           vectorizes. */
        @type@ *target = (@type@ *)PyArray_BYTES(out), *source = (@type@ *)PyArray_BYTES(in);
        for (npy_intp i = 0; i < rows * cols; i++)
            target[i] = scale * source[i];
        return;
    }
    for (npy_intp i = 0; i < rows; i++)
        for (npy_intp j = 0; j < cols; j++) {
            @type@ *target = (@type@ *)(PyArray_BYTES(out) + i * out_s0 + j * out_s1), value;
            memcpy(&value, PyArray_BYTES(in) + i * in_s0 + j * in_s1, sizeof value);
            *target = accumulate ? *target + scale * value : scale * value;
        }
}

/* *out = alpha * x @ y + beta * z (beta_array NULL: beta = 1) for @dtype@ arrays seen as
   matrices, a 1-d one as a column, or as a row for y when `y_row`: z m x n, x m x k, y k x n
   (lengths checked by the caller). Written over z when `inplace` (*out is then z). Returns 0,
   or -1 with an exception set. */
int @NAME@_blas_update(const char *op, PyArrayObject *z, PyArrayObject *x,
                       PyArrayObject *y, int y_row, PyArrayObject *alpha_array,
                       PyArrayObject *beta_array, int inplace,
                       PyArrayObject **out)
{
    npy_intp m = PyArray_DIM(z, 0), n = PyArray_NDIM(z) == 2 ? PyArray_DIM(z, 1) : 1;
    npy_intp k = PyArray_NDIM(x) == 2 ? PyArray_DIM(x, 1) : 1, batch_stride;
    @type@ alpha, beta = 1;
    memcpy(&alpha, PyArray_DATA(alpha_array), sizeof alpha);
    if (beta_array != NULL)
        memcpy(&beta, PyArray_DATA(beta_array), sizeof beta);
    PyArrayObject *x_copy = NULL, *y_copy = NULL, *work = NULL, *product = NULL, *target;
    sympile_blas_matrix x_matrix, y_matrix, target_matrix, product_matrix;
    int status = -1;
    if (!sympile_blas_lengths_fit(op, m, k, n))
        return -1;
    /* The operands first: one that may share z's memory is copied before z is written. */
    if (m > 0 && n > 0 && k > 0
            && (sympile_blas_operand(x, 1, inplace ? z : NULL, &x_matrix, &batch_stride,
                                     &x_copy)
                || sympile_blas_operand(y, !y_row, inplace ? z : NULL, &y_matrix,
                                        &batch_stride, &y_copy)))
        goto done;
    if (inplace) {
        if (!PyArray_ISWRITEABLE(z)) {
            PyErr_Format(PyExc_ValueError, "%s: the input it updates in place is read-only",
                         op);
            goto done;
        }
        target = z;
        if (!sympile_blas_describe(z, 1, &target_matrix, &batch_stride)) {
            /* A layout BLAS cannot write: work on a C-ordered copy, copied back after. */
            target = work = (PyArrayObject *)PyArray_NewCopy(z, NPY_CORDER);
            if (work == NULL)
                goto done;
        }
        if (beta != 1)
            sympile_blas_scale_@dtype@(target, target, beta, 0);
    } else {
        if (sympile_prepare_output(out, PyArray_NDIM(z), PyArray_DIMS(z), @npy@))
            goto done;
        target = *out;
        sympile_blas_scale_@dtype@(target, z, beta, 0);
    }
    sympile_blas_describe(target, 1, &target_matrix, &batch_stride);
    if (m > 0 && n > 0 && k > 0 && alpha != 0) {
        sympile_blas_multiply_@dtype@(&x_matrix, &y_matrix, alpha, 1, &target_matrix);
    } else if (m > 0 && n > 0) {
        /* BLAS would skip alpha * x @ y, which the formula adds: nan where alpha is inf or
           nan, or (alpha = 0) where the product is. */
        product = (PyArrayObject *)PyArray_ZEROS(PyArray_NDIM(z), PyArray_DIMS(z), @npy@, 0);
        if (product == NULL)
            goto done;
        sympile_blas_describe(product, 1, &product_matrix, &batch_stride);
        if (k > 0)
            sympile_blas_multiply_@dtype@(&x_matrix, &y_matrix, 1, 0, &product_matrix);
        sympile_blas_scale_@dtype@(target, product, alpha, 1);
    }
    if (work != NULL && PyArray_CopyInto(z, work))
        goto done;
    if (inplace) {
        Py_INCREF(z);
        sympile_assign_output(out, z);
    }
    status = 0;
done:
    Py_XDECREF(x_copy);
    Py_XDECREF(y_copy);
    Py_XDECREF(work);
    Py_XDECREF(product);
    return status;
}
