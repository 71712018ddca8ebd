/* 2d and 3d convolution and their two gradients by im2col and BLAS gemm
   (abstract_conv_c.py), for @T@ (a 2d convolution is a 3d one of depth 1): per image, the
   columns (channels x taps, outputs) hold the padded input under each tap (the taps flipped
   for a true convolution), and

     forward        out_g (F_g x O)  = W_g (F_g x CK) . cols_g (CK x O)
     grad weights   gW_g (F_g x CK) += gy_g (F_g x O) . cols_g^T
     grad inputs    dcols_g (CK x O) = W_g^T . gy_g, added back into the input (col2im)

   The BLAS is column-major: a row-major r x c matrix is its c x r transpose. Each thread
   allocates its columns buffer once per call and reuses it for its images. The geometry's
   type and the entry points are declared in conv_gemm.h. */

/* Tap t as (depth, row, column) offsets in the input, flipped for a true convolution. */
static inline void sympile_conv_tap_@T@(const sympile_conv_geometry_@T@ *g, npy_intp tap,
                                          npy_intp *a, npy_intp *i, npy_intp *j)
{
    *j = tap % g->kernel_cols;
    *i = (tap / g->kernel_cols) % g->kernel_rows;
    *a = tap / (g->kernel_cols * g->kernel_rows);
    if (g->flip) {
        *a = g->kernel_depth - 1 - *a;
        *i = g->kernel_rows - 1 - *i;
        *j = g->kernel_cols - 1 - *j;
    }
}

/* The output columns c whose input column for tap column tj lies inside the input:
   [*low, *high). */
static inline void sympile_conv_valid_columns_@T@(const sympile_conv_geometry_@T@ *g,
                                                    npy_intp tj, npy_intp *low,
                                                    npy_intp *high)
{
    const npy_intp offset = tj * g->dil_cols - g->pad_cols;  /* input col = c s + offset */
    npy_intp first = offset >= 0 ? 0 : (-offset + g->stride_cols - 1) / g->stride_cols;
    npy_intp last = g->cols - 1 - offset < 0 ? -1 : (g->cols - 1 - offset) / g->stride_cols;
    if (last > g->out_cols - 1)
        last = g->out_cols - 1;
    *low = first < g->out_cols ? first : g->out_cols;
    *high = last + 1 > *low ? last + 1 : *low;
}

/* The input offset of output row (od, r) under tap (ta, ti), or -1 outside the input. */
static inline npy_intp sympile_conv_row_@T@(const sympile_conv_geometry_@T@ *g,
                                              npy_intp od, npy_intp r, npy_intp ta,
                                              npy_intp ti)
{
    const npy_intp depth = od * g->stride_depth + ta * g->dil_depth - g->pad_depth;
    const npy_intp row = r * g->stride_rows + ti * g->dil_rows - g->pad_rows;
    if (depth < 0 || depth >= g->depth || row < 0 || row >= g->rows)
        return -1;
    return (depth * g->rows + row) * g->cols;
}

/* cols[(ch K + tap) ld + out] = image[ch][source] for channels [first, first + count): one
   output row at a time, the input columns read over their valid range. ld >= O lets a
   batch of images share one buffer. */
static void sympile_im2col_@T@(const sympile_conv_geometry_@T@ *g, const @T@ *image,
                               npy_intp first, npy_intp count, @T@ *cols, npy_intp ld)
{
    const npy_intp taps = g->kernel_depth * g->kernel_rows * g->kernel_cols;
    const npy_intp plane = g->depth * g->rows * g->cols;
    for (npy_intp ch = 0; ch < count; ++ch) {
        const @T@ *source = image + (first + ch) * plane;
        for (npy_intp tap = 0; tap < taps; ++tap) {
            @T@ *line = cols + (ch * taps + tap) * ld;
            npy_intp ta, ti, tj, low, high;
            sympile_conv_tap_@T@(g, tap, &ta, &ti, &tj);
            sympile_conv_valid_columns_@T@(g, tj, &low, &high);
            for (npy_intp od = 0; od < g->out_depth; ++od)
                for (npy_intp r = 0; r < g->out_rows; ++r) {
                    @T@ *out = line + (od * g->out_rows + r) * g->out_cols;
                    const npy_intp at = sympile_conv_row_@T@(g, od, r, ta, ti);
                    if (at < 0) {
                        memset(out, 0, sizeof(@T@) * g->out_cols);
                        continue;
                    }
                    const @T@ *in = source + at + tj * g->dil_cols - g->pad_cols;
                    for (npy_intp c = 0; c < low; ++c)
                        out[c] = 0;
                    if (g->stride_cols == 1)
                        memcpy(out + low, in + low, sizeof(@T@) * (high - low));
                    else
                        for (npy_intp c = low; c < high; ++c)
                            out[c] = in[c * g->stride_cols];
                    for (npy_intp c = high; c < g->out_cols; ++c)
                        out[c] = 0;
                }
        }
    }
}

/* image[ch][source] += cols[(ch K + tap) ld + out]: the transpose of im2col. */
static void sympile_col2im_@T@(const sympile_conv_geometry_@T@ *g, const @T@ *cols,
                               npy_intp ld, npy_intp first, npy_intp count, @T@ *image)
{
    const npy_intp taps = g->kernel_depth * g->kernel_rows * g->kernel_cols;
    const npy_intp plane = g->depth * g->rows * g->cols;
    for (npy_intp ch = 0; ch < count; ++ch) {
        @T@ *target = image + (first + ch) * plane;
        for (npy_intp tap = 0; tap < taps; ++tap) {
            const @T@ *line = cols + (ch * taps + tap) * ld;
            npy_intp ta, ti, tj, low, high;
            sympile_conv_tap_@T@(g, tap, &ta, &ti, &tj);
            sympile_conv_valid_columns_@T@(g, tj, &low, &high);
            for (npy_intp od = 0; od < g->out_depth; ++od)
                for (npy_intp r = 0; r < g->out_rows; ++r) {
                    const npy_intp at = sympile_conv_row_@T@(g, od, r, ta, ti);
                    if (at < 0)
                        continue;
                    @T@ *out = target + at + tj * g->dil_cols - g->pad_cols;
                    const @T@ *in = line + (od * g->out_rows + r) * g->out_cols;
                    for (npy_intp c = low; c < high; ++c)
                        out[c * g->stride_cols] += in[c];
                }
        }
    }
}

/* kind 0: out = conv(x, w); 1: out = grad wrt w of <conv(x, w), gy> (x = a, gy = b);
   2: out = grad wrt x (w = a, gy = b). a, b, out C-contiguous; out already shaped.
   Threads as the BLAS products take them (blas_threads.c): the library on one thread, and
   above config.blas_parallel_minsize multiply-adds the images split among OpenMP threads,
   each with its columns buffer (and, for the weight gradient, its own sum, added up at the
   end), so that OpenBLAS's threads never spin beside OpenMP's. */
int @NAME@_conv_gemm(int kind, const sympile_conv_geometry_@T@ *g,
                     npy_intp batch, npy_intp filters, npy_intp groups,
                     const @T@ *a, const @T@ *b, @T@ *out)
{
    const npy_intp group_channels = g->channels / groups, group_filters = filters / groups;
    const npy_intp taps = g->kernel_depth * g->kernel_rows * g->kernel_cols;
    const npy_intp outputs = g->out_depth * g->out_rows * g->out_cols;
    const npy_intp column_rows = group_channels * taps, weights = filters * column_rows;
    const npy_intp plane = g->depth * g->rows * g->cols;
    if (kind == 1)
        memset(out, 0, sizeof(@T@) * weights);
    if (kind == 2)
        memset(out, 0, sizeof(@T@) * batch * g->channels * plane);
    if (outputs == 0 || column_rows == 0 || batch == 0 || group_filters == 0)
        return 0;
    int saved;
    const double work = (double)batch * (double)filters * (double)column_rows * outputs;
    int threads = sympile_blas_threads_begin((void *)sympile_blas_@p@gemm, work, &saved);
    threads = threads < batch ? threads : (int)batch;
    /* The weight gradient's sums of threads 1, 2, ... (thread 0 sums into out). */
    @T@ *sums = kind == 1 && threads > 1
                ? (@T@ *)calloc((size_t)(threads - 1) * weights, sizeof(@T@)) : NULL;
    int failed = kind == 1 && threads > 1 && sums == NULL;
    #pragma omp parallel num_threads(threads) if (threads > 1 && !failed)
    {
        @T@ *cols = (@T@ *)malloc(sizeof(@T@) * column_rows * outputs);
        int thread = 0;
#ifdef _OPENMP
        thread = omp_get_thread_num();
#endif
        @T@ *gw = kind != 1 ? NULL : thread == 0 ? out : sums + (thread - 1) * weights;
        if (cols == NULL) {
            #pragma omp atomic write
            failed = 1;
        }
        @T@ one = 1, zero = 0;  /* the BLAS takes non-const pointers */
        char transposed = 'T', no = 'N';
        #pragma omp for schedule(static)
        for (npy_intp image = 0; image < batch; ++image) {
            for (npy_intp group = 0; cols != NULL && group < groups; ++group) {
                const npy_intp channel0 = group * group_channels;
                const npy_intp filter0 = group * group_filters;
                int m, n, k, lda, ldb, ldc;
                if (kind == 0) {        /* out_g = W_g . cols */
                    sympile_im2col_@T@(g, a + image * g->channels * plane, channel0,
                                       group_channels, cols, outputs);
                    m = (int)outputs; n = (int)group_filters; k = (int)column_rows;
                    lda = (int)outputs; ldb = (int)column_rows; ldc = (int)outputs;
                    sympile_blas_@p@gemm(&no, &no, &m, &n, &k, &one, cols, &lda,
                                         (@T@ *)(b + filter0 * column_rows), &ldb, &zero,
                                         out + (image * filters + filter0) * outputs, &ldc);
                } else if (kind == 1) { /* gW_g += gy_g . cols^T */
                    sympile_im2col_@T@(g, a + image * g->channels * plane, channel0,
                                       group_channels, cols, outputs);
                    m = (int)column_rows; n = (int)group_filters; k = (int)outputs;
                    lda = (int)outputs; ldb = (int)outputs; ldc = (int)column_rows;
                    sympile_blas_@p@gemm(&transposed, &no, &m, &n, &k, &one, cols, &lda,
                                         (@T@ *)(b + (image * filters + filter0) * outputs),
                                         &ldb, &one, gw + filter0 * column_rows, &ldc);
                } else {                /* cols = W_g^T . gy_g, added back (col2im) */
                    m = (int)outputs; n = (int)column_rows; k = (int)group_filters;
                    lda = (int)outputs; ldb = (int)column_rows; ldc = (int)outputs;
                    sympile_blas_@p@gemm(&no, &transposed, &m, &n, &k, &one,
                                         (@T@ *)(b + (image * filters + filter0) * outputs),
                                         &lda, (@T@ *)(a + filter0 * column_rows), &ldb,
                                         &zero, cols, &ldc);
                    sympile_col2im_@T@(g, cols, outputs, channel0, group_channels,
                                       out + image * g->channels * plane);
                }
            }
        }
        free(cols);
    }
    if (sums != NULL) {
        for (int thread = 1; thread < threads; ++thread)
            for (npy_intp i = 0; i < weights; ++i)
                out[i] += sums[(thread - 1) * weights + i];
        free(sums);
    }
    sympile_blas_threads_restore(saved);
    if (failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The geometry of a node (kind as above) with `nd` (2 or 3) spatial axes from its inputs'
   shapes and the op's options (border: 0 valid, 1 full, 2 half, 3 explicit pads before and
   after each axis; pads, pads_after, strides and dilations have nd entries), checked as
   perform() checks it; *filters the number of filters, out_dims the output's shape (nd + 2
   entries). The geometry keeps the pads before: the pads after only shorten the output. */
int @NAME@_conv_setup(int kind, int nd, PyArrayObject *a, PyArrayObject *b,
                      PyArrayObject *shape, int border, const npy_intp *pads,
                      const npy_intp *pads_after, const npy_intp *strides,
                      const npy_intp *dilations, int flip, npy_intp groups, const char *label,
                      sympile_conv_geometry_@T@ *g, npy_intp *filters,
                      npy_intp *out_dims)
{
    const npy_intp *da = PyArray_DIMS(a), *db = PyArray_DIMS(b);
    npy_intp given[3] = {0, 0, 0}, lengths[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
    npy_intp padding[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
    npy_intp outputs[3] = {1, 1, 1};
    const int skip = 3 - nd;  /* a 2d convolution: depth 1 */
    if (shape != NULL) {
        if (PyArray_SIZE(shape) != nd) {
            PyErr_Format(PyExc_ValueError, "%s: shape must hold %d lengths", label, nd);
            return -1;
        }
        for (int axis = 0; axis < nd; ++axis)
            given[axis] = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(shape, axis);
    }
    for (int axis = 0; axis < nd; ++axis) {
        stride[skip + axis] = strides[axis];
        dilation[skip + axis] = dilations[axis];
        if (kind == 0) {            /* a = x, b = w */
            lengths[skip + axis] = da[2 + axis];
            kernel[skip + axis] = db[2 + axis];
        } else if (kind == 1) {     /* a = x, b = gy, shape = kernel */
            lengths[skip + axis] = da[2 + axis];
            kernel[skip + axis] = given[axis];
        } else {                    /* a = w, b = gy, shape = the input's spatial lengths */
            lengths[skip + axis] = given[axis];
            kernel[skip + axis] = da[2 + axis];
        }
    }
    if (kind == 0) {
        g->channels = da[1];
        *filters = db[0];
        if (da[1] != db[1] * groups) {
            PyErr_Format(PyExc_ValueError, "%s: the input has %ld channels but the filters "
                         "expect %ld x num_groups=%ld", label, (long)da[1], (long)db[1],
                         (long)groups);
            return -1;
        }
    } else if (kind == 1) {
        g->channels = da[1];
        *filters = db[1];
    } else {
        g->channels = da[1] * groups;
        *filters = da[0];
        if (db[1] != da[0]) {
            PyErr_Format(PyExc_ValueError, "%s: the output gradient has %ld channels but "
                         "there are %ld filters in %ld groups", label, (long)db[1],
                         (long)da[0], (long)groups);
            return -1;
        }
    }
    if (*filters % groups || g->channels % groups) {
        PyErr_Format(PyExc_ValueError, "%s: %ld channels and %ld filters cannot be split in "
                     "num_groups=%ld groups", label, (long)g->channels, (long)*filters,
                     (long)groups);
        return -1;
    }
    for (int axis = skip; axis < 3; ++axis) {
        const npy_intp dilated = (kernel[axis] - 1) * dilation[axis] + 1;
        padding[axis] = border == 0 ? 0 : border == 1 ? dilated - 1
                      : border == 2 ? dilated / 2 : pads[axis - skip];
        const npy_intp after = border == 3 ? pads_after[axis - skip] : padding[axis];
        const npy_intp padded = lengths[axis] + padding[axis] + after;
        if (dilated > padded || kernel[axis] < 1) {
            PyErr_Format(PyExc_ValueError, "%s: the filter (dilation included, %ld) is larger "
                         "than the padded input (%ld) in spatial dimension %d", label,
                         (long)dilated, (long)padded, axis - skip);
            return -1;
        }
        outputs[axis] = (padded - dilated) / stride[axis] + 1;
    }
    g->depth = lengths[0]; g->rows = lengths[1]; g->cols = lengths[2];
    g->kernel_depth = kernel[0]; g->kernel_rows = kernel[1]; g->kernel_cols = kernel[2];
    g->out_depth = outputs[0]; g->out_rows = outputs[1]; g->out_cols = outputs[2];
    g->pad_depth = padding[0]; g->pad_rows = padding[1]; g->pad_cols = padding[2];
    g->stride_depth = stride[0]; g->stride_rows = stride[1]; g->stride_cols = stride[2];
    g->dil_depth = dilation[0]; g->dil_rows = dilation[1]; g->dil_cols = dilation[2];
    g->flip = flip;
    if (kind != 0) {
        int same = kind != 1 || db[0] == da[0];
        for (int axis = 0; axis < nd; ++axis)
            same = same && db[2 + axis] == outputs[skip + axis];
        if (!same) {
            PyErr_Format(PyExc_ValueError, "%s: the output gradient's spatial shape does not "
                         "match the input's", label);
            return -1;
        }
    }
    if (kind == 0) {
        out_dims[0] = da[0]; out_dims[1] = *filters;
    } else if (kind == 1) {
        out_dims[0] = *filters; out_dims[1] = g->channels / groups;
    } else {
        out_dims[0] = db[0]; out_dims[1] = g->channels;
    }
    for (int axis = 0; axis < nd; ++axis)
        out_dims[2 + axis] = kind == 0 ? outputs[skip + axis]
                           : kind == 1 ? kernel[skip + axis] : lengths[skip + axis];
    return 0;
}

int @NAME@_conv_node(PyObject *const *cells, const void *data)
{
    const sympile_conv_node_@T@ *node = data;
    const int n_inputs = node->kind == 0 ? 2 : 3, rank = node->nd + 2;
    PyObject *a_value = PyList_GET_ITEM(cells[0], 0), *b_value = PyList_GET_ITEM(cells[1], 0);
    const int typenum = PyArray_TYPE((PyArrayObject *)a_value);
    PyArrayObject *shape = node->kind == 0 ? NULL
        : (PyArrayObject *)PyList_GET_ITEM(cells[2], 0);
    sympile_conv_geometry_@T@ geometry;
    npy_intp filters = 0, out_dims[5];
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(a_value, typenum, rank, rank,
                                                        NPY_ARRAY_CARRAY_RO);
    PyArrayObject *b = a == NULL ? NULL : (PyArrayObject *)PyArray_FROMANY(
        b_value, typenum, rank, rank, NPY_ARRAY_CARRAY_RO);
    int status = b == NULL ? -1 : @NAME@_conv_setup(
        node->kind, node->nd, a, b, shape, node->border, node->pads, node->pads_after,
        node->strides, node->dilations, node->filter_flip, node->groups, node->label, &geometry, &filters,
        out_dims);
    PyArrayObject *output = sympile_take_output(cells[n_inputs]);
    if (status == 0)
        status = sympile_prepare_output(&output, rank, out_dims, typenum);
    if (status == 0)
        status = @NAME@_conv_gemm(node->kind, &geometry,
                                  PyArray_DIM(node->kind != 2 ? a : b, 0), filters,
                                  node->groups, (const @T@ *)PyArray_DATA(a),
                                  (const @T@ *)PyArray_DATA(b), (@T@ *)PyArray_DATA(output));
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (status != 0) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[n_inputs], output);
    return 0;
}
