/* The taps of a convolution's filter on the device (conv_cuda.py): tap t of a (kd, kr, kc)
   filter, in C order, as its (depth, row, column) offsets, flipped for a true convolution,
   as conv_gemm.c numbers them. */
static inline void sympile_conv_tap(const npy_int64 tap, const npy_int64 kd,
                                    const npy_int64 kr, const npy_int64 kc, const int flip,
                                    npy_int64 *a, npy_int64 *i, npy_int64 *j)
{
    *j = tap % kc;
    *i = (tap / kc) % kr;
    *a = tap / (kc * kr);
    if (flip) {
        *a = kd - 1 - *a;
        *i = kr - 1 - *i;
        *j = kc - 1 - *j;
    }
}
