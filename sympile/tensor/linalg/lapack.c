/* Cholesky factors, linear solves, inverses, determinants and symmetric eigenproblems over
   stacks of matrices by LAPACK (potrf, potrs, getrf, getrs, getri, sytrf, sytrs, syevd,
   through scipy's pointers) and BLAS (trsm), for @dtype@. LAPACK is column-major: a
   row-major matrix is its transpose there, so a lower triangle read row-major is LAPACK's
   upper one, and a solve with A is a solve with LAPACK's matrix transposed. getrs gets its
   right-hand sides copied into a column-major work matrix; trsm solves from the right on
   the row-major ones in place.

   Threads (blas_threads.c): a stack of matrices is split among OpenMP threads, each calling
   the library on one thread; one matrix with several right-hand sides has them split;
   above all, the library never runs its own threads beside the module's. */

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

/* How a kernel ends: a MemoryError, a LinAlgError(message) when a matrix failed, or 0. */
static int sympile_linalg_status(int out_of_memory, npy_intp failed, const char *message)
{
    if (out_of_memory) {
        PyErr_NoMemory();
        return -1;
    }
    if (failed >= 0) {
        sympile_linalg_error(message);
        return -1;
    }
    return 0;
}

/* 0 if the matrices of a (its last two axes) are square, else -1 with a ValueError. */
static int sympile_linalg_square(PyArrayObject *a)
{
    int ndim = PyArray_NDIM(a);
    if (PyArray_DIM(a, ndim - 2) != PyArray_DIM(a, ndim - 1)) {
        PyErr_Format(PyExc_ValueError, "a must be square, got %zd x %zd",
                     (Py_ssize_t)PyArray_DIM(a, ndim - 2),
                     (Py_ssize_t)PyArray_DIM(a, ndim - 1));
        return -1;
    }
    return 0;
}
#endif

/* The OpenMP threads for `work` multiply-adds in all; the library runs on one thread (set
   back by sympile_blas_threads_restore), also for one large matrix: its threads, spinning
   after the call, would slow the module's OpenMP loops that follow (blas_threads.c). */
static int sympile_linalg_threads_@dtype@(void *routine, double work, int *saved)
{
    return sympile_blas_threads_begin(routine, work, saved);
}

/* *out = the Cholesky factor of each matrix of a (lower, or its transpose when !lower); a
   matrix that is not positive definite is a LinAlgError, or NaNs with nan_on_error. */
static int sympile_cholesky_@dtype@(PyArrayObject *a, PyArrayObject **out, int lower,
                                    int nan_on_error)
{
    int ndim = PyArray_NDIM(a);
    npy_intp n = PyArray_DIM(a, ndim - 1);
    if (sympile_linalg_square(a) < 0)
        return -1;
    if (sympile_prepare_output(out, ndim, PyArray_DIMS(a), @npy@) < 0
            || PyArray_CopyInto(*out, a) < 0)
        return -1;
    if (n == 0 || PyArray_SIZE(a) == 0)
        return 0;
    npy_intp count = PyArray_SIZE(a) / (n * n), failed = -1;
    int saved, threads = sympile_linalg_threads_@dtype@(
        (void *)sympile_blas_@p@potrf, (double)count * n * n * n / 3, &saved);
    @T@ *data = (@T@ *)PyArray_DATA(*out);
    #pragma omp parallel for schedule(dynamic) num_threads(threads) \
        if (threads > 1 && count > 1)
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
    return sympile_linalg_status(0, nan_on_error ? -1 : failed,
                                 "Matrix is not positive definite");
}

/* The kinds of sympile_solve: a general matrix (LU), a triangular one (trsm), a symmetric
   positive definite one (Cholesky: potrf/potrs), a symmetric one (Bunch-Kaufman:
   sytrf/sytrs). */
enum { SYMPILE_SOLVE_GENERAL, SYMPILE_SOLVE_TRIANGULAR, SYMPILE_SOLVE_POSITIVE,
       SYMPILE_SOLVE_SYMMETRIC };

/* Solves a x = b for the column-major right-hand sides `work` (n x nrhs, overwritten by
   x) with m's factors (and pivots), as LAPACK sees a row-major matrix: transposed, so a
   general solve is LAPACK's transposed one and a symmetric matrix's triangle `uplo` is the
   other one read row-major. Returns LAPACK's info. */
static int sympile_solve_columns_@dtype@(@T@ *m, int *pivots, @T@ *work, npy_intp n,
                                         npy_intp nrhs, int kind, char uplo)
{
    int size = (int)n, columns = (int)nrhs, info = 0;
    char op = 'T';
    if (kind == SYMPILE_SOLVE_POSITIVE)
        sympile_blas_@p@potrs(&uplo, &size, &columns, m, &size, work, &size, &info);
    else if (kind == SYMPILE_SOLVE_SYMMETRIC)
        sympile_blas_@p@sytrs(&uplo, &size, &columns, m, &size, pivots, work, &size, &info);
    else
        sympile_blas_@p@getrs(&op, &size, &columns, m, &size, pivots, work, &size, &info);
    return info;
}

/* m's factors in place (sytrf's workspace: `scratch`, `lwork` long). Returns LAPACK's
   info. */
static int sympile_solve_factor_@dtype@(@T@ *m, int *pivots, npy_intp n, int kind, char uplo,
                                        @T@ *scratch, int lwork)
{
    int size = (int)n, info = 0;
    if (kind == SYMPILE_SOLVE_POSITIVE)
        sympile_blas_@p@potrf(&uplo, &size, m, &size, &info);
    else if (kind == SYMPILE_SOLVE_SYMMETRIC)
        sympile_blas_@p@sytrf(&uplo, &size, m, &size, pivots, scratch, &lwork, &info);
    else
        sympile_blas_@p@getrf(&size, &size, m, &size, pivots, &info);
    return info;
}

/* sytrf's workspace length for an n x n matrix (LAPACK's own answer to lwork = -1), queried
   once per call for all the matrices; 1 for the other kinds. */
static int sympile_solve_workspace_@dtype@(@T@ *m, npy_intp n, int kind, char uplo)
{
    if (kind != SYMPILE_SOLVE_SYMMETRIC)
        return 1;
    int size = (int)n, lwork = -1, info = 0, pivot = 0;
    @T@ answer = 0;
    sympile_blas_@p@sytrf(&uplo, &size, m, &size, &pivot, &answer, &lwork, &info);
    return answer > 1 ? (int)answer : (int)n;
}

/* b's n x columns rows (row-major) into work (column-major), and back. */
static void sympile_to_columns_@dtype@(const @T@ *r, @T@ *work, npy_intp n, npy_intp columns)
{
    for (npy_intp i = 0; i < n; i++)
        for (npy_intp j = 0; j < columns; j++)
            work[j * n + i] = r[i * columns + j];
}

static void sympile_from_columns_@dtype@(const @T@ *work, @T@ *x, npy_intp n,
                                         npy_intp columns)
{
    for (npy_intp i = 0; i < n; i++)
        for (npy_intp j = 0; j < columns; j++)
            x[i * columns + j] = work[j * n + i];
}

/* x with a x = b for the triangular matrix a (lower, trans, unit), overwriting the
   row-major n x columns right-hand sides x: row-major x is xᵀ to BLAS, so this is BLAS's
   solve from the right, X op(aᵀ) = B, by trsm, in place and without copies. Rows
   [first, last) of xᵀ (columns of x) only. */
static void sympile_triangular_columns_@dtype@(const @T@ *a, @T@ *x, npy_intp n,
                                               npy_intp columns, npy_intp first,
                                               npy_intp last, int lower, int trans, int unit)
{
    int size = (int)n, rows = (int)(last - first), ldb = (int)columns;
    @T@ one = 1;
    char side = 'R', uplo = lower ? 'U' : 'L', op = trans ? 'T' : 'N';
    char diagonal = unit ? 'U' : 'N';
    if (rows > 0)
        sympile_blas_@p@trsm(&side, &uplo, &op, &diagonal, &rows, &size, &one, (@T@ *)a,
                             &size, x + first, &ldb);
}

/* Whether a triangular matrix (not unit) has a zero on its diagonal: singular. */
static int sympile_zero_diagonal_@dtype@(const @T@ *a, npy_intp n)
{
    for (npy_intp i = 0; i < n; i++)
        if (a[i * n + i] == 0)
            return 1;
    return 0;
}

/* The triangular solves of sympile_solve, by trsm over x = a copy of b. */
static int sympile_triangular_solve_@dtype@(PyArrayObject *a, PyArrayObject *b,
                                            PyArrayObject *out, npy_intp n, npy_intp columns,
                                            int lower, int trans, int unit)
{
    if (PyArray_CopyInto(out, b) < 0)
        return -1;
    PyArrayObject *matrices = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)a, PyArray_DescrFromType(@npy@), 0, 0,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    if (matrices == NULL)
        return -1;
    npy_intp count = PyArray_SIZE(a) / (n * n);
    const @T@ *data = (const @T@ *)PyArray_DATA(matrices);
    @T@ *x = (@T@ *)PyArray_DATA(out);
    for (npy_intp k = 0; !unit && k < count; k++)
        if (sympile_zero_diagonal_@dtype@(data + k * n * n, n)) {
            Py_DECREF(matrices);
            sympile_linalg_error("singular matrix: a zero on the diagonal of the triangular "
                                 "matrix");
            return -1;
        }
    int saved, threads = sympile_linalg_threads_@dtype@(
        (void *)sympile_blas_@p@trsm, (double)count * n * n * columns, &saved);
    if (count > 1) {
        #pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
        for (npy_intp k = 0; k < count; k++)
            sympile_triangular_columns_@dtype@(data + k * n * n, x + k * n * columns, n,
                                               columns, 0, columns, lower, trans, unit);
    } else {
        /* One matrix: its right-hand sides split among the threads. */
        #pragma omp parallel num_threads(threads) if (threads > 1)
        {
#ifdef _OPENMP
            npy_intp parts = omp_get_num_threads(), part = omp_get_thread_num();
#else
            npy_intp parts = 1, part = 0;
#endif
            sympile_triangular_columns_@dtype@(data, x, n, columns, columns * part / parts,
                                               columns * (part + 1) / parts, lower, trans,
                                               unit);
        }
    }
    sympile_blas_threads_restore(saved);
    Py_DECREF(matrices);
    return 0;
}

/* *out = x with a x = b for each matrix of the stacks (a square, b with one axis fewer for
   vectors; the same leading axes), by `kind`: triangular matrices are read as lower, trans
   and unit say, symmetric ones from their lower (or upper) triangle. A singular matrix, or
   one that is not positive definite, is a LinAlgError. */
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
    if (kind == SYMPILE_SOLVE_TRIANGULAR)
        return sympile_triangular_solve_@dtype@(a, b, *out, n, columns, lower, trans, unit);
    /* The factoring overwrites its matrix: a copy. */
    PyArrayObject *matrices = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)a, PyArray_DescrFromType(@npy@), 0, 0,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSURECOPY, NULL);
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
    char uplo = lower ? 'U' : 'L';
    int lwork = sympile_solve_workspace_@dtype@((@T@ *)PyArray_DATA(matrices), n, kind, uplo);
    int saved, threads = sympile_linalg_threads_@dtype@(
        (void *)sympile_blas_@p@getrf, (double)count * n * n * (n + columns), &saved);
    @T@ *matrix_data = (@T@ *)PyArray_DATA(matrices);
    const @T@ *right_data = (const @T@ *)PyArray_DATA(rights);
    @T@ *out_data = (@T@ *)PyArray_DATA(*out);
    if (count > 1 || threads <= 1 || columns < 2) {
        /* A thread per matrix of the stack. */
        #pragma omp parallel num_threads(threads) if (threads > 1 && count > 1)
        {
            @T@ *scratch = (@T@ *)malloc(sizeof(@T@) * (size_t)(n * columns));
            @T@ *factor_work = (@T@ *)malloc(sizeof(@T@) * (size_t)lwork);
            int *pivots = (int *)malloc(sizeof(int) * (size_t)n);
            int ready = scratch != NULL && factor_work != NULL && pivots != NULL;
            if (!ready) {
                #pragma omp atomic write
                out_of_memory = 1;
            }
            #pragma omp for schedule(dynamic)
            for (npy_intp k = 0; k < count; k++) {
                if (!ready)
                    continue;
                @T@ *m = matrix_data + k * n * n;
                sympile_to_columns_@dtype@(right_data + k * n * columns, scratch, n, columns);
                int info = sympile_solve_factor_@dtype@(m, pivots, n, kind, uplo, factor_work,
                                                        lwork);
                if (info == 0)
                    info = sympile_solve_columns_@dtype@(m, pivots, scratch, n, columns, kind,
                                                         uplo);
                if (info == 0)
                    sympile_from_columns_@dtype@(scratch, out_data + k * n * columns, n,
                                                 columns);
                else {
                    #pragma omp critical
                    if (failed < 0 || k < failed)
                        failed = k;
                }
            }
            free(scratch);
            free(factor_work);
            free(pivots);
        }
    } else {
        /* One matrix, many right-hand sides: factored once, its columns split. */
        @T@ *scratch = (@T@ *)malloc(sizeof(@T@) * (size_t)(n * columns));
        @T@ *factor_work = (@T@ *)malloc(sizeof(@T@) * (size_t)lwork);
        int *pivots = (int *)malloc(sizeof(int) * (size_t)n);
        if (scratch == NULL || factor_work == NULL || pivots == NULL)
            out_of_memory = 1;
        else {
            sympile_to_columns_@dtype@(right_data, scratch, n, columns);
            int info = sympile_solve_factor_@dtype@(matrix_data, pivots, n, kind, uplo,
                                                    factor_work, lwork);
            if (info != 0)
                failed = 0;
            else {
                #pragma omp parallel num_threads(threads)
                {
#ifdef _OPENMP
                    npy_intp parts = omp_get_num_threads(), part = omp_get_thread_num();
#else
                    npy_intp parts = 1, part = 0;
#endif
                    npy_intp first = columns * part / parts;
                    npy_intp last = columns * (part + 1) / parts;
                    int part_info = last > first ? sympile_solve_columns_@dtype@(
                        matrix_data, pivots, scratch + first * n, n, last - first, kind,
                        uplo) : 0;
                    if (part_info != 0) {
                        #pragma omp atomic write
                        failed = 0;
                    }
                }
                if (failed < 0)
                    sympile_from_columns_@dtype@(scratch, out_data, n, columns);
            }
        }
        free(scratch);
        free(factor_work);
        free(pivots);
    }
    sympile_blas_threads_restore(saved);
    Py_DECREF(matrices);
    Py_DECREF(rights);
    return sympile_linalg_status(out_of_memory, failed,
                                 kind == SYMPILE_SOLVE_POSITIVE
                                 ? "Matrix is not positive definite" : "Singular matrix");
}

/* From an LU factoring of each matrix of a: kind 0 its inverse (*out), 1 its determinant
   (*out, one per matrix), 2 the sign (*out) and log of the absolute value (*second) of the
   determinant. A singular matrix is a LinAlgError for the inverse, a determinant 0 (sign 0,
   log -inf) otherwise, as numpy gives. */
static int sympile_lu_reduction_@dtype@(PyArrayObject *a, int kind, PyArrayObject **out,
                                        PyArrayObject **second)
{
    int ndim = PyArray_NDIM(a);
    npy_intp n = PyArray_DIM(a, ndim - 1);
    if (sympile_linalg_square(a) < 0)
        return -1;
    int out_ndim = kind == 0 ? ndim : ndim - 2;
    if (sympile_prepare_output(out, out_ndim, PyArray_DIMS(a), @npy@) < 0
            || (kind == 2 && sympile_prepare_output(second, out_ndim, PyArray_DIMS(a),
                                                    @npy@) < 0))
        return -1;
    npy_intp count = n ? PyArray_SIZE(a) / (n * n) : PyArray_SIZE(*out);
    @T@ *first_data = (@T@ *)PyArray_DATA(*out);
    @T@ *second_data = kind == 2 ? (@T@ *)PyArray_DATA(*second) : NULL;
    if (n == 0) {
        /* numpy: the determinant of a 0 x 0 matrix is 1; its inverse is empty. */
        for (npy_intp k = 0; kind != 0 && k < count; k++) {
            first_data[k] = 1;
            if (kind == 2)
                second_data[k] = 0;
        }
        return 0;
    }
    /* getrf (and getri) overwrite their matrix: a copy (the inverse is computed in *out). */
    PyArrayObject *copy = NULL;
    @T@ *matrices;
    if (kind == 0) {
        if (PyArray_CopyInto(*out, a) < 0)
            return -1;
        matrices = first_data;
    } else {
        copy = (PyArrayObject *)PyArray_FromAny(
            (PyObject *)a, PyArray_DescrFromType(@npy@), 0, 0,
            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSURECOPY, NULL);
        if (copy == NULL)
            return -1;
        matrices = (@T@ *)PyArray_DATA(copy);
    }
    npy_intp failed = -1;
    int out_of_memory = 0;
    int saved, threads = sympile_linalg_threads_@dtype@(
        (void *)sympile_blas_@p@getrf, (double)count * n * n * n, &saved);
    #pragma omp parallel num_threads(threads) if (threads > 1 && count > 1)
    {
        int *pivots = (int *)malloc(sizeof(int) * (size_t)n);
        int lwork = (int)(64 * n);
        @T@ *work = kind == 0 ? (@T@ *)malloc(sizeof(@T@) * (size_t)lwork) : NULL;
        if (pivots == NULL || (kind == 0 && work == NULL)) {
            #pragma omp atomic write
            out_of_memory = 1;
        }
        #pragma omp for schedule(dynamic)
        for (npy_intp k = 0; k < count; k++) {
            if (pivots == NULL || (kind == 0 && work == NULL))
                continue;
            @T@ *m = matrices + k * n * n;
            int size = (int)n, info = 0;
            sympile_blas_@p@getrf(&size, &size, m, &size, pivots, &info);
            if (kind == 0) {
                /* The inverse of aᵀ (LAPACK's matrix), read row-major: a's inverse. */
                if (info == 0)
                    sympile_blas_@p@getri(&size, m, &size, pivots, work, &lwork, &info);
                if (info != 0) {
                    #pragma omp critical
                    if (failed < 0 || k < failed)
                        failed = k;
                }
                continue;
            }
            /* det aᵀ = det a: the product of U's diagonal, negated per row interchange. */
            @T@ parity = 1, signs = 1, log_magnitude = 0, product = 1;
            for (npy_intp i = 0; i < n; i++) {
                @T@ pivot = m[i * n + i];
                if (pivots[i] != i + 1)
                    parity = -parity;
                if (pivot < 0)
                    signs = -signs;
                product *= pivot;
                log_magnitude += (@T@)log(fabs((double)pivot));
            }
            if (info > 0) {
                product = 0;
                signs = 0;
                log_magnitude = (@T@)-INFINITY;
            }
            if (kind == 1)
                first_data[k] = parity * product;
            else {
                first_data[k] = parity * signs;
                second_data[k] = log_magnitude;
            }
        }
        free(pivots);
        free(work);
    }
    sympile_blas_threads_restore(saved);
    Py_XDECREF(copy);
    return sympile_linalg_status(out_of_memory, failed, "Singular matrix");
}

/* The eigenvalues (ascending, *values) and, where vectors is not NULL, the eigenvectors
   (the columns of *vectors) of each symmetric matrix of a, read from its lower (or upper)
   triangle: LAPACK's syevd, its workspace queried once for all the matrices. LAPACK's
   eigenvectors are its columns, the rows of the row-major copy: transposed into *vectors.
   A matrix for which the algorithm fails to converge is a LinAlgError. */
static int sympile_eigh_@dtype@(PyArrayObject *a, int lower, PyArrayObject **values,
                                PyArrayObject **vectors)
{
    int ndim = PyArray_NDIM(a);
    npy_intp n = PyArray_DIM(a, ndim - 1);
    if (sympile_linalg_square(a) < 0)
        return -1;
    if (sympile_prepare_output(values, ndim - 1, PyArray_DIMS(a), @npy@) < 0
            || (vectors != NULL
                && sympile_prepare_output(vectors, ndim, PyArray_DIMS(a), @npy@) < 0))
        return -1;
    if (n == 0 || PyArray_SIZE(a) == 0)
        return 0;
    PyArrayObject *copy = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)a, PyArray_DescrFromType(@npy@), 0, 0,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSURECOPY, NULL);
    if (copy == NULL)
        return -1;
    @T@ *matrices = (@T@ *)PyArray_DATA(copy);
    @T@ *value_data = (@T@ *)PyArray_DATA(*values);
    @T@ *vector_data = vectors != NULL ? (@T@ *)PyArray_DATA(*vectors) : NULL;
    npy_intp count = PyArray_SIZE(a) / (n * n), failed = -1;
    char job = vectors != NULL ? 'V' : 'N', uplo = lower ? 'U' : 'L';
    int size = (int)n, lwork = -1, liwork = -1, info = 0, iwork_answer = 0, out_of_memory = 0;
    @T@ work_answer = 0;
    sympile_blas_@p@syevd(&job, &uplo, &size, matrices, &size, value_data, &work_answer,
                          &lwork, &iwork_answer, &liwork, &info);
    lwork = work_answer > 1 ? (int)work_answer : 1;
    liwork = iwork_answer > 1 ? iwork_answer : 1;
    int saved, threads = sympile_linalg_threads_@dtype@(
        (void *)sympile_blas_@p@syevd, (double)count * n * n * n * (vectors ? 9 : 1.5),
        &saved);
    #pragma omp parallel num_threads(threads) if (threads > 1 && count > 1)
    {
        @T@ *work = (@T@ *)malloc(sizeof(@T@) * (size_t)lwork);
        int *iwork = (int *)malloc(sizeof(int) * (size_t)liwork);
        if (work == NULL || iwork == NULL) {
            #pragma omp atomic write
            out_of_memory = 1;
        }
        #pragma omp for schedule(dynamic)
        for (npy_intp k = 0; k < count; k++) {
            if (work == NULL || iwork == NULL)
                continue;
            @T@ *m = matrices + k * n * n;
            int status = 0, thread_lwork = lwork, thread_liwork = liwork;
            sympile_blas_@p@syevd(&job, &uplo, &size, m, &size, value_data + k * n, work,
                                  &thread_lwork, iwork, &thread_liwork, &status);
            if (status != 0) {
                #pragma omp critical
                if (failed < 0 || k < failed)
                    failed = k;
                continue;
            }
            if (vector_data != NULL) {
                @T@ *v = vector_data + k * n * n;
                for (npy_intp i = 0; i < n; i++)
                    for (npy_intp j = 0; j < n; j++)
                        v[i * n + j] = m[j * n + i];
            }
        }
        free(work);
        free(iwork);
    }
    sympile_blas_threads_restore(saved);
    Py_DECREF(copy);
    return sympile_linalg_status(out_of_memory, failed, "Eigenvalues did not converge");
}
