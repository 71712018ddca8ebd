/* Argmax / argmin on the device, one thread per output o: the position, in the C-order
   numbering of the reduced coordinates, of the first extreme of its R values (the first
   NaN when there is one, numpy's rule), as argextreme.c gives it. */
{
    for (npy_int64 o = SYMPILE_GRID_START; o < n_out; o += SYMPILE_GRID_STEP) {
        @KEPT_COORDINATES@
        const npy_int64 base = @KEPT_OFFSET@;
        @V@ best = 0;
        npy_int64 best_position = 0;
        for (npy_int64 position = 0; position < R; ++position) {
            @REDUCED_COORDINATES@
            const @V@ value = @LOAD@;
            if (position == 0 || (@BETTER@)) {
                best = value;
                best_position = position;
            }
        }
        out[o] = best_position;
    }
}
