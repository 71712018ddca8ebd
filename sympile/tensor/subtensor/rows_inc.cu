/* x[index] += y on axis 0 on the device for a vector index, one thread per element of the
   region (index entry i, inner coordinates of t % inner): an atomic add, so an entry that
   repeats adds every occurrence (numpy.add.at). Negative entries count from the end; an
   entry outside [-rows, rows) sets the error flag. out is a copy of x. */
{
    int flag = 0;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 i = t / inner;
        const npy_int64 row = sympile_index_row((npy_int64)index[i * index_s0], rows);
        if (row < 0) {
            flag = 1;
            continue;
        }
        @COORDINATES@
        @T@ *const target = &out[row * out_s0 + @OFFSET@];
        const @T@ value = y[i * y_s0 + @Y_OFFSET@];
#ifdef __CUDACC_RTC__
        atomicAdd((@ATOMIC_T@ *)target, (@ATOMIC_T@)value);
#else
        *target += value;
#endif
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
