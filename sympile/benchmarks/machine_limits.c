/* The two physical limits sympile-bench measures (sympile/benchmarks/machine.py): a
   register-blocked loop of @ACCUMULATORS@ independent chains of float vectors of @LANES@
   lanes, each step a * m + c (a fused multiply-add where the CPU has them), and a sum over
   an array with four vector accumulators, whose speed is the read bandwidth. */
typedef float vector_t __attribute__((vector_size(@BYTES@)));

@ATTRIBUTE@ static inline float fma_chains(long steps)
{
    vector_t a[@ACCUMULATORS@];
    const vector_t m = (vector_t){} + 0.999999f, c = (vector_t){} + 1e-7f;
    for (int k = 0; k < @ACCUMULATORS@; ++k)
        a[k] = (vector_t){} + (float)k;
    for (long i = 0; i < steps; ++i) {
#pragma GCC unroll 16
        for (int k = 0; k < @ACCUMULATORS@; ++k)
            a[k] = a[k] * m + c;
    }
    float total = 0.0f;
    for (int k = 0; k < @ACCUMULATORS@; ++k)
        for (int l = 0; l < @LANES@; ++l)
            total += a[k][l];
    return total;
}

@ATTRIBUTE@ static inline double read_sum(const float *x, long n)
{
    vector_t s0 = {}, s1 = {}, s2 = {}, s3 = {};
    long i = 0;
    for (; i + 4 * @LANES@ <= n; i += 4 * @LANES@) {
        vector_t v0, v1, v2, v3;
        memcpy(&v0, x + i, sizeof v0); memcpy(&v1, x + i + @LANES@, sizeof v1);
        memcpy(&v2, x + i + 2 * @LANES@, sizeof v2); memcpy(&v3, x + i + 3 * @LANES@, sizeof v3);
        s0 += v0; s1 += v1; s2 += v2; s3 += v3;
    }
    double total = 0.0;
    for (int l = 0; l < @LANES@; ++l)
        total += (double)s0[l] + s1[l] + s2[l] + s3[l];
    for (; i < n; ++i)
        total += x[i];
    return total;
}
