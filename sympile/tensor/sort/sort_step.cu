/* One step of the bitonic sorting network over rows of P keys (P a power of two): thread t
   compares the pair (lo, lo + j) of its row, lo = 2 j floor(h / j) + h % j for h = t % (P/2),
   and swaps them unless they are in the order the step wants, ascending where bit k of lo is
   0. The order: numbers by value (NaN after every number, as numpy sorts), ties by position
   (a stable sort), the places past a row's end (position >= n) last. The steps for k = 2, 4,
   ..., P and j = k/2, ..., 1 sort each row. */
{
    const npy_int64 half = P / 2;
    for (npy_int64 t = SYMPILE_GRID_START; t < pairs; t += SYMPILE_GRID_STEP) {
        const npy_int64 row = t / half, h = t % half;
        const npy_int64 lo = row * P + 2 * j * (h / j) + h % j, hi = lo + j;
        const @V@ a = keys[lo], b = keys[hi];
        const npy_int64 pa = position[lo], pb = position[hi];
        int after;   /* whether the element at lo goes after the one at hi */
        if (pa >= n || pb >= n)
            after = pa >= n && (pb < n || pa > pb);
        else if (@IS_NAN_A@ || @IS_NAN_B@)
            after = @IS_NAN_A@ && (!@IS_NAN_B@ || pa > pb);
        else
            after = a > b || (a == b && pa > pb);
        const int ascending = ((2 * j * (h / j) + h % j) & k) == 0;
        if (after == ascending) {
            keys[lo] = b;
            keys[hi] = a;
            position[lo] = pb;
            position[hi] = pa;
        }
    }
}
