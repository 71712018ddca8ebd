/* RandomStreams' samplers in C (the generator is philox_core.h): the twin of philox.py,
   which documents the layouts; both must draw the same numbers. Every function is a pure
   function of its arguments, so elements can be computed by any thread in any order. */

/* The j-th draw of per-element stream i: two uniforms in [0, 1). */
static inline void sympile_philox_pair(sympile_philox_key key, npy_int64 i, npy_int64 j,
                                       npy_float64 *ua, npy_float64 *ub)
{
    npy_uint32 w[4];
    sympile_philox4x32((npy_uint32)j, (npy_uint32)i, key, w);
    *ua = sympile_philox_float64_closed(w[0], w[1]);
    *ub = sympile_philox_float64_closed(w[2], w[3]);
}

/* Fixed-count layout, computed SIMD-friendly: a chunk is SYMPILE_PHILOX_LANES consecutive
   blocks whose rounds run side by side (structure of arrays, which the compiler vectorises);
   words[4 l + t] is word t of block first + l, so word w of the chunk is the chunk's w-th
   word in the layout's order. */
#define SYMPILE_PHILOX_LANES 16
#define SYMPILE_PHILOX_CHUNK_WORDS (4 * SYMPILE_PHILOX_LANES)

static inline void sympile_philox_chunk(sympile_philox_key key, npy_int64 first,
                                        npy_uint32 *words)
{
    npy_uint32 x0[SYMPILE_PHILOX_LANES], x1[SYMPILE_PHILOX_LANES];
    npy_uint32 x2[SYMPILE_PHILOX_LANES], x3[SYMPILE_PHILOX_LANES];
    for (int l = 0; l < SYMPILE_PHILOX_LANES; ++l) {
        const npy_uint64 block = (npy_uint64)first + (npy_uint64)l;
        x0[l] = (npy_uint32)block;
        x1[l] = (npy_uint32)(block >> 32);
        x2[l] = key.calls_lo;
        x3[l] = key.calls_hi;
    }
    npy_uint32 k0 = key.k0, k1 = key.k1;
    for (int round = 0; round < 10; ++round) {
        if (round) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        for (int l = 0; l < SYMPILE_PHILOX_LANES; ++l) {
            const npy_uint64 product0 = (npy_uint64)x0[l] * 0xD2511F53u;
            const npy_uint64 product1 = (npy_uint64)x2[l] * 0xCD9E8D57u;
            const npy_uint32 y0 = (npy_uint32)(product1 >> 32) ^ x1[l] ^ k0;
            const npy_uint32 y2 = (npy_uint32)(product0 >> 32) ^ x3[l] ^ k1;
            x1[l] = (npy_uint32)product1;
            x3[l] = (npy_uint32)product0;
            x0[l] = y0;
            x2[l] = y2;
        }
    }
    for (int l = 0; l < SYMPILE_PHILOX_LANES; ++l) {
        words[4 * l] = x0[l];
        words[4 * l + 1] = x1[l];
        words[4 * l + 2] = x2[l];
        words[4 * l + 3] = x3[l];
    }
}

/* Each fixed-count sampler is a chunk kernel (vectorised: @kernel@) called by a loop over
   the chunks, threaded above a size; chunk c gives the elements [c per_chunk, ...). */
#define SYMPILE_PHILOX_SAMPLER(NAME, T, PER_CHUNK, ...)                                      \
@kernel@ static void NAME##_chunk(sympile_philox_key key, npy_int64 chunk, T *out,          \
                                  npy_int64 count, npy_float64 parameter)                    \
{                                                                                            \
    npy_uint32 words[SYMPILE_PHILOX_CHUNK_WORDS];                                            \
    const npy_int64 first = chunk * (PER_CHUNK);                                             \
    const int n = count - first < (PER_CHUNK) ? (int)(count - first) : (PER_CHUNK);          \
    (void)parameter;                                                                         \
    sympile_philox_chunk(key, chunk * SYMPILE_PHILOX_LANES, words);                          \
    __VA_ARGS__                                                                              \
}                                                                                            \
static void NAME(sympile_philox_key key, T *out, npy_int64 count, npy_float64 parameter,     \
                 int threaded)                                                               \
{                                                                                            \
    const npy_int64 chunks = (count + (PER_CHUNK) - 1) / (PER_CHUNK);                        \
    _Pragma("omp parallel for schedule(dynamic, 16) if (threaded)")                         \
    for (npy_int64 chunk = 0; chunk < chunks; ++chunk)                                       \
        NAME##_chunk(key, chunk, out, count, parameter);                                     \
}

SYMPILE_PHILOX_SAMPLER(sympile_philox_uniform_float32, npy_float32, SYMPILE_PHILOX_CHUNK_WORDS,
    for (int t = 0; t < n; ++t)
        out[first + t] = sympile_philox_float32_closed(words[t]);
)

SYMPILE_PHILOX_SAMPLER(sympile_philox_uniform_float64, npy_float64,
                       SYMPILE_PHILOX_CHUNK_WORDS / 2,
    for (int t = 0; t < n; ++t)
        out[first + t] = sympile_philox_float64_closed(words[2 * t], words[2 * t + 1]);
)

/* Pair p of a chunk (words 2p, 2p + 1) gives elements 2p (cosine) and 2p + 1 (sine); the
   steps are separate loops so that each vectorises. */
SYMPILE_PHILOX_SAMPLER(sympile_philox_normal_float32, npy_float32, SYMPILE_PHILOX_CHUNK_WORDS,
    enum { PAIRS = SYMPILE_PHILOX_CHUNK_WORDS / 2 };
    npy_float32 radius[PAIRS], angle[PAIRS], values[SYMPILE_PHILOX_CHUNK_WORDS];
    for (int p = 0; p < PAIRS; ++p) {
        radius[p] = sympile_philox_float32_open(words[2 * p]);
        angle[p] = 6.2831855f * sympile_philox_float32_closed(words[2 * p + 1]);
    }
    for (int p = 0; p < PAIRS; ++p)
        radius[p] = sqrtf(-2.0f * sympile_fast_logf(radius[p]));
    for (int p = 0; p < PAIRS; ++p) {
        values[2 * p] = radius[p] * sympile_fast_cosf(angle[p]);
        values[2 * p + 1] = radius[p] * sympile_fast_sinf(angle[p]);
    }
    for (int t = 0; t < n; ++t)
        out[first + t] = values[t];
)

/* Block l of a chunk (u1 from words 0-1, u2 from words 2-3) gives elements 2l and 2l + 1. */
SYMPILE_PHILOX_SAMPLER(sympile_philox_normal_float64, npy_float64, 2 * SYMPILE_PHILOX_LANES,
    for (int l = 0; 2 * l < n; ++l) {
        const npy_float64 u1 = 1.0 - sympile_philox_float64_closed(words[4 * l],
                                                                   words[4 * l + 1]);
        const npy_float64 u2 = sympile_philox_float64_closed(words[4 * l + 2], words[4 * l + 3]);
        const npy_float64 radius = sqrt(-2.0 * log(u1));
        const npy_float64 angle = 6.283185307179586 * u2;
        out[first + 2 * l] = radius * cos(angle);
        if (2 * l + 1 < n)
            out[first + 2 * l + 1] = radius * sin(angle);
    }
)

/* Bernoulli(p) of a scalar p (the parameter): element e is 1 when word e < floor(p 2**32). */
#define SYMPILE_PHILOX_BERNOULLI(T)                                                          \
SYMPILE_PHILOX_SAMPLER(sympile_philox_bernoulli_##T, T, SYMPILE_PHILOX_CHUNK_WORDS,          \
    const npy_uint64 threshold = (npy_uint64)(parameter * 4294967296.0);                     \
    for (int t = 0; t < n; ++t)                                                              \
        out[first + t] = (T)((npy_uint64)words[t] < threshold);                              \
)

SYMPILE_PHILOX_BERNOULLI(npy_bool)
SYMPILE_PHILOX_BERNOULLI(npy_int8)
SYMPILE_PHILOX_BERNOULLI(npy_int16)
SYMPILE_PHILOX_BERNOULLI(npy_int32)
SYMPILE_PHILOX_BERNOULLI(npy_int64)
SYMPILE_PHILOX_BERNOULLI(npy_uint8)
SYMPILE_PHILOX_BERNOULLI(npy_uint16)
SYMPILE_PHILOX_BERNOULLI(npy_uint32)
SYMPILE_PHILOX_BERNOULLI(npy_uint64)
SYMPILE_PHILOX_BERNOULLI(npy_float32)
SYMPILE_PHILOX_BERNOULLI(npy_float64)

/* Binomial(n, p) from stream i, starting at draw *j, which is left after the last draw
   used (philox.py's binomial: inversion below n q = 10, BTRS above). */
static npy_int64 sympile_philox_binomial(sympile_philox_key key, npy_int64 i, npy_int64 *j,
                                         npy_int64 n, npy_float64 p)
{
    const int flip = p > 0.5;
    const npy_float64 q = flip ? 1.0 - p : p;
    npy_int64 k = 0;
    npy_float64 ua, ub;
    if (n == 0 || q == 0.0) {
        k = 0;
    } else if ((npy_float64)n * q < 10.0) {
        const npy_float64 ratio = q / (1.0 - q);
        const npy_float64 scale = (npy_float64)(n + 1) * ratio;
        npy_float64 mass = pow(1.0 - q, (npy_float64)n);
        sympile_philox_pair(key, i, *j, &ua, &ub);
        *j += 1;
        npy_float64 u = ua;
        while (u > mass && k < n) {
            u -= mass;
            k += 1;
            mass *= scale / (npy_float64)k - ratio;
        }
    } else {
        const npy_float64 nf = (npy_float64)n;
        const npy_float64 spq = sqrt(nf * q * (1.0 - q));
        const npy_float64 b = 1.15 + 2.53 * spq;
        const npy_float64 a = -0.0873 + 0.0248 * b + 0.01 * q;
        const npy_float64 c = nf * q + 0.5;
        const npy_float64 v_r = 0.92 - 4.2 / b;
        const npy_float64 alpha = (2.83 + 5.1 / b) * spq;
        const npy_float64 lpq = log(q / (1.0 - q));
        const npy_float64 m = floor((nf + 1.0) * q);
        const npy_float64 h = lgamma(m + 1.0) + lgamma(nf - m + 1.0);
        for (;;) {
            sympile_philox_pair(key, i, *j, &ua, &ub);
            *j += 1;
            const npy_float64 u = ua - 0.5;
            const npy_float64 us = 0.5 - fabs(u);
            const npy_float64 kd = floor((2.0 * a / us + b) * u + c);
            if (!(kd >= 0.0 && kd <= nf))
                continue;
            if (us >= 0.07 && ub <= v_r) {
                k = (npy_int64)kd;
                break;
            }
            const npy_float64 log_v = log(ub * alpha / (a / (us * us) + b));
            if (log_v <= h - lgamma(kd + 1.0) - lgamma(nf - kd + 1.0) + (kd - m) * lpq) {
                k = (npy_int64)kd;
                break;
            }
        }
    }
    return flip ? n - k : k;
}

/* Poisson(lam) from stream i (philox.py's poisson: inversion below 10, PTRS above). */
static npy_int64 sympile_philox_poisson(sympile_philox_key key, npy_int64 i, npy_float64 lam)
{
    npy_float64 ua, ub;
    if (!(lam > 0.0))
        return 0;
    if (lam < 10.0) {
        sympile_philox_pair(key, i, 0, &ua, &ub);
        npy_float64 mass = exp(-lam), cdf = mass;
        npy_int64 k = 0;
        while (ua > cdf) {
            k += 1;
            mass *= lam / (npy_float64)k;
            if (!(mass > 0.0))
                break;
            cdf += mass;
        }
        return k;
    }
    const npy_float64 slam = sqrt(lam), log_lam = log(lam);
    const npy_float64 b = 0.931 + 2.53 * slam;
    const npy_float64 a = -0.059 + 0.02483 * b;
    const npy_float64 log_inv_alpha = log(1.1239 + 1.1328 / (b - 3.4));
    const npy_float64 v_r = 0.9277 - 3.6224 / (b - 2.0);
    for (npy_int64 j = 0;; ++j) {
        sympile_philox_pair(key, i, j, &ua, &ub);
        const npy_float64 u = ua - 0.5;
        const npy_float64 us = 0.5 - fabs(u);
        const npy_float64 kd = floor((2.0 * a / us + b) * u + lam + 0.43);
        if (!(kd >= 0.0))
            continue;
        if (us >= 0.07 && ub <= v_r)
            return (npy_int64)kd;
        if (us < 0.013 && ub > us)
            continue;
        if (log(ub) + log_inv_alpha - log(a / (us * us) + b)
                <= -lam + kd * log_lam - lgamma(kd + 1.0))
            return (npy_int64)kd;
    }
}

/* A uniform integer in [low, high] from stream i (philox.py's integers). */
static npy_int64 sympile_philox_integer(sympile_philox_key key, npy_int64 i, npy_int64 low,
                                        npy_int64 high)
{
    const npy_uint64 span = (npy_uint64)high - (npy_uint64)low + 1u;
    const npy_uint64 threshold = span == 0 ? 0 : (0u - span) % span;
    for (npy_int64 j = 0;; ++j) {
        npy_uint32 w[4];
        sympile_philox4x32((npy_uint32)j, (npy_uint32)i, key, w);
        const npy_uint64 words[2] = {((npy_uint64)w[0] << 32) | w[1],
                                     ((npy_uint64)w[2] << 32) | w[3]};
        for (int t = 0; t < 2; ++t) {
            if (words[t] >= threshold)
                return (npy_int64)((npy_uint64)low + (span == 0 ? words[t] : words[t] % span));
        }
    }
}

/* A standard normal truncated to [-2, 2] from stream i (philox.py's truncated_normal). */
static npy_float64 sympile_philox_truncated_normal(sympile_philox_key key, npy_int64 i)
{
    for (npy_int64 j = 0;; ++j) {
        npy_float64 ua, ub;
        sympile_philox_pair(key, i, j, &ua, &ub);
        const npy_float64 radius = sqrt(-2.0 * log(1.0 - ua));
        const npy_float64 angle = 6.283185307179586 * ub;
        const npy_float64 first = radius * cos(angle);
        if (fabs(first) <= 2.0)
            return first;
        const npy_float64 second = radius * sin(angle);
        if (fabs(second) <= 2.0)
            return second;
    }
}
