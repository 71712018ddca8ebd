/* numpy's floor division and remainder of @T@ (npy_divmod): the quotient snapped to an
   integer, the remainder with the divisor's sign (the libm calls take the dtype's suffix). */
static inline @T@ sympile_divmod_@dtype@(@T@ a, @T@ b, @T@ *modulus)
{
    @T@ mod = fmod@f@(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    @T@ div = (a - mod) / b;
    if (mod) {
        if (isless(b, 0) != isless(mod, 0)) {
            mod += b;
            div -= 1;
        }
    } else {
        mod = copysign@f@((@T@)0, b);
    }
    @T@ floordiv;
    if (div) {
        floordiv = floor@f@(div);
        if (isgreater(div - floordiv, 0.5@f@))
            floordiv += 1;
    } else {
        floordiv = copysign@f@((@T@)0, a / b);
    }
    *modulus = mod;
    return floordiv;
}

static inline @T@ sympile_floor_divide_@dtype@(@T@ a, @T@ b)
{
    @T@ mod;
    if (b == 0)
        return a / b;
    return sympile_divmod_@dtype@(a, b, &mod);
}

static inline @T@ sympile_remainder_@dtype@(@T@ a, @T@ b)
{
    @T@ mod;
    if (b == 0)
        return fmod@f@(a, b);
    sympile_divmod_@dtype@(a, b, &mod);
    return mod;
}
