/* Rows kernel, one block: `rows` rows x 2 vectors of c (the first `m0`, `m1` lanes of each
   when `masked`), from the block's packed a (row r of step p at packed[p * rows + r]) and b
   (row p at b + p * ldb). `rows` and `masked` are constants where it is inlined. */
@target@ static inline __attribute__((always_inline)) void sympile_skinny_rows_block_@s@(
    const int rows, const int masked, npy_intp k, const @T@ *restrict packed,
    const @T@ *restrict b, npy_intp ldb, @T@ *restrict c, npy_intp ldc, @T@ alpha,
    int accumulate, @M@ m0, @M@ m1)
{
    @V@ low[@rows@], high[@rows@];
#pragma GCC unroll 16
    for (int r = 0; r < rows; r++)
        low[r] = high[r] = sympile_skinny_zero_@s@();
    for (npy_intp p = 0; p < k; p++, b += ldb, packed += rows) {
        @V@ b0 = masked ? sympile_skinny_mload_@s@(b, m0) : sympile_skinny_load_@s@(b);
        @V@ b1 = masked ? sympile_skinny_mload_@s@(b + @W@, m1)
                        : sympile_skinny_load_@s@(b + @W@);
#pragma GCC unroll 16
        for (int r = 0; r < rows; r++) {
            @V@ x = sympile_skinny_set1_@s@(packed[r]);
            low[r] = sympile_skinny_fma_@s@(x, b0, low[r]);
            high[r] = sympile_skinny_fma_@s@(x, b1, high[r]);
        }
    }
    @V@ scale = sympile_skinny_set1_@s@(alpha);
#pragma GCC unroll 16
    for (int r = 0; r < rows; r++) {
        @T@ *line = c + r * ldc;
        @V@ v0 = sympile_skinny_mul_@s@(scale, low[r]), v1 = sympile_skinny_mul_@s@(scale, high[r]);
        if (masked) {
            if (accumulate) {
                v0 = sympile_skinny_add_@s@(sympile_skinny_mload_@s@(line, m0), v0);
                v1 = sympile_skinny_add_@s@(sympile_skinny_mload_@s@(line + @W@, m1), v1);
            }
            sympile_skinny_mstore_@s@(line, m0, v0);
            sympile_skinny_mstore_@s@(line + @W@, m1, v1);
        } else {
            if (accumulate) {
                v0 = sympile_skinny_add_@s@(sympile_skinny_load_@s@(line), v0);
                v1 = sympile_skinny_add_@s@(sympile_skinny_load_@s@(line + @W@), v1);
            }
            sympile_skinny_store_@s@(line, v0);
            sympile_skinny_store_@s@(line + @W@, v1);
        }
    }
}

/* The block of `rows` rows (1 to @rows@), with constant rows and masked. */
@target@ static void sympile_skinny_rows_any_@s@(
    int rows, int masked, npy_intp k, const @T@ *packed, const @T@ *b, npy_intp ldb, @T@ *c,
    npy_intp ldc, @T@ alpha, int accumulate, @M@ m0, @M@ m1)
{
    switch (2 * rows + masked) {
@rows_cases@
    }
}

/* The blocks of c in row blocks [top, bottom) x column blocks [left, right) by the rows
   kernel (see sympile_skinny_rows_@s@): the sums over steps [skip, skip + k) of the `total`
   that a was packed with (b starts at step skip). Column by column of blocks; when
   `by_rows`, row by row within groups of columns whose part of b fits in a quarter of an
   L2 cache (all of c's columns, for the update of a 1000 x 1000 weight at batch 60: c's
   rows then stream in order, where walking groups of columns that fit the L1 cache read
   64 floats of each of its rows at a time: 1.04 -> 0.85 ms with four such c in turn). */
@target@ static void sympile_skinny_rows_blocks_@s@(
    npy_intp top, npy_intp bottom, npy_intp left, npy_intp right, int by_rows, npy_intp m,
    npy_intp n, npy_intp k, npy_intp total, npy_intp skip, @T@ alpha, const @T@ *packed,
    const @T@ *b, npy_intp ldb, @T@ *c, npy_intp ldc, int accumulate)
{
    npy_intp blocks, base, extra;
    sympile_skinny_blocks(m, @rows@, &blocks, &base, &extra);
    if (!by_rows && bottom - top > 1) {
        /* A column of blocks: its columns of b, SYMPILE_SKINNY_PANEL bytes of steps at a
           time, copied into a contiguous panel that every block of rows then reads from
           the L1 cache (read in place, each step's two vectors lie in another page of b,
           which the prefetcher does not cross: 83 of 176 GFLOP/s on 60 x 1000 @ 1000 x
           1000). One block of rows reads b in place: the copy would not be read again
           (the 784-500-10 step at batch 10 took 10% longer with it). */
        _Alignas(64) @T@ panel[SYMPILE_SKINNY_PANEL / sizeof(@T@)];
        const npy_intp chunk = SYMPILE_SKINNY_PANEL / (2 * @W@ * (npy_intp)sizeof(@T@));
        for (npy_intp column = left; column < right; column++) {
            npy_intp j = column * 2 * @W@, remaining = n - j;
            int masked = remaining < 2 * @W@;
            size_t width = (size_t)(masked ? remaining : 2 * @W@) * sizeof(@T@);
            @M@ m0 = sympile_skinny_mask_@s@(
                masked ? (int)(remaining < @W@ ? remaining : @W@) : @W@);
            @M@ m1 = sympile_skinny_mask_@s@(
                masked ? (int)(remaining > @W@ ? remaining - @W@ : 0) : @W@);
            /* At least once: a thread with no steps still writes its zeros. */
            for (npy_intp step = 0; step == 0 || step < k; step += chunk) {
                npy_intp steps = k - step < chunk ? k - step : chunk;
                for (npy_intp p = 0; p < steps; p++)
                    memcpy(panel + p * 2 * @W@, b + (step + p) * ldb + j, width);
                /* The next panel's rows, a share before each block of rows, come from
                   memory while this panel is multiplied: a step's layers stream weights
                   that no cache holds from one product to the next (60 x 1000 @ 1000 x
                   1000, four such b in turn, 2 cores: 0.99 -> 0.88 ms). */
                npy_intp next = step + chunk < k ? step + chunk : 0;
                const @T@ *ahead = b + next * ldb + (next ? j : j + 2 * @W@);
                npy_intp ahead_steps = next || column + 1 < right
                    ? (k - next < chunk ? k - next : chunk) : 0;
                npy_intp share = (ahead_steps + bottom - top - 1) / (bottom - top), fetched = 0;
                for (npy_intp block = top; block < bottom; block++) {
                    for (; fetched < ahead_steps && fetched < (block - top + 1) * share; fetched++)
                        sympile_skinny_prefetch(ahead + fetched * ldb, 2 * @W@ * sizeof(@T@));
                    npy_intp rows = base + (block < extra);
                    npy_intp start = block * base + (block < extra ? block : extra);
                    sympile_skinny_rows_any_@s@((int)rows, masked, steps, packed + start * total
                                               + (skip + step) * rows, panel, 2 * @W@,
                                               c + start * ldc + j, ldc, alpha,
                                               accumulate || step > 0, m0, m1);
                }
            }
        }
        return;
    }
    npy_intp group = by_rows ? SYMPILE_SKINNY_L2 / (k * 2 * @W@ * (npy_intp)sizeof(@T@)) : 1;
    if (group < 1)
        group = 1;
    for (npy_intp first = left; first < right; first += group)
        for (npy_intp block = top; block < bottom; block++) {
            npy_intp rows = base + (block < extra);
            npy_intp start = block * base + (block < extra ? block : extra);
            for (npy_intp column = first; column < first + group && column < right; column++) {
                npy_intp j = column * 2 * @W@, remaining = n - j;
                int masked = remaining < 2 * @W@;
                @M@ m0 = sympile_skinny_mask_@s@(
                    masked ? (int)(remaining < @W@ ? remaining : @W@) : @W@);
                @M@ m1 = sympile_skinny_mask_@s@(
                    masked ? (int)(remaining > @W@ ? remaining - @W@ : 0) : @W@);
                sympile_skinny_rows_any_@s@((int)rows, masked, k,
                                           packed + start * total + skip * rows, b + j, ldb,
                                           c + start * ldc + j, ldc, alpha, accumulate, m0,
                                           m1);
            }
        }
}

/* c (m x n, rows ldc apart) = alpha * a @ b, or c += alpha * a @ b when accumulate, where
   a(i, p) = a[i * a_row + p * a_column] and b(p, j) = b[p * ldb + j]; on `threads`
   threads. Returns 0, or -1 (nothing written) when memory for the packed copy of a, or for
   the threads' partial sums, cannot be allocated.

   Threads split the rows of b (the weight matrix of a layer, in the forward product h @ W)
   or the rows of c (the weight matrix again, in its gradient's update W += h.T @ delta):
   a thread then reads and writes the same rows of W in both, from its own core's cache. Its
   sum over its rows of b is added to c by the threads together at the end. */
@target@ static int sympile_skinny_rows_@s@(
    npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a, npy_intp a_row,
    npy_intp a_column, const @T@ *b, npy_intp ldb, @T@ *c, npy_intp ldc, int accumulate,
    int threads)
{
    npy_intp blocks, base, extra, start = 0;
    npy_intp columns = (n + 2 * @W@ - 1) / (2 * @W@);
    /* With a short inner length, b's rows stay in cache: walk c row by row of blocks.
       Otherwise a column of blocks reads its columns of b from cache for every block of
       rows. */
    int by_rows = k <= @steps@ && m > @steps@;
    @T@ small[SYMPILE_SKINNY_STACK / sizeof(@T@)], *partial = NULL;
    @T@ *packed = (size_t)(m * k) <= sizeof small / sizeof(@T@)
        ? small : malloc((size_t)(m * k) * sizeof(@T@));
    if (packed == NULL)
        return -1;
    if (threads > 1 && !by_rows
            && (partial = malloc((size_t)((threads - 1) * m * n) * sizeof(@T@))) == NULL) {
        if (packed != small)
            free(packed);
        return -1;
    }
    /* Each block's rows of a, step by step: block rows x k from row `start` on. */
    sympile_skinny_blocks(m, @rows@, &blocks, &base, &extra);
    for (npy_intp block = 0; block < blocks; block++) {
        npy_intp rows = base + (block < extra);
        @T@ *target = packed + start * k;
        for (npy_intp p = 0; p < k; p++)
            for (npy_intp r = 0; r < rows; r++)
                *target++ = a[(start + r) * a_row + p * a_column];
        start += rows;
    }
#ifdef _OPENMP
    if (threads > 1 && by_rows) {
#pragma omp parallel num_threads(threads)
        {
            npy_intp count = omp_get_num_threads(), thread = omp_get_thread_num();
            sympile_skinny_rows_blocks_@s@(blocks * thread / count,
                                          blocks * (thread + 1) / count, 0, columns, 1, m,
                                          n, k, k, 0, alpha, packed, b, ldb, c, ldc,
                                          accumulate);
        }
    } else if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
            npy_intp count = omp_get_num_threads(), thread = omp_get_thread_num();
            npy_intp first = k * thread / count, last = k * (thread + 1) / count;
            /* Thread 0 writes c, the others their partial sums (m x n each). */
            @T@ *target = thread ? partial + (thread - 1) * m * n : c;
            npy_intp step = thread ? n : ldc;
            sympile_skinny_rows_blocks_@s@(0, blocks, 0, columns, 0, m, n, last - first, k,
                                          first, alpha, packed, b + first * ldb, ldb, target,
                                          step, thread ? 0 : accumulate);
#pragma omp barrier
            for (npy_intp i = m * thread / count; i < m * (thread + 1) / count; i++)
                for (npy_intp other = 1; other < count; other++) {
                    const @T@ *from = partial + ((other - 1) * m + i) * n;
                    @T@ *to = c + i * ldc;
                    for (npy_intp j = 0; j < n; j++)
                        to[j] += from[j];
                }
        }
    } else
#endif
        sympile_skinny_rows_blocks_@s@(0, blocks, 0, columns, by_rows, m, n, k, k, 0, alpha,
                                      packed, b, ldb, c, ldc, accumulate);
    free(partial);
    if (packed != small)
        free(packed);
    return 0;
}
