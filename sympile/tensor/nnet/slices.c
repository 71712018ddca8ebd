static int @name@(PyArrayObject *const *arrays, int axis, npy_intp rows, npy_intp length)
{
    const int count = @count@;
    const int ndim = PyArray_NDIM(arrays[0]);
    const npy_intp *dims = PyArray_DIMS(arrays[0]);
    char *data[@count@];
    npy_intp steps[@count@];
    @T@ *slices[@count@];
    int consecutive = axis == ndim - 1, buffered = 0;
    for (int a = 0; a < count; ++a) {
        data[a] = PyArray_BYTES(arrays[a]);
        steps[a] = PyArray_STRIDES(arrays[a])[axis];
        slices[a] = NULL;
        buffered += length > 1 && steps[a] != (npy_intp)sizeof(@T@);
        consecutive = consecutive && PyArray_IS_C_CONTIGUOUS(arrays[a]);
    }
    @T@ *buffer = NULL;
    if (buffered) {
        buffer = (@T@ *)malloc((size_t)buffered * (size_t)length * sizeof(@T@));
        if (buffer == NULL) return -1;
        for (int a = 0, used = 0; a < count; ++a)
            if (length > 1 && steps[a] != (npy_intp)sizeof(@T@))
                slices[a] = buffer + (npy_intp)(used++) * length;
    }
    for (npy_intp row = 0; row < rows; ++row) {
        char *starts[@count@];
        for (int a = 0; a < count; ++a)
            starts[a] = data[a] + (consecutive ? row * length * (npy_intp)sizeof(@T@) : 0);
        if (!consecutive) {
            npy_intp rest = row;
            for (int other = ndim - 1; other >= 0; --other) {
                if (other == axis) continue;
                const npy_intp index = rest % dims[other];
                rest /= dims[other];
                for (int a = 0; a < count; ++a)
                    starts[a] += index * PyArray_STRIDES(arrays[a])[other];
            }
        }
        @T@ *pointers[@count@];
        for (int a = 0; a < count; ++a) {
            pointers[a] = slices[a] ? slices[a] : (@T@ *)starts[a];
            if (slices[a] && a < count - 1)
                for (npy_intp k = 0; k < length; ++k)
                    slices[a][k] = *(@T@ *)(starts[a] + k * steps[a]);
        }
        @call@
        if (slices[count - 1])
            for (npy_intp k = 0; k < length; ++k)
                *(@T@ *)(starts[count - 1] + k * steps[count - 1]) = slices[count - 1][k];
    }
    free(buffer);
    return 0;
}
