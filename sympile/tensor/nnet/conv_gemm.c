/* 2d convolution and its two gradients by im2col and BLAS gemm (abstract_conv_c.py), for
   @T@: per image, the columns (channels x taps, outputs) hold the padded input under each
   tap (the taps flipped for a true convolution), and

     forward        out_g (F_g x O)  = W_g (F_g x CK) . cols_g (CK x O)
     grad weights   gW_g (F_g x CK) += gy_g (F_g x O) . cols_g^T
     grad inputs    dcols_g (CK x O) = W_g^T . gy_g, added back into the input (col2im)

   The BLAS is column-major: a row-major r x c matrix is its c x r transpose. The columns
   buffer is allocated once per call and reused for every image. */

typedef struct {
    npy_intp channels, rows, cols;          /* the input's channels and spatial lengths */
    npy_intp kernel_rows, kernel_cols;
    npy_intp out_rows, out_cols;
    npy_intp pad_rows, pad_cols, stride_rows, stride_cols, dil_rows, dil_cols;
    int flip;
} sympile_conv2d_geometry_@T@;

/* The input position read by tap (i, j) for output (r, c), or -1 outside the input. */
static inline npy_intp sympile_conv2d_source_@T@(const sympile_conv2d_geometry_@T@ *g,
                                                  npy_intp i, npy_intp j, npy_intp r,
                                                  npy_intp c)
{
    const npy_intp ti = g->flip ? g->kernel_rows - 1 - i : i;
    const npy_intp tj = g->flip ? g->kernel_cols - 1 - j : j;
    const npy_intp row = r * g->stride_rows + ti * g->dil_rows - g->pad_rows;
    const npy_intp col = c * g->stride_cols + tj * g->dil_cols - g->pad_cols;
    if (row < 0 || row >= g->rows || col < 0 || col >= g->cols)
        return -1;
    return row * g->cols + col;
}

/* cols[(ch * K + tap) * O + out] = image[ch][source], channels [first, first + count). */
static void sympile_im2col_@T@(const sympile_conv2d_geometry_@T@ *g, const @T@ *image,
                               npy_intp first, npy_intp count, @T@ *cols)
{
    const npy_intp taps = g->kernel_rows * g->kernel_cols, outputs = g->out_rows * g->out_cols;
    const npy_intp plane = g->rows * g->cols;
    for (npy_intp ch = 0; ch < count; ++ch) {
        const @T@ *source = image + (first + ch) * plane;
        for (npy_intp tap = 0; tap < taps; ++tap) {
            @T@ *line = cols + (ch * taps + tap) * outputs;
            const npy_intp i = tap / g->kernel_cols, j = tap % g->kernel_cols;
            for (npy_intp r = 0; r < g->out_rows; ++r)
                for (npy_intp c = 0; c < g->out_cols; ++c) {
                    const npy_intp at = sympile_conv2d_source_@T@(g, i, j, r, c);
                    line[r * g->out_cols + c] = at < 0 ? 0 : source[at];
                }
        }
    }
}

/* image[ch][source] += cols[(ch * K + tap) * O + out]: the transpose of im2col. */
static void sympile_col2im_@T@(const sympile_conv2d_geometry_@T@ *g, const @T@ *cols,
                               npy_intp first, npy_intp count, @T@ *image)
{
    const npy_intp taps = g->kernel_rows * g->kernel_cols, outputs = g->out_rows * g->out_cols;
    const npy_intp plane = g->rows * g->cols;
    for (npy_intp ch = 0; ch < count; ++ch) {
        @T@ *target = image + (first + ch) * plane;
        for (npy_intp tap = 0; tap < taps; ++tap) {
            const @T@ *line = cols + (ch * taps + tap) * outputs;
            const npy_intp i = tap / g->kernel_cols, j = tap % g->kernel_cols;
            for (npy_intp r = 0; r < g->out_rows; ++r)
                for (npy_intp c = 0; c < g->out_cols; ++c) {
                    const npy_intp at = sympile_conv2d_source_@T@(g, i, j, r, c);
                    if (at >= 0)
                        target[at] += line[r * g->out_cols + c];
                }
        }
    }
}

/* kind 0: out = conv(x, w); 1: out = grad wrt w of <conv(x, w), gy> (x = a, gy = b);
   2: out = grad wrt x (w = a, gy = b). a, b, out C-contiguous; out already shaped. */
static int sympile_conv2d_gemm_@T@(int kind, const sympile_conv2d_geometry_@T@ *g,
                                   npy_intp batch, npy_intp filters, npy_intp groups,
                                   const @T@ *a, const @T@ *b, @T@ *out)
{
    const npy_intp group_channels = g->channels / groups, group_filters = filters / groups;
    const npy_intp taps = g->kernel_rows * g->kernel_cols, outputs = g->out_rows * g->out_cols;
    const npy_intp column_rows = group_channels * taps;
    const npy_intp plane = g->rows * g->cols;
    if (outputs == 0 || column_rows == 0 || batch == 0 || group_filters == 0) {
        if (kind != 0) {
            const npy_intp size = kind == 1 ? filters * column_rows
                                            : batch * g->channels * plane;
            memset(out, 0, sizeof(@T@) * size);
        }
        return 0;
    }
    @T@ *cols = (@T@ *)malloc(sizeof(@T@) * column_rows * outputs);
    if (cols == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int m, n, k, lda, ldb, ldc;
    @T@ one = 1, zero = 0;  /* the BLAS takes non-const pointers */
    if (kind == 1)
        memset(out, 0, sizeof(@T@) * filters * column_rows);
    if (kind == 2)
        memset(out, 0, sizeof(@T@) * batch * g->channels * plane);
    for (npy_intp image = 0; image < batch; ++image) {
        for (npy_intp group = 0; group < groups; ++group) {
            const npy_intp channel0 = group * group_channels, filter0 = group * group_filters;
            if (kind == 0) {
                const @T@ *x = a + image * g->channels * plane;
                const @T@ *w = b + filter0 * column_rows;
                @T@ *y = out + (image * filters + filter0) * outputs;
                sympile_im2col_@T@(g, x, channel0, group_channels, cols);
                char no = 'N';
                m = (int)outputs; n = (int)group_filters; k = (int)column_rows;
                lda = (int)outputs; ldb = (int)column_rows; ldc = (int)outputs;
                sympile_blas_@p@gemm(&no, &no, &m, &n, &k, &one, cols, &lda, (@T@ *)w, &ldb,
                                     &zero, y, &ldc);
            } else if (kind == 1) {
                const @T@ *x = a + image * g->channels * plane;
                const @T@ *gy = b + (image * filters + filter0) * outputs;
                @T@ *gw = out + filter0 * column_rows;
                sympile_im2col_@T@(g, x, channel0, group_channels, cols);
                char transposed = 'T', no = 'N';
                m = (int)column_rows; n = (int)group_filters; k = (int)outputs;
                lda = (int)outputs; ldb = (int)outputs; ldc = (int)column_rows;
                sympile_blas_@p@gemm(&transposed, &no, &m, &n, &k, &one, cols, &lda,
                                     (@T@ *)gy, &ldb, &one, gw, &ldc);
            } else {
                const @T@ *w = a + filter0 * column_rows;
                const @T@ *gy = b + (image * filters + filter0) * outputs;
                @T@ *gx = out + image * g->channels * plane;
                char transposed = 'T', no = 'N';
                m = (int)outputs; n = (int)column_rows; k = (int)group_filters;
                lda = (int)outputs; ldb = (int)column_rows; ldc = (int)outputs;
                sympile_blas_@p@gemm(&no, &transposed, &m, &n, &k, &one, (@T@ *)gy, &lda,
                                     (@T@ *)w, &ldb, &zero, cols, &ldc);
                sympile_col2im_@T@(g, cols, channel0, group_channels, gx);
            }
        }
    }
    free(cols);
    return 0;
}

/* The geometry of a node (kind as above) from its inputs' shapes and the op's options
   (border: 0 valid, 1 full, 2 half, 3 explicit pads), checked as perform() checks it;
   *filters the number of filters, *out_dims the output's shape. */
static int sympile_conv2d_setup_@T@(int kind, PyArrayObject *a, PyArrayObject *b,
                                    PyArrayObject *shape, int border, const npy_intp *pads,
                                    const npy_intp *strides, const npy_intp *dilations,
                                    int flip, npy_intp groups, const char *label,
                                    sympile_conv2d_geometry_@T@ *g, npy_intp *filters,
                                    npy_intp *out_dims)
{
    const npy_intp *da = PyArray_DIMS(a), *db = PyArray_DIMS(b);
    npy_intp spatial[2] = {0, 0};
    if (shape != NULL) {
        if (PyArray_SIZE(shape) != 2) {
            PyErr_Format(PyExc_ValueError, "%s: shape must hold 2 lengths", label);
            return -1;
        }
        for (int axis = 0; axis < 2; ++axis)
            spatial[axis] = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(shape, axis);
    }
    if (kind == 0) {            /* a = x, b = w */
        g->channels = da[1]; g->rows = da[2]; g->cols = da[3];
        g->kernel_rows = db[2]; g->kernel_cols = db[3];
        *filters = db[0];
        if (da[1] != db[1] * groups) {
            PyErr_Format(PyExc_ValueError, "%s: the input has %ld channels but the filters "
                         "expect %ld x num_groups=%ld", label, (long)da[1], (long)db[1],
                         (long)groups);
            return -1;
        }
    } else if (kind == 1) {     /* a = x, b = gy, shape = kernel */
        g->channels = da[1]; g->rows = da[2]; g->cols = da[3];
        g->kernel_rows = spatial[0]; g->kernel_cols = spatial[1];
        *filters = db[1];
    } else {                    /* a = w, b = gy, shape = the input's spatial lengths */
        g->channels = da[1] * groups; g->rows = spatial[0]; g->cols = spatial[1];
        g->kernel_rows = da[2]; g->kernel_cols = da[3];
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
    const npy_intp kernel[2] = {g->kernel_rows, g->kernel_cols};
    const npy_intp lengths[2] = {g->rows, g->cols};
    npy_intp padding[2], outputs[2];
    for (int axis = 0; axis < 2; ++axis) {
        const npy_intp dilated = (kernel[axis] - 1) * dilations[axis] + 1;
        padding[axis] = border == 0 ? 0 : border == 1 ? dilated - 1
                      : border == 2 ? dilated / 2 : pads[axis];
        const npy_intp padded = lengths[axis] + 2 * padding[axis];
        if (dilated > padded || kernel[axis] < 1) {
            PyErr_Format(PyExc_ValueError, "%s: the filter (%ld, %ld), dilation (%ld, %ld), is "
                         "larger than the padded input (%ld, %ld) in spatial dimension %d",
                         label, (long)kernel[0], (long)kernel[1], (long)dilations[0],
                         (long)dilations[1], (long)(g->rows + 2 * padding[0]),
                         (long)(g->cols + 2 * padding[1]), axis);
            return -1;
        }
        outputs[axis] = (padded - dilated) / strides[axis] + 1;
    }
    g->pad_rows = padding[0]; g->pad_cols = padding[1];
    g->stride_rows = strides[0]; g->stride_cols = strides[1];
    g->dil_rows = dilations[0]; g->dil_cols = dilations[1];
    g->out_rows = outputs[0]; g->out_cols = outputs[1];
    g->flip = flip;
    if (kind != 0 && (db[2] != outputs[0] || db[3] != outputs[1]
                      || (kind == 1 && db[0] != da[0]))) {
        PyErr_Format(PyExc_ValueError, "%s: the output gradient has spatial shape (%ld, %ld), "
                     "expected (%ld, %ld)", label, (long)db[2], (long)db[3], (long)outputs[0],
                     (long)outputs[1]);
        return -1;
    }
    if (kind == 0) {
        out_dims[0] = da[0]; out_dims[1] = *filters;
        out_dims[2] = outputs[0]; out_dims[3] = outputs[1];
    } else if (kind == 1) {
        out_dims[0] = *filters; out_dims[1] = g->channels / groups;
        out_dims[2] = kernel[0]; out_dims[3] = kernel[1];
    } else {
        out_dims[0] = db[0]; out_dims[1] = g->channels;
        out_dims[2] = g->rows; out_dims[3] = g->cols;
    }
    return 0;
}
