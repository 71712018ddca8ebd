/* Sparse products for @dtype@ (sympile.sparse.kernels): a CSR or CSC matrix S, given by its
   arrays (data, indices, indptr; int32 indices) and shape, times a dense matrix (into a new
   matrix, or added with a scale into one: z + alpha S @ y), and the products of two dense
   matrices sampled at a sparse pattern. Every index is checked
   before it is used: a malformed matrix is a ValueError, never a read out of bounds.
   Threads: rows (CSR) or column bands (CSC) of the result split among OpenMP threads above
   @minsize@ multiply-adds; no two threads write the same element. */
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef SYMPILE_SPARSE_CHECK
#define SYMPILE_SPARSE_CHECK
/* The arrays of a sparse matrix with `major` rows (CSR) or columns (CSC) and indices below
   `minor`: 1-D, int32 index arrays, indptr of major + 1 entries rising from 0 to at most
   len(data) = len(indices), every index in [0, minor). 0, or -1 with a ValueError naming
   `who`. */
static int sympile_sparse_check(const char *who, PyArrayObject *data, PyArrayObject *indices,
                                PyArrayObject *indptr, npy_intp major, npy_intp minor)
{
    if (PyArray_NDIM(data) != 1 || PyArray_NDIM(indices) != 1 || PyArray_NDIM(indptr) != 1
            || PyArray_TYPE(indices) != NPY_INT32 || PyArray_TYPE(indptr) != NPY_INT32
            || !PyArray_IS_C_CONTIGUOUS(data) || !PyArray_IS_C_CONTIGUOUS(indices)
            || !PyArray_IS_C_CONTIGUOUS(indptr)) {
        PyErr_Format(PyExc_ValueError, "%s: data, indices and indptr must be contiguous "
                     "vectors, the indices int32", who);
        return -1;
    }
    npy_intp stored = PyArray_DIM(data, 0);
    const npy_int32 *ptr = (const npy_int32 *)PyArray_DATA(indptr);
    const npy_int32 *index = (const npy_int32 *)PyArray_DATA(indices);
    if (PyArray_DIM(indices, 0) != stored || PyArray_DIM(indptr, 0) != major + 1
            || ptr[0] != 0 || ptr[major] > stored) {
        PyErr_Format(PyExc_ValueError, "%s: indptr must have %zd entries rising from 0 to at "
                     "most len(data) = %zd, with as many indices as values", who,
                     (Py_ssize_t)(major + 1), (Py_ssize_t)stored);
        return -1;
    }
    for (npy_intp i = 0; i < major; i++)
        if (ptr[i + 1] < ptr[i]) {
            PyErr_Format(PyExc_ValueError, "%s: indptr falls at entry %zd", who,
                         (Py_ssize_t)(i + 1));
            return -1;
        }
    for (npy_intp k = 0; k < ptr[major]; k++)
        if (index[k] < 0 || index[k] >= minor) {
            PyErr_Format(PyExc_ValueError, "%s: index %d at position %zd is outside [0, %zd)",
                         who, (int)index[k], (Py_ssize_t)k, (Py_ssize_t)minor);
            return -1;
        }
    return 0;
}

/* The OpenMP threads for `work` multiply-adds: all of them above @minsize@, else one. */
static int sympile_sparse_threads(double work)
{
#ifdef _OPENMP
    return work >= @minsize@ ? omp_get_max_threads() : 1;
#else
    (void)work;
    return 1;
#endif
}

/* The two lengths of a shape vector (int64). */
static int sympile_sparse_shape(const char *who, PyArrayObject *shape, npy_intp *rows,
                                npy_intp *cols)
{
    if (PyArray_NDIM(shape) != 1 || PyArray_DIM(shape, 0) != 2
            || PyArray_TYPE(shape) != NPY_INT64) {
        PyErr_Format(PyExc_ValueError, "%s: shape must be two int64 lengths", who);
        return -1;
    }
    *rows = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(shape, 0);
    *cols = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(shape, 1);
    if (*rows < 0 || *cols < 0) {
        PyErr_Format(PyExc_ValueError, "%s: shape must be lengths >= 0", who);
        return -1;
    }
    return 0;
}
#endif

/* Rows [first, last) of z = S @ y (zero) or z += alpha S @ y for a CSR S and C-contiguous
   y and z (k columns). */
static @vectorize@ void sympile_sparse_csr_rows_@dtype@(
    npy_intp first, npy_intp last, const @T@ *restrict values,
    const npy_int32 *restrict index, const npy_int32 *restrict ptr, const @T@ *restrict y,
    npy_intp k, @T@ *restrict z, @T@ alpha, int zero)
{
    for (npy_intp i = first; i < last; i++) {
        @T@ *restrict zrow = z + i * k;
        if (zero)
            for (npy_intp c = 0; c < k; c++)
                zrow[c] = 0;
        for (npy_int32 s = ptr[i]; s < ptr[i + 1]; s++) {
            const @T@ value = alpha * values[s];
            const @T@ *restrict yrow = y + (npy_intp)index[s] * k;
            for (npy_intp c = 0; c < k; c++)
                zrow[c] += value * yrow[c];
        }
    }
}

/* Rows [first, last) of z = S @ y (zero) or z += alpha S @ y for a CSC S (rows x cols) and
   C-contiguous y and z: the stored values of those rows, found in each column (its indices
   are sorted) by a binary search, so that threads write disjoint rows (not parts of rows:
   those share cache lines). */
static @vectorize@ void sympile_sparse_csc_rows_@dtype@(
    npy_intp first, npy_intp last, npy_intp cols, const @T@ *restrict values,
    const npy_int32 *restrict index, const npy_int32 *restrict ptr, const @T@ *restrict y,
    npy_intp k, @T@ *restrict z, @T@ alpha, int zero)
{
    if (zero)
        for (npy_intp i = first; i < last; i++)
            for (npy_intp c = 0; c < k; c++)
                z[i * k + c] = 0;
    for (npy_intp j = 0; j < cols; j++) {
        npy_int32 low = ptr[j], high = ptr[j + 1];
        if (low == high || index[high - 1] < first || index[low] >= last)
            continue;
        while (low < high && index[low] < first) {
            npy_int32 middle = low + (high - low) / 2;
            if (index[middle] < first)
                low = middle + 1;
            else
                high = middle;
        }
        const @T@ *restrict yrow = y + j * k;
        for (npy_int32 s = low; s < ptr[j + 1] && index[s] < last; s++) {
            const @T@ value = alpha * values[s];
            @T@ *restrict zrow = z + (npy_intp)index[s] * k;
            for (npy_intp c = 0; c < k; c++)
                zrow[c] += value * yrow[c];
        }
    }
}

/* x[i] · y[j] of two rows of k elements. */
static @vectorize@ @T@ sympile_sparse_dot_@dtype@(const @T@ *restrict x,
                                                  const @T@ *restrict y, npy_intp k)
{
    @T@ total = 0;
    for (npy_intp c = 0; c < k; c++)
        total += x[c] * y[c];
    return total;
}

/* Checks S's arrays and shape against y (cols x k): rows and cols of S, or -1 with a
   ValueError naming `who`. */
static int sympile_sparse_operands_@dtype@(const char *who, PyArrayObject *data,
                                           PyArrayObject *indices, PyArrayObject *indptr,
                                           PyArrayObject *shape, PyArrayObject *y,
                                           npy_intp *rows, npy_intp *cols, int csr)
{
    if (sympile_sparse_shape(who, shape, rows, cols) < 0)
        return -1;
    if (PyArray_NDIM(y) != 2 || PyArray_DIM(y, 0) != *cols) {
        PyErr_Format(PyExc_ValueError, "%s: the shapes (%zd, %zd) and (%zd, %zd) do not "
                     "multiply", who, (Py_ssize_t)*rows, (Py_ssize_t)*cols,
                     (Py_ssize_t)PyArray_DIM(y, 0),
                     (Py_ssize_t)(PyArray_NDIM(y) == 2 ? PyArray_DIM(y, 1) : -1));
        return -1;
    }
    return sympile_sparse_check(who, data, indices, indptr, csr ? *rows : *cols,
                                csr ? *cols : *rows);
}

/* z = S @ y (zero) or z += alpha S @ y into the C-contiguous rows x k z, S checked. */
static void sympile_sparse_product_@dtype@(PyArrayObject *data, PyArrayObject *indices,
                                           PyArrayObject *indptr, PyArrayObject *y,
                                           npy_intp rows, npy_intp cols, @T@ *zdata,
                                           @T@ alpha, int zero, int csr)
{
    const @T@ *values = (const @T@ *)PyArray_DATA(data);
    const npy_int32 *index = (const npy_int32 *)PyArray_DATA(indices);
    const npy_int32 *ptr = (const npy_int32 *)PyArray_DATA(indptr);
    const @T@ *ydata = (const @T@ *)PyArray_DATA(y);
    npy_intp k = PyArray_DIM(y, 1);
    npy_intp major = csr ? rows : cols;
    int threads = sympile_sparse_threads((double)ptr[major] * (double)k);
    if (csr) {
        #pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1)
        for (npy_intp block = 0; block < (rows + 63) / 64; block++) {
            npy_intp first = block * 64, last = first + 64 < rows ? first + 64 : rows;
            sympile_sparse_csr_rows_@dtype@(first, last, values, index, ptr, ydata, k, zdata,
                                            alpha, zero);
        }
    } else {
        /* Each thread adds into its own rows of z. */
        #pragma omp parallel num_threads(threads) if (threads > 1 && rows > 1)
        {
#ifdef _OPENMP
            npy_intp parts = omp_get_num_threads(), part = omp_get_thread_num();
#else
            npy_intp parts = 1, part = 0;
#endif
            sympile_sparse_csc_rows_@dtype@(rows * part / parts, rows * (part + 1) / parts,
                                            cols, values, index, ptr, ydata, k, zdata,
                                            alpha, zero);
        }
    }
}

/* *z = S @ y: S (rows x cols) in CSR (csr) or CSC, y a dense C-contiguous cols x k
   matrix; z C-contiguous rows x k. */
static int sympile_sparse_dense_@dtype@(PyArrayObject *data, PyArrayObject *indices,
                                        PyArrayObject *indptr, PyArrayObject *shape,
                                        PyArrayObject *y, PyArrayObject **z, int csr)
{
    const char *who = csr ? "structured_dot (CSR)" : "structured_dot (CSC)";
    npy_intp rows, cols;
    if (sympile_sparse_operands_@dtype@(who, data, indices, indptr, shape, y, &rows, &cols,
                                        csr) < 0)
        return -1;
    npy_intp dims[2] = {rows, PyArray_DIM(y, 1)};
    if (sympile_prepare_output(z, 2, dims, @npy@) < 0)
        return -1;
    sympile_sparse_product_@dtype@(data, indices, indptr, y, rows, cols,
                                   (@T@ *)PyArray_DATA(*z), 1, 1, csr);
    return 0;
}

/* *out = z + alpha S @ y (Theano's Usmm), over z itself when `inplace` (through a contiguous
   copy written back when z is strided); alpha a 0-d array. */
static int sympile_sparse_accumulate_@dtype@(PyArrayObject *z, PyArrayObject *alpha,
                                             PyArrayObject *data, PyArrayObject *indices,
                                             PyArrayObject *indptr, PyArrayObject *shape,
                                             PyArrayObject *y, PyArrayObject **out, int csr,
                                             int inplace)
{
    const char *who = csr ? "z + alpha structured_dot (CSR)"
                          : "z + alpha structured_dot (CSC)";
    npy_intp rows, cols;
    if (sympile_sparse_operands_@dtype@(who, data, indices, indptr, shape, y, &rows, &cols,
                                        csr) < 0)
        return -1;
    if (PyArray_NDIM(z) != 2 || PyArray_DIM(z, 0) != rows
            || PyArray_DIM(z, 1) != PyArray_DIM(y, 1) || PyArray_TYPE(z) != @npy@
            || PyArray_NDIM(alpha) != 0
            || PyArray_TYPE(alpha) != @npy@) {
        PyErr_Format(PyExc_ValueError, "%s: z must be a (%zd, %zd) @dtype@ matrix and alpha "
                     "a @dtype@ scalar", who, (Py_ssize_t)rows, (Py_ssize_t)PyArray_DIM(y, 1));
        return -1;
    }
    const int direct = inplace && PyArray_IS_C_CONTIGUOUS(z) && PyArray_ISALIGNED(z)
                       && PyArray_ISWRITEABLE(z);
    PyArrayObject *target = direct ? z : (PyArrayObject *)PyArray_NewCopy(z, NPY_CORDER);
    if (target == NULL)
        return -1;
    if (direct)
        Py_INCREF(z);
    sympile_sparse_product_@dtype@(data, indices, indptr, y, rows, cols,
                                   (@T@ *)PyArray_DATA(target), *(@T@ *)PyArray_DATA(alpha),
                                   0, csr);
    if (inplace && !direct) {
        int copied = PyArray_CopyInto(z, target);
        Py_DECREF(target);
        if (copied < 0)
            return -1;
        Py_INCREF(z);
        target = z;
    }
    return sympile_assign_output(out, target);
}

/* *out[s] = x[i] · y[j] (times p's value when scaled) for each stored position s = (i, j)
   of the pattern (indices, indptr) of a rows x cols matrix in CSR (csr) or CSC; x is
   rows x k and y cols x k, their rows contiguous. */
static int sympile_sampling_dot_@dtype@(PyArrayObject *x, PyArrayObject *y,
                                        PyArrayObject *data, PyArrayObject *indices,
                                        PyArrayObject *indptr, PyArrayObject **out, int csr,
                                        int scaled)
{
    const char *who = "sampling_dot";
    if (PyArray_NDIM(x) != 2 || PyArray_NDIM(y) != 2 || PyArray_DIM(x, 1) != PyArray_DIM(y, 1)) {
        PyErr_Format(PyExc_ValueError, "%s: x and y must be matrices with as many columns", who);
        return -1;
    }
    npy_intp rows = PyArray_DIM(x, 0), cols = PyArray_DIM(y, 0), k = PyArray_DIM(x, 1);
    if (sympile_sparse_check(who, data, indices, indptr, csr ? rows : cols,
                             csr ? cols : rows) < 0)
        return -1;
    const npy_int32 *index = (const npy_int32 *)PyArray_DATA(indices);
    const npy_int32 *ptr = (const npy_int32 *)PyArray_DATA(indptr);
    npy_intp major = csr ? rows : cols, stored = PyArray_DIM(data, 0);
    if (sympile_prepare_output(out, 1, &stored, @npy@) < 0)
        return -1;
    const @T@ *values = (const @T@ *)PyArray_DATA(data);
    const @T@ *xdata = (const @T@ *)PyArray_DATA(x), *ydata = (const @T@ *)PyArray_DATA(y);
    npy_intp xs0 = PyArray_STRIDE(x, 0) / (npy_intp)sizeof(@T@);
    npy_intp ys0 = PyArray_STRIDE(y, 0) / (npy_intp)sizeof(@T@);
    @T@ *result = (@T@ *)PyArray_DATA(*out);
    for (npy_intp s = ptr[major]; s < stored; s++)
        result[s] = 0;
    int threads = sympile_sparse_threads((double)ptr[major] * (double)k);
    #pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (threads > 1)
    for (npy_intp m = 0; m < major; m++) {
        for (npy_int32 s = ptr[m]; s < ptr[m + 1]; s++) {
            npy_intp i = csr ? m : index[s], j = csr ? index[s] : m;
            @T@ total = sympile_sparse_dot_@dtype@(xdata + i * xs0, ydata + j * ys0, k);
            result[s] = scaled ? values[s] * total : total;
        }
    }
    return 0;
}
