/* Everything of an Elemwise node that is not its loops, driven by its table: the broadcast
   check, the outputs, and the choice and setup of a kernel. One copy for every node, so a
   node's own C is its kernels (a library unit per computation, shared by every shape) and its
   table. And DimShuffle's view, which needs no code of its node's at all. */

/* The contiguous kernel on C-ordered copies of the operands that are not (inputs copied
   before, outputs copied back after), for a node without a strided kernel: its types say no
   input is broadcast and none comes from a view (elemwise_c.py's needs_strided_kernel), so
   such an operand is rare (an array the user gave). An output written over an input gets
   its own copy, stored into that input after. */
static __attribute__((noinline))
int sympile_elemwise_copied(const SympileElemwise *node, npy_intp size,
                            PyArrayObject *const *operands, char **pointers)
{
    const int n_inputs = node->n_inputs, count = n_inputs + node->n_outputs;
    PyArrayObject *copies[SYMPILE_ELEMWISE_OPERANDS];
    int flags = 0;
    for (int k = 0; k < count; k++) {
        copies[k] = NULL;
        if ((k < n_inputs && node->single[k]) || PyArray_IS_C_CONTIGUOUS(operands[k]) || flags)
            continue;
        copies[k] = (PyArrayObject *)PyArray_NewCopy(operands[k], NPY_CORDER);
        if (copies[k] == NULL)
            flags = -1;
        else
            pointers[k] = PyArray_BYTES(copies[k]);
    }
    if (flags == 0)
        flags = node->contiguous(size, pointers);
    for (int k = n_inputs; k < count && flags >= 0; k++)
        if (copies[k] != NULL && PyArray_CopyInto(operands[k], copies[k]) < 0)
            flags = -1;
    for (int k = 0; k < count; k++)
        Py_XDECREF(copies[k]);
    return flags;
}

/* The strided kernel on the operands: length-1 axes dropped, neighbouring axes merged where
   every operand's strides allow it; sympile_elemwise_copied where the node has none. */
static __attribute__((noinline))
int sympile_elemwise_strided(const SympileElemwise *node, npy_intp size, const npy_intp *dims,
                             PyArrayObject *const *operands, char **pointers)
{
    if (node->strided == NULL)
        return sympile_elemwise_copied(node, size, operands, pointers);
    const int count = node->n_inputs + node->n_outputs, ndim = node->ndim;
    const int length = ndim > 0 ? ndim : 1;
    npy_intp shape[NPY_MAXDIMS], merged[count * length];
    int nd = 0;
    for (int axis = 0; axis < ndim; axis++) {
        if (dims[axis] == 1)
            continue;
        int merge = nd > 0;
        npy_intp axis_strides[count];
        for (int k = 0; k < count; k++) {
            axis_strides[k] = PyArray_DIMS(operands[k])[axis] == 1
                ? 0 : PyArray_STRIDES(operands[k])[axis];
            merge = merge && merged[k * length + nd - 1] == axis_strides[k] * dims[axis];
        }
        if (merge) {
            shape[nd - 1] *= dims[axis];
        } else {
            shape[nd] = dims[axis];
            nd++;
        }
        for (int k = 0; k < count; k++)
            merged[k * length + nd - 1] = axis_strides[k];
    }
    if (nd == 0) {
        nd = 1;
        shape[0] = 1;
        for (int k = 0; k < count; k++)
            merged[k * length] = 0;
    }
    npy_intp strides[count * nd];
    for (int k = 0; k < count; k++)
        for (int axis = 0; axis < nd; axis++)
            strides[k * nd + axis] = merged[k * length + axis];
    return node->strided(nd, shape, pointers, strides);
}

/* The kernels' error flags (>= 0), or -1 with a Python exception set. The operands are the
   node's inputs, then its outputs: NULL or arrays it gave before, owned; on return they hold
   what it gives now. */
static inline __attribute__((always_inline))
int sympile_elemwise_apply(const SympileElemwise *node, PyArrayObject **operands)
{
    const int n_inputs = node->n_inputs, ndim = node->ndim;
    PyArrayObject *const *inputs = operands, **outputs = operands + n_inputs;
    npy_intp dims[NPY_MAXDIMS];
    npy_intp size = 1;
    /* An axis's length is that of the first input whose type does not say 1 there. */
    for (int axis = 0; axis < ndim; axis++) {
        int found = 0;
        dims[axis] = 1;
        for (int i = 0; i < n_inputs; i++) {
            if (node->length_one[i * ndim + axis])
                continue;
            const npy_intp here = PyArray_DIMS(inputs[i])[axis];
            if (!found) {
                found = 1;
                dims[axis] = here;
            } else if (here != dims[axis]) {
                sympile_elemwise_shape_error(node->op, n_inputs, inputs, axis, dims[axis], here);
                return -1;
            }
        }
        size *= dims[axis];
    }
    char *pointers[SYMPILE_ELEMWISE_OPERANDS];
    /* Outside the single inputs, every operand has the output's shape unless one of its
       axes is broadcast (its type says length 1 where the output's length is not 1). */
    int contiguous = 1;
    for (int i = 0; i < n_inputs; i++) {
        pointers[i] = PyArray_BYTES(inputs[i]);
        if (node->single[i])
            continue;
        contiguous = contiguous && PyArray_IS_C_CONTIGUOUS(inputs[i]);
        for (int axis = 0; axis < ndim && contiguous; axis++)
            contiguous = !node->length_one[i * ndim + axis] || dims[axis] == 1;
    }
    for (int j = 0; j < node->n_outputs; j++) {
        const int target = node->written[j];
        if (target >= 0) {
            if (!PyArray_ISWRITEABLE(inputs[target])) {
                PyErr_Format(PyExc_ValueError, "%s: input %d is read-only, but output %d is "
                             "to be written over it", node->op, target, j);
                return -1;
            }
            Py_INCREF(inputs[target]);
            Py_XDECREF(outputs[j]);
            outputs[j] = inputs[target];
            contiguous = contiguous && PyArray_IS_C_CONTIGUOUS(outputs[j]);
        } else if (sympile_prepare_output(&outputs[j], ndim, dims, node->typenums[j])) {
            return -1;
        }
        pointers[n_inputs + j] = PyArray_BYTES(outputs[j]);
    }
    if (size == 0)
        return 0;
    if (contiguous)
        return node->contiguous(size, pointers);
    return sympile_elemwise_strided(node, size, dims, operands, pointers);
}

int @NAME@_run(PyObject *const *cells, const void *data)
{
    const SympileElemwise *node = data;
    const int n_inputs = node->n_inputs, n_outputs = node->n_outputs;
    PyArrayObject *operands[SYMPILE_ELEMWISE_OPERANDS], **outputs = operands + n_inputs;
    for (int i = 0; i < n_inputs; i++)
        operands[i] = (PyArrayObject *)PyList_GET_ITEM(cells[i], 0);
    for (int j = 0; j < n_outputs; j++)
        outputs[j] = sympile_take_output(cells[n_inputs + j]);
    int flags = sympile_elemwise_apply(node, operands);
    for (int e = 0; e < node->n_errors && flags > 0; e++) {
        if (flags & node->errors[e].code) {
            PyErr_Format(*node->errors[e].exception, "%s: %s", node->op, node->errors[e].message);
            flags = -1;
        }
    }
    if (flags < 0) {
        for (int j = 0; j < n_outputs; j++)
            Py_XDECREF(outputs[j]);
        return -1;
    }
    for (int j = 0; j < n_outputs; j++)
        sympile_store_output(cells[n_inputs + j], outputs[j]);
    return 0;
}

int @NAME@_dimshuffle(PyObject *const *cells, const void *data)
{
    const SympileDimShuffle *node = data;
    PyArrayObject *x = (PyArrayObject *)PyList_GET_ITEM(cells[0], 0);
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int axis = 0; axis < node->ndim; axis++) {
        const int source = node->order[axis];
        dims[axis] = source < 0 ? 1 : PyArray_DIMS(x)[source];
        strides[axis] = source < 0 ? 0 : PyArray_STRIDES(x)[source];
    }
    Py_INCREF(PyArray_DESCR(x));
    PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, PyArray_DESCR(x), node->ndim, dims, strides, PyArray_DATA(x),
        PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL)
        return -1;
    Py_INCREF(x);
    if (PyArray_SetBaseObject(view, (PyObject *)x)) {
        Py_DECREF(view);
        return -1;
    }
    sympile_store_output(cells[1], view);
    return 0;
}
