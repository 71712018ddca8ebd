/* The gradient of 2d pooling on the device, one thread per input element t (planes x rows
   x cols, C-contiguous): the sum, over the windows holding it in pool.c's order (rows, then
   columns), of the window's gz where the element equals the window's maximum (mode 0) or of
   gz over the window (sum and averages, divided in double). No two threads write one
   element, so no atomics. */
{
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 j = t % cols, i = (t / cols) % rows;
        const npy_int64 plane = t / (cols * rows);
        /* The windows r with r s0 <= i + p0 < r s0 + ws0, the same for columns. */
        const npy_int64 r_low = i + p0 - ws0 + 1 <= 0 ? 0 : (i + p0 - ws0 + s0) / s0;
        const npy_int64 c_low = j + p1 - ws1 + 1 <= 0 ? 0 : (j + p1 - ws1 + s1) / s1;
        const npy_int64 r_high = (i + p0) / s0 < out_rows - 1 ? (i + p0) / s0 : out_rows - 1;
        const npy_int64 c_high = (j + p1) / s1 < out_cols - 1 ? (j + p1) / s1 : out_cols - 1;
        const npy_int64 first = plane * out_rows * out_cols;
        const @T@ value = mode == 0 ? x[t] : (@T@)0;
        @T@ sum = 0;
        for (npy_int64 r = r_low; r <= r_high; ++r)
            for (npy_int64 c = c_low; c <= c_high; ++c) {
                const npy_int64 o = first + r * out_cols + c;
                if (mode == 0) {
                    if (value == maxout[o])
                        sum += gz[o];
                } else if (mode == 1) {
                    sum += gz[o];
                } else {
                    const sympile_pool_window w = sympile_pool_window_at(
                        r, c, rows, cols, ws0, ws1, s0, s1, p0, p1, mode);
                    sum += (@T@)((double)gz[o] / (double)w.divisor);
                }
            }
        gx[t] = sum;
    }
}
