/* Dot kernel, one block: c[r, q] for r < rows, q < columns (at most @dot_cols@) of
   alpha * sum_p a[r * lda + p] w[q * ldw + p]; `rows` is a constant where it is inlined. */
@target@ static inline __attribute__((always_inline)) void sympile_skinny_dot_block_@s@(
    const int rows, int columns, npy_intp k, const @T@ *a, npy_intp lda, const @T@ *w,
    npy_intp ldw, @T@ *c, npy_intp ldc, @T@ alpha, int accumulate)
{
    @V@ sums[@dot_rows@][@dot_cols@];
    const @T@ *lines[@dot_cols@];
    /* Past the last column, read the last one again (its sums are not stored). */
#pragma GCC unroll 16
    for (int q = 0; q < @dot_cols@; q++)
        lines[q] = w + (q < columns ? q : columns - 1) * ldw;
#pragma GCC unroll 16
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 16
        for (int q = 0; q < @dot_cols@; q++)
            sums[r][q] = sympile_skinny_zero_@s@();
    npy_intp p = 0;
    for (; p + @W@ <= k; p += @W@) {
        @V@ y[@dot_cols@];
#pragma GCC unroll 16
        for (int q = 0; q < @dot_cols@; q++)
            y[q] = sympile_skinny_load_@s@(lines[q] + p);
#pragma GCC unroll 16
        for (int r = 0; r < rows; r++) {
            @V@ x = sympile_skinny_load_@s@(a + r * lda + p);
#pragma GCC unroll 16
            for (int q = 0; q < @dot_cols@; q++)
                sums[r][q] = sympile_skinny_fma_@s@(x, y[q], sums[r][q]);
        }
    }
    if (p < k) {
        @M@ m = sympile_skinny_mask_@s@((int)(k - p));
        @V@ y[@dot_cols@];
#pragma GCC unroll 16
        for (int q = 0; q < @dot_cols@; q++)
            y[q] = sympile_skinny_mload_@s@(lines[q] + p, m);
#pragma GCC unroll 16
        for (int r = 0; r < rows; r++) {
            @V@ x = sympile_skinny_mload_@s@(a + r * lda + p, m);
#pragma GCC unroll 16
            for (int q = 0; q < @dot_cols@; q++)
                sums[r][q] = sympile_skinny_fma_@s@(x, y[q], sums[r][q]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < rows; r++)
        for (int q = 0; q < columns; q++) {
            @T@ value = alpha * sympile_skinny_sum_@s@(sums[r][q]);
            c[r * ldc + q] = accumulate ? c[r * ldc + q] + value : value;
        }
}

@target@ static void sympile_skinny_dot_any_@s@(
    int rows, int columns, npy_intp k, const @T@ *a, npy_intp lda, const @T@ *w, npy_intp ldw,
    @T@ *c, npy_intp ldc, @T@ alpha, int accumulate)
{
    switch (rows) {
@dot_cases@
    }
}

/* The column blocks [first, last) of c by the dot kernel (see sympile_skinny_dot_@s@). */
@target@ static void sympile_skinny_dot_columns_@s@(
    npy_intp first, npy_intp last, npy_intp m, npy_intp n, npy_intp k, @T@ alpha,
    const @T@ *a, npy_intp lda, const @T@ *w, npy_intp ldw, @T@ *c, npy_intp ldc,
    int accumulate)
{
    for (npy_intp column = first; column < last; column++) {
        npy_intp j = column * @dot_cols@;
        int width = (int)(n - j < @dot_cols@ ? n - j : @dot_cols@);
        for (npy_intp start = 0; start < m; start += @dot_rows@) {
            npy_intp rows = m - start < @dot_rows@ ? m - start : @dot_rows@;
            sympile_skinny_dot_any_@s@((int)rows, width, k, a + start * lda, lda, w + j * ldw,
                                      ldw, c + start * ldc + j, ldc, alpha, accumulate);
        }
    }
}

/* c (m x n, rows ldc apart) = alpha * a @ w.T, or c += alpha * a @ w.T when accumulate,
   for a (m x k) and w (n x k) with contiguous rows lda and ldw apart; on `threads`
   threads. */
@target@ static void sympile_skinny_dot_@s@(
    npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a, npy_intp lda, const @T@ *w,
    npy_intp ldw, @T@ *c, npy_intp ldc, int accumulate, int threads)
{
    npy_intp columns = (n + @dot_cols@ - 1) / @dot_cols@;
#ifdef _OPENMP
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
            npy_intp count = omp_get_num_threads(), thread = omp_get_thread_num();
            sympile_skinny_dot_columns_@s@(columns * thread / count,
                                          columns * (thread + 1) / count, m, n, k, alpha, a,
                                          lda, w, ldw, c, ldc, accumulate);
        }
    } else
#endif
        sympile_skinny_dot_columns_@s@(0, columns, m, n, k, alpha, a, lda, w, ldw, c, ldc,
                                      accumulate);
    (void)threads;
}
