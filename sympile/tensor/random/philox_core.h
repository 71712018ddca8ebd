/* RandomStreams' generator (Philox4x32-10) and its conversions of words to floats: the
   core that philox.h's CPU samplers and the CUDA kernels (philox_draws.cu) share, the twin
   of philox.py. Pure functions of their arguments: any thread computes any element. */

typedef struct {
    npy_uint32 k0, k1, calls_lo, calls_hi;
} sympile_philox_key;

static inline void sympile_philox4x32(npy_uint32 c0, npy_uint32 c1, sympile_philox_key key,
                                      npy_uint32 out[4])
{
    npy_uint32 x0 = c0, x1 = c1, x2 = key.calls_lo, x3 = key.calls_hi;
    npy_uint32 k0 = key.k0, k1 = key.k1;
    for (int round = 0; round < 10; ++round) {
        if (round) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const npy_uint64 product0 = (npy_uint64)x0 * 0xD2511F53u;
        const npy_uint64 product1 = (npy_uint64)x2 * 0xCD9E8D57u;
        x0 = (npy_uint32)(product1 >> 32) ^ x1 ^ k0;
        x1 = (npy_uint32)product1;
        x2 = (npy_uint32)(product0 >> 32) ^ x3 ^ k1;
        x3 = (npy_uint32)product0;
    }
    out[0] = x0;
    out[1] = x1;
    out[2] = x2;
    out[3] = x3;
}

static inline npy_float32 sympile_philox_float32_closed(npy_uint32 word)
{ return (npy_float32)(word >> 8) * 5.9604644775390625e-08f; }

static inline npy_float32 sympile_philox_float32_open(npy_uint32 word)
{ return (npy_float32)((word >> 8) + 1u) * 5.9604644775390625e-08f; }

static inline npy_float64 sympile_philox_float64_closed(npy_uint32 high, npy_uint32 low)
{
    const npy_uint64 bits = ((npy_uint64)high << 32) | low;
    return (npy_float64)(bits >> 11) * 1.1102230246251565e-16;
}
