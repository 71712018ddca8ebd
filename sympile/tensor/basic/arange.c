/* ARange for one output dtype (@DTYPE@, C type @T@) from bounds read as Python scalars of
   type @S@ (npy_int64 for integer bounds, double otherwise), as numpy.arange computes it
   (ARange.perform; arange_c.py says how). */

/* `value` into *target as numpy's setitem converts a Python scalar: a float truncated to an
   integer through a C long, an integer out of the dtype's range an OverflowError. */
static int sympile_arange_convert_@NAME@(@S@ value, @T@ *target)
{
#if @FLOAT_OUTPUT@
    /* numpy makes a Python int a double first (then, for float32, rounds again). */
    *target = (@T@)(double)value;
    return 0;
#else
#if @INTEGER_BOUNDS@
    const npy_int64 integer = (npy_int64)value;
#else
    const double truncated_double = trunc((double)value);
    if (!(truncated_double >= -9223372036854775808.0
          && truncated_double < 9223372036854775808.0)) {
        PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
        return -1;
    }
    const npy_int64 integer = (npy_int64)truncated_double;
#endif
    if (integer < @MIN@ @UPPER@) {
        PyErr_Format(PyExc_OverflowError, "Python integer %lld out of bounds for @DTYPE@",
                     (long long)integer);
        return -1;
    }
    *target = (@T@)integer;
    return 0;
#endif
}

/* *output becomes numpy.arange(start, stop, step) of @DTYPE@: the length ceil((stop - start)
   / step) in double arithmetic (exact differences for integer bounds), the first element
   start and the second start + step each converted as above, the others numpy's fill,
   first + i * (second - first) in the dtype's own arithmetic (integers wrap). `op` names the
   op in messages. Returns 0, or -1 with a Python exception set. */
static int sympile_arange_@NAME@(@S@ start, @S@ stop, @S@ step, PyArrayObject **output,
                                 const char *op)
{
    if (step == 0) {
        PyErr_Format(PyExc_ValueError, "%s: step must not be zero", op);
        return -1;
    }
#if @INTEGER_BOUNDS@
    /* Exact: the bounds are int64, their differences fit in 128 bits. */
    const double quotient = (double)((__int128)stop - (__int128)start) / (double)step;
#else
    const double quotient = (stop - start) / (double)step;
#endif
    if (quotient != quotient) {
        PyErr_SetString(PyExc_ValueError, "arange: cannot compute length");
        return -1;
    }
    const double rounded = ceil(quotient);
    if (rounded >= (double)NPY_MAX_INTP) {
        PyErr_SetString(PyExc_ValueError, "Maximum allowed size exceeded");
        return -1;
    }
    npy_intp length = rounded > 0 ? (npy_intp)rounded : 0;
    /* numpy's underflow check: a nonzero span whose quotient rounds to zero (0 to 5e-324 by
       2, or a step of inf) holds one element when the quotient is +0. */
    if (quotient == 0 && stop != start)
        length = signbit(quotient) ? 0 : 1;
    @T@ first = 0, second = 0;
    if (length >= 1 && sympile_arange_convert_@NAME@(start, &first) != 0)
        return -1;
    if (length >= 2) {
#if @INTEGER_BOUNDS@
        if ((step > 0 && start > NPY_MAX_INT64 - step)
                || (step < 0 && start < NPY_MIN_INT64 - step)) {
            PyErr_SetString(PyExc_OverflowError, "Python integer out of bounds for @DTYPE@");
            return -1;
        }
        const @S@ next = (npy_int64)((npy_uint64)start + (npy_uint64)step);
#else
        const @S@ next = start + step;
#endif
        if (sympile_arange_convert_@NAME@(next, &second) != 0)
            return -1;
    }
    if (sympile_prepare_output(output, 1, &length, @NPY@) != 0)
        return -1;
    @T@ *values = (@T@ *)PyArray_DATA(*output);
    if (length >= 1) values[0] = first;
    if (length >= 2) {
        values[1] = second;
        /* numpy's fill, in the same types. */
        @T@ delta = second;
        delta -= first;
        for (npy_intp i = 2; i < length; ++i) values[i] = first + i * delta;
    }
    return 0;
}
