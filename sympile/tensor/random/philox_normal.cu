/* Element `sine` (0: the cosine's, 1: the sine's) of the standard normal pair that words
   (radius_word, angle_word) give by Box-Muller: philox.h's float32 normal sampler, one
   element at a time, with the same functions and operations (the device's kernels). */
static inline npy_float32 sympile_philox_normal_pair_float32(npy_uint32 radius_word,
                                                             npy_uint32 angle_word, int sine)
{
    const npy_float32 radius =
        sqrtf(-2.0f * sympile_fast_logf(sympile_philox_float32_open(radius_word)));
    const npy_float32 angle = 6.2831855f * sympile_philox_float32_closed(angle_word);
    return radius * (sine ? sympile_fast_sinf(angle) : sympile_fast_cosf(angle));
}
