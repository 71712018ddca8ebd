/* x[index] on axis 0 on the device (an embedding lookup), one thread per output element t:
   the index entry i = t / inner (the index is C-contiguous), the element of x's row inner
   coordinates (rest = t % inner) away. Negative entries count from the end, as in numpy;
   an entry outside [-rows, rows) sets the error flag. The output is C-contiguous. */
{
    int flag = 0;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 i = t / inner;
        const npy_int64 row = sympile_index_row((npy_int64)index[i], rows);
        if (row < 0) {
            flag = 1;
            continue;
        }
        @COORDINATES@
        out[t] = x[row * x_s0 + @OFFSET@];
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
