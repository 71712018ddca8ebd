/* c = alpha * a @ b + beta * c for an m x k a, k x n b and m x n c (m, n, k > 0, at most
   INT_MAX), beta 0 (c is then not read) or 1, by one @p@dot (m = n = 1), @p@gemv (m or n
   is 1), @p@ger (k = 1 and beta = 1) or @p@gemm call. */
static void sympile_blas_multiply_one_@dtype@(const sympile_blas_matrix *a,
                                              const sympile_blas_matrix *b, @type@ alpha,
                                              @type@ beta, const sympile_blas_matrix *c)
{
    int m = (int)a->rows, n = (int)b->cols, k = (int)a->cols;
    if (m == 1 && n == 1) {
        int step_a = SYMPILE_BLAS_COLUMN_STEP(a), step_b = SYMPILE_BLAS_ROW_STEP(b);
        @type@ *target = (@type@ *)c->data;
        @type@ product = alpha * sympile_blas_@p@dot(&k, (@type@ *)a->data, &step_a,
                                                     (@type@ *)b->data, &step_b);
        *target = beta == 0 ? product : *target + product;
    } else if (m == 1 || n == 1) {
        /* A column c = a @ b, or a row c = (b^T @ a^T)^T: matrix @ vector. BLAS sees the
           column-major matrix in the matrix's memory: its transpose when it is row-major. */
        const sympile_blas_matrix *matrix = n == 1 ? a : b, *vector = n == 1 ? b : a;
        int step_x = n == 1 ? SYMPILE_BLAS_ROW_STEP(vector) : SYMPILE_BLAS_COLUMN_STEP(vector);
        int step_y = n == 1 ? SYMPILE_BLAS_ROW_STEP(c) : SYMPILE_BLAS_COLUMN_STEP(c);
        int rows = (int)(matrix->row_major ? matrix->cols : matrix->rows);
        int cols = (int)(matrix->row_major ? matrix->rows : matrix->cols), ld = (int)matrix->ld;
        char trans = matrix->row_major == (n == 1) ? 'T' : 'N';
        if (beta == 0) /* some BLAS scale y by beta first, and 0 * nan is nan */
            for (int i = 0; i < (n == 1 ? m : n); i++)
                ((@type@ *)c->data)[(npy_intp)i * step_y] = 0;
        sympile_blas_@p@gemv(&trans, &rows, &cols, &alpha, (@type@ *)matrix->data, &ld,
                             (@type@ *)vector->data, &step_x, &beta, (@type@ *)c->data,
                             &step_y);
    } else if (k == 1 && beta == 1) {
        /* c += alpha * outer(a, b); a row-major c is the column-major c^T += alpha b a^T. */
        int step_a = SYMPILE_BLAS_ROW_STEP(a), step_b = SYMPILE_BLAS_COLUMN_STEP(b);
        int ld = (int)c->ld;
        if ((c->row_major ? n : m) < SYMPILE_BLAS_SHORT_LINE) {
            /* Short lines (rows of a row-major c, columns of a column-major one): ger makes
               one axpy call per line, which costs more than the line's arithmetic. */
            if (c->row_major)
                sympile_blas_short_lines_@dtype@(m, n, alpha, (@type@ *)a->data, step_a,
                                                 (@type@ *)b->data, step_b,
                                                 (@type@ *)c->data, ld);
            else
                sympile_blas_short_lines_@dtype@(n, m, alpha, (@type@ *)b->data, step_b,
                                                 (@type@ *)a->data, step_a,
                                                 (@type@ *)c->data, ld);
        } else if (c->row_major)
            sympile_blas_@p@ger(&n, &m, &alpha, (@type@ *)b->data, &step_b, (@type@ *)a->data,
                                &step_a, (@type@ *)c->data, &ld);
        else
            sympile_blas_@p@ger(&m, &n, &alpha, (@type@ *)a->data, &step_a, (@type@ *)b->data,
                                &step_b, (@type@ *)c->data, &ld);
    } else {
        int lda = (int)a->ld, ldb = (int)b->ld, ldc = (int)c->ld;
        if (c->row_major) {
            /* Row-major c = a @ b is column-major c^T = b^T @ a^T. */
            char trans_b = b->row_major ? 'N' : 'T', trans_a = a->row_major ? 'N' : 'T';
            sympile_blas_@p@gemm(&trans_b, &trans_a, &n, &m, &k, &alpha, (@type@ *)b->data,
                                 &ldb, (@type@ *)a->data, &lda, &beta, (@type@ *)c->data,
                                 &ldc);
        } else {
            char trans_a = a->row_major ? 'T' : 'N', trans_b = b->row_major ? 'T' : 'N';
            sympile_blas_@p@gemm(&trans_a, &trans_b, &m, &n, &k, &alpha, (@type@ *)a->data,
                                 &lda, (@type@ *)b->data, &ldb, &beta, (@type@ *)c->data,
                                 &ldc);
        }
    }
}

/* sympile_blas_multiply_one, or a skinny kernel in place of gemm (see
   sympile.tensor.blas.skinny); a large BLAS call is split among OpenMP threads, each
   calling the library, on one thread, for a band of c (see below). */
static void sympile_blas_multiply_@dtype@(const sympile_blas_matrix *a,
                                          const sympile_blas_matrix *b, @type@ alpha,
                                          @type@ beta, const sympile_blas_matrix *c)
{
    npy_intp m = a->rows, n = b->cols, k = a->cols;
    if (m > 1 && n > 1 && !(k == 1 && beta == 1)
            && @skinny@(m, n, k, alpha, (const @type@ *)a->data, SYMPILE_BLAS_ROW_STEP(a),
                        SYMPILE_BLAS_COLUMN_STEP(a), (const @type@ *)b->data,
                        SYMPILE_BLAS_ROW_STEP(b), SYMPILE_BLAS_COLUMN_STEP(b),
                        (@type@ *)c->data, SYMPILE_BLAS_ROW_STEP(c),
                        SYMPILE_BLAS_COLUMN_STEP(c), beta != 0))
        return;
    int saved, threads = sympile_blas_threads_begin((void *)sympile_blas_@p@gemm,
                                                    (double)m * n * k, &saved);
#ifdef _OPENMP
    if (threads > 1 && (m > 1 || n > 1)) {
        /* Bands of c's outer dimension (its rows when row-major), so that each thread writes
           lines of memory of its own; its inner dimension only when the outer one is too
           short to share (a row of c), in bands of whole cache lines. Column bands of a
           row-major c made every row's middle line bounce between the cores: a rank-one
           update of a 1000 x 1000 float32 W took 100 us on two threads, 86 on one. */
        int by_columns = c->row_major ? m < 2 * threads : n >= 2 * threads;
        int inner = by_columns == c->row_major;
        npy_intp line = inner ? 64 / (npy_intp)sizeof(@type@) : 1;
#pragma omp parallel num_threads(threads)
        {
            npy_intp count = omp_get_num_threads(), thread = omp_get_thread_num();
            npy_intp length = by_columns ? n : m, lines = (length + line - 1) / line;
            npy_intp first = lines * thread / count * line;
            npy_intp last = thread + 1 == count ? length : lines * (thread + 1) / count * line;
            sympile_blas_matrix part_a = *a, part_b = *b, part_c = *c;
            if (by_columns) {
                part_b.data += first * SYMPILE_BLAS_COLUMN_STEP(b) * (npy_intp)sizeof(@type@);
                part_c.data += first * SYMPILE_BLAS_COLUMN_STEP(c) * (npy_intp)sizeof(@type@);
                part_b.cols = part_c.cols = last - first;
            } else {
                part_a.data += first * SYMPILE_BLAS_ROW_STEP(a) * (npy_intp)sizeof(@type@);
                part_c.data += first * SYMPILE_BLAS_ROW_STEP(c) * (npy_intp)sizeof(@type@);
                part_a.rows = part_c.rows = last - first;
            }
            if (last > first)
                sympile_blas_multiply_one_@dtype@(&part_a, &part_b, alpha, beta, &part_c);
        }
    } else
#endif
        sympile_blas_multiply_one_@dtype@(a, b, alpha, beta, c);
    (void)threads;
    sympile_blas_threads_restore(saved);
}
