/* x[index0, index1, ...] on the device: integer arrays on x's first axes (an embedding
   lookup x[index], a pick x[arange(n), y]), broadcast together to the shape b_n0.., one
   thread per output element t: the broadcast position i = t / inner (coordinates b0..), each
   array's entry there (its strides are 0 along the axes it is broadcast on), the element of
   x at those rows and the inner coordinates (rest = t % inner) away. Negative entries count
   from the end, as in numpy; an entry outside [-rows, rows) of axis a sets bit a of the
   error flag. The output is C-contiguous. */
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
        out[t] = x[position + @OFFSET@];
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
