/* A float converted to an integer dtype as numpy's astype does on x86-64, where C leaves a
   NaN, an infinity or a value out of the target's range undefined (and gcc may fold or
   vectorise such a cast into anything). numpy's loops convert to int32 or int64 with the
   processor's truncating instructions, which give the type's minimum for every value they
   cannot represent; the smaller types take the low bits of the int32, uint32 those of the
   int64; uint64 converts values from 2**63 up after subtracting it, setting the top bit
   again. numpy itself gives another uint32 for a value out of its range in the vectorised
   body of a long array (2**31 where its scalar loop gives 0 for NaN): this follows the
   scalar loop, whose value does not depend on the array's length.
   tests/scalar/test_float_to_int.py checks every pair against numpy. */
static inline npy_int32 sympile_float_to_int32(double x)
{
    return x > -2147483649.0 && x < 2147483648.0 ? (npy_int32)x : NPY_MIN_INT32;
}

static inline npy_int64 sympile_float_to_int64(double x)
{
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (npy_int64)x
        : NPY_MIN_INT64;
}

static inline npy_uint32 sympile_float_to_uint32(double x)
{
    return (npy_uint32)sympile_float_to_int64(x);
}

static inline npy_uint64 sympile_float_to_uint64(double x)
{
    return x >= 9223372036854775808.0
        ? (npy_uint64)sympile_float_to_int64(x - 9223372036854775808.0) ^ 0x8000000000000000ULL
        : (npy_uint64)sympile_float_to_int64(x);
}
