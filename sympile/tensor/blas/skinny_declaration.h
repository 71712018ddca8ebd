int @name@(npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a, npy_intp a_row,
           npy_intp a_column, const @T@ *b, npy_intp b_row, npy_intp b_column, @T@ *c,
           npy_intp c_row, npy_intp c_column, int accumulate);
