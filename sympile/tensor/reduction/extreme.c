/* The maximum (>=) or minimum (<=) of n contiguous elements, the identity when n is 0, NaN
   when one is NaN (@floats@: the dtype has NaN). Four accumulators of gcc's vector type,
   which stay in registers, then one, then single elements; NaN is looked for apart, so that
   the accumulators' chain is one compare and select. */
@attribute@
static @T@ @NAME@(const @T@ *data, npy_intp n)
{
    typedef @T@ sympile_vector __attribute__((vector_size(@bytes@)));
    typedef @M@ sympile_mask __attribute__((vector_size(@bytes@)));
#define SYMPILE_KEEP(a, x) { const sympile_mask keep = (a) @compare@ (x); a = (sympile_vector)(((sympile_mask)(a) & keep) | ((sympile_mask)(x) & ~keep)); }
    const npy_intp width = (npy_intp)(sizeof(sympile_vector) / sizeof(@T@));
    sympile_vector a0, a1, a2, a3;
    sympile_mask nan;
    for (npy_intp k = 0; k < width; ++k) {
        a0[k] = a1[k] = a2[k] = a3[k] = @identity@;
        nan[k] = 0;
    }
    npy_intp i = 0;
    for (; i + 4 * width <= n; i += 4 * width) {
        sympile_vector x0, x1, x2, x3;
        memcpy(&x0, data + i, sizeof x0);
        memcpy(&x1, data + i + width, sizeof x1);
        memcpy(&x2, data + i + 2 * width, sizeof x2);
        memcpy(&x3, data + i + 3 * width, sizeof x3);
        SYMPILE_KEEP(a0, x0) SYMPILE_KEEP(a1, x1) SYMPILE_KEEP(a2, x2) SYMPILE_KEEP(a3, x3)
#if @floats@
        nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);
#endif
    }
    SYMPILE_KEEP(a0, a1) SYMPILE_KEEP(a2, a3) SYMPILE_KEEP(a0, a2)
    for (; i + width <= n; i += width) {
        sympile_vector x0;
        memcpy(&x0, data + i, sizeof x0);
        SYMPILE_KEEP(a0, x0)
#if @floats@
        nan |= x0 != x0;
#endif
    }
#undef SYMPILE_KEEP
    @T@ acc = @identity@;
    int any = 0;
    for (npy_intp k = 0; k < width; ++k) {
        const @T@ value = a0[k];
        acc = acc @compare@ value ? acc : value;
        any |= nan[k] != 0;
    }
    for (; i < n; ++i) {
        const @T@ value = data[i];
        acc = acc @compare@ value ? acc : value;
#if @floats@
        any |= value != value;
#endif
    }
#if @floats@
    return any ? (@T@)NAN : acc;
#else
    (void)any;
    return acc;
#endif
}
