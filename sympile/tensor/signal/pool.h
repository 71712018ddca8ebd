/* Pooling's geometry and entry points for @T@ (pool.c, a library unit compiled once per
   cache; pool_c.py). */

typedef struct {
    npy_intp rows, cols, out_rows, out_cols;
    npy_intp ws[2], stride[2], pad[2];
    int mode;  /* 0 max, 1 sum, 2 average_inc_pad, 3 average_exc_pad */
} sympile_pool_geometry_@T@;

typedef struct {
    npy_intp row0, row1, col0, col1;  /* input bounds of the window */
    npy_intp padded_size;             /* its size within the padded input */
} sympile_pool_window_@T@;

int @NAME@_pool_forward(const sympile_pool_geometry_@T@ *g, const @T@ *x, @T@ *out,
                        npy_intp planes, int threaded);
int @NAME@_pool_backward(const sympile_pool_geometry_@T@ *g, const @T@ *x, const @T@ *maxout,
                         const @T@ *gz, @T@ *gx, npy_intp planes, int threaded);
int @NAME@_pool_setup(PyArrayObject *x, const npy_intp *ws, const npy_intp *stride,
                      const npy_intp *pad, int ignore_border, int mode, const char *label,
                      sympile_pool_geometry_@T@ *g);

/* A Pool (kind 0: x), MaxPoolGrad (1: x, maxout, gz) or AveragePoolGrad (2: x, gz) node's
   table: its geometry's parameters, its name for messages, and the size from which its loops
   run on several threads (0: never). */
typedef struct {
    int kind, ignore_border, mode;
    npy_intp ws[2], stride[2], pad[2];
    const char *label;
    npy_intp threaded_from;
} sympile_pool_node_@T@;

/* The node of the table `data` (a sympile_pool_node_@T@) on its cells (program.h's
   SympileNodeFunction). */
int @NAME@_pool_node(PyObject *const *cells, const void *data);
