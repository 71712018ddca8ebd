/* The Dot and BLAS-update nodes' entry points (program.h's SympileNodeFunction), reading the
   node's table: so that those nodes compile no C of their own. */

int @NAME@_dot_node(PyObject *const *cells, const void *data)
{
    const SympileBlasDot *node = data;
    PyArrayObject *output = sympile_take_output(cells[2]);
    if (@NAME@_dot(node->op, (PyArrayObject *)PyList_GET_ITEM(cells[0], 0),
                   (PyArrayObject *)PyList_GET_ITEM(cells[1], 0), &output)) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[2], output);
    return 0;
}

int @NAME@_update_node(PyObject *const *cells, const void *data)
{
    const SympileBlasUpdate *node = data;
    PyArrayObject *inputs[5];
    for (int k = 0; k < node->n_inputs; k++)
        inputs[k] = (PyArrayObject *)PyList_GET_ITEM(cells[k], 0);
    /* perform's checks: pairs of lengths that must be equal. */
    for (int c = 0; c < node->n_checks; c++) {
        const SympileBlasCheck *check = &node->checks[c];
        const npy_intp first = PyArray_DIM(inputs[check->first], check->first_axis);
        const npy_intp second = PyArray_DIM(inputs[check->second], check->second_axis);
        if (first != second) {
            PyErr_Format(PyExc_ValueError, "%s: %s have different lengths [%zd, %zd]",
                         node->op, check->what, (Py_ssize_t)first, (Py_ssize_t)second);
            return -1;
        }
    }
    PyArrayObject *output = sympile_take_output(cells[node->n_inputs]);
    if (@NAME@_blas_update(node->op, inputs[node->z], inputs[node->x], inputs[node->y],
                           node->y_row, inputs[node->alpha],
                           node->beta < 0 ? NULL : inputs[node->beta], node->inplace,
                           &output)) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[node->n_inputs], output);
    return 0;
}
