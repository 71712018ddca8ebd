"""Register-blocked C kernels for the skinny products of small-batch training, used by
sympile.tensor.blas.blas_c in place of BLAS's gemm where they are faster.

A minibatch of b examples makes products whose result has b rows (the forward h @ W and the
backward delta @ W.T) or whose inner length is b (the weight gradient h.T @ delta). BLAS's
gemm packs its operands into panels on every call, which a wide-and-short product does not
repay: on the MLP's 10 x 784 @ 784 x 500 (AVX-512, 2 cores) scipy's OpenBLAS reached 47
GFLOP/s, numpy's 65 and XLA's 41 to 92; these kernels 136. They read the operands in place
and keep a block of the result in registers for the whole inner loop:

- rows: c[i, j] = sum_p a(i, p) b[p, j] with b's rows contiguous (b of another layout is
  copied by rows first), a any strides (packed per block of rows first): a block of R rows
  x 2 vectors of c, each element of a broadcast and multiplied by two vectors of b's row p.
  Used when c has few rows (b then streams through once per block of rows) or the inner
  length is short (b stays in cache; c is walked by rows within groups of columns whose
  part of b fits the L1 cache).
- dot: c[i, j] = sum_p a[i, p] w[j, p] with both contiguous along p (a @ W.T): a block of
  R rows of a x Q rows of W, accumulated as vectors along p and summed at the end.

Products whose c has fewer columns than two vectors' lanes (a 10-class output layer) stay
with BLAS, which wastes no lanes there. Each kernel is compiled for AVX-512 and for AVX2 with
FMA, picked when the module loads (config.blas_skinny); other CPUs use BLAS.

Threads (OpenMP, above config.blas_parallel_minsize multiply-adds) split the rows of the
layer's weight matrix W in all three products: the steps of h @ W (each thread sums over its
rows of W, the partial sums added at the end), the rows of c in W += h.T @ delta, the
columns of c (rows of W) in delta @ W.T. A thread then finds its part of W in its own core's
cache from one product to the next: split by columns in the forward product instead, a
forward product and an update took 40% longer together than apart.

Sums run in order along p within each lane (the dot kernel then adds its lanes, the threads
their partial sums), as BLAS's kernels do; alpha scales the finished sum.
"""

from __future__ import annotations

import functools
import hashlib
import platform

__all__ = ["SKINNY_ROWS", "SKINNY_STEPS", "skinny_code"]

# A product goes to these kernels when c has at most SKINNY_ROWS rows, or (rows kernel) the
# inner length is at most SKINNY_STEPS. Measured on AVX-512 (2 cores, float32, k = n =
# 1000): even with gemm at 128 rows of c and at 256, ahead up to 128; with a short inner
# length ahead at 60 steps, behind at 128 (c of 1000 x 1000).
SKINNY_ROWS = 128
SKINNY_STEPS = 64

# Per instruction set: the target attribute, the run-time check, the most rows of c in a
# block of the rows kernel (2 vectors per row, plus 2 of b and 1 broadcast, in the vector
# registers), and the dot kernel's block (rows of a, rows of W).
_ISAS = {
    "avx512": {"target": "avx512f,avx512dq,avx512vl,avx2,fma",
               "check": '__builtin_cpu_supports("avx512f") && '
                        '__builtin_cpu_supports("avx512dq")',
               "rows": 12, "dot_rows": 5, "dot_cols": 4},
    "avx2": {"target": "avx2,fma",
             "check": '__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")',
             "rows": 6, "dot_rows": 3, "dot_cols": 3},
}


def _primitives(isa: str, dtype: str) -> dict[str, object]:
    """The vector primitives of (instruction set, dtype): the vector and mask types, the
    lanes, and C expressions of p (pointer), m (mask), v, x, y, z (vectors), s (scalar), n
    (lanes)."""
    bits = 512 if isa == "avx512" else 256
    lanes = bits // (32 if dtype == "float32" else 64)
    suffix = "ps" if dtype == "float32" else "pd"
    prefix = f"_mm{bits}"
    vector = f"__m{bits}" + ("" if dtype == "float32" else "d")
    primitives: dict[str, object] = {
        "V": vector, "W": lanes,
        "load": f"{prefix}_loadu_{suffix}(p)", "store": f"{prefix}_storeu_{suffix}(p, v)",
        "set1": f"{prefix}_set1_{suffix}(s)", "zero": f"{prefix}_setzero_{suffix}()",
        "fma": f"{prefix}_fmadd_{suffix}(x, y, z)", "mul": f"{prefix}_mul_{suffix}(x, y)",
        "add": f"{prefix}_add_{suffix}(x, y)"}
    if isa == "avx512":
        mask = f"__mmask{lanes}"
        primitives.update({
            "M": mask, "mload": f"{prefix}_maskz_loadu_{suffix}(m, p)",
            "mstore": f"{prefix}_mask_storeu_{suffix}(p, m, v)",
            "sum": f"{prefix}_reduce_add_{suffix}(v)",
            "mask": f"({mask})(n >= {lanes} ? 0x{(1 << lanes) - 1:X}u : (1u << n) - 1)"})
    else:
        # Masks are lanes of all ones, loaded from a table of ones then zeros.
        table = "sympile_skinny_mask32" if dtype == "float32" else "sympile_skinny_mask64"
        primitives.update({
            "M": "__m256i", "mload": f"{prefix}_maskload_{suffix}(p, m)",
            "mstore": f"{prefix}_maskstore_{suffix}(p, m, v)",
            "sum": f"sympile_skinny_sum{lanes}(v)",
            "mask": f"_mm256_loadu_si256((const __m256i *)({table} + {lanes} - n))"})
    return primitives


_COMMON = r"""
#include <immintrin.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The first n lanes set, from n lanes of -1 followed by zeros (AVX2 masks). */
static const int32_t sympile_skinny_mask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                  0, 0, 0, 0, 0, 0, 0, 0};
static const int64_t sympile_skinny_mask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};

/* Bytes of the packed copy of a kept on the stack; larger ones are allocated. */
#define SYMPILE_SKINNY_STACK 16384
/* Bytes of b that the rows kernel keeps in the L1 cache while it walks c's rows. */
#define SYMPILE_SKINNY_L1 16384

__attribute__((target("avx2,fma"))) static inline float sympile_skinny_sum8(__m256 v)
{
    __m128 low = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    low = _mm_add_ps(low, _mm_movehl_ps(low, low));
    return _mm_cvtss_f32(_mm_add_ss(low, _mm_shuffle_ps(low, low, 1)));
}

__attribute__((target("avx2,fma"))) static inline double sympile_skinny_sum4(__m256d v)
{
    __m128d low = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(low, _mm_unpackhi_pd(low, low)));
}

/* 2 when the CPU runs the AVX-512 kernels, 1 the AVX2 ones, 0 neither (checked once). */
static int sympile_skinny_isa(void)
{
    static int isa = -1;
    if (isa < 0) {
        __builtin_cpu_init();
        isa = (@avx512_check@) ? 2 : (@avx2_check@) ? 1 : 0;
    }
    return isa;
}

/* The threads a product of `work` multiply-adds runs on. */
static int sympile_skinny_threads(double work)
{
#ifdef _OPENMP
    if (work >= @minsize@)
        return omp_get_max_threads();
#endif
    (void)work;
    return 1;
}

/* Blocks of at most `most` rows, as even as can be, over m rows: the first m % blocks
   blocks have one row more. */
static void sympile_skinny_blocks(npy_intp m, int most, npy_intp *blocks, npy_intp *base,
                                  npy_intp *extra)
{
    *blocks = (m + most - 1) / most;
    *base = m / *blocks;
    *extra = m % *blocks;
}
"""

_HELPERS = r"""
@target@ static inline @V@ sympile_skinny_load_@s@(const @T@ *p) { return @load@; }
@target@ static inline @V@ sympile_skinny_mload_@s@(const @T@ *p, @M@ m) { return @mload@; }
@target@ static inline void sympile_skinny_store_@s@(@T@ *p, @V@ v) { @store@; }
@target@ static inline void sympile_skinny_mstore_@s@(@T@ *p, @M@ m, @V@ v) { @mstore@; }
@target@ static inline @V@ sympile_skinny_set1_@s@(@T@ s) { return @set1@; }
@target@ static inline @V@ sympile_skinny_zero_@s@(void) { return @zero@; }
@target@ static inline @V@ sympile_skinny_fma_@s@(@V@ x, @V@ y, @V@ z) { return @fma@; }
@target@ static inline @V@ sympile_skinny_mul_@s@(@V@ x, @V@ y) { return @mul@; }
@target@ static inline @V@ sympile_skinny_add_@s@(@V@ x, @V@ y) { return @add@; }
@target@ static inline @T@ sympile_skinny_sum_@s@(@V@ v) { return @sum@; }
@target@ static inline @M@ sympile_skinny_mask_@s@(int n) { return @mask@; }
"""

_ROWS = r"""
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
   `by_rows`, row by row within groups of columns whose part of b fits the L1 cache. */
@target@ static void sympile_skinny_rows_blocks_@s@(
    npy_intp top, npy_intp bottom, npy_intp left, npy_intp right, int by_rows, npy_intp m,
    npy_intp n, npy_intp k, npy_intp total, npy_intp skip, @T@ alpha, const @T@ *packed,
    const @T@ *b, npy_intp ldb, @T@ *c, npy_intp ldc, int accumulate)
{
    npy_intp blocks, base, extra;
    sympile_skinny_blocks(m, @rows@, &blocks, &base, &extra);
    npy_intp group = by_rows ? SYMPILE_SKINNY_L1 / (k * 2 * @W@ * (npy_intp)sizeof(@T@)) : 1;
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
"""

_DOT = r"""
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
    npy_intp blocks, base, extra;
    sympile_skinny_blocks(m, @dot_rows@, &blocks, &base, &extra);
    for (npy_intp column = first; column < last; column++) {
        npy_intp j = column * @dot_cols@, start = 0;
        int width = (int)(n - j < @dot_cols@ ? n - j : @dot_cols@);
        for (npy_intp block = 0; block < blocks; block++) {
            npy_intp rows = base + (block < extra);
            sympile_skinny_dot_any_@s@((int)rows, width, k, a + start * lda, lda, w + j * ldw,
                                      ldw, c + start * ldc + j, ldc, alpha, accumulate);
            start += rows;
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
"""

_DISPATCH = r"""
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
        if (isa == 2)
            sympile_skinny_dot_avx512_@dtype@(m, n, k, alpha, a, a_row, b, b_column, c, c_row,
                                             accumulate, threads);
        else
            sympile_skinny_dot_avx2_@dtype@(m, n, k, alpha, a, a_row, b, b_column, c, c_row,
                                           accumulate, threads);
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
    int status = isa == 2
        ? sympile_skinny_rows_avx512_@dtype@(m, n, k, alpha, a, a_row, a_column, b, b_row, c,
                                             c_row, accumulate, threads)
        : sympile_skinny_rows_avx2_@dtype@(m, n, k, alpha, a, a_row, a_column, b, b_row, c,
                                           c_row, accumulate, threads);
    free(rows);
    return status == 0;
}
"""

# The dispatcher's declaration, in the op units that call it.
_DECLARATION = r"""
int @name@(npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a, npy_intp a_row,
           npy_intp a_column, const @T@ *b, npy_intp b_row, npy_intp b_column, @T@ *c,
           npy_intp c_row, npy_intp c_column, int accumulate);
"""

# Where the kernels cannot be built, or config.blas_skinny is 'off': every product goes to
# BLAS.
_NO_KERNELS = r"""
static int @name@(npy_intp m, npy_intp n, npy_intp k, @T@ alpha, const @T@ *a,
                  npy_intp a_row, npy_intp a_column, const @T@ *b, npy_intp b_row,
                  npy_intp b_column, @T@ *c, npy_intp c_row, npy_intp c_column,
                  int accumulate)
{
    return 0;
}
"""

_TYPES = {"float32": "float", "float64": "double"}


def _render(text: str, values: dict[str, object]) -> str:
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    return text


def _instance(isa: str, dtype: str) -> str:
    settings, primitives = _ISAS[isa], _primitives(isa, dtype)
    values: dict[str, object] = {
        "s": f"{isa}_{dtype}", "T": _TYPES[dtype], "V": primitives["V"],
        "M": primitives["M"], "W": primitives["W"],
        "target": f'__attribute__((target("{settings["target"]}")))',
        "rows": settings["rows"], "dot_rows": settings["dot_rows"],
        "dot_cols": settings["dot_cols"], "steps": SKINNY_STEPS}
    for name in ("load", "mload", "store", "mstore", "set1", "zero", "fma", "mul", "add",
                 "sum", "mask"):
        values[name] = primitives[name]
    arguments = "k, packed, b, ldb, c, ldc, alpha, accumulate, m0, m1"
    values["rows_cases"] = "\n".join(
        f"    case {2 * rows + masked}: sympile_skinny_rows_block_{isa}_{dtype}({rows}, "
        f"{masked}, {arguments}); break;"
        for rows in range(1, settings["rows"] + 1) for masked in (0, 1))
    values["dot_cases"] = "\n".join(
        f"    case {rows}: sympile_skinny_dot_block_{isa}_{dtype}({rows}, columns, k, a, lda, "
        f"w, ldw, c, ldc, alpha, accumulate); break;"
        for rows in range(1, settings["dot_rows"] + 1))
    return _render(_HELPERS + _ROWS + _DOT, values)


def _x86_64() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


@functools.cache
def skinny_code(dtype: str, minsize: float, setting: str = "auto") -> tuple[str, str, str | None]:
    """(name, support, unit) of the kernels' dispatcher for `dtype` (float32 or float64),
    with `minsize` multiply-adds (config.blas_parallel_minsize) as the threshold for
    threads, under `setting` (config.blas_skinny: 'auto', 'avx2' never uses the AVX-512
    kernels, 'off' none): `int name(m, n, k, alpha, a, a_row, a_column, b, b_row, b_column,
    c, c_row, c_column, accumulate)` (see _DISPATCH), declared by `support` and defined in
    the library unit `unit` (None where there are no kernels: `support` then defines it as
    0, BLAS). Cached: every BLAS node's C code asks for it."""
    if setting == "off" or not _x86_64():
        name = f"sympile_no_skinny_{dtype}"
        return name, _render(_NO_KERNELS, {"name": name, "T": _TYPES[dtype]}), None
    common = _render(_COMMON, {"avx512_check": _ISAS["avx512"]["check"]
                               if setting == "auto" else "0",
                               "avx2_check": _ISAS["avx2"]["check"], "minsize": minsize})
    kernels = "".join(_instance(isa, dtype) for isa in _ISAS)
    # Lanes of the widest vectors: the rows kernel wants c's rows to fill two of them, the
    # dot kernel the inner length to fill one.
    lanes = _primitives("avx512", dtype)["W"]
    unit = common + kernels + _render(_DISPATCH, {"dtype": dtype, "T": _TYPES[dtype],
                                                  "rows_max": SKINNY_ROWS, "steps": SKINNY_STEPS,
                                                  "lanes": lanes})
    # Named by the unit's text: a module links the one unit its op units were made for.
    name = f"sympile_skinny_{dtype}_{hashlib.sha256(unit.encode()).hexdigest()[:16]}"
    values = {"name": name, "T": _TYPES[dtype]}
    return name, _render(_DECLARATION, values), _render(unit, values)
