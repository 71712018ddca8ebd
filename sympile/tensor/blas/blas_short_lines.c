/* target[i * ld + j] += (alpha * scales[i * scale_step]) * along[j * along_step] for i <
   lines and j < length: an outer-product update of short lines, vectorized along them. */
@vectorize@
static void sympile_blas_short_lines_@dtype@(int lines, int length, @type@ alpha,
                                             const @type@ *scales, npy_intp scale_step,
                                             const @type@ *along, npy_intp along_step,
                                             @type@ *target, npy_intp ld)
{
    for (int i = 0; i < lines; i++) {
        @type@ scale = alpha * scales[i * scale_step];
        @type@ *line = target + i * ld;
        if (along_step == 1)
            for (int j = 0; j < length; j++)
                line[j] += scale * along[j];
        else
            for (int j = 0; j < length; j++)
                line[j] += scale * along[j * along_step];
    }
}
