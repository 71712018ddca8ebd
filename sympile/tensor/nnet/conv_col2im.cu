/* col2im on the device (the transpose of im2col), one thread per element t of the input's
   gradient (images, channels, depth, rows, cols), C-contiguous: the sum, over the taps in
   order (conv_gemm.c's order), of the columns' entries that im2col copied from it. No two
   threads write one element, so no atomics. */
{
    const npy_int64 taps = kernel_depth * kernel_rows * kernel_cols;
    const npy_int64 outputs = out_depth * out_rows * out_cols;
    const npy_int64 width = images * outputs;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP) {
        const npy_int64 c = t % cols, r = (t / cols) % rows, d = (t / (cols * rows)) % depth;
        const npy_int64 plane = t / (cols * rows * depth);
        const npy_int64 channel = plane % channels, image = plane / channels;
        @T@ sum = 0;
        for (npy_int64 tap = 0; tap < taps; ++tap) {
            npy_int64 ta, ti, tj;
            sympile_conv_tap(tap, kernel_depth, kernel_rows, kernel_cols, (int)flip, &ta, &ti,
                             &tj);
            const npy_int64 qd = d + pad_depth - ta * dil_depth;
            const npy_int64 qr = r + pad_rows - ti * dil_rows;
            const npy_int64 qc = c + pad_cols - tj * dil_cols;
            if (qd < 0 || qr < 0 || qc < 0 || qd % stride_depth || qr % stride_rows
                    || qc % stride_cols)
                continue;
            const npy_int64 od = qd / stride_depth, orow = qr / stride_rows;
            const npy_int64 oc = qc / stride_cols;
            if (od >= out_depth || orow >= out_rows || oc >= out_cols)
                continue;
            sum += cols_in[(channel * taps + tap) * width + image * outputs
                           + (od * out_rows + orow) * out_cols + oc];
        }
        gx[t] = sum;
    }
}
