/* The fused cross-entropy's gradient on the device, one thread per element (i, j):
   (sm[i, j] - (j == y[i])) * dloss[i] in the output's type, as the CPU computes it (the
   target's probability less 1, then the product). A target outside [0, classes) sets the
   error flag. */
{
    int flag = 0;
    for (npy_int64 t = SYMPILE_GRID_START; t < rows * classes; t += SYMPILE_GRID_STEP) {
        const npy_int64 i = t / classes, j = t % classes;
        const npy_int64 target = (npy_int64)y[i * y_s0];
        if (target < 0 || target >= classes) {
            flag = 1;
            continue;
        }
        @T@ value = (@T@)sm[i * sm_s0 + j * sm_s1];
        if (j == target)
            value -= 1;
        out[t] = value * (@T@)g[i * g_s0];
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
