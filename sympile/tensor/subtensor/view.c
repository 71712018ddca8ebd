/* Basic indexing on integers, slices and new axes: Subtensor's view, IncSubtensor's region
   and SliceLength, with perform's checks and messages. */

static npy_int64 sympile_index_part(const SympileIndexPart *part, PyArrayObject *const *indices)
{
    return part->kind == 1 ? part->value : sympile_integer_value(indices[part->value], 0);
}

/* Python's slice.indices(length) then len(range(start, stop, step)): the count, and the
   first index in *first. A step of 0 is the caller's error. The count in unsigned
   arithmetic: -step overflows for the most negative step. */
static npy_int64 sympile_slice_count(npy_int64 length, int has_start, npy_int64 start,
                                     int has_stop, npy_int64 stop, npy_int64 step,
                                     npy_int64 *first)
{
    if (!has_start) {
        start = step < 0 ? length - 1 : 0;
    } else {
        start = start < 0 ? start + length : start;
        start = start < 0 ? (step < 0 ? -1 : 0)
                          : (start >= length ? (step < 0 ? length - 1 : length) : start);
    }
    if (!has_stop) {
        stop = step < 0 ? -1 : length;
    } else {
        stop = stop < 0 ? stop + length : stop;
        stop = stop < 0 ? (step < 0 ? -1 : 0)
                        : (stop >= length ? (step < 0 ? length - 1 : length) : stop);
    }
    *first = start;
    if (step < 0)
        return stop < start ? (npy_int64)((npy_uint64)(start - stop - 1)
                                          / (0 - (npy_uint64)step) + 1) : 0;
    return start < stop ? (stop - start - 1) / step + 1 : 0;
}

int @NAME@_view(const SympileSubtensor *node, PyArrayObject *x,
                PyArrayObject *const *indices, PyArrayObject **view)
{
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    char *data = PyArray_BYTES(x);
    int axis = 0, out = 0;
    *view = NULL;
    for (int e = 0; e < node->n_entries; e++) {
        const SympileIndexEntry *entry = &node->entries[e];
        if (entry->kind == 0) {
            dims[out] = 1;
            strides[out++] = 0;
            continue;
        }
        const npy_intp length = PyArray_DIM(x, axis), stride = PyArray_STRIDE(x, axis);
        if (entry->kind == 1) {
            const npy_int64 step = entry->step.kind ? sympile_index_part(&entry->step, indices)
                                                    : 1;
            if (step == 0) {
                PyErr_Format(PyExc_ValueError, "%s: slice step cannot be zero", node->op);
                return -1;
            }
            const npy_int64 start = entry->start.kind
                ? sympile_index_part(&entry->start, indices) : 0;
            const npy_int64 stop = entry->stop.kind
                ? sympile_index_part(&entry->stop, indices) : 0;
            npy_int64 first;
            const npy_int64 count = sympile_slice_count(length, entry->start.kind, start,
                                                        entry->stop.kind, stop, step, &first);
            dims[out] = count;
            strides[out++] = stride * step;
            if (count > 0)
                data += first * stride;
        } else {
            npy_int64 index = sympile_index_part(&entry->start, indices);
            if (index < -length || index >= length) {
                PyErr_Format(PyExc_IndexError, "%s: index %lld is out of bounds for axis %d "
                             "with size %lld", node->op, (long long)index, axis,
                             (long long)length);
                return -1;
            }
            if (index < 0)
                index += length;
            data += index * stride;
        }
        axis++;
    }
    for (; axis < PyArray_NDIM(x); axis++) {
        dims[out] = PyArray_DIM(x, axis);
        strides[out++] = PyArray_STRIDE(x, axis);
    }
    Py_INCREF(PyArray_DESCR(x));
    *view = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, PyArray_DESCR(x), node->ndim, dims, strides, data,
        PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (*view == NULL)
        return -1;
    Py_INCREF(x);
    if (PyArray_SetBaseObject(*view, (PyObject *)x)) {
        Py_CLEAR(*view);
        return -1;
    }
    return 0;
}

int @NAME@_subtensor(PyObject *const *cells, const void *data)
{
    const SympileSubtensor *node = data;
    const int n_indices = node->n_indices;
    PyArrayObject *indices[n_indices > 0 ? n_indices : 1];
    for (int k = 0; k < n_indices; k++)
        indices[k] = (PyArrayObject *)PyList_GET_ITEM(cells[1 + k], 0);
    PyArrayObject *view;
    if (@NAME@_view(node, (PyArrayObject *)PyList_GET_ITEM(cells[0], 0), indices, &view))
        return -1;
    sympile_store_output(cells[1 + n_indices], view);
    return 0;
}

int @NAME@_slice_length(PyObject *const *cells, const void *data)
{
    const SympileSliceLength *node = data;
    npy_int64 parts[3] = {0, 0, 1};
    const npy_int64 length = sympile_integer_value(
        (PyArrayObject *)PyList_GET_ITEM(cells[0], 0), 0);
    int input = 1;
    for (int k = 0; k < 3; k++) {
        if (node->given[k]) {
            /* PyList_GET_ITEM may read its argument twice: no side effect in it. */
            parts[k] = sympile_integer_value((PyArrayObject *)PyList_GET_ITEM(cells[input], 0),
                                             0);
            input++;
        }
    }
    if (parts[2] == 0) {
        PyErr_Format(PyExc_ValueError, "%s: slice step cannot be zero", node->op);
        return -1;
    }
    if (length < 0) {
        PyErr_Format(PyExc_ValueError, "%s: length should not be negative", node->op);
        return -1;
    }
    npy_int64 first;
    const npy_int64 count = sympile_slice_count(length, node->given[0], parts[0],
                                                node->given[1], parts[1], parts[2], &first);
    PyArrayObject *output = sympile_take_output(cells[input]);
    if (sympile_prepare_output(&output, 0, NULL, NPY_INT64) != 0)
        return -1;
    *(npy_int64 *)PyArray_DATA(output) = count;
    sympile_store_output(cells[input], output);
    return 0;
}
