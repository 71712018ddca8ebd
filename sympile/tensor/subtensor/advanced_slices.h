static npy_intp sympile_slice_first_and_count(npy_intp length, int has_start,
                                              npy_int64 start, int has_stop, npy_int64 stop,
                                              npy_int64 step, npy_int64 *first)
{
    if (!has_start) start = step < 0 ? length - 1 : 0;
    else {
        if (start < 0) start += length;
        if (start < 0) start = step < 0 ? -1 : 0;
        else if (start >= length) start = step < 0 ? length - 1 : length;
    }
    if (!has_stop) stop = step < 0 ? -1 : length;
    else {
        if (stop < 0) stop += length;
        if (stop < 0) stop = step < 0 ? -1 : 0;
        else if (stop >= length) stop = step < 0 ? length - 1 : length;
    }
    *first = start;
    if (step < 0) return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
    return start < stop ? (stop - start - 1) / step + 1 : 0;
}
