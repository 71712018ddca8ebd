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
                      const npy_intp *pads_after, const npy_intp *strides, const npy_intp *dilations, int flip,
                      npy_intp groups, const char *label, sympile_conv_geometry_@T@ *g,
                      npy_intp *filters, npy_intp *out_dims);

/* A convolution node's table (abstract_conv_c.py): kind 0 AbstractConv (a = inputs,
   b = filters), 1 its gradient for the weights, 2 for the inputs (both with an output shape
   input); nd spatial axes; the border (0 valid, 1 full, 2 half, 3 the explicit pads before
   and after each axis), the subsampling, the dilations, whether the filters are flipped, the groups; its name for
   messages. */
typedef struct {
    int kind, nd, border, filter_flip;
    npy_intp pads[3], pads_after[3], strides[3], dilations[3], groups;
    const char *label;
} sympile_conv_node_@T@;

/* The node of the table `data` (a sympile_conv_node_@T@) on its cells (program.h's
   SympileNodeFunction). */
int @NAME@_conv_node(PyObject *const *cells, const void *data);
