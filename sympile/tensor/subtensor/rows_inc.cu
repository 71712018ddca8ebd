/* x[index0, index1, ...] += y on the device: integer arrays on x's first axes, broadcast
   together to the shape b_n0.., one thread per element of the region (its broadcast
   position i = t / inner with coordinates b0.., its inner coordinates from t % inner): an
   atomic add, so a position that repeats adds every occurrence (numpy.add.at). y is read
   broadcast to the region (strides 0 where it broadcasts). Negative entries count from the
   end; an entry outside [-rows, rows) of axis a sets bit a of the error flag. out is a copy
   of x. */
{
    int flag = 0;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 i = t / inner;
        @BROADCAST_COORDINATES@
        npy_int64 position = 0;
        int bad = 0;
        @ROWS@
        if (bad) {
            flag |= bad;
            continue;
        }
        @COORDINATES@
        @T@ *const target = &out[position + @OFFSET@];
        const @T@ value = y[@Y_BROADCAST_OFFSET@ + @Y_OFFSET@];
#ifdef __CUDACC_RTC__
        atomicAdd((@ATOMIC_T@ *)target, (@ATOMIC_T@)value);
#else
        *target += value;
#endif
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
