#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Ask for the cache lines of bytes [p, p + bytes) (bytes > 0) to be loaded. */
static inline void sympile_skinny_prefetch(const void *p, size_t bytes)
{
    const char *first = (const char *)p;
    for (size_t offset = 0; offset < bytes; offset += 64)
        __builtin_prefetch(first + offset, 0, 3);
    __builtin_prefetch(first + bytes - 1, 0, 3);
}

/* The first n lanes set, from n lanes of -1 followed by zeros (AVX2 masks). */
static const int32_t sympile_skinny_mask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                  0, 0, 0, 0, 0, 0, 0, 0};
static const int64_t sympile_skinny_mask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};

/* Bytes of the packed copy of a kept on the stack; larger ones are allocated. */
#define SYMPILE_SKINNY_STACK 16384
/* Bytes of b that the rows kernel keeps in the L2 cache while it walks c's rows (a
   quarter of today's smallest L2, 1 MiB). */
#define SYMPILE_SKINNY_L2 262144
/* Bytes of the rows kernel's contiguous copy of a column of blocks' part of b. */
#define SYMPILE_SKINNY_PANEL 16384

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
