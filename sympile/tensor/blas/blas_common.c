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
