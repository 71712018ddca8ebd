/* One step of an MRG31k3p stream (Theano's mrg_uniform, mrg.py's _step): the six int32 words
   of *state advanced, and (x11 - x21) mod M1 in [1, M1] returned. Theano's C relies on int32
   arithmetic wrapping; the sums and differences here run in uint32 and are read back as
   int32, which wraps alike without signed overflow, so the CPU's C and the device's CUDA
   (which has no -fwrapv) give the same words. */
static inline npy_int32 sympile_mrg_wrap(npy_uint32 value)
{
    npy_int32 result;
    __builtin_memcpy(&result, &value, sizeof result);
    return result;
}

/* v reduced once by m where it lies outside [0, m) (Theano's `if (v < 0 || v >= m) v -= m`). */
static inline npy_int32 sympile_mrg_reduce(npy_int32 v, npy_int32 m)
{
    return (v < 0 || v >= m) ? sympile_mrg_wrap((npy_uint32)v - (npy_uint32)m) : v;
}

static inline npy_int32 sympile_mrg_step(npy_int32 *state)
{
    const npy_int32 M1 = 2147483647, M2 = 2147462579;
    const npy_int32 x11 = state[0], x12 = state[1], x13 = state[2];
    const npy_int32 x21 = state[3], x22 = state[4], x23 = state[5];
    npy_int32 y1 = sympile_mrg_wrap(((npy_uint32)(x12 & 511) << 22) + (npy_uint32)(x12 >> 9)
                                    + ((npy_uint32)(x13 & 16777215) << 7)
                                    + (npy_uint32)(x13 >> 24));
    y1 = sympile_mrg_reduce(y1, M1);
    y1 = sympile_mrg_reduce(sympile_mrg_wrap((npy_uint32)y1 + (npy_uint32)x13), M1);
    npy_int32 z1 = sympile_mrg_wrap(((npy_uint32)(x21 & 65535) << 15)
                                    + (npy_uint32)21069 * (npy_uint32)(x21 >> 16));
    z1 = sympile_mrg_reduce(z1, M2);
    npy_int32 y2 = sympile_mrg_wrap(((npy_uint32)(x23 & 65535) << 15)
                                    + (npy_uint32)21069 * (npy_uint32)(x23 >> 16));
    y2 = sympile_mrg_reduce(y2, M2);
    y2 = sympile_mrg_reduce(sympile_mrg_wrap((npy_uint32)y2 + (npy_uint32)x23), M2);
    y2 = sympile_mrg_reduce(sympile_mrg_wrap((npy_uint32)y2 + (npy_uint32)z1), M2);
    state[0] = y1;
    state[1] = x11;
    state[2] = x12;
    state[3] = y2;
    state[4] = x21;
    state[5] = x22;
    return y1 <= y2 ? sympile_mrg_wrap((npy_uint32)y1 - (npy_uint32)y2 + (npy_uint32)M1)
                    : sympile_mrg_wrap((npy_uint32)y1 - (npy_uint32)y2);
}
