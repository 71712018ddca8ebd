"""The C that the C backend runs for the dense products (sympile.tensor.blas: Dot, MatMul,
TensorDot) and the BLAS updates (sympile.tensor.blas.gemm: Gemm, Gemv, Ger): float32 and float64,
through the BLAS routines the backend loads from scipy.

Every operand is seen as a matrix (a 1-d one as a row or a column), and every product as
c = alpha * a @ b + beta * c, done by one dot, gemv, ger or gemm call as its shape allows.
BLAS is column-major; a row-major matrix is the column-major matrix of its transpose, so C- and
Fortran-ordered operands, and those with spaced rows (or columns), are read in place with the
transpose flag their layout asks for. An operand BLAS cannot read (negative, zero or non-unit
inner strides, misaligned data) is copied in C order first. A length past INT_MAX (BLAS's int)
is an OverflowError.

Results equal perform()'s: empty products are zeros (BLAS is not called with a zero length);
beta * z is computed elementwise (so beta = 0 still gives nan where z is nan, and never reads
an uninitialised output); where BLAS would skip alpha * x @ y (alpha = 0, or k = 0), that term
is computed and added anyway, so that 0 * inf gives nan as in numpy.

Skinny products (c with at most 64 rows, or an inner length of at most 64: a small batch's
layer products) go to sympile's own kernels instead of gemm (sympile.tensor.blas.skinny,
config.blas_skinny).

Threads: a BLAS call of fewer than config.blas_parallel_minsize multiply-adds runs on one
thread. With OpenMP (config.openmp), a larger one is split among OpenMP threads by bands of
c's columns (or rows), each band one call of the library on one thread, so that the module
has one pool of threads: OpenBLAS's own, woken beside OpenMP's (elementwise loops, the
skinny kernels), spin after their work and take the cores each other waits for (a 784 x 500
SGD update, a product then an elementwise loop, took 8 ms instead of 0.15). Without OpenMP,
larger calls run on as many threads as the library is set to use (OpenBLAS, scipy's or
another, found next to the routines scipy exports; other libraries choose for themselves).
On a heavily loaded machine threads cost far more (a woken thread waits milliseconds for a
core): raise the flag there. The library's thread count is set back after each call, so
code that shares the library (scipy.linalg) keeps its own.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence

from sympile.config import config
from sympile.graph.ccode import CCode
from sympile.tensor.blas.skinny import skinny_code

__all__ = ["BLAS_C_DTYPES", "blas_call", "c_string", "update_c_code"]

BLAS_C_DTYPES = ("float32", "float64")

_COMMON = r"""
/* A matrix as BLAS reads it: rows x cols elements at `data`, stored row by row (row_major)
   or column by column, consecutive rows (columns) `ld` elements apart. */
typedef struct {
    char *data;
    npy_intp rows, cols, ld;
    int row_major;
} sympile_blas_matrix;

/* Lines of c shorter than this are updated by a loop rather than by ger (see
   sympile_blas_multiply). */
#define SYMPILE_BLAS_SHORT_LINE 64

/* The elements between consecutive rows, and consecutive columns, of a matrix. */
#define SYMPILE_BLAS_ROW_STEP(matrix) ((matrix)->row_major ? (int)(matrix)->ld : 1)
#define SYMPILE_BLAS_COLUMN_STEP(matrix) ((matrix)->row_major ? 1 : (int)(matrix)->ld)

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

/* The matrix of the last two axes of the 1-d to 3-d `array` (a 1-d array is one row, or one
   column when `column`), and the bytes *batch_stride between the matrices of a 3-d one;
   returns whether BLAS can read it in place (see sympile_blas_layout). */
static int sympile_blas_describe(PyArrayObject *array, int column, sympile_blas_matrix *matrix,
                                 npy_intp *batch_stride)
{
    int ndim = PyArray_NDIM(array);
    npy_intp *dims = PyArray_DIMS(array), *strides = PyArray_STRIDES(array);
    *batch_stride = ndim == 3 ? strides[0] : 0;
    if (ndim == 1)
        return sympile_blas_layout(PyArray_BYTES(array), column ? dims[0] : 1,
                                   column ? 1 : dims[0], column ? strides[0] : 0,
                                   column ? 0 : strides[0], PyArray_ITEMSIZE(array), matrix);
    return sympile_blas_layout(PyArray_BYTES(array), dims[ndim - 2], dims[ndim - 1],
                               strides[ndim - 2], strides[ndim - 1], PyArray_ITEMSIZE(array),
                               matrix);
}

/* Whether the bytes that arrays a and b span intersect (so they may share memory). */
static int sympile_blas_may_overlap(PyArrayObject *a, PyArrayObject *b)
{
    PyArrayObject *arrays[2] = {a, b};
    uintptr_t low[2], high[2];
    for (int i = 0; i < 2; i++) {
        low[i] = high[i] = (uintptr_t)PyArray_BYTES(arrays[i]);
        high[i] += PyArray_ITEMSIZE(arrays[i]);
        for (int axis = 0; axis < PyArray_NDIM(arrays[i]); axis++) {
            npy_intp length = PyArray_DIM(arrays[i], axis);
            npy_intp stride = PyArray_STRIDE(arrays[i], axis);
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

/* As sympile_blas_describe, for an operand: one BLAS cannot read in place, or one that may
   share memory with `avoid` (unless NULL), is first copied in C order into *copy, a new
   reference the caller releases. Returns 0, or -1 with an exception set. */
static int sympile_blas_operand(PyArrayObject *array, int column, PyArrayObject *avoid,
                                sympile_blas_matrix *matrix, npy_intp *batch_stride,
                                PyArrayObject **copy)
{
    if ((avoid == NULL || !sympile_blas_may_overlap(array, avoid))
            && sympile_blas_describe(array, column, matrix, batch_stride))
        return 0;
    *copy = (PyArrayObject *)PyArray_NewCopy(array, NPY_CORDER);
    if (*copy == NULL)
        return -1;
    /* A C-ordered copy of lengths that fit an int is always readable. */
    sympile_blas_describe(*copy, column, matrix, batch_stride);
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

/* -1, with the ValueError "op: shapes A and B <the detail>" (perform's messages). */
static int sympile_blas_shape_error(const char *op, PyArrayObject *a, PyArrayObject *b,
                                    const char *detail_format, ...)
{
    va_list arguments;
    va_start(arguments, detail_format);
    PyObject *detail = PyUnicode_FromFormatV(detail_format, arguments);
    va_end(arguments);
    PyObject *shape_a = detail ? PyObject_GetAttrString((PyObject *)a, "shape") : NULL;
    PyObject *shape_b = shape_a ? PyObject_GetAttrString((PyObject *)b, "shape") : NULL;
    if (shape_b != NULL)
        PyErr_Format(PyExc_ValueError, "%s: shapes %R and %R %U", op, shape_a, shape_b, detail);
    Py_XDECREF(detail);
    Py_XDECREF(shape_a);
    Py_XDECREF(shape_b);
    return -1;
}
"""

_THREADS = r"""
#include <dlfcn.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The thread count of the BLAS library that holds `routine`, when it is an OpenBLAS (scipy's
   symbols have the prefix scipy_): get and set, or NULL (looked up once, on first use). */
static int (*sympile_blas_get_threads)(void);
static void (*sympile_blas_set_threads)(int);
static int sympile_blas_threads_looked_up;

static void sympile_blas_look_up_threads(void *routine)
{
    static const char *const names[][2] = {
        {"scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"},
        {"openblas_get_num_threads", "openblas_set_num_threads"}};
    Dl_info info;
    void *library;
    sympile_blas_threads_looked_up = 1;
    /* The library that defines the routine, with what it links (the BLAS behind scipy's
       wrappers). RTLD_NOLOAD: it is loaded already; closing the handle leaves it loaded. */
    if (!dladdr(routine, &info) || info.dli_fname == NULL
            || (library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)) == NULL)
        return;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *get = dlsym(library, names[i][0]), *set = dlsym(library, names[i][1]);
        if (get != NULL && set != NULL) {
            *(void **)&sympile_blas_get_threads = get;
            *(void **)&sympile_blas_set_threads = set;
            break;
        }
    }
    dlclose(library);
}

/* Before a BLAS call of `work` multiply-adds: returns the OpenMP threads that split it
   (see sympile_blas_multiply), and sets *saved to the library's thread count that
   sympile_blas_threads_restore sets back after it, or 0 when that was not changed. The
   library runs on one thread below @minsize@ multiply-adds (config.blas_parallel_minsize),
   and above it too when OpenMP splits the call: one pool of threads for the whole module,
   because the library's threads, spinning beside OpenMP's after their work, each wait for
   the core the other holds (a 784 x 500 SGD update took 8 ms instead of 0.1). Without
   OpenMP, or with a library whose threads cannot be set, the library decides above it. */
static int sympile_blas_threads_begin(void *routine, double work, int *saved)
{
    int split = 1;
    *saved = 0;
    if (!sympile_blas_threads_looked_up)
        sympile_blas_look_up_threads(routine);
    if (sympile_blas_get_threads == NULL)
        return 1;
#ifdef _OPENMP
    if (work >= @minsize@)
        split = omp_get_max_threads();
#endif
    if (work < @minsize@ || split > 1) {
        int threads = sympile_blas_get_threads();
        if (threads > 1) {
            sympile_blas_set_threads(1);
            *saved = threads;
        }
    }
    return split;
}

static void sympile_blas_threads_restore(int threads)
{
    if (threads)
        sympile_blas_set_threads(threads);
}
"""

_SHORT_LINES = r"""
/* target[i * ld + j] += (alpha * scales[i * scale_step]) * along[j * along_step] for i <
   lines and j < length: an outer-product update of short lines, vectorized along them. */
@vectorize@
static void sympile_blas_short_lines_@dtype@(int lines, int length, @type@ alpha,
                                             const @type@ *scales, npy_intp scale_step,
                                             const @type@ *along, npy_intp along_step,
                                             @type@ *target, npy_intp ld)
{
    for (int i = 0; i < lines; i++) {
        @type@ scale = alpha * scales[i * scale_step];
        @type@ *line = target + i * ld;
        if (along_step == 1)
            for (int j = 0; j < length; j++)
                line[j] += scale * along[j];
        else
            for (int j = 0; j < length; j++)
                line[j] += scale * along[j * along_step];
    }
}
"""

_MULTIPLY = r"""
/* c = alpha * a @ b + beta * c for an m x k a, k x n b and m x n c (m, n, k > 0, at most
   INT_MAX), beta 0 (c is then not read) or 1, by one @p@dot (m = n = 1), @p@gemv (m or n
   is 1), @p@ger (k = 1 and beta = 1) or @p@gemm call. */
static void sympile_blas_multiply_one_@dtype@(const sympile_blas_matrix *a,
                                              const sympile_blas_matrix *b, @type@ alpha,
                                              @type@ beta, const sympile_blas_matrix *c)
{
    int m = (int)a->rows, n = (int)b->cols, k = (int)a->cols;
    if (m == 1 && n == 1) {
        int step_a = SYMPILE_BLAS_COLUMN_STEP(a), step_b = SYMPILE_BLAS_ROW_STEP(b);
        @type@ *target = (@type@ *)c->data;
        @type@ product = alpha * sympile_blas_@p@dot(&k, (@type@ *)a->data, &step_a,
                                                     (@type@ *)b->data, &step_b);
        *target = beta == 0 ? product : *target + product;
    } else if (m == 1 || n == 1) {
        /* A column c = a @ b, or a row c = (b^T @ a^T)^T: matrix @ vector. BLAS sees the
           column-major matrix in the matrix's memory: its transpose when it is row-major. */
        const sympile_blas_matrix *matrix = n == 1 ? a : b, *vector = n == 1 ? b : a;
        int step_x = n == 1 ? SYMPILE_BLAS_ROW_STEP(vector) : SYMPILE_BLAS_COLUMN_STEP(vector);
        int step_y = n == 1 ? SYMPILE_BLAS_ROW_STEP(c) : SYMPILE_BLAS_COLUMN_STEP(c);
        int rows = (int)(matrix->row_major ? matrix->cols : matrix->rows);
        int cols = (int)(matrix->row_major ? matrix->rows : matrix->cols), ld = (int)matrix->ld;
        char trans = matrix->row_major == (n == 1) ? 'T' : 'N';
        if (beta == 0) /* some BLAS scale y by beta first, and 0 * nan is nan */
            for (int i = 0; i < (n == 1 ? m : n); i++)
                ((@type@ *)c->data)[(npy_intp)i * step_y] = 0;
        sympile_blas_@p@gemv(&trans, &rows, &cols, &alpha, (@type@ *)matrix->data, &ld,
                             (@type@ *)vector->data, &step_x, &beta, (@type@ *)c->data,
                             &step_y);
    } else if (k == 1 && beta == 1) {
        /* c += alpha * outer(a, b); a row-major c is the column-major c^T += alpha b a^T. */
        int step_a = SYMPILE_BLAS_ROW_STEP(a), step_b = SYMPILE_BLAS_COLUMN_STEP(b);
        int ld = (int)c->ld;
        if ((c->row_major ? n : m) < SYMPILE_BLAS_SHORT_LINE) {
            /* Short lines (rows of a row-major c, columns of a column-major one): ger makes
               one axpy call per line, which costs more than the line's arithmetic. */
            if (c->row_major)
                sympile_blas_short_lines_@dtype@(m, n, alpha, (@type@ *)a->data, step_a,
                                                 (@type@ *)b->data, step_b,
                                                 (@type@ *)c->data, ld);
            else
                sympile_blas_short_lines_@dtype@(n, m, alpha, (@type@ *)b->data, step_b,
                                                 (@type@ *)a->data, step_a,
                                                 (@type@ *)c->data, ld);
        } else if (c->row_major)
            sympile_blas_@p@ger(&n, &m, &alpha, (@type@ *)b->data, &step_b, (@type@ *)a->data,
                                &step_a, (@type@ *)c->data, &ld);
        else
            sympile_blas_@p@ger(&m, &n, &alpha, (@type@ *)a->data, &step_a, (@type@ *)b->data,
                                &step_b, (@type@ *)c->data, &ld);
    } else {
        int lda = (int)a->ld, ldb = (int)b->ld, ldc = (int)c->ld;
        if (c->row_major) {
            /* Row-major c = a @ b is column-major c^T = b^T @ a^T. */
            char trans_b = b->row_major ? 'N' : 'T', trans_a = a->row_major ? 'N' : 'T';
            sympile_blas_@p@gemm(&trans_b, &trans_a, &n, &m, &k, &alpha, (@type@ *)b->data,
                                 &ldb, (@type@ *)a->data, &lda, &beta, (@type@ *)c->data,
                                 &ldc);
        } else {
            char trans_a = a->row_major ? 'T' : 'N', trans_b = b->row_major ? 'T' : 'N';
            sympile_blas_@p@gemm(&trans_a, &trans_b, &m, &n, &k, &alpha, (@type@ *)a->data,
                                 &lda, (@type@ *)b->data, &ldb, &beta, (@type@ *)c->data,
                                 &ldc);
        }
    }
}

/* sympile_blas_multiply_one, or a skinny kernel in place of gemm (see
   sympile.tensor.blas.skinny); a large BLAS call is split among OpenMP threads, each
   calling the library, on one thread, for a band of c's columns (or rows, when c has more
   rows). */
static void sympile_blas_multiply_@dtype@(const sympile_blas_matrix *a,
                                          const sympile_blas_matrix *b, @type@ alpha,
                                          @type@ beta, const sympile_blas_matrix *c)
{
    npy_intp m = a->rows, n = b->cols, k = a->cols;
    if (m > 1 && n > 1 && !(k == 1 && beta == 1)
            && @skinny@(m, n, k, alpha, (const @type@ *)a->data, SYMPILE_BLAS_ROW_STEP(a),
                        SYMPILE_BLAS_COLUMN_STEP(a), (const @type@ *)b->data,
                        SYMPILE_BLAS_ROW_STEP(b), SYMPILE_BLAS_COLUMN_STEP(b),
                        (@type@ *)c->data, SYMPILE_BLAS_ROW_STEP(c),
                        SYMPILE_BLAS_COLUMN_STEP(c), beta != 0))
        return;
    int saved, threads = sympile_blas_threads_begin((void *)sympile_blas_@p@gemm,
                                                    (double)m * n * k, &saved);
#ifdef _OPENMP
    if (threads > 1 && (m > 1 || n > 1)) {
        int by_columns = n >= m;
#pragma omp parallel num_threads(threads)
        {
            npy_intp count = omp_get_num_threads(), thread = omp_get_thread_num();
            npy_intp length = by_columns ? n : m;
            npy_intp first = length * thread / count, last = length * (thread + 1) / count;
            sympile_blas_matrix part_a = *a, part_b = *b, part_c = *c;
            if (by_columns) {
                part_b.data += first * SYMPILE_BLAS_COLUMN_STEP(b) * (npy_intp)sizeof(@type@);
                part_c.data += first * SYMPILE_BLAS_COLUMN_STEP(c) * (npy_intp)sizeof(@type@);
                part_b.cols = part_c.cols = last - first;
            } else {
                part_a.data += first * SYMPILE_BLAS_ROW_STEP(a) * (npy_intp)sizeof(@type@);
                part_c.data += first * SYMPILE_BLAS_ROW_STEP(c) * (npy_intp)sizeof(@type@);
                part_a.rows = part_c.rows = last - first;
            }
            if (last > first)
                sympile_blas_multiply_one_@dtype@(&part_a, &part_b, alpha, beta, &part_c);
        }
    } else
#endif
        sympile_blas_multiply_one_@dtype@(a, b, alpha, beta, c);
    (void)threads;
    sympile_blas_threads_restore(saved);
}
"""

_DOT = r"""
/* numpy.dot of 1-d or 2-d @dtype@ arrays (a 1-d a is a row, a 1-d b a column) into *out.
   Returns 0, or -1 with an exception set. */
static int sympile_dot_@dtype@(const char *op, PyArrayObject *a, PyArrayObject *b,
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
"""

_MATMUL = r"""
/* numpy.matmul of 1-d to 3-d @dtype@ arrays into *out. A batch axis broadcasts when its
   operand lacks it, or has it with length 1 in its type (a_batch_one, b_batch_one). The
   matrices of a batch take one BLAS call each, or one in all when b broadcasts and a's
   matrices follow each other as the rows of one tall matrix. */
static int sympile_matmul_@dtype@(const char *op, PyArrayObject *a, PyArrayObject *b,
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
        return sympile_dot_@dtype@(op, a, b, out);
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
"""

_TENSORDOT = r"""
/* numpy.tensordot of @dtype@ arrays into *out: perm_a orders a's axes as its free axes, then
   the n_axes summed ones; perm_b orders b's as the summed axes (paired in order with a's),
   then its free ones. Transposed and reshaped (a copy where numpy's reshape copies), they
   are the two matrices of one BLAS call, whose C-ordered result is the output. */
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
"""

_UPDATE = r"""
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
static int sympile_blas_update_@dtype@(const char *op, PyArrayObject *z, PyArrayObject *x,
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
"""

# Each piece: its C, the pieces it calls, the BLAS routines it calls ('@p@' is s or d).
_PIECES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "blas_common": (_COMMON, (), ()),
    "blas_threads": (_THREADS, (), ()),
    "blas_short_lines": (_SHORT_LINES, (), ()),
    "blas_multiply": (_MULTIPLY, ("blas_common", "blas_threads", "blas_short_lines"),
                      ("@p@dot", "@p@gemv", "@p@ger", "@p@gemm")),
    "dot": (_DOT, ("blas_multiply",), ()),
    "matmul": (_MATMUL, ("dot",), ()),
    "tensordot": (_TENSORDOT, ("blas_multiply",), ()),
    "blas_update": (_UPDATE, ("blas_multiply",), ()),
}

_SUBSTITUTIONS = {
    "float32": {"@dtype@": "float32", "@type@": "float", "@p@": "s", "@npy@": "NPY_FLOAT32"},
    "float64": {"@dtype@": "float64", "@type@": "double", "@p@": "d", "@npy@": "NPY_FLOAT64"},
}


# The short-line loop vectorized (gcc's -O2 leaves loops of unknown length scalar), also
# compiled for AVX2 and AVX-512 machines on x86-64, the one for the CPU picked at load.
_VECTORIZE = '__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")' + (
    ', target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))'
    if platform.machine().lower() in ("x86_64", "amd64") else "))")


def _specialize(text: str, dtype: str) -> str:
    for token, value in _SUBSTITUTIONS[dtype].items():
        text = text.replace(token, value)
    return text.replace("@minsize@", f"{config.blas_parallel_minsize}.0").replace(
        "@vectorize@", _VECTORIZE)


def _collect(name: str, dtype: str, support: list[str], blas: list[str],
             units: list[str]) -> None:
    """Append piece `name`, after the pieces it calls, unless already there (blas_multiply
    also brings the skinny kernels' dispatcher and its library unit)."""
    text, calls, routines = _PIECES[name]
    for called in calls:
        _collect(called, dtype, support, blas, units)
    if name == "blas_multiply":
        skinny, declaration, unit = skinny_code(dtype, float(config.blas_parallel_minsize),
                                                config.blas_skinny)
        if declaration not in support:
            support.append(declaration)
        if unit is not None and unit not in units:
            units.append(unit)
        text = text.replace("@skinny@", skinny)
    piece = _specialize(text, dtype)
    if piece not in support:
        support.append(piece)
    for routine in routines:
        routine = _specialize(routine, dtype)
        if routine not in blas:
            blas.append(routine)


def blas_call(function: str, dtype: str, arguments: Sequence[str], fail: str,
              setup: str = "") -> CCode:
    """The CCode of a node that calls `sympile_<function>_<dtype>(arguments...)` (dot,
    matmul, tensordot, or blas_update) and runs `fail` when it returns an error; `setup`
    comes first (declarations, checks)."""
    support: list[str] = []
    blas: list[str] = []
    units: list[str] = []
    _collect(function, dtype, support, blas, units)
    body = (f"{setup}\n        if (sympile_{function}_{dtype}({', '.join(arguments)})) "
            f"{{ {fail} }}")
    return CCode(body=body, support=tuple(support), blas=tuple(blas), units=tuple(units))


def update_c_code(op: str, dtype: str, inputs: Sequence[str], output: str, fail: str,
                  operands: tuple[int, int, int, int, int | None], y_row: bool,
                  lengths: Sequence[tuple[str, tuple[int, int], tuple[int, int]]],
                  inplace: bool) -> CCode:
    """The CCode of a BLAS update (see sympile_blas_update): `operands` are the input indices
    of z, x, y, alpha and beta (None: 1); each of `lengths` (what, (input, axis), (input,
    axis)) is a pair of lengths that must be equal, else the ValueError "<op>: <what> have
    different lengths [first, second]" (perform's message)."""
    checks = []
    for what, (first, first_axis), (second, second_axis) in lengths:
        first_length = f"PyArray_DIM({inputs[first]}, {first_axis})"
        second_length = f"PyArray_DIM({inputs[second]}, {second_axis})"
        message = c_string(f"{op}: {what} have different lengths [%zd, %zd]")
        checks.append(f"if ({first_length} != {second_length}) {{\n"
                      f"            PyErr_Format(PyExc_ValueError, {message}, "
                      f"(Py_ssize_t){first_length}, (Py_ssize_t){second_length});\n"
                      f"            {fail}\n        }}")
    z, x, y, alpha, beta = operands
    arguments = [c_string(op), inputs[z], inputs[x], inputs[y], str(int(y_row)),
                 inputs[alpha], "NULL" if beta is None else inputs[beta], str(int(inplace)),
                 f"&{output}"]
    return blas_call("blas_update", dtype, arguments, fail, setup="\n        ".join(checks))


def c_string(text: str) -> str:
    """`text` as a C string literal (for messages that name an op)."""
    return json.dumps(text, ensure_ascii=True)
