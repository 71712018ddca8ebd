/* The first position in run[0 .. length) (length <= @block@) of its maximum (>) or minimum
   (<), @compare@, or of its first NaN (@floats@: the dtype has NaN), and that value in
   *value. One pass: four vectors of gcc's vector type hold each lane's best and the step
   at which it was last bettered (strictly, so the first of ties stays), then the lanes and
   the elements past the last whole step are compared by value and position. */
@attribute@
static npy_intp @NAME@(const @T@ *run, npy_intp length, @T@ *value)
{
    typedef @T@ sympile_vector __attribute__((vector_size(@bytes@)));
    typedef @M@ sympile_mask __attribute__((vector_size(@bytes@)));
#define SYMPILE_BETTER(a, at, x) { const sympile_mask better = (x) @compare@ (a); a = (sympile_vector)(((sympile_mask)(x) & better) | ((sympile_mask)(a) & ~better)); at = (step & better) | (at & ~better); }
    const npy_intp width = (npy_intp)(sizeof(sympile_vector) / sizeof(@T@));
    sympile_vector a0, a1, a2, a3;
    sympile_mask at0, at1, at2, at3, step, nan;
    for (npy_intp k = 0; k < width; ++k) {
        a0[k] = a1[k] = a2[k] = a3[k] = @identity@;
        at0[k] = at1[k] = at2[k] = at3[k] = step[k] = nan[k] = 0;
    }
    npy_intp i = 0;
    for (; i + 4 * width <= length; i += 4 * width) {
        sympile_vector x0, x1, x2, x3;
        memcpy(&x0, run + i, sizeof x0);
        memcpy(&x1, run + i + width, sizeof x1);
        memcpy(&x2, run + i + 2 * width, sizeof x2);
        memcpy(&x3, run + i + 3 * width, sizeof x3);
        SYMPILE_BETTER(a0, at0, x0) SYMPILE_BETTER(a1, at1, x1)
        SYMPILE_BETTER(a2, at2, x2) SYMPILE_BETTER(a3, at3, x3)
#if @floats@
        nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);
#endif
        step += 1;
    }
#undef SYMPILE_BETTER
    int any = 0;
    for (npy_intp k = 0; k < width; ++k)
        any |= nan[k] != 0;
    @T@ best = @identity@;
    npy_intp position = -1;
    const sympile_vector *bests[4] = {&a0, &a1, &a2, &a3};
    const sympile_mask *ats[4] = {&at0, &at1, &at2, &at3};
    for (int j = 0; j < 4 && i > 0; ++j)
        for (npy_intp k = 0; k < width; ++k) {
            const @T@ candidate = (*bests[j])[k];
            const npy_intp where = (npy_intp)(*ats[j])[k] * 4 * width + j * width + k;
            if (position < 0 || candidate @compare@ best
                    || (candidate == best && where < position)) {
                best = candidate;
                position = where;
            }
        }
    for (npy_intp p = i; p < length; ++p) {
#if @floats@
        any |= run[p] != run[p];
#endif
        if (position < 0 || run[p] @compare@ best) {
            best = run[p];
            position = p;
        }
    }
    if (any)
        for (position = 0; run[position] == run[position]; ++position)
            ;
    *value = run[position];
    return position;
}
