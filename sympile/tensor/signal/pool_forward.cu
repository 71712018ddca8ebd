/* 2d pooling on the device, one thread per output element t (planes x out_rows x
   out_cols, C-contiguous) over a C-contiguous input, with pool.c's arithmetic: the maximum
   (NaN wins, as in numpy's max) or the sum in @T@, divided in double for the averages. */
{
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 c = t % out_cols, r = (t / out_cols) % out_rows;
        const npy_int64 plane = t / (out_cols * out_rows);
        const @T@ *in = x + plane * rows * cols;
        const sympile_pool_window w = sympile_pool_window_at(r, c, rows, cols, ws0, ws1, s0,
                                                             s1, p0, p1, mode);
        @T@ value;
        if (mode == 0) {
            int nan = 0;
            value = -(@T@)INFINITY;
            for (npy_int64 i = w.row0; i < w.row1; ++i)
                for (npy_int64 j = w.col0; j < w.col1; ++j) {
                    const @T@ e = in[i * cols + j];
                    value = e > value ? e : value;
                    nan |= e != e;
                }
            if (nan)
                value = (@T@)NAN;
        } else {
            value = 0;
            for (npy_int64 i = w.row0; i < w.row1; ++i)
                for (npy_int64 j = w.col0; j < w.col1; ++j)
                    value += in[i * cols + j];
            if (mode >= 2)
                value = (@T@)((double)value / (double)w.divisor);
        }
        out[t] = value;
    }
}
