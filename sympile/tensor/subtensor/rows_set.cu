/* x[index0, index1, ...] = y on the device (rows_cuda.py), in three launches (`stage`), so
   that where positions repeat the last one's value is written, as numpy writes them:
   0: winner[r] = -1 for every row r of x's indexed axes (flattened, lengths rows0..);
   1: for each broadcast position i, its row r (an entry out of range sets bit a of the
      error flag for axis a), winner[r] = max(winner[r], i) (an atomic max);
   2: for each element t of the region (i = t / inner), the position that won its row
      writes y's value there. out is a copy of x. */
{
    int flag = 0;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        if (stage == 0) {
            winner[t] = -1;
            continue;
        }
        const npy_int64 i = stage == 1 ? t : t / inner;
        @BROADCAST_COORDINATES@
        npy_int64 position = 0, row = 0;
        int bad = 0;
        @ROWS@
        if (bad) {
            flag |= bad;
            continue;
        }
        if (stage == 1) {
#ifdef __CUDACC_RTC__
            atomicMax((long long *)&winner[row], (long long)i);
#else
            if (winner[row] < i)
                winner[row] = i;
#endif
            continue;
        }
        if (winner[row] != i)
            continue;
        @COORDINATES@
        out[position + @OFFSET@] = y[@Y_BROADCAST_OFFSET@ + @Y_OFFSET@];
    }
    if (flag)
        SYMPILE_ERROR_OR(error, flag);
}
