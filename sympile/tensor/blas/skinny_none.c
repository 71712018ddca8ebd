/* Where the kernels cannot be built, or config.blas_skinny is 'off': every product goes to
   BLAS. */
static int @name@(npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a,
                  npy_intp a_row, npy_intp a_column, const @T@ *b, npy_intp b_row,
                  npy_intp b_column, @T@ *c, npy_intp c_row, npy_intp c_column,
                  int accumulate)
{
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)a_row, (void)a_column, (void)b;
    (void)b_row, (void)b_column, (void)c, (void)c_row, (void)c_column, (void)accumulate;
    return 0;
}
