/* c = alpha * a @ b (+ c when accumulate) by a kernel above, in the layout given by element
   steps: a(i, p) at a[i * a_row + p * a_column], b(p, j) at b[p * b_row + j * b_column],
   c(i, j) at c[i * c_row + j * c_column], one step of c being 1. Returns 1 when done, 0
   when the product is left to BLAS (no kernel for this CPU or layout, not skinny, out of
   memory). */
int @name@(npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a, npy_intp a_row,
           npy_intp a_column, const @T@ *b, npy_intp b_row, npy_intp b_column, @T@ *c,
           npy_intp c_row, npy_intp c_column, int accumulate)
{
    int isa = sympile_skinny_isa();
    if (isa == 0)
        return 0;
    if (c_column != 1) {
        /* c.T = b.T @ a.T, whose result has contiguous rows. */
        const @T@ *swap = a;
        npy_intp length = m, row = a_row, column = a_column;
        a = b, a_row = b_column, a_column = b_row;
        b = swap, b_row = column, b_column = row;
        m = n, n = length, c_row = c_column;
    }
    if (m > @rows_max@ && k > @steps@)
        return 0;
    if (n < 2 * @lanes@ && !(b_row == 1 && a_column == 1 && k >= @lanes@ && n >= 4))
        /* Too few columns to fill the rows kernel's vectors. */
        return 0;
    int threads = sympile_skinny_threads((double)m * n * k);
    if (b_row == 1 && a_column == 1 && m <= @rows_max@ && k >= @lanes@ && n >= 4) {
        @dot@(m, n, k, alpha, a, a_row, b, b_column, c, c_row, accumulate, threads);
        return 1;
    }
    /* The rows kernel reads b's rows: b of another layout is copied row by row first (k x
       n elements, against the product's m x k x n multiply-adds). */
    @T@ *rows = NULL;
    if (b_column != 1) {
        if ((rows = malloc((size_t)(k * n) * sizeof(@T@))) == NULL)
            return 0;
        for (npy_intp p = 0; p < k; p++)
            for (npy_intp j = 0; j < n; j++)
                rows[p * n + j] = b[p * b_row + j * b_column];
        b = rows, b_row = n;
    }
    int status = @rows@(m, n, k, alpha, a, a_row, a_column, b, b_row, c, c_row, accumulate,
                        threads);
    free(rows);
    return status == 0;
}
