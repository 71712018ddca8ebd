/* A contiguous fold (@NAME@, careduce_c.py or fused_c.py) on several threads: the top
   @LEVELS@ levels of its pairwise tree, halves at multiples of @BLOCK@ elements as @NAME@
   splits them, run as OpenMP tasks, so that the result is @NAME@'s, bit for bit, on any
   number of threads. Below @MINIMUM@ elements, @NAME@ alone. */
static @ACC@ @NAME@_tree(@PARAMETERS@, int levels)
{
    if (levels == 0 || n <= @BLOCK@)
        return @NAME@(@ARGUMENTS@);
    const npy_intp half = (n / 2 + @BLOCK@ - 1) / @BLOCK@ * @BLOCK@;
    @SPLIT@
    @ACC@ acc;
    @ERRORS@
    #pragma omp task shared(@SHARED@)
    acc = @NAME@_tree(@FIRST@, levels - 1);
    const @ACC@ value = @NAME@_tree(@SECOND@, levels - 1);
    #pragma omp taskwait
    @MERGE@
    @STATEMENT@
    return acc;
}

static @ACC@ @NAME@_threaded(@PARAMETERS@)
{
    if (n < @MINIMUM@)
        return @NAME@(@ARGUMENTS@);
    @ACC@ result;
    #pragma omp parallel
    #pragma omp single
    result = @NAME@_tree(@ARGUMENTS@, @LEVELS@);
    return result;
}
