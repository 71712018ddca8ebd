/* A CrossentropySoftmax1Hot node (program.h's SympileNodeFunction; @FUNCTION@ is its
   crossentropy.c for the node's dtypes): x and the targets give the loss and the softmax; the
   table is the op's name, for messages. */
int @NAME@_node(PyObject *const *cells, const void *data)
{
    PyArrayObject *loss = sympile_take_output(cells[2]);
    PyArrayObject *probabilities = sympile_take_output(cells[3]);
    if (@FUNCTION@((PyArrayObject *)PyList_GET_ITEM(cells[0], 0),
                   (PyArrayObject *)PyList_GET_ITEM(cells[1], 0), &loss, &probabilities,
                   *(const char *const *)data) != 0) {
        Py_XDECREF(loss);
        Py_XDECREF(probabilities);
        return -1;
    }
    sympile_store_output(cells[2], loss);
    sympile_store_output(cells[3], probabilities);
    return 0;
}
