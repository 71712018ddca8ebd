/* Inlined whatever gcc's heuristics say: a call left in a loop stops its vectorisation. */
#define SYMPILE_INLINE __attribute__((always_inline))

/* a * b + c in one rounding where the kernels' target has fused multiply-adds: their
   polynomials then take half the instructions. Elsewhere two roundings (a call to libm's fma
   per term would stop the vectorisation). */
#if @fma@
#define SYMPILE_FMAF(a, b, c) __builtin_fmaf(a, b, c)
#define SYMPILE_FMA(a, b, c) __builtin_fma(a, b, c)
#else
#define SYMPILE_FMAF(a, b, c) ((a) * (b) + (c))
#define SYMPILE_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* Bit casts the vectoriser keeps in registers. */
static inline SYMPILE_INLINE npy_uint32 sympile_float32_bits(npy_float32 value)
{ npy_uint32 bits; __builtin_memcpy(&bits, &value, 4); return bits; }
static inline SYMPILE_INLINE npy_float32 sympile_float32_of_bits(npy_uint32 bits)
{ npy_float32 value; __builtin_memcpy(&value, &bits, 4); return value; }
static inline SYMPILE_INLINE npy_uint64 sympile_float64_bits(npy_float64 value)
{ npy_uint64 bits; __builtin_memcpy(&bits, &value, 8); return bits; }
static inline SYMPILE_INLINE npy_float64 sympile_float64_of_bits(npy_uint64 bits)
{ npy_float64 value; __builtin_memcpy(&value, &bits, 8); return value; }

/* exp(x - n ln2) for n = rint(x / ln2) (by the 1.5 * 2^23 rounding trick, into *n): the
   reduced argument in two parts (n * 0.693359375 is exact), Cephes' expf polynomial. */
static inline SYMPILE_INLINE npy_float32 sympile_expf_reduced(npy_float32 x, npy_float32 *n)
{
    *n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    npy_float32 r = x - *n * 0.693359375f;
    r = r + *n * 2.12194440e-4f;
    npy_float32 p = SYMPILE_FMAF(1.9875691500e-4f, r, 1.3981999507e-3f);
    p = SYMPILE_FMAF(p, r, 8.3334519073e-3f);
    p = SYMPILE_FMAF(p, r, 4.1665795894e-2f);
    p = SYMPILE_FMAF(p, r, 1.6666665459e-1f);
    p = SYMPILE_FMAF(p, r, 5.0000001201e-1f);
    return SYMPILE_FMAF(p, r * r, r) + 1.0f;
}

/* exp(x) = 2^n exp(x - n ln2) (sympile_expf_reduced), 2^n applied as two factors so that
   results in the subnormals round once, at the last product. */
static inline SYMPILE_INLINE npy_float32 sympile_fast_expf(npy_float32 x)
{
    npy_float32 clamped = x > 89.0f ? 89.0f : (x < -110.0f ? -110.0f : x);
    clamped = clamped != clamped ? 0.0f : clamped;
    npy_float32 n;
    const npy_float32 p = sympile_expf_reduced(clamped, &n);
    const npy_int32 k = (npy_int32)n;
    const npy_int32 half = k >> 1;
    const npy_float32 first = sympile_float32_of_bits((npy_uint32)(half + 127) << 23);
    const npy_float32 second = sympile_float32_of_bits((npy_uint32)(k - half + 127) << 23);
    const npy_float32 result = p * first * second;
    return x != x ? x : result;
}

/* log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)) from the bits (subnormals scaled by
   2^23 first); Cephes' logf polynomial in f = m - 1 (exact). */
static inline SYMPILE_INLINE npy_float32 sympile_fast_logf(npy_float32 x)
{
    const int subnormal = x < 1.17549435e-38f;
    const npy_float32 scaled = x * 8388608.0f;
    const npy_uint32 bits = sympile_float32_bits(subnormal ? scaled : x);
    npy_int32 e = (npy_int32)((bits >> 23) & 0xff) - 127 - (subnormal ? 23 : 0);
    npy_float32 m = sympile_float32_of_bits((bits & 0x007fffffu) | 0x3f800000u);
    const int above = m > 1.41421356237f;
    const npy_float32 halved = m * 0.5f;
    m = above ? halved : m;
    e = above ? e + 1 : e;
    const npy_float32 f = m - 1.0f, z = f * f, fe = (npy_float32)e;
    npy_float32 y = SYMPILE_FMAF(7.0376836292e-2f, f, -1.1514610310e-1f);
    y = SYMPILE_FMAF(y, f, 1.1676998740e-1f);
    y = SYMPILE_FMAF(y, f, -1.2420140846e-1f);
    y = SYMPILE_FMAF(y, f, 1.4249322787e-1f);
    y = SYMPILE_FMAF(y, f, -1.6668057665e-1f);
    y = SYMPILE_FMAF(y, f, 2.0000714765e-1f);
    y = SYMPILE_FMAF(y, f, -2.4999993993e-1f);
    y = SYMPILE_FMAF(y, f, 3.3333331174e-1f) * f * z;
    y = y - 2.12194440e-4f * fe - 0.5f * z;
    const npy_float32 result = f + y + 0.693359375f * fe;
    const npy_float32 special = x == 0.0f ? -INFINITY : (x == INFINITY ? x : NAN);
    return x > 0.0f && x < INFINITY ? result : (x != x ? x : special);
}

/* tanh(x): Cephes' odd polynomial below |x| = 0.625, else sign(x) (1 - 2 / (e + 1)) with
   e = exp(2 min(|x|, 10)): tanh rounds to 1 from about 9.01 on (at 9 it is still the float
   below 1), and from 10 on 1 - 2 / (e + 1) rounds to 1 exactly, so e's argument lies in
   [1.25, 20], where exp needs no clamping, no NaN test and one power of two
   (sympile_expf_reduced). NaN is passed on at the end. */
static inline SYMPILE_INLINE npy_float32 sympile_fast_tanhf(npy_float32 x)
{
    const npy_float32 magnitude = fabsf(x), z = x * x;
    npy_float32 n;
    const npy_float32 p = sympile_expf_reduced(2.0f * (magnitude < 10.0f ? magnitude : 10.0f),
                                               &n);
    const npy_float32 e = p * sympile_float32_of_bits((npy_uint32)((npy_int32)n + 127) << 23);
    npy_float32 small = SYMPILE_FMAF(-5.70498872745e-3f, z, 2.06390887954e-2f);
    small = SYMPILE_FMAF(small, z, -5.37397155531e-2f);
    small = SYMPILE_FMAF(small, z, 1.33314422036e-1f);
    small = SYMPILE_FMAF(small, z, -3.33332819422e-1f);
    small = SYMPILE_FMAF(small * z, x, x);
    /* x + ... gives +0 for x = -0; tanh is odd and keeps the sign of x. */
    const npy_float32 large = copysignf(1.0f - 2.0f / (e + 1.0f), x);
    return magnitude < 0.625f ? copysignf(small, x) : (x != x ? x : large);
}

#if @fma@
/* sin(x + quarter_turns pi/2) of a float32 x, |x| <= the fallback limit, in float (16 lanes
   of AVX-512, not 8 of double): j = rint(x 2/pi) (the 1.5 * 2^23 trick); r = x - j pi/2 with
   pi/2 in three floats P1 + P2 + P3, kept as hi + lo: x - j P1 is exact (a multiple of
   2^-23 below 2, by a fused multiply-add), j P2 is split exactly into two floats, and the
   rounding error of the subtraction is recovered (Fast2Sum). Taylor polynomials of sin to
   degree 9 and cos to degree 10 in hi, corrected by lo: sin(hi + lo) = sin(hi) + lo,
   cos(hi + lo) = cos(hi) - lo hi, to the first order that lo (below an ulp of hi) needs.
   Within 1 ulp for every float32 |x| <= 65536 (tested exhaustively). */
static inline SYMPILE_INLINE npy_float32 sympile_fast_sincosf(npy_float32 x, npy_int32 quarter_turns)
{
    const npy_float32 shifted = x * 0.636619772f + 12582912.0f;
    const npy_float32 j = shifted - 12582912.0f;
    const npy_float32 first = __builtin_fmaf(-j, 0x1.921fb6p+0f, x);
    const npy_float32 product = j * -0x1.777a5cp-25f;
    const npy_float32 product_error = __builtin_fmaf(j, -0x1.777a5cp-25f, -product);
    const npy_float32 hi = first - product;
    const npy_float32 lo = ((first - hi) - product)
                           - __builtin_fmaf(j, -0x1.ee59dap-50f, product_error);
    const npy_float32 s = hi * hi;
    npy_float32 sine = __builtin_fmaf(s, 1.0f / 362880, -1.0f / 5040);
    sine = __builtin_fmaf(sine, s, 1.0f / 120);
    sine = __builtin_fmaf(sine, s, -1.0f / 6);
    /* sin keeps the sign of r on |r| <= pi/4, -0 included (which hi + ... would lose). */
    sine = copysignf(hi + __builtin_fmaf(hi * s, sine, lo), hi);
    npy_float32 cosine = __builtin_fmaf(s, -1.0f / 3628800, 1.0f / 40320);
    cosine = __builtin_fmaf(cosine, s, -1.0f / 720);
    cosine = __builtin_fmaf(cosine, s, 1.0f / 24);
    /* 1 - hi^2 / 2 as a float plus its exact error (hi^2's by a fused multiply-add, the
       difference's by Fast2Sum): the one rounding left is the last addition's. */
    const npy_float32 s_error = __builtin_fmaf(hi, hi, -s);
    const npy_float32 head = __builtin_fmaf(s, -0.5f, 1.0f);
    const npy_float32 head_error = (1.0f - head) - 0.5f * s;
    const npy_float32 tail = __builtin_fmaf(-lo, hi, __builtin_fmaf(-0.5f, s_error, head_error));
    cosine = head + __builtin_fmaf(s * s, cosine, tail);
    const npy_int32 quadrant = (npy_int32)j + quarter_turns;
    const npy_float32 value = (quadrant & 1) ? cosine : sine;
    return (quadrant & 2) ? -value : value;
}
#else
/* sin(x + quarter_turns pi/2) of a float32 x, |x| <= the fallback limit, in double:
   j = rint(x 2/pi) (the 1.5 * 2^52 trick), r = x - j pi/2 in
   three parts (fdlibm's), Taylor polynomials of sin and cos on |r| <= pi/4. */
static inline SYMPILE_INLINE npy_float32 sympile_fast_sincosf(npy_float32 x, npy_int32 quarter_turns)
{
    const npy_float64 d = (npy_float64)x;
    const npy_float64 shifted = d * 0.63661977236758134308 + 6755399441055744.0;
    const npy_float64 j = shifted - 6755399441055744.0;
    npy_float64 r = d - j * 1.57079632673412561417;
    r = r - j * 6.07710050630396597660e-11;
    r = r - j * 2.02226624879595063154e-21;
    const npy_float64 s = r * r;
    /* sin keeps the sign of r on |r| <= pi/4, -0 included (which r + ... would lose). */
    npy_float64 sine = SYMPILE_FMA(s, -1.0 / 39916800, 1.0 / 362880);
    sine = SYMPILE_FMA(sine, s, -1.0 / 5040);
    sine = SYMPILE_FMA(sine, s, 1.0 / 120);
    sine = SYMPILE_FMA(sine, s, -1.0 / 6);
    sine = copysign(SYMPILE_FMA(r * s, sine, r), r);
    npy_float64 cosine = SYMPILE_FMA(s, -1.0 / 3628800, 1.0 / 40320);
    cosine = SYMPILE_FMA(cosine, s, -1.0 / 720);
    cosine = SYMPILE_FMA(cosine, s, 1.0 / 24);
    cosine = SYMPILE_FMA(s * s, cosine, 1.0 - 0.5 * s);
    const npy_int32 quadrant = (npy_int32)j + quarter_turns;
    const npy_float64 value = (quadrant & 1) ? cosine : sine;
    return (npy_float32)((quadrant & 2) ? -value : value);
}
#endif

static inline SYMPILE_INLINE npy_float32 sympile_fast_sinf(npy_float32 x)
{ return sympile_fast_sincosf(x, 0); }
static inline SYMPILE_INLINE npy_float32 sympile_fast_cosf(npy_float32 x)
{ return sympile_fast_sincosf(x, 1); }

/* exp(x) = 2^n exp(r) as in sympile_fast_expf, with fdlibm's two-part ln2 and the Taylor
   polynomial to degree 13 (its remainder is below 2^-60 on |r| <= ln2 / 2); 2^n as two
   factors built from the rounding trick's integer bits. */
static inline SYMPILE_INLINE npy_float64 sympile_fast_exp(npy_float64 x)
{
    npy_float64 clamped = x > 709.8 ? 709.8 : (x < -745.2 ? -745.2 : x);
    clamped = clamped != clamped ? 0.0 : clamped;
    const npy_float64 magic = 6755399441055744.0;
    const npy_float64 shifted = clamped * 1.4426950408889634 + magic;
    const npy_float64 n = shifted - magic;
    const npy_float64 r = (clamped - n * 6.93147180369123816490e-01)
                          - n * 1.90821492927058770002e-10;
    npy_float64 p = 1.0 / 6227020800.0;
    p = SYMPILE_FMA(p, r, 1.0 / 479001600.0);
    p = SYMPILE_FMA(p, r, 1.0 / 39916800.0);
    p = SYMPILE_FMA(p, r, 1.0 / 3628800.0);
    p = SYMPILE_FMA(p, r, 1.0 / 362880.0);
    p = SYMPILE_FMA(p, r, 1.0 / 40320.0);
    p = SYMPILE_FMA(p, r, 1.0 / 5040.0);
    p = SYMPILE_FMA(p, r, 1.0 / 720.0);
    p = SYMPILE_FMA(p, r, 1.0 / 120.0);
    p = SYMPILE_FMA(p, r, 1.0 / 24.0);
    p = SYMPILE_FMA(p, r, 1.0 / 6.0);
    p = SYMPILE_FMA(p, r, 0.5);
    p = 1.0 + SYMPILE_FMA(r * r, p, r);
    const npy_float64 half_shifted = n * 0.5 + magic;
    const npy_uint64 magic_bits = sympile_float64_bits(magic);
    const npy_uint64 half = sympile_float64_bits(half_shifted) - magic_bits;
    const npy_uint64 whole = sympile_float64_bits(shifted) - magic_bits;
    const npy_uint64 one = 0x3ff0000000000000ULL;
    const npy_float64 first = sympile_float64_of_bits((half << 52) + one);
    const npy_float64 second = sympile_float64_of_bits(((whole - half) << 52) + one);
    const npy_float64 result = p * first * second;
    return x != x ? x : result;
}

/* log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)) from the bits (subnormals scaled by
   2^54 first; e converted exactly through the 2^52 trick); log(1 + f) = f - (f^2/2 -
   s (f^2/2 + R(s^2))), s = f / (2 + f), R the atanh series to degree 22 (fdlibm's form). */
static inline SYMPILE_INLINE npy_float64 sympile_fast_log(npy_float64 x)
{
    const int subnormal = x < 2.2250738585072014e-308;
    const npy_float64 scaled = x * 18014398509481984.0;
    const npy_uint64 bits = sympile_float64_bits(subnormal ? scaled : x);
    npy_float64 e = sympile_float64_of_bits(0x4330000000000000ULL | ((bits >> 52) & 0x7ff))
                    - (4503599627370496.0 + 1023.0) - (subnormal ? 54.0 : 0.0);
    npy_float64 m = sympile_float64_of_bits((bits & 0x000fffffffffffffULL)
                                            | 0x3ff0000000000000ULL);
    const int above = m > 1.4142135623730951;
    const npy_float64 halved = m * 0.5, incremented = e + 1.0;
    m = above ? halved : m;
    e = above ? incremented : e;
    const npy_float64 f = m - 1.0, s = f / (2.0 + f), z = s * s, half_square = 0.5 * f * f;
    npy_float64 series = 2.0 / 23;
    series = SYMPILE_FMA(series, z, 2.0 / 21);
    series = SYMPILE_FMA(series, z, 2.0 / 19);
    series = SYMPILE_FMA(series, z, 2.0 / 17);
    series = SYMPILE_FMA(series, z, 2.0 / 15);
    series = SYMPILE_FMA(series, z, 2.0 / 13);
    series = SYMPILE_FMA(series, z, 2.0 / 11);
    series = SYMPILE_FMA(series, z, 2.0 / 9);
    series = SYMPILE_FMA(series, z, 2.0 / 7);
    series = SYMPILE_FMA(series, z, 2.0 / 5);
    series = SYMPILE_FMA(series, z, 2.0 / 3);
    series = series * z;
    const npy_float64 result = e * 6.93147180369123816490e-01
        + (f - (half_square - (s * (half_square + series) + e * 1.90821492927058770002e-10)));
    const npy_float64 special = x == 0.0 ? -INFINITY : (x == INFINITY ? x : NAN);
    return x > 0.0 && x < INFINITY ? result : (x != x ? x : special);
}
