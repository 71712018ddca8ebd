/* The start of a sort on the device (sort_cuda.py): the rows of x (rows x n, C-contiguous)
   copied into the keys (rows x P, P the power of two >= n, in the computed dtype) with each
   element's position beside it; the P - n places past a row's end hold position n or more,
   which the network orders after every element. */
{
    for (npy_int64 t = SYMPILE_GRID_START; t < total; t += SYMPILE_GRID_STEP) {
        const npy_int64 row = t / P, i = t % P;
        if (i < n)
            keys[t] = @LOAD@;
        position[t] = i;
    }
}
