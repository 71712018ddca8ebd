/* The fused cross-entropy's loss on the device, one thread per row i: the log-probability of
   the target class, (x[i, y[i]] - peak) - log(sum), negated, with peak the row's maximum (0
   where it is not finite) and sum the row's sum of exp(x - peak), as the CPU computes it. A
   target outside [0, classes) sets the error flag. */
{
    int flag = 0;
    for (npy_int64 i = SYMPILE_GRID_START; i < rows; i += SYMPILE_GRID_STEP) {
        const npy_int64 target = (npy_int64)y[i * y_s0];
        if (target < 0 || target >= classes) {
            flag = 1;
            continue;
        }
        const @T@ peak = m[i * m_s0];
        const @T@ shift = isfinite(peak) ? peak : (@T@)0;
        loss[i] = -((x[i * x_s0 + target * x_s1] - shift) - log@f@(s[i * s_s0]));
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
