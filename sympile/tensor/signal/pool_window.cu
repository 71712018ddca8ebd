/* The window of 2d pooling's output (r, c) on the device (pool_cuda.py), as pool.c's
   sympile_pool_window_of: it spans [r s0, min(r s0 + ws0, rows + 2 p0)) of the padded
   input's rows, the same in columns; its input elements are those shifted by -p and clipped
   to the input. The divisor of the averages: the window's size within the padded input
   (mode 2, average_inc_pad) or within the input (mode 3, average_exc_pad). */
typedef struct {
    npy_int64 row0, row1, col0, col1, divisor;
} sympile_pool_window;

static inline sympile_pool_window sympile_pool_window_at(
    const npy_int64 r, const npy_int64 c, const npy_int64 rows, const npy_int64 cols,
    const npy_int64 ws0, const npy_int64 ws1, const npy_int64 s0, const npy_int64 s1,
    const npy_int64 p0, const npy_int64 p1, const npy_int64 mode)
{
    sympile_pool_window w;
    const npy_int64 r_start = r * s0, c_start = c * s1;
    const npy_int64 r_end = r_start + ws0 < rows + 2 * p0 ? r_start + ws0 : rows + 2 * p0;
    const npy_int64 c_end = c_start + ws1 < cols + 2 * p1 ? c_start + ws1 : cols + 2 * p1;
    w.row0 = r_start - p0 > 0 ? r_start - p0 : 0;
    w.col0 = c_start - p1 > 0 ? c_start - p1 : 0;
    w.row1 = r_end - p0 < rows ? r_end - p0 : rows;
    w.col1 = c_end - p1 < cols ? c_end - p1 : cols;
    w.divisor = mode == 2 ? (r_end - r_start) * (c_end - c_start)
                          : (w.row1 - w.row0) * (w.col1 - w.col0);
    return w;
}
