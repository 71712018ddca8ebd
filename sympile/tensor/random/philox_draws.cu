/* RandomStreams' fixed-count draws on the device (philox.py's layout): thread b computes
   block b of Philox4x32-10 at counter (b, calls) and writes the @PER_BLOCK@ elements that
   the block's four words give, so every element has the bits the CPU gives it. The stream's
   state [key, calls] is read from device memory, so a captured draw draws anew at each
   replay. */
{
    const npy_uint64 word = state[0], calls = state[1];
    const sympile_philox_key key = {(npy_uint32)word, (npy_uint32)(word >> 32),
                                    (npy_uint32)calls, (npy_uint32)(calls >> 32)};
    for (npy_int64 b = SYMPILE_GRID_START; b < blocks; b += SYMPILE_GRID_STEP) {
        npy_uint32 w[4];
        sympile_philox4x32((npy_uint32)b, (npy_uint32)((npy_uint64)b >> 32), key, w);
        for (int k = 0; k < @PER_BLOCK@; ++k) {
            const npy_int64 e = b * @PER_BLOCK@ + k;
            if (e < count)
                out[e] = @VALUE@;
        }
    }
}
