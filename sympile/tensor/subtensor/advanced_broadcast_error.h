static void sympile_index_broadcast_error(const char *op, int count,
                                          PyArrayObject *const *arrays)
{
    char text[1024];
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof(text) - 64; ++i) {
        const int ndim = arrays[i] == NULL ? 0 : PyArray_NDIM(arrays[i]);
        used += snprintf(text + used, sizeof(text) - used, "%s(", i ? " " : "");
        for (int axis = 0; axis < ndim && used < sizeof(text) - 64; ++axis)
            used += snprintf(text + used, sizeof(text) - used, "%s%lld", axis ? "," : "",
                             (long long)PyArray_DIM(arrays[i], axis));
        used += snprintf(text + used, sizeof(text) - used, "%s)", ndim == 1 ? "," : "");
    }
    PyErr_Format(PyExc_IndexError, "%s: shape mismatch: indexing arrays could not be "
                 "broadcast together with shapes %s", op, text);
}
