/* 2d pooling and its gradients in C (pool_c.py), for @T@: one plane (the last two axes) at a
   time, planes threaded; the windows as pool.py defines them. A window of output (r, c)
   spans, in the padded input, [r s0, min(r s0 + ws0, n0 + 2 p0)) by the same in columns;
   its input elements are those rows and columns shifted by -p and clipped to the input.
   The geometry's types and the entry points are declared in pool.h. */

static inline sympile_pool_window_@T@ sympile_pool_window_of_@T@(
    const sympile_pool_geometry_@T@ *g, npy_intp r, npy_intp c)
{
    sympile_pool_window_@T@ w;
    const npy_intp r_start = r * g->stride[0], c_start = c * g->stride[1];
    const npy_intp r_end = r_start + g->ws[0] < g->rows + 2 * g->pad[0]
                           ? r_start + g->ws[0] : g->rows + 2 * g->pad[0];
    const npy_intp c_end = c_start + g->ws[1] < g->cols + 2 * g->pad[1]
                           ? c_start + g->ws[1] : g->cols + 2 * g->pad[1];
    w.padded_size = (r_end - r_start) * (c_end - c_start);
    w.row0 = r_start - g->pad[0] > 0 ? r_start - g->pad[0] : 0;
    w.col0 = c_start - g->pad[1] > 0 ? c_start - g->pad[1] : 0;
    w.row1 = r_end - g->pad[0] < g->rows ? r_end - g->pad[0] : g->rows;
    w.col1 = c_end - g->pad[1] < g->cols ? c_end - g->pad[1] : g->cols;
    return w;
}

static inline @T@ sympile_pool_divisor_@T@(const sympile_pool_geometry_@T@ *g,
                                           const sympile_pool_window_@T@ *w)
{
    if (g->mode == 2)
        return (@T@)w->padded_size;
    return (@T@)((w->row1 - w->row0) * (w->col1 - w->col0));
}

/* The windows' bounds, the same for every plane: row0, row1 (out_rows each), then col0,
   col1 (out_cols each), each window [start, end) in the input; a new array (free it), or
   NULL with a MemoryError set. */
static npy_intp *sympile_pool_bounds_@T@(const sympile_pool_geometry_@T@ *g)
{
    npy_intp *bounds = (npy_intp *)malloc(sizeof(npy_intp) * 2 * (g->out_cols + g->out_rows)
                                          + 1);
    if (bounds == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    npy_intp *row0 = bounds, *row1 = bounds + g->out_rows;
    npy_intp *col0 = bounds + 2 * g->out_rows, *col1 = col0 + g->out_cols;
    for (npy_intp r = 0; r < g->out_rows; ++r) {
        const sympile_pool_window_@T@ w = sympile_pool_window_of_@T@(g, r, 0);
        row0[r] = w.row0;
        row1[r] = w.row1;
    }
    for (npy_intp c = 0; c < g->out_cols; ++c) {
        const sympile_pool_window_@T@ w = sympile_pool_window_of_@T@(g, 0, c);
        col0[c] = w.col0;
        col1[c] = w.col1;
    }
    return bounds;
}

/* value where take, else +0: by a mask of its bits, not a branch (whether an element is its
   window's maximum is a coin toss on real data: a branch cost the 2 x 2 max gradient of 60 x
   16 x 10 x 10 float32 0.29 ms against 0.10). */
static inline @T@ sympile_pool_pick_@T@(int take, @T@ value)
{
    if (sizeof(@T@) == sizeof(npy_uint32)) {
        npy_uint32 bits;
        memcpy(&bits, &value, sizeof bits);
        bits &= (npy_uint32)0 - (npy_uint32)take;
        memcpy(&value, &bits, sizeof bits);
    } else {
        npy_uint64 bits;
        memcpy(&bits, &value, sizeof bits);
        bits &= (npy_uint64)0 - (npy_uint64)take;
        memcpy(&value, &bits, sizeof bits);
    }
    return value;
}

/* gx (zeroed here) from gz: max mode to every position equal to the window's maximum
   (maxout), the other modes spread over the window (over its divisor). Returns -1 (no
   memory) with an exception set, else 0. The geometry is read into locals and the planes
   through restrict pointers: the unit is compiled without strict aliasing, so every store
   to gx would otherwise reload it (the 2 x 2 max gradient of 60 x 16 x 10 x 10 took 0.40
   ms, 16 ns a window). */
int @NAME@_pool_backward(const sympile_pool_geometry_@T@ *g, const @T@ *x,
                         const @T@ *maxout, const @T@ *gz, @T@ *gx,
                         npy_intp planes, int threaded)
{
    npy_intp *bounds = sympile_pool_bounds_@T@(g);
    if (bounds == NULL)
        return -1;
    const npy_intp rows = g->rows, cols = g->cols, out_rows = g->out_rows;
    const npy_intp out_cols = g->out_cols;
    const int mode = g->mode;
    const npy_intp *row0 = bounds, *row1 = bounds + out_rows;
    const npy_intp *col0 = bounds + 2 * out_rows, *col1 = col0 + out_cols;
    #pragma omp parallel for schedule(dynamic, 4) if (threaded)
    for (npy_intp plane = 0; plane < planes; ++plane) {
        const @T@ *restrict in = x + plane * rows * cols;
        const npy_intp out_offset = plane * out_rows * out_cols;
        const @T@ *restrict grad = gz + out_offset;
        @T@ *restrict target = gx + plane * rows * cols;
        memset(target, 0, sizeof(@T@) * rows * cols);
        for (npy_intp r = 0; r < out_rows; ++r) {
            const npy_intp i0 = row0[r], i1 = row1[r];
            for (npy_intp c = 0; c < out_cols; ++c) {
                const npy_intp o = r * out_cols + c, j0 = col0[c], j1 = col1[c];
                if (mode == 0) {
                    const @T@ maximum = maxout[out_offset + o], share = grad[o];
                    for (npy_intp i = i0; i < i1; ++i)
                        for (npy_intp j = j0; j < j1; ++j)
                            target[i * cols + j] += sympile_pool_pick_@T@(
                                in[i * cols + j] == maximum, share);
                } else {
                    @T@ share = grad[o];
                    if (mode >= 2) {
                        const sympile_pool_window_@T@ w = sympile_pool_window_of_@T@(g, r, c);
                        share = (@T@)((double)share
                                      / (double)sympile_pool_divisor_@T@(g, &w));
                    }
                    for (npy_intp i = i0; i < i1; ++i)
                        for (npy_intp j = j0; j < j1; ++j)
                            target[i * cols + j] += share;
                }
            }
        }
    }
    free(bounds);
    return 0;
}

/* One step of a window's maximum: branch-free (a max instruction; random data mispredicts
   branches), a NaN noted apart in *nan: it wins, as in numpy's max. */
static inline @T@ sympile_pool_max_step_@T@(@T@ value, @T@ e, int *nan)
{
    *nan |= e != e;
    return e > value ? e : value;
}

/* Max pooling of one plane by 2 x 2 windows of stride 2, all inside the plane: two rows at a
   time, no window bounds to look up (the general loop spent ~4 ns a window on them: the
   pooling of 60 x 6 x 28 x 28 float32 took 0.15 ms). Values as the general loop's: the
   first of equal maxima (-0.0 against 0.0), a canonical NaN where the window holds one. */
static void sympile_pool_max_2x2_@T@(const @T@ *restrict in, npy_intp cols,
                                     @T@ *restrict result, npy_intp out_rows,
                                     npy_intp out_cols)
{
    for (npy_intp r = 0; r < out_rows; ++r) {
        const @T@ *restrict top = in + 2 * r * cols, *restrict bottom = top + cols;
        @T@ *restrict line = result + r * out_cols;
        for (npy_intp c = 0; c < out_cols; ++c) {
            /* The window loop's steps, unrolled. */
            int nan = 0;
            @T@ value = sympile_pool_max_step_@T@(-(@T@)INFINITY, top[2 * c], &nan);
            value = sympile_pool_max_step_@T@(value, top[2 * c + 1], &nan);
            value = sympile_pool_max_step_@T@(value, bottom[2 * c], &nan);
            value = sympile_pool_max_step_@T@(value, bottom[2 * c + 1], &nan);
            line[c] = nan ? (@T@)NAN : value;
        }
    }
}

/* Pool(x) plane by plane; returns -1 (no memory) with an exception set, else 0. */
int @NAME@_pool_forward(const sympile_pool_geometry_@T@ *g, const @T@ *x,
                        @T@ *out, npy_intp planes, int threaded)
{
    npy_intp *bounds = sympile_pool_bounds_@T@(g);
    if (bounds == NULL)
        return -1;
    const npy_intp *row0 = bounds, *row1 = bounds + g->out_rows;
    const npy_intp *col0 = bounds + 2 * g->out_rows, *col1 = col0 + g->out_cols;
    const int pairs = g->mode == 0 && g->ws[0] == 2 && g->ws[1] == 2 && g->stride[0] == 2
                      && g->stride[1] == 2 && g->pad[0] == 0 && g->pad[1] == 0
                      && 2 * g->out_rows <= g->rows && 2 * g->out_cols <= g->cols;
    #pragma omp parallel for schedule(dynamic, 4) if (threaded)
    for (npy_intp plane = 0; plane < planes; ++plane) {
        const @T@ *in = x + plane * g->rows * g->cols;
        @T@ *result = out + plane * g->out_rows * g->out_cols;
        if (pairs) {
            sympile_pool_max_2x2_@T@(in, g->cols, result, g->out_rows, g->out_cols);
            continue;
        }
        for (npy_intp r = 0; r < g->out_rows; ++r) {
            @T@ *line = result + r * g->out_cols;
            if (g->mode == 0) {
                for (npy_intp c = 0; c < g->out_cols; ++c) {
                    @T@ value = -(@T@)INFINITY;
                    int nan = 0;
                    for (npy_intp i = row0[r]; i < row1[r]; ++i)
                        for (npy_intp j = col0[c]; j < col1[c]; ++j)
                            value = sympile_pool_max_step_@T@(value, in[i * g->cols + j], &nan);
                    line[c] = nan ? (@T@)NAN : value;
                }
            } else {
                for (npy_intp c = 0; c < g->out_cols; ++c) {
                    @T@ value = 0;
                    for (npy_intp i = row0[r]; i < row1[r]; ++i)
                        for (npy_intp j = col0[c]; j < col1[c]; ++j)
                            value += in[i * g->cols + j];
                    if (g->mode >= 2) {
                        const sympile_pool_window_@T@ w = sympile_pool_window_of_@T@(g, r, c);
                        value = (@T@)((double)value
                                      / (double)sympile_pool_divisor_@T@(g, &w));
                    }
                    line[c] = value;
                }
            }
        }
    }
    free(bounds);
    return 0;
}


static inline npy_intp sympile_pool_floor_div_@T@(npy_intp a, npy_intp b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The geometry of the last two axes of x (Theano's output lengths), or -1 with the error
   perform() raises. */
int @NAME@_pool_setup(PyArrayObject *x, const npy_intp *ws, const npy_intp *stride,
                      const npy_intp *pad, int ignore_border, int mode,
                      const char *label, sympile_pool_geometry_@T@ *g)
{
    const int ndim = PyArray_NDIM(x);
    g->rows = PyArray_DIM(x, ndim - 2);
    g->cols = PyArray_DIM(x, ndim - 1);
    g->mode = mode;
    const npy_intp lengths[2] = {g->rows, g->cols};
    npy_intp outputs[2];
    for (int axis = 0; axis < 2; ++axis) {
        g->ws[axis] = ws[axis];
        g->stride[axis] = stride[axis];
        g->pad[axis] = pad[axis];
        const npy_intp n = lengths[axis];
        if (ignore_border) {
            if (n + 2 * pad[axis] < ws[axis]) {
                PyErr_Format(PyExc_ValueError, "%s: the window (%ld, %ld) is larger than the "
                             "input's last axes (%ld, %ld) (padded by (%ld, %ld)) with "
                             "ignore_border=True", label, (long)ws[0], (long)ws[1],
                             (long)g->rows, (long)g->cols, (long)pad[0], (long)pad[1]);
                return -1;
            }
            outputs[axis] = (n + 2 * pad[axis] - ws[axis]) / stride[axis] + 1;
        } else if (stride[axis] >= ws[axis]) {
            outputs[axis] = sympile_pool_floor_div_@T@(n - 1, stride[axis]) + 1;
        } else {
            const npy_intp steps = sympile_pool_floor_div_@T@(n - 1 - ws[axis] + stride[axis],
                                                              stride[axis]);
            outputs[axis] = (steps > 0 ? steps : 0) + 1;
        }
    }
    g->out_rows = outputs[0];
    g->out_cols = outputs[1];
    return 0;
}

int @NAME@_pool_node(PyObject *const *cells, const void *data)
{
    const sympile_pool_node_@T@ *node = data;
    const int n_inputs = node->kind == 0 ? 1 : node->kind == 1 ? 3 : 2;
    PyArrayObject *arrays[3] = {NULL, NULL, NULL};
    int status = 0;
    for (int k = 0; k < n_inputs && status == 0; ++k) {
        arrays[k] = (PyArrayObject *)PyArray_FROMANY(PyList_GET_ITEM(cells[k], 0),
                                                     PyArray_TYPE((PyArrayObject *)
                                                         PyList_GET_ITEM(cells[k], 0)),
                                                     0, 0, NPY_ARRAY_CARRAY_RO);
        if (arrays[k] == NULL)
            status = -1;
    }
    PyArrayObject *x = arrays[0], *gz = arrays[n_inputs - 1];
    PyArrayObject *maxout = node->kind == 1 ? arrays[1] : NULL;
    sympile_pool_geometry_@T@ geometry;
    if (status == 0)
        status = @NAME@_pool_setup(x, node->ws, node->stride, node->pad, node->ignore_border,
                                   node->mode, node->label, &geometry);
    const npy_intp planes = status != 0 || geometry.rows * geometry.cols == 0 ? 0
                            : PyArray_SIZE(x) / (geometry.rows * geometry.cols);
    const npy_intp out_size = planes * geometry.out_rows * geometry.out_cols;
    if (status == 0 && node->kind != 0
            && (PyArray_SIZE(gz) != out_size
                || (maxout != NULL && PyArray_SIZE(maxout) != PyArray_SIZE(gz)))) {
        PyErr_Format(PyExc_ValueError, "%s: the output gradient has %ld elements, expected "
                     "%ld", node->label, (long)PyArray_SIZE(gz), (long)out_size);
        status = -1;
    }
    PyArrayObject *output = sympile_take_output(cells[n_inputs]);
    if (status == 0) {
        npy_intp dims[NPY_MAXDIMS];
        const int ndim = PyArray_NDIM(x);
        for (int a = 0; a < ndim; ++a)
            dims[a] = PyArray_DIM(x, a);
        if (node->kind == 0) {
            dims[ndim - 2] = geometry.out_rows;
            dims[ndim - 1] = geometry.out_cols;
        }
        status = sympile_prepare_output(&output, ndim, dims, PyArray_TYPE(x));
    }
    const int threaded = node->threaded_from > 0 && PyArray_SIZE(x) >= node->threaded_from;
    if (status == 0 && planes > 0 && node->kind == 0) {
        status = @NAME@_pool_forward(&geometry, (const @T@ *)PyArray_DATA(x),
                                     (@T@ *)PyArray_DATA(output), planes, threaded);
    } else if (status == 0 && planes > 0) {
        status = @NAME@_pool_backward(&geometry, (const @T@ *)PyArray_DATA(x),
                                      maxout == NULL ? NULL : (const @T@ *)PyArray_DATA(maxout),
                                      (const @T@ *)PyArray_DATA(gz),
                                      (@T@ *)PyArray_DATA(output), planes, threaded);
    } else if (status == 0) {
        memset(PyArray_DATA(output), 0, PyArray_NBYTES(output));
    }
    for (int k = 0; k < n_inputs; ++k)
        Py_XDECREF(arrays[k]);
    if (status != 0) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[n_inputs], output);
    return 0;
}
