/* The row of x an index entry names: negative entries count from the end, as in numpy;
   -1 for an entry outside [-rows, rows). Shared by rows_take.cu and rows_inc.cu. */
static inline npy_int64 sympile_index_row(npy_int64 entry, npy_int64 rows)
{
    if (entry < 0)
        entry += rows;
    return entry >= 0 && entry < rows ? entry : -1;
}
