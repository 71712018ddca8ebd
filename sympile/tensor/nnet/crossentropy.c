/* CrossentropySoftmax1Hot of @T@ logits with @Y@ targets: per row, sm = softmax(x) and
   loss = -(x[y] - peak - log_total) from the shifted logits' exps (the row kernel @KERNEL@),
   rows of x with strided elements copied to a buffer first. Needs targets.c. Returns 0, or
   -1 with a Python exception set. */
static int sympile_crossentropy_softmax_@NAME@(PyArrayObject *x, PyArrayObject *targets,
                                               PyArrayObject **loss,
                                               PyArrayObject **probabilities, const char *op)
{
    const npy_intp rows = PyArray_DIM(x, 0), classes = PyArray_DIM(x, 1);
    if (sympile_check_targets_@YNAME@(targets, rows, classes, op) != 0)
        return -1;
    if (sympile_prepare_output(loss, 1, &rows, @NPY@)
            || sympile_prepare_output(probabilities, 2, PyArray_DIMS(x), @NPY@))
        return -1;
    const npy_intp step = PyArray_STRIDE(x, 1);
    const int buffered = classes > 1 && step != (npy_intp)sizeof(@T@);
    @T@ *buffer = buffered ? (@T@ *)malloc((size_t)classes * sizeof(@T@)) : NULL;
    if (buffered && buffer == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    @T@ *losses = (@T@ *)PyArray_DATA(*loss);
    @T@ *probability_rows = (@T@ *)PyArray_DATA(*probabilities);
    for (npy_intp i = 0; i < rows; ++i) {
        const char *row = PyArray_BYTES(x) + i * PyArray_STRIDE(x, 0);
        if (buffered)
            for (npy_intp k = 0; k < classes; ++k) buffer[k] = *(const @T@ *)(row + k * step);
        const npy_intp target = (npy_intp)*(const @Y@ *)(PyArray_BYTES(targets)
                                                         + i * PyArray_STRIDE(targets, 0));
        losses[i] = (@T@)@KERNEL@(classes, buffered ? buffer : (const @T@ *)row,
                                  probability_rows + i * classes, target);
    }
    free(buffer);
    return 0;
}
