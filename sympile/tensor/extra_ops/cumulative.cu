/* cumsum and cumprod along the last axis of C-contiguous lines (lines x n) on the device
   (cumulative_cuda.py): one thread per line, accumulating in order as numpy does, so the
   result has numpy's bits; each element is converted to the output's dtype first (numpy's
   int8 -> int64), and a float16 result is rounded to float16 after each step. */
{
    for (npy_int64 line = SYMPILE_GRID_START; line < lines; line += SYMPILE_GRID_STEP) {
        @V@ total = 0;
        for (npy_int64 i = 0; i < n; ++i) {
            const @V@ value = (@V@)@LOAD@;
            total = i ? @STEP@ : value;
            out[line * n + i] = @STORE@;
            total = @RELOAD@;
        }
    }
}
