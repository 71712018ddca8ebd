/* The targets of a cross-entropy (@Y@), checked as perform's _checked_target_values does:
   one per row, and every class index in [0, classes) (the error gives their minimum and
   maximum); `op` names the op. Returns 0, or -1 with a Python exception set. */
static int sympile_check_targets_@YNAME@(PyArrayObject *targets, npy_intp rows,
                                         npy_intp classes, const char *op)
{
    if (PyArray_DIM(targets, 0) != rows) {
        PyErr_Format(PyExc_ValueError, "%s: %lld targets for %lld rows: expected one class "
                     "index per row", op, (long long)PyArray_DIM(targets, 0), (long long)rows);
        return -1;
    }
    if (rows == 0)
        return 0;
    long long lowest = 0, highest = 0;
    for (npy_intp i = 0; i < rows; ++i) {
        const long long target = (long long)*(const @Y@ *)(PyArray_BYTES(targets)
                                                           + i * PyArray_STRIDE(targets, 0));
        if (i == 0 || target < lowest) lowest = target;
        if (i == 0 || target > highest) highest = target;
    }
    if (lowest < 0 || highest >= (long long)classes) {
        PyErr_Format(PyExc_IndexError, "%s: target class indices must be in [0, %lld), got "
                     "values from %lld to %lld", op, (long long)classes, lowest, highest);
        return -1;
    }
    return 0;
}
