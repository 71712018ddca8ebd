/* A CrossentropySoftmax1HotDx node (program.h's SympileNodeFunction; @FUNCTION@ is its
   crossentropy_dx.c for the node's dtypes): dloss, the softmax and the targets give the
   logits' gradient; the table is the op's name, for messages. */
int @NAME@_node(PyObject *const *cells, const void *data)
{
    PyArrayObject *output = sympile_take_output(cells[3]);
    if (@FUNCTION@((PyArrayObject *)PyList_GET_ITEM(cells[0], 0),
                      (PyArrayObject *)PyList_GET_ITEM(cells[1], 0),
                      (PyArrayObject *)PyList_GET_ITEM(cells[2], 0), &output,
                      *(const char *const *)data) != 0) {
        Py_XDECREF(output);
        return -1;
    }
    sympile_store_output(cells[3], output);
    return 0;
}
