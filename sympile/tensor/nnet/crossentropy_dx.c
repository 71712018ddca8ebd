/* CrossentropySoftmax1HotDx: out[i, k] = (sm[i, k] - [k == y[i]]) * dloss[i] in @O@ (the
   output's dtype, as perform computes it), from dloss of @L@, sm of @P@ and targets of @Y@;
   adjacent rows of sm through the row kernel @SCALED@. Needs targets.c. Returns 0, or -1
   with a Python exception set. */
static int sympile_crossentropy_softmax_dx_@NAME@(PyArrayObject *loss_grad,
                                                  PyArrayObject *probabilities,
                                                  PyArrayObject *targets,
                                                  PyArrayObject **output, const char *op)
{
    const npy_intp rows = PyArray_DIM(probabilities, 0);
    const npy_intp classes = PyArray_DIM(probabilities, 1);
    if (sympile_check_targets_@YNAME@(targets, rows, classes, op) != 0)
        return -1;
    if (PyArray_DIM(loss_grad, 0) != rows) {
        PyErr_Format(PyExc_ValueError, "%s: dloss has %lld entries for %lld rows", op,
                     (long long)PyArray_DIM(loss_grad, 0), (long long)rows);
        return -1;
    }
    if (sympile_prepare_output(output, 2, PyArray_DIMS(probabilities), @NPY@))
        return -1;
    const char *loss_data = PyArray_BYTES(loss_grad);
    const npy_intp loss_stride = PyArray_STRIDE(loss_grad, 0);
    const char *sm = PyArray_BYTES(probabilities);
    const npy_intp row_stride = PyArray_STRIDE(probabilities, 0);
    const npy_intp step = PyArray_STRIDE(probabilities, 1);
    const int adjacent = step == (npy_intp)sizeof(@P@);
    for (npy_intp i = 0; i < rows; ++i) {
        const @O@ scale = (@O@)*(const @L@ *)(loss_data + i * loss_stride);
        const npy_intp target = (npy_intp)*(const @Y@ *)(PyArray_BYTES(targets)
                                                         + i * PyArray_STRIDE(targets, 0));
        @O@ *out_row = (@O@ *)PyArray_DATA(*output) + i * classes;
        const char *sm_row = sm + i * row_stride;
        if (adjacent) {
            @SCALED@(classes, (const @P@ *)sm_row, out_row, scale);
        } else {
            for (npy_intp k = 0; k < classes; ++k)
                out_row[k] = (@O@)*(const @P@ *)(sm_row + k * step) * scale;
        }
        out_row[target] = ((@O@)*(const @P@ *)(sm_row + target * step) - 1) * scale;
    }
    return 0;
}
