/* Cholesky factors and linear solves over stacks of matrices by LAPACK (potrf, trtrs,
   getrf/getrs through scipy's pointers), for @dtype@. LAPACK is column-major: a row-major
   matrix is its transpose there, so a lower triangle read row-major is LAPACK's upper one,
   and a solve with A is a solve with LAPACK's matrix transposed. Right-hand sides are
   copied into a column-major work matrix.

   Threads (blas_threads.c): a stack of matrices is split among OpenMP threads, each calling
   the library on one thread; a small problem runs on one thread; one large matrix is left
   to the library's own threads. */

#ifndef SYMPILE_LINALG_ERROR
#define SYMPILE_LINALG_ERROR
/* numpy.linalg.LinAlgError(message) as the current exception. */
static void sympile_linalg_error(const char *message)
{
    PyObject *linalg = PyImport_ImportModule("numpy.linalg");
    PyObject *kind = linalg ? PyObject_GetAttrString(linalg, "LinAlgError") : NULL;
    if (kind != NULL)
        PyErr_SetString(kind, message);
    Py_XDECREF(kind);
    Py_XDECREF(linalg);
}
#endif

/* The OpenMP threads for `count` problems of `work` multiply-adds in all: the library
   runs on one thread (set back by sympile_blas_threads_restore) unless one matrix is
   large enough for its own threads. */
static int sympile_linalg_threads_@dtype@(void *routine, npy_intp count, double work,
                                          int *saved)
{
    *saved = 0;
    if (count <= 1 && work >= @minsize@)
        return 1;
    int threads = sympile_blas_threads_begin(routine, work, saved);
    return count > 1 ? threads : 1;
}

/* *out = the Cholesky factor of each matrix of a (lower, or its transpose when !lower); a
   matrix that is not positive definite is a LinAlgError, or NaNs with nan_on_error. */
static int sympile_cholesky_@dtype@(PyArrayObject *a, PyArrayObject **out, int lower,
                                    int nan_on_error)
{
    int ndim = PyArray_NDIM(a);
    npy_intp n = PyArray_DIM(a, ndim - 1);
    if (PyArray_DIM(a, ndim - 2) != n) {
        PyErr_Format(PyExc_ValueError, "a must be square, got %zd x %zd",
                     (Py_ssize_t)PyArray_DIM(a, ndim - 2), (Py_ssize_t)n);
        return -1;
    }
    if (sympile_prepare_output(out, ndim, PyArray_DIMS(a), @npy@) < 0
            || PyArray_CopyInto(*out, a) < 0)
        return -1;
    if (n == 0 || PyArray_SIZE(a) == 0)
        return 0;
    npy_intp count = PyArray_SIZE(a) / (n * n), failed = -1;
    int saved, threads = sympile_linalg_threads_@dtype@(
        (void *)sympile_blas_@p@potrf, count, (double)count * n * n * n / 3, &saved);
    @T@ *data = (@T@ *)PyArray_DATA(*out);
    #pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
    for (npy_intp k = 0; k < count; k++) {
        @T@ *m = data + k * n * n;
        int size = (int)n, info = 0;
        char upper = 'U';
        sympile_blas_@p@potrf(&upper, &size, m, &size, &info);
        if (info > 0) {
            for (npy_intp i = 0; i < n * n; i++)
                m[i] = (@T@)NAN;
            #pragma omp critical
            if (failed < 0 || k < failed)
                failed = k;
            continue;
        }
        /* The lower triangle holds L; the upper one what a held there. */
        for (npy_intp i = 0; i < n; i++)
            for (npy_intp j = i + 1; j < n; j++) {
                m[i * n + j] = lower ? 0 : m[j * n + i];
                if (!lower)
                    m[j * n + i] = 0;
            }
    }
    sympile_blas_threads_restore(saved);
    if (failed >= 0 && !nan_on_error) {
        sympile_linalg_error("Matrix is not positive definite");
        return -1;
    }
    return 0;
}

/* x with a x = b for one matrix (kind 0: general, by LU; 1: triangular), in row-major m
   (overwritten by getrf) and r, into x; work holds n x columns, pivots n. Returns LAPACK's
   info. */
static int sympile_solve_one_@dtype@(@T@ *m, const @T@ *r, @T@ *x, @T@ *work, int *pivots,
                                     npy_intp n, npy_intp columns, int kind, int lower,
                                     int trans, int unit)
{
    int size = (int)n, nrhs = (int)columns, info = 0;
    /* a row-major is aᵀ to LAPACK: a x = b is LAPACK's transposed solve. */
    char uplo = lower ? 'U' : 'L', op = trans ? 'N' : 'T', diagonal = unit ? 'U' : 'N';
    for (npy_intp i = 0; i < n; i++)
        for (npy_intp j = 0; j < columns; j++)
            work[j * n + i] = r[i * columns + j];
    if (kind == 0) {
        sympile_blas_@p@getrf(&size, &size, m, &size, pivots, &info);
        if (info == 0)
            sympile_blas_@p@getrs(&op, &size, &nrhs, m, &size, pivots, work, &size, &info);
    } else
        sympile_blas_@p@trtrs(&uplo, &op, &diagonal, &size, &nrhs, m, &size, work, &size,
                              &info);
    if (info == 0)
        for (npy_intp i = 0; i < n; i++)
            for (npy_intp j = 0; j < columns; j++)
                x[i * columns + j] = work[j * n + i];
    return info;
}

/* *out = x with a x = b for each matrix of the stacks (a square, b with one axis fewer for
   vectors; the same leading axes): kind 0 a general matrix (LU), 1 a triangular one
   (lower, trans, unit). A singular matrix is a LinAlgError. */
static int sympile_solve_@dtype@(PyArrayObject *a, PyArrayObject *b, PyArrayObject **out,
                                 int kind, int lower, int trans, int unit)
{
    int ndim = PyArray_NDIM(a), vector = PyArray_NDIM(b) == ndim - 1;
    npy_intp n = PyArray_DIM(a, ndim - 1);
    /* b's axis ndim - 2 is its rows (a matrix) or its length (a vector). */
    if (PyArray_DIM(a, ndim - 2) != n || PyArray_DIM(b, ndim - 2) != n) {
        PyErr_Format(PyExc_ValueError, "a must be square (got %zd x %zd) and b must have its "
                     "%zd rows (got %zd)", (Py_ssize_t)PyArray_DIM(a, ndim - 2), (Py_ssize_t)n,
                     (Py_ssize_t)n, (Py_ssize_t)PyArray_DIM(b, ndim - 2));
        return -1;
    }
    for (int axis = 0; axis < ndim - 2; axis++)
        if (PyArray_DIM(a, axis) != PyArray_DIM(b, axis)) {
            PyErr_Format(PyExc_ValueError, "a and b must have the same batch shape");
            return -1;
        }
    if (sympile_prepare_output(out, PyArray_NDIM(b), PyArray_DIMS(b), @npy@) < 0)
        return -1;
    npy_intp columns = vector ? 1 : PyArray_DIM(b, ndim - 1);
    if (n == 0 || columns == 0 || PyArray_SIZE(b) == 0)
        return 0;
    /* getrf overwrites its matrix: a copy; trtrs only reads it. */
    PyArrayObject *matrices = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)a, PyArray_DescrFromType(@npy@), 0, 0,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | (kind == 0 ? NPY_ARRAY_ENSURECOPY : 0),
        NULL);
    PyArrayObject *rights = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)b, PyArray_DescrFromType(@npy@), 0, 0,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    if (matrices == NULL || rights == NULL) {
        Py_XDECREF(matrices);
        Py_XDECREF(rights);
        return -1;
    }
    npy_intp count = PyArray_SIZE(a) / (n * n), failed = -1;
    int out_of_memory = 0;
    double work = (double)count * n * n * (kind == 0 ? n + columns : columns);
    int saved, threads = sympile_linalg_threads_@dtype@(
        kind == 0 ? (void *)sympile_blas_@p@getrf : (void *)sympile_blas_@p@trtrs, count, work,
        &saved);
    @T@ *matrix_data = (@T@ *)PyArray_DATA(matrices);
    const @T@ *right_data = (const @T@ *)PyArray_DATA(rights);
    @T@ *out_data = (@T@ *)PyArray_DATA(*out);
    #pragma omp parallel num_threads(threads) if (threads > 1)
    {
        @T@ *scratch = (@T@ *)malloc(sizeof(@T@) * (size_t)(n * columns));
        int *pivots = (int *)malloc(sizeof(int) * (size_t)n);
        if (scratch == NULL || pivots == NULL) {
            #pragma omp atomic write
            out_of_memory = 1;
        }
        #pragma omp for schedule(dynamic)
        for (npy_intp k = 0; k < count; k++) {
            if (scratch == NULL || pivots == NULL)
                continue;
            int info = sympile_solve_one_@dtype@(
                matrix_data + k * n * n, right_data + k * n * columns,
                out_data + k * n * columns, scratch, pivots, n, columns, kind, lower, trans,
                unit);
            if (info != 0) {
                #pragma omp critical
                if (failed < 0 || k < failed)
                    failed = k;
            }
        }
        free(scratch);
        free(pivots);
    }
    sympile_blas_threads_restore(saved);
    Py_DECREF(matrices);
    Py_DECREF(rights);
    if (out_of_memory) {
        PyErr_NoMemory();
        return -1;
    }
    if (failed >= 0) {
        sympile_linalg_error(kind == 0 ? "Singular matrix" : "singular matrix: a zero on the "
                             "diagonal of the triangular matrix");
        return -1;
    }
    return 0;
}
