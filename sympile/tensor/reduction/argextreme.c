/* The first position of the extreme of n >= 1 contiguous @T@ (the first NaN when there is
   one), in one pass: blocks of @BLOCK@ folded by @EXTREME@, the first block whose extreme
   beats the best so far remembered, then searched alone, whole chunks of @LANES@ without the
   best skipped by a vectorised test. */
@attribute@
static npy_intp @NAME@(const @T@ *data, npy_intp n)
{
    @T@ best = @identity@;
    npy_intp best_start = -1;
    for (npy_intp start = 0; start < n; start += @BLOCK@) {
        const @T@ *run = data + start;
        const npy_intp length = n - start < @BLOCK@ ? n - start : @BLOCK@;
        const @T@ value = @EXTREME@(run, length);
        if (best_start < 0 || @better@) {
            best = value;
            best_start = start;
            /* Nothing comes before a block's first NaN. */
            if (value != value) break;
        }
    }
    const @T@ *run = data + best_start;
    npy_intp i = 0;
    for (; i + @LANES@ <= n - best_start; i += @LANES@) {
        int found = 0;
        for (int lane = 0; lane < @LANES@; ++lane) {
            const @T@ value = run[i + lane];
            found |= @chunk_hit@;
        }
        if (found) break;
    }
    while (!(@hit@)) ++i;
    return best_start + i;
}
