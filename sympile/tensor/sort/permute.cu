/* PermuteAlongAxis on the device (sort_cuda.py): x and p C-contiguous (lines x n), in three
   launches (`stage`):
   0: seen[t] = 0 for every element;
   1: each entry e of p: outside [0, n) sets bit 0 of the error flag, else seen[line, e] is
      counted (an atomic add);
   2: an element seen other than once sets bit 1 (p is not a permutation along the axis);
      the gather out[line, i] = x[line, p[line, i]] (inverse: the scatter
      out[line, p[line, i]] = x[line, i]), entries out of range skipped. */
{
    int flag = 0;
    for (npy_int64 t = SYMPILE_GRID_START; t < total; t += SYMPILE_GRID_STEP) {
        if (stage == 0) {
            seen[t] = 0;
            continue;
        }
        const npy_int64 line = t / n, entry = (npy_int64)p[t];
        const int inside = entry >= 0 && entry < n;
        if (stage == 1) {
            if (!inside) {
                flag |= 1;
                continue;
            }
#ifdef __CUDACC_RTC__
            atomicAdd(&seen[line * n + entry], 1);
#else
            seen[line * n + entry] += 1;
#endif
            continue;
        }
        if (seen[t] != 1)
            flag |= 2;
        if (inside) {
            if (inverse)
                out[line * n + entry] = x[t];
            else
                out[t] = x[line * n + entry];
        }
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
