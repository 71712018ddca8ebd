/* The offsets (in bytes, one per operand of `count`) of the first element of row `row` of a
   strided kernel's operands: strides[k * nd + axis] is operand k's along axis; the rows run
   along the last axis. */
static inline void sympile_elemwise_row_offsets(int nd, int count, const npy_intp *shape,
                                                const npy_intp *strides, npy_intp row,
                                                npy_intp *offsets)
{
    for (int k = 0; k < count; k++)
        offsets[k] = 0;
    for (int axis = nd - 2; axis >= 0; axis--) {
        const npy_intp index = row % shape[axis];
        row /= shape[axis];
        for (int k = 0; k < count; k++)
            offsets[k] += index * strides[k * nd + axis];
    }
}
