static void sympile_shape_text(char *text, size_t size, int ndim, const npy_intp *dims)
{
    /* A shape as Python prints a tuple: (), (3,), (2, 3). */
    size_t used = (size_t)snprintf(text, size, "(");
    for (int axis = 0; axis < ndim && used < size; ++axis)
        used += (size_t)snprintf(text + used, size - used, axis ? ", %lld" : "%lld",
                                 (long long)dims[axis]);
    if (used < size)
        snprintf(text + used, size - used, ndim == 1 ? ",)" : ")");
}
