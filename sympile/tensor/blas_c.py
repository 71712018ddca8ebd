"""The C that the C backend runs for the dense products (sympile.tensor.blas: Dot, MatMul,
TensorDot) and the BLAS updates (sympile.tensor.gemm: Gemm, Gemv, Ger), shared by their
c_code methods: float32 and float64 only, through the BLAS the backend loads from scipy.

BLAS is Fortran: column-major, every argument by pointer, 32-bit lengths. A row-major
(C-ordered) matrix is the column-major matrix of its transpose, so a row-major product
c = a @ b is the column-major c^T = b^T @ a^T: the operands swap places and take the transpose
flag that their own layout asks for, and nothing is copied. An operand is copied (to C order)
only when BLAS cannot read it in place: misaligned, or strides that are negative, zero, not
multiples of the itemsize or not unit along either of its last two axes. A length past
INT_MAX is an OverflowError, never a truncated int.

The results equal perform()'s: empty products are zeros (BLAS is not called with a zero
length), and where BLAS would skip a term that the formula still computes (alpha = 0, beta =
0, k = 0), the term is added in C, so that 0 * inf gives nan as in numpy.

Each function is emitted once per module (per dtype), whatever number of nodes calls it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sympile.graph.ccode import CCode

__all__ = ["BLAS_C_DTYPES", "blas_call", "c_string"]

BLAS_C_DTYPES = ("float32", "float64")

_LAYOUT = r"""
/* A matrix as BLAS reads it: rows x cols elements at `data`, stored row by row (row_major)
   or column by column, consecutive rows (columns) `ld` elements apart. */
typedef struct {
    char *data;
    npy_intp rows, cols, ld;
    int row_major;
} sympile_blas_matrix;

/* Describes in `matrix` the rows x cols matrix at `data` (byte strides s0, s1); returns 1
   when BLAS can read it in place (aligned; unit steps along one axis, along the other a
   positive multiple of the itemsize, at least that axis's length and at most INT_MAX
   elements), else 0. An empty matrix is never read: any layout does. */
static int sympile_blas_layout(char *data, npy_intp rows, npy_intp cols, npy_intp s0,
                               npy_intp s1, npy_intp itemsize, sympile_blas_matrix *matrix)
{
    matrix->data = data;
    matrix->rows = rows;
    matrix->cols = cols;
    matrix->row_major = 1;
    matrix->ld = cols > 1 ? cols : 1;
    if (rows == 0 || cols == 0)
        return 1;
    if ((uintptr_t)data % itemsize)
        return 0;
    if (cols == 1 || s1 == itemsize) {
        if (rows == 1)
            return 1;
        if (s0 > 0 && s0 % itemsize == 0 && s0 / itemsize >= cols && s0 / itemsize <= INT_MAX) {
            matrix->ld = s0 / itemsize;
            return 1;
        }
    }
    if (rows == 1 || s0 == itemsize) {
        matrix->row_major = 0;
        matrix->ld = rows;
        if (cols == 1)
            return 1;
        if (s1 > 0 && s1 % itemsize == 0 && s1 / itemsize >= rows && s1 / itemsize <= INT_MAX) {
            matrix->ld = s1 / itemsize;
            return 1;
        }
    }
    return 0;
}

/* The byte strides of the rows and the columns of `matrix`. */
static void sympile_blas_strides(const sympile_blas_matrix *matrix, npy_intp itemsize,
                                 npy_intp *s0, npy_intp *s1)
{
    *s0 = matrix->row_major ? matrix->ld * itemsize : itemsize;
    *s1 = matrix->row_major ? itemsize : matrix->ld * itemsize;
}

/* Whether the bytes that arrays a and b span intersect (so they may share memory). */
static int sympile_blas_may_overlap(PyArrayObject *a, PyArrayObject *b)
{
    PyArrayObject *arrays[2] = {a, b};
    uintptr_t low[2], high[2];
    for (int i = 0; i < 2; i++) {
        PyArrayObject *array = arrays[i];
        low[i] = high[i] = (uintptr_t)PyArray_BYTES(array);
        high[i] += PyArray_ITEMSIZE(array);
        for (int axis = 0; axis < PyArray_NDIM(array); axis++) {
            npy_intp length = PyArray_DIM(array, axis), stride = PyArray_STRIDE(array, axis);
            if (length == 0)
                return 0;
            if (stride < 0)
                low[i] -= (uintptr_t)((length - 1) * -stride);
            else
                high[i] += (uintptr_t)((length - 1) * stride);
        }
    }
    return low[0] < high[1] && low[1] < high[0];
}

/* The matrices of the 1-d to 3-d `array` as BLAS reads them: its last two axes (a 1-d array
   is one row, or one column when `column`); `matrix` is the first one, the others follow
   `*batch_stride` bytes apart. An array BLAS cannot read in place, or one that overlaps
   `avoid` (unless NULL), is copied in C order into *copy, a new reference the caller
   releases. Returns 0, or -1 with an exception set. */
static int sympile_blas_operand(PyArrayObject *array, int column, PyArrayObject *avoid,
                                sympile_blas_matrix *matrix, npy_intp *batch_stride,
                                PyArrayObject **copy)
{
    PyArrayObject *source = array;
    int must_copy = avoid != NULL && sympile_blas_may_overlap(array, avoid);
    for (;;) {
        int ndim = PyArray_NDIM(source);
        npy_intp *dims = PyArray_DIMS(source), *strides = PyArray_STRIDES(source);
        npy_intp rows, cols, s0, s1;
        if (ndim == 1) {
            rows = column ? dims[0] : 1;
            cols = column ? 1 : dims[0];
            s0 = column ? strides[0] : 0;
            s1 = column ? 0 : strides[0];
        } else {
            rows = dims[ndim - 2];
            cols = dims[ndim - 1];
            s0 = strides[ndim - 2];
            s1 = strides[ndim - 1];
        }
        *batch_stride = ndim == 3 ? strides[0] : 0;
        if (!must_copy && sympile_blas_layout(PyArray_BYTES(source), rows, cols, s0, s1,
                                              PyArray_ITEMSIZE(source), matrix))
            return 0;
        if (source != array) {
            PyErr_SetString(PyExc_SystemError, "sympile_blas_operand: BLAS cannot read a "
                            "C-ordered copy");
            return -1;
        }
        *copy = (PyArrayObject *)PyArray_NewCopy(array, NPY_CORDER);
        if (*copy == NULL)
            return -1;
        source = *copy;
        must_copy = 0;
    }
}

/* The 1-d `array` as BLAS reads it: its first element *data and the step *inc between
   elements. An array whose step is not a positive multiple of the itemsize (of at most
   INT_MAX elements), that is misaligned or overlaps `avoid` (unless NULL), is copied into
   *copy, a new reference the caller releases. Returns 0, or -1 with an exception set. */
static int sympile_blas_vector(PyArrayObject *array, PyArrayObject *avoid, char **data,
                               int *inc, PyArrayObject **copy)
{
    npy_intp length = PyArray_DIM(array, 0), stride = PyArray_STRIDE(array, 0);
    npy_intp itemsize = PyArray_ITEMSIZE(array);
    *data = PyArray_BYTES(array);
    *inc = 1;
    if (length == 0)
        return 0;
    if ((avoid == NULL || !sympile_blas_may_overlap(array, avoid))
            && (uintptr_t)*data % itemsize == 0) {
        if (length == 1)
            return 0;
        if (stride > 0 && stride % itemsize == 0 && stride / itemsize <= INT_MAX) {
            *inc = (int)(stride / itemsize);
            return 0;
        }
    }
    *copy = (PyArrayObject *)PyArray_NewCopy(array, NPY_CORDER);
    if (*copy == NULL)
        return -1;
    *data = PyArray_BYTES(*copy);
    return 0;
}

/* 1 when BLAS's int holds lengths a, b and c; else 0 with an OverflowError set. */
static int sympile_blas_lengths_fit(const char *op, npy_intp a, npy_intp b, npy_intp c)
{
    npy_intp lengths[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (lengths[i] > INT_MAX) {
            PyErr_Format(PyExc_OverflowError, "%s: a length of %zd is more than BLAS takes "
                         "(at most %d)", op, (Py_ssize_t)lengths[i], INT_MAX);
            return 0;
        }
    return 1;
}

/* -1, with the ValueError of summed axes whose lengths differ (perform's message). */
static int sympile_blas_not_aligned(const char *op, PyArrayObject *a, PyArrayObject *b,
                                    int axis_a, int axis_b)
{
    PyObject *shape_a = PyObject_GetAttrString((PyObject *)a, "shape");
    PyObject *shape_b = shape_a ? PyObject_GetAttrString((PyObject *)b, "shape") : NULL;
    if (shape_b != NULL)
        PyErr_Format(PyExc_ValueError, "%s: shapes %R and %R are not aligned: axis %d of a "
                     "has length %zd, axis %d of b has length %zd", op, shape_a, shape_b,
                     axis_a, (Py_ssize_t)PyArray_DIM(a, axis_a), axis_b,
                     (Py_ssize_t)PyArray_DIM(b, axis_b));
    Py_XDECREF(shape_a);
    Py_XDECREF(shape_b);
    return -1;
}

/* -1, with the ValueError of two lengths that must be equal (perform's message). */
static int sympile_blas_different_lengths(const char *op, const char *what, npy_intp first,
                                          npy_intp second)
{
    PyErr_Format(PyExc_ValueError, "%s: %s have different lengths [%zd, %zd]", op, what,
                 (Py_ssize_t)first, (Py_ssize_t)second);
    return -1;
}
"""

_SCALE = r"""
/* out = scale * in, or out += scale * in when `accumulate`, over rows x cols @dtype@
   elements at the given byte strides (in may be out; in may be misaligned). */
static void sympile_blas_scale_@dtype@(char *out, npy_intp out_s0, npy_intp out_s1,
                                       const char *in, npy_intp in_s0, npy_intp in_s1,
                                       npy_intp rows, npy_intp cols, @type@ scale,
                                       int accumulate)
{
    for (npy_intp i = 0; i < rows; i++)
        for (npy_intp j = 0; j < cols; j++) {
            @type@ *target = (@type@ *)(out + i * out_s0 + j * out_s1), value;
            memcpy(&value, in + i * in_s0 + j * in_s1, sizeof value);
            *target = accumulate ? *target + scale * value : scale * value;
        }
}
"""

_GEMM = r"""
/* c = alpha * a @ b + beta * c for an m x k a, k x n b and m x n c (m, n, k > 0, at most
   INT_MAX), by one @p@gemm call. */
static void sympile_blas_gemm_@dtype@(const sympile_blas_matrix *a,
                                      const sympile_blas_matrix *b, @type@ alpha,
                                      @type@ beta, const sympile_blas_matrix *c)
{
    int m = (int)a->rows, n = (int)b->cols, k = (int)a->cols;
    int lda = (int)a->ld, ldb = (int)b->ld, ldc = (int)c->ld;
    if (c->row_major) {
        /* Row-major c = a @ b is column-major c^T = b^T @ a^T. */
        char trans_b = b->row_major ? 'N' : 'T', trans_a = a->row_major ? 'N' : 'T';
        sympile_blas_@p@gemm(&trans_b, &trans_a, &n, &m, &k, &alpha, (@type@ *)b->data, &ldb,
                             (@type@ *)a->data, &lda, &beta, (@type@ *)c->data, &ldc);
    } else {
        char trans_a = a->row_major ? 'T' : 'N', trans_b = b->row_major ? 'T' : 'N';
        sympile_blas_@p@gemm(&trans_a, &trans_b, &m, &n, &k, &alpha, (@type@ *)a->data, &lda,
                             (@type@ *)b->data, &ldb, &beta, (@type@ *)c->data, &ldc);
    }
}
"""

_GEMV = r"""
/* y = alpha * a @ x + beta * y (a^T @ x when `transposed`) for vectors x and y whose
   elements are inc_x and inc_y apart (all lengths > 0, at most INT_MAX), by one @p@gemv. */
static void sympile_blas_gemv_@dtype@(const sympile_blas_matrix *a, int transposed,
                                      @type@ alpha, char *x, int inc_x, @type@ beta, char *y,
                                      int inc_y)
{
    /* BLAS sees the column-major matrix in a's memory: a^T when a is row-major. */
    int rows = (int)(a->row_major ? a->cols : a->rows);
    int cols = (int)(a->row_major ? a->rows : a->cols), lda = (int)a->ld;
    char trans = a->row_major != transposed ? 'T' : 'N';
    sympile_blas_@p@gemv(&trans, &rows, &cols, &alpha, (@type@ *)a->data, &lda, (@type@ *)x,
                         &inc_x, &beta, (@type@ *)y, &inc_y);
}
"""

_GER = r"""
/* a += alpha * outer(x, y) for vectors x and y whose elements are inc_x and inc_y apart
   (all lengths > 0, at most INT_MAX), by one @p@ger call. */
static void sympile_blas_ger_@dtype@(const sympile_blas_matrix *a, @type@ alpha, char *x,
                                     int inc_x, char *y, int inc_y)
{
    int m = (int)a->rows, n = (int)a->cols, lda = (int)a->ld;
    if (a->row_major) /* a row-major a is the column-major a^T, and a^T += alpha y x^T */
        sympile_blas_@p@ger(&n, &m, &alpha, (@type@ *)y, &inc_y, (@type@ *)x, &inc_x,
                            (@type@ *)a->data, &lda);
    else
        sympile_blas_@p@ger(&m, &n, &alpha, (@type@ *)x, &inc_x, (@type@ *)y, &inc_y,
                            (@type@ *)a->data, &lda);
}
"""

_PRODUCT = r"""
/* a @ b for 1-d or 2-d @dtype@ arrays a (m x k) and b (k x n), whose lengths match, into *out
   (ndim axes of lengths dims): one @p@gemm, @p@gemv or @p@dot call. Returns 0, or -1 with
   an exception set. */
static int sympile_blas_product_@dtype@(const char *op, PyArrayObject *a, PyArrayObject *b,
                                        int ndim, const npy_intp *dims, PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), status = -1;
    npy_intp k = PyArray_DIM(a, a_ndim - 1);
    npy_intp m = a_ndim == 2 ? PyArray_DIM(a, 0) : 1, n = b_ndim == 2 ? PyArray_DIM(b, 1) : 1;
    PyArrayObject *a_copy = NULL, *b_copy = NULL;
    sympile_blas_matrix a_matrix, b_matrix, c;
    npy_intp batch_stride;
    if (!sympile_blas_lengths_fit(op, m, k, n)
            || sympile_prepare_output(out, ndim, dims, @npy@))
        return -1;
    char *result = PyArray_BYTES(*out);
    if (m == 0 || n == 0)
        return 0;
    /* Zeros: the empty product (k = 0), or gemv's y, which beta = 0 must not read. */
    if (k == 0 || a_ndim == 1 || b_ndim == 1)
        memset(result, 0, (size_t)(m * n) * sizeof(@type@));
    if (k == 0)
        return 0;
    if (a_ndim == 1 && b_ndim == 1) {
        char *x, *y;
        int inc_x, inc_y, length = (int)k;
        if (sympile_blas_vector(a, NULL, &x, &inc_x, &a_copy)
                || sympile_blas_vector(b, NULL, &y, &inc_y, &b_copy))
            goto done;
        *(@type@ *)result = sympile_blas_@p@dot(&length, (@type@ *)x, &inc_x, (@type@ *)y,
                                                &inc_y);
    } else if (a_ndim == 1 || b_ndim == 1) {
        /* matrix @ vector, or vector @ matrix = matrix^T @ vector */
        char *x;
        int inc_x;
        if (sympile_blas_operand(b_ndim == 1 ? a : b, 0, NULL, &a_matrix, &batch_stride,
                                 &a_copy)
                || sympile_blas_vector(b_ndim == 1 ? b : a, NULL, &x, &inc_x, &b_copy))
            goto done;
        sympile_blas_gemv_@dtype@(&a_matrix, b_ndim != 1, 1, x, inc_x, 0, result, 1);
    } else {
        if (sympile_blas_operand(a, 0, NULL, &a_matrix, &batch_stride, &a_copy)
                || sympile_blas_operand(b, 0, NULL, &b_matrix, &batch_stride, &b_copy))
            goto done;
        sympile_blas_layout(result, m, n, n * (npy_intp)sizeof(@type@), sizeof(@type@),
                            sizeof(@type@), &c);
        sympile_blas_gemm_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
    }
    status = 0;
done:
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    return status;
}
"""

_DOT = r"""
/* numpy.dot of 1-d and 2-d @dtype@ arrays into *out. */
static int sympile_dot_@dtype@(const char *op, PyArrayObject *a, PyArrayObject *b,
                               PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), ndim = 0;
    npy_intp dims[2];
    if (PyArray_DIM(a, a_ndim - 1) != PyArray_DIM(b, 0))
        return sympile_blas_not_aligned(op, a, b, a_ndim - 1, 0);
    if (a_ndim == 2)
        dims[ndim++] = PyArray_DIM(a, 0);
    if (b_ndim == 2)
        dims[ndim++] = PyArray_DIM(b, 1);
    return sympile_blas_product_@dtype@(op, a, b, ndim, dims, out);
}
"""

_MATMUL = r"""
/* numpy.matmul of 1-d to 3-d @dtype@ arrays into *out. A batch axis broadcasts when its
   operand lacks it, or has it with length 1 in its type (a_batch_one, b_batch_one). The
   matrices of a batch are one gemm call each, or one call in all when b broadcasts and a's
   matrices follow each other as the rows of one tall matrix. */
static int sympile_matmul_@dtype@(const char *op, PyArrayObject *a, PyArrayObject *b,
                                  int a_batch_one, int b_batch_one, PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), ndim = 0;
    npy_intp *a_dims = PyArray_DIMS(a), *b_dims = PyArray_DIMS(b), dims[3];
    npy_intp k = a_dims[a_ndim - 1], b_rows = b_dims[b_ndim == 1 ? 0 : b_ndim - 2];
    npy_intp m = a_ndim > 1 ? a_dims[a_ndim - 2] : 1, n = b_ndim > 1 ? b_dims[b_ndim - 1] : 1;
    if (k != b_rows) {
        PyObject *shape_a = PyObject_GetAttrString((PyObject *)a, "shape");
        PyObject *shape_b = shape_a ? PyObject_GetAttrString((PyObject *)b, "shape") : NULL;
        if (shape_b != NULL)
            PyErr_Format(PyExc_ValueError, "%s: shapes %R and %R are not aligned: a has %zd "
                         "columns, b has %zd rows", op, shape_a, shape_b, (Py_ssize_t)k,
                         (Py_ssize_t)b_rows);
        Py_XDECREF(shape_a);
        Py_XDECREF(shape_b);
        return -1;
    }
    if (a_ndim < 3 && b_ndim < 3) {
        if (a_ndim == 2)
            dims[ndim++] = m;
        if (b_ndim == 2)
            dims[ndim++] = n;
        return sympile_blas_product_@dtype@(op, a, b, ndim, dims, out);
    }
    int a_broadcasts = a_ndim < 3 || a_batch_one, b_broadcasts = b_ndim < 3 || b_batch_one;
    npy_intp a_batch = a_ndim == 3 ? a_dims[0] : 1, b_batch = b_ndim == 3 ? b_dims[0] : 1;
    if (!a_broadcasts && !b_broadcasts && a_batch != b_batch) {
        PyObject *shape_a = PyObject_GetAttrString((PyObject *)a, "shape");
        PyObject *shape_b = shape_a ? PyObject_GetAttrString((PyObject *)b, "shape") : NULL;
        if (shape_b != NULL)
            PyErr_Format(PyExc_ValueError, "%s: shapes %R and %R have batch axes that cannot "
                         "be broadcast together: batch axis 0 has lengths %zd and %zd%s", op,
                         shape_a, shape_b, (Py_ssize_t)a_batch, (Py_ssize_t)b_batch,
                         a_batch == 1 || b_batch == 1 ? " (a length-1 batch axis broadcasts "
                         "only if its type says it has length 1)" : "");
        Py_XDECREF(shape_a);
        Py_XDECREF(shape_b);
        return -1;
    }
    npy_intp batch = !a_broadcasts ? a_batch : !b_broadcasts ? b_batch : 1;
    dims[ndim++] = batch;
    if (a_ndim > 1)
        dims[ndim++] = m;
    if (b_ndim > 1)
        dims[ndim++] = n;
    if (!sympile_blas_lengths_fit(op, m, k, n)
            || sympile_prepare_output(out, ndim, dims, @npy@))
        return -1;
    char *result = PyArray_BYTES(*out);
    if (batch == 0 || m == 0 || n == 0)
        return 0;
    if (k == 0) {
        memset(result, 0, (size_t)(batch * m * n) * sizeof(@type@));
        return 0;
    }
    PyArrayObject *a_copy = NULL, *b_copy = NULL;
    sympile_blas_matrix a_matrix, b_matrix, c;
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
    sympile_blas_layout(result, m, n, n * (npy_intp)sizeof(@type@), sizeof(@type@),
                        sizeof(@type@), &c);
    if (b_step == 0 && a_step != 0 && a_matrix.row_major && batch * m <= INT_MAX
            && a_step == m * a_matrix.ld * (npy_intp)sizeof(@type@)) {
        a_matrix.rows = c.rows = batch * m;
        sympile_blas_gemm_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
    } else {
        for (npy_intp i = 0; i < batch; i++) {
            sympile_blas_gemm_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
            a_matrix.data += a_step;
            b_matrix.data += b_step;
            c.data += c_step;
        }
    }
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    return 0;
}
"""

_TENSORDOT = r"""
/* numpy.tensordot of @dtype@ arrays into *out: perm_a orders a's axes as its free axes, then
   the n_axes summed ones; perm_b orders b's as the summed axes (paired in order with a's),
   then its free ones. Transposed and reshaped (a copy where numpy's reshape copies), they
   are the two matrices of one @p@gemm call, whose C-ordered result is the output. */
static int sympile_tensordot_@dtype@(const char *op, PyArrayObject *a, PyArrayObject *b,
                                     int n_axes, const int *perm_a, const int *perm_b,
                                     PyArrayObject **out)
{
    int a_ndim = PyArray_NDIM(a), b_ndim = PyArray_NDIM(b), ndim = 0, status = -1;
    npy_intp dims[2 * NPY_MAXDIMS], order_a[NPY_MAXDIMS], order_b[NPY_MAXDIMS];
    npy_intp rows = 1, inner = 1, cols = 1;
    for (int i = 0; i < n_axes; i++) {
        int axis_a = perm_a[a_ndim - n_axes + i], axis_b = perm_b[i];
        if (PyArray_DIM(a, axis_a) != PyArray_DIM(b, axis_b))
            return sympile_blas_not_aligned(op, a, b, axis_a, axis_b);
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
    char *result = PyArray_BYTES(*out);
    if (rows == 0 || cols == 0)
        return 0;
    if (inner == 0) {
        memset(result, 0, (size_t)(rows * cols) * sizeof(@type@));
        return 0;
    }
    npy_intp shape_a[2] = {rows, inner}, shape_b[2] = {inner, cols}, batch_stride;
    PyArray_Dims transpose_a = {order_a, a_ndim}, transpose_b = {order_b, b_ndim};
    PyArray_Dims reshape_a = {shape_a, 2}, reshape_b = {shape_b, 2};
    PyArrayObject *a_view = NULL, *b_view = NULL, *a_matrix_array = NULL;
    PyArrayObject *b_matrix_array = NULL, *a_copy = NULL, *b_copy = NULL;
    sympile_blas_matrix a_matrix, b_matrix, c;
    a_view = (PyArrayObject *)PyArray_Transpose(a, &transpose_a);
    b_view = a_view ? (PyArrayObject *)PyArray_Transpose(b, &transpose_b) : NULL;
    if (b_view == NULL)
        goto done;
    a_matrix_array = (PyArrayObject *)PyArray_Newshape(a_view, &reshape_a, NPY_CORDER);
    b_matrix_array = a_matrix_array
        ? (PyArrayObject *)PyArray_Newshape(b_view, &reshape_b, NPY_CORDER) : NULL;
    if (b_matrix_array == NULL
            || sympile_blas_operand(a_matrix_array, 0, NULL, &a_matrix, &batch_stride, &a_copy)
            || sympile_blas_operand(b_matrix_array, 0, NULL, &b_matrix, &batch_stride,
                                    &b_copy))
        goto done;
    sympile_blas_layout(result, rows, cols, cols * (npy_intp)sizeof(@type@), sizeof(@type@),
                        sizeof(@type@), &c);
    sympile_blas_gemm_@dtype@(&a_matrix, &b_matrix, 1, 0, &c);
    status = 0;
done:
    Py_XDECREF(a_view);
    Py_XDECREF(b_view);
    Py_XDECREF(a_matrix_array);
    Py_XDECREF(b_matrix_array);
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    return status;
}
"""

_TARGET = r"""
/* The matrix that an update of z accumulates into, set to beta * z: z itself when `inplace`
   (or, when BLAS cannot write z's layout, a C-ordered copy in *work, for the caller to copy
   back into z), else the new (or reused) output *out. Returns 0, or -1 with an exception
   set. */
static int sympile_blas_target_@dtype@(const char *op, const char *name, PyArrayObject *z,
                                       @type@ beta, int inplace, PyArrayObject **out,
                                       PyArrayObject **work, sympile_blas_matrix *target)
{
    npy_intp rows = PyArray_DIM(z, 0), cols = PyArray_DIM(z, 1);
    PyArrayObject *destination = z;
    if (inplace) {
        if (!PyArray_ISWRITEABLE(z)) {
            PyErr_Format(PyExc_ValueError, "%s: cannot write the result over input %s, which "
                         "is read-only", op, name);
            return -1;
        }
        if (!sympile_blas_layout(PyArray_BYTES(z), rows, cols, PyArray_STRIDE(z, 0),
                                 PyArray_STRIDE(z, 1), sizeof(@type@), target)) {
            *work = (PyArrayObject *)PyArray_NewCopy(z, NPY_CORDER);
            if (*work == NULL)
                return -1;
            destination = *work;
        }
        if (beta != 1)
            sympile_blas_scale_@dtype@(PyArray_BYTES(destination),
                                       PyArray_STRIDE(destination, 0),
                                       PyArray_STRIDE(destination, 1),
                                       PyArray_BYTES(destination),
                                       PyArray_STRIDE(destination, 0),
                                       PyArray_STRIDE(destination, 1), rows, cols, beta, 0);
    } else {
        npy_intp dims[2] = {rows, cols};
        if (sympile_prepare_output(out, 2, dims, @npy@))
            return -1;
        destination = *out;
        sympile_blas_scale_@dtype@(PyArray_BYTES(destination), PyArray_STRIDE(destination, 0),
                                   PyArray_STRIDE(destination, 1), PyArray_BYTES(z),
                                   PyArray_STRIDE(z, 0), PyArray_STRIDE(z, 1), rows, cols,
                                   beta, 0);
    }
    sympile_blas_layout(PyArray_BYTES(destination), rows, cols, PyArray_STRIDE(destination, 0),
                        PyArray_STRIDE(destination, 1), sizeof(@type@), target);
    return 0;
}

/* The end of an update of z: the work copy (if any) back into z, and z as the output when
   `inplace`. Returns 0, or -1 with an exception set. */
static int sympile_blas_finish(PyArrayObject *z, PyArrayObject *work, int inplace,
                               PyArrayObject **out)
{
    if (work != NULL && PyArray_CopyInto(z, work))
        return -1;
    if (inplace) {
        Py_INCREF(z);
        return sympile_assign_output(out, z);
    }
    return 0;
}
"""

_GEMM_UPDATE = r"""
/* Gemm: alpha * x @ y + beta * z for @dtype@ matrices, written over z when `inplace` (*out
   is then z), else into *out. Returns 0, or -1 with an exception set. */
static int sympile_gemm_update_@dtype@(const char *op, PyArrayObject *z,
                                       PyArrayObject *alpha_array, PyArrayObject *x,
                                       PyArrayObject *y, PyArrayObject *beta_array, int inplace,
                                       PyArrayObject **out)
{
    npy_intp m = PyArray_DIM(x, 0), k = PyArray_DIM(x, 1), n = PyArray_DIM(y, 1);
    if (k != PyArray_DIM(y, 0))
        return sympile_blas_different_lengths(op, "the columns of x and the rows of y", k,
                                              PyArray_DIM(y, 0));
    if (PyArray_DIM(z, 0) != m)
        return sympile_blas_different_lengths(op, "the rows of z and of x", PyArray_DIM(z, 0),
                                              m);
    if (PyArray_DIM(z, 1) != n)
        return sympile_blas_different_lengths(op, "the columns of z and of y",
                                              PyArray_DIM(z, 1), n);
    if (!sympile_blas_lengths_fit(op, m, k, n))
        return -1;
    @type@ alpha, beta;
    memcpy(&alpha, PyArray_DATA(alpha_array), sizeof alpha);
    memcpy(&beta, PyArray_DATA(beta_array), sizeof beta);
    PyArrayObject *x_copy = NULL, *y_copy = NULL, *work = NULL, *product = NULL;
    sympile_blas_matrix x_matrix, y_matrix, target, product_matrix;
    npy_intp batch_stride, s0, s1;
    int status = -1, nonempty = m > 0 && n > 0 && k > 0;
    /* The operands first: one that overlaps z is copied before z is written. */
    if (nonempty && (sympile_blas_operand(x, 0, inplace ? z : NULL, &x_matrix, &batch_stride,
                                          &x_copy)
                     || sympile_blas_operand(y, 0, inplace ? z : NULL, &y_matrix,
                                             &batch_stride, &y_copy)))
        goto done;
    if (sympile_blas_target_@dtype@(op, "z", z, beta, inplace, out, &work, &target))
        goto done;
    sympile_blas_strides(&target, sizeof(@type@), &s0, &s1);
    if (nonempty && alpha != 0) {
        sympile_blas_gemm_@dtype@(&x_matrix, &y_matrix, alpha, 1, &target);
    } else if (m > 0 && n > 0) {
        /* BLAS would skip the product; the formula adds alpha * x @ y, which is nan where
           the product is inf or nan, or alpha is. */
        static const @type@ zero = 0;
        if (k > 0) {
            npy_intp dims[2] = {m, n};
            product = (PyArrayObject *)PyArray_EMPTY(2, dims, @npy@, 0);
            if (product == NULL)
                goto done;
            sympile_blas_layout(PyArray_BYTES(product), m, n, n * (npy_intp)sizeof(@type@),
                                sizeof(@type@), sizeof(@type@), &product_matrix);
            sympile_blas_gemm_@dtype@(&x_matrix, &y_matrix, 1, 0, &product_matrix);
        }
        sympile_blas_scale_@dtype@(target.data, s0, s1,
                                   product ? PyArray_BYTES(product) : (const char *)&zero,
                                   product ? n * (npy_intp)sizeof(@type@) : 0,
                                   product ? (npy_intp)sizeof(@type@) : 0, m, n, alpha, 1);
    }
    status = sympile_blas_finish(z, work, inplace, out);
done:
    Py_XDECREF(x_copy);
    Py_XDECREF(y_copy);
    Py_XDECREF(work);
    Py_XDECREF(product);
    return status;
}
"""

_GEMV_UPDATE = r"""
/* Gemv: alpha * a @ x + beta * y for a @dtype@ matrix a and vectors x and y, written over y
   when `inplace` (*out is then y), else into *out. Returns 0, or -1 with an exception set. */
static int sympile_gemv_update_@dtype@(const char *op, PyArrayObject *y,
                                       PyArrayObject *alpha_array, PyArrayObject *a,
                                       PyArrayObject *x, PyArrayObject *beta_array, int inplace,
                                       PyArrayObject **out)
{
    npy_intp m = PyArray_DIM(a, 0), n = PyArray_DIM(a, 1);
    if (PyArray_DIM(x, 0) != n)
        return sympile_blas_different_lengths(op, "the columns of a and x", n,
                                              PyArray_DIM(x, 0));
    if (PyArray_DIM(y, 0) != m)
        return sympile_blas_different_lengths(op, "y and the rows of a", PyArray_DIM(y, 0),
                                              m);
    if (!sympile_blas_lengths_fit(op, m, n, 1))
        return -1;
    @type@ alpha, beta;
    memcpy(&alpha, PyArray_DATA(alpha_array), sizeof alpha);
    memcpy(&beta, PyArray_DATA(beta_array), sizeof beta);
    PyArrayObject *a_copy = NULL, *x_copy = NULL, *work = NULL, *product = NULL;
    sympile_blas_matrix a_matrix;
    npy_intp batch_stride;
    char *x_data, *target;
    int inc_x, inc_target, status = -1, nonempty = m > 0 && n > 0;
    /* The operands first: one that overlaps y is copied before y is written. */
    if (nonempty && (sympile_blas_operand(a, 0, inplace ? y : NULL, &a_matrix, &batch_stride,
                                          &a_copy)
                     || sympile_blas_vector(x, inplace ? y : NULL, &x_data, &inc_x, &x_copy)))
        goto done;
    if (inplace) {
        if (!PyArray_ISWRITEABLE(y)) {
            PyErr_Format(PyExc_ValueError, "%s: cannot write the result over input y, which "
                         "is read-only", op);
            goto done;
        }
        /* A y BLAS cannot write in place becomes the work copy, copied back after. */
        if (sympile_blas_vector(y, NULL, &target, &inc_target, &work))
            goto done;
        if (beta != 1)
            sympile_blas_scale_@dtype@(target, inc_target * (npy_intp)sizeof(@type@), 0,
                                       target, inc_target * (npy_intp)sizeof(@type@), 0, m, 1,
                                       beta, 0);
    } else {
        if (sympile_prepare_output(out, 1, &m, @npy@))
            goto done;
        target = PyArray_BYTES(*out);
        inc_target = 1;
        sympile_blas_scale_@dtype@(target, sizeof(@type@), 0, PyArray_BYTES(y),
                                   PyArray_STRIDE(y, 0), 0, m, 1, beta, 0);
    }
    if (nonempty && alpha != 0) {
        sympile_blas_gemv_@dtype@(&a_matrix, 0, alpha, x_data, inc_x, 1, target, inc_target);
    } else if (m > 0) {
        /* BLAS would skip the product; the formula adds alpha * a @ x, which is nan where
           the product is inf or nan, or alpha is. */
        static const @type@ zero = 0;
        if (n > 0) {
            product = (PyArrayObject *)PyArray_ZEROS(1, &m, @npy@, 0);
            if (product == NULL)
                goto done;
            sympile_blas_gemv_@dtype@(&a_matrix, 0, 1, x_data, inc_x, 0,
                                      PyArray_BYTES(product), 1);
        }
        sympile_blas_scale_@dtype@(target, inc_target * (npy_intp)sizeof(@type@), 0,
                                   product ? PyArray_BYTES(product) : (const char *)&zero,
                                   product ? (npy_intp)sizeof(@type@) : 0, 0, m, 1, alpha, 1);
    }
    status = sympile_blas_finish(y, work, inplace, out);
done:
    Py_XDECREF(a_copy);
    Py_XDECREF(x_copy);
    Py_XDECREF(work);
    Py_XDECREF(product);
    return status;
}
"""

_GER_UPDATE = r"""
/* Ger: a + alpha * outer(x, y) for a @dtype@ matrix a and vectors x and y, written over a
   when `inplace` (*out is then a), else into *out. Returns 0, or -1 with an exception set. */
static int sympile_ger_update_@dtype@(const char *op, PyArrayObject *a,
                                      PyArrayObject *alpha_array, PyArrayObject *x,
                                      PyArrayObject *y, int inplace, PyArrayObject **out)
{
    npy_intp m = PyArray_DIM(a, 0), n = PyArray_DIM(a, 1);
    if (PyArray_DIM(x, 0) != m)
        return sympile_blas_different_lengths(op, "the rows of a and x", m, PyArray_DIM(x, 0));
    if (PyArray_DIM(y, 0) != n)
        return sympile_blas_different_lengths(op, "the columns of a and y", n,
                                              PyArray_DIM(y, 0));
    if (!sympile_blas_lengths_fit(op, m, n, 1))
        return -1;
    @type@ alpha;
    memcpy(&alpha, PyArray_DATA(alpha_array), sizeof alpha);
    PyArrayObject *x_copy = NULL, *y_copy = NULL, *work = NULL, *product = NULL;
    sympile_blas_matrix target, product_matrix;
    npy_intp s0, s1;
    char *x_data, *y_data;
    int inc_x, inc_y, status = -1, nonempty = m > 0 && n > 0;
    /* The operands first: one that overlaps a is copied before a is written. */
    if (nonempty && (sympile_blas_vector(x, inplace ? a : NULL, &x_data, &inc_x, &x_copy)
                     || sympile_blas_vector(y, inplace ? a : NULL, &y_data, &inc_y, &y_copy)))
        goto done;
    if (sympile_blas_target_@dtype@(op, "a", a, 1, inplace, out, &work, &target))
        goto done;
    sympile_blas_strides(&target, sizeof(@type@), &s0, &s1);
    if (nonempty && alpha != 0) {
        sympile_blas_ger_@dtype@(&target, alpha, x_data, inc_x, y_data, inc_y);
    } else if (nonempty) {
        /* BLAS would skip the product; the formula adds alpha * outer(x, y), which is nan
           where the product is inf or nan, or alpha is. */
        npy_intp dims[2] = {m, n};
        product = (PyArrayObject *)PyArray_ZEROS(2, dims, @npy@, 0);
        if (product == NULL)
            goto done;
        sympile_blas_layout(PyArray_BYTES(product), m, n, n * (npy_intp)sizeof(@type@),
                            sizeof(@type@), sizeof(@type@), &product_matrix);
        sympile_blas_ger_@dtype@(&product_matrix, 1, x_data, inc_x, y_data, inc_y);
        sympile_blas_scale_@dtype@(target.data, s0, s1, PyArray_BYTES(product),
                                   n * (npy_intp)sizeof(@type@), sizeof(@type@), m, n, alpha,
                                   1);
    }
    status = sympile_blas_finish(a, work, inplace, out);
done:
    Py_XDECREF(x_copy);
    Py_XDECREF(y_copy);
    Py_XDECREF(work);
    Py_XDECREF(product);
    return status;
}
"""

# Each piece: its C, the pieces it calls, the BLAS routines it calls ('@p@' is s or d).
_PIECES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "layout": (_LAYOUT, (), ()),
    "scale": (_SCALE, (), ()),
    "gemm": (_GEMM, ("layout",), ("@p@gemm",)),
    "gemv": (_GEMV, ("layout",), ("@p@gemv",)),
    "ger": (_GER, ("layout",), ("@p@ger",)),
    "product": (_PRODUCT, ("gemm", "gemv"), ("@p@dot",)),
    "dot": (_DOT, ("product",), ()),
    "matmul": (_MATMUL, ("product",), ()),
    "tensordot": (_TENSORDOT, ("gemm",), ()),
    "target": (_TARGET, ("layout", "scale"), ()),
    "gemm_update": (_GEMM_UPDATE, ("target", "gemm"), ()),
    "gemv_update": (_GEMV_UPDATE, ("target", "gemv"), ()),
    "ger_update": (_GER_UPDATE, ("target", "ger"), ()),
}

_SUBSTITUTIONS = {
    "float32": {"@dtype@": "float32", "@type@": "float", "@p@": "s", "@npy@": "NPY_FLOAT32"},
    "float64": {"@dtype@": "float64", "@type@": "double", "@p@": "d", "@npy@": "NPY_FLOAT64"},
}


def _specialize(text: str, dtype: str) -> str:
    for token, value in _SUBSTITUTIONS[dtype].items():
        text = text.replace(token, value)
    return text


def _collect(name: str, dtype: str, support: list[str], blas: list[str]) -> None:
    """Append piece `name`, after the pieces it calls, unless already there."""
    text, calls, routines = _PIECES[name]
    for called in calls:
        _collect(called, dtype, support, blas)
    piece = _specialize(text, dtype)
    if piece not in support:
        support.append(piece)
    for routine in routines:
        routine = _specialize(routine, dtype)
        if routine not in blas:
            blas.append(routine)


def blas_call(function: str, dtype: str, arguments: Sequence[str], fail: str,
              setup: str = "") -> CCode:
    """The CCode of a node that calls `sympile_<function>_<dtype>(arguments...)` (one of
    dot, matmul, tensordot, gemm_update, gemv_update, ger_update) and runs `fail` when it
    returns an error; `setup` declares what the arguments use."""
    support: list[str] = []
    blas: list[str] = []
    _collect(function, dtype, support, blas)
    body = (f"{setup}\n        if (sympile_{function}_{dtype}({', '.join(arguments)})) "
            f"{{ {fail} }}")
    return CCode(body=body, support=tuple(support), blas=tuple(blas))


def c_string(text: str) -> str:
    """`text` as a C string literal (for messages that name an op)."""
    return json.dumps(text, ensure_ascii=True)
