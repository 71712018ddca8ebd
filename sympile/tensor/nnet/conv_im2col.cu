/* im2col on the device, one thread per element t of the columns (channels x taps, images x
   outputs), C-contiguous: row channel * taps + tap, column image * outputs + o holds the
   input under that tap of output position o (0 in the padding). */
{
    const npy_int64 taps = kernel_depth * kernel_rows * kernel_cols;
    const npy_int64 outputs = out_depth * out_rows * out_cols;
    const npy_int64 width = images * outputs;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 line = t / width, column = t % width;
        const npy_int64 channel = line / taps, tap = line % taps;
        const npy_int64 image = column / outputs, o = column % outputs;
        const npy_int64 oc = o % out_cols, orow = (o / out_cols) % out_rows;
        const npy_int64 od = o / (out_cols * out_rows);
        npy_int64 ta, ti, tj;
        sympile_conv_tap(tap, kernel_depth, kernel_rows, kernel_cols, (int)flip, &ta, &ti,
                         &tj);
        const npy_int64 d = od * stride_depth + ta * dil_depth - pad_depth;
        const npy_int64 r = orow * stride_rows + ti * dil_rows - pad_rows;
        const npy_int64 c = oc * stride_cols + tj * dil_cols - pad_cols;
        const int inside = d >= 0 && d < depth && r >= 0 && r < rows && c >= 0 && c < cols;
        cols_out[t] = inside ? x[image * x_s0 + channel * x_s1 + d * x_s2 + r * x_s3 + c * x_s4]
                             : (@T@)0;
    }
}
