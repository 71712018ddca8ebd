/* The convolutions' geometry and entry points for @T@ (conv_gemm.c, a library unit compiled
   once per cache; abstract_conv_c.py). */

typedef struct {
    npy_intp channels, depth, rows, cols;   /* the input's channels and spatial lengths */
    npy_intp kernel_depth, kernel_rows, kernel_cols;
    npy_intp out_depth, out_rows, out_cols;
    npy_intp pad_depth, pad_rows, pad_cols;
    npy_intp stride_depth, stride_rows, stride_cols;
    npy_intp dil_depth, dil_rows, dil_cols;
    int flip;
} sympile_conv_geometry_@T@;

int @NAME@_conv_gemm(int kind, const sympile_conv_geometry_@T@ *g, npy_intp batch,
                     npy_intp filters, npy_intp groups, const @T@ *a, const @T@ *b, @T@ *out);
int @NAME@_conv_setup(int kind, int nd, PyArrayObject *a, PyArrayObject *b,
                      PyArrayObject *shape, int border, const npy_intp *pads,
                      const npy_intp *strides, const npy_intp *dilations, int flip,
                      npy_intp groups, const char *label, sympile_conv_geometry_@T@ *g,
                      npy_intp *filters, npy_intp *out_dims);
