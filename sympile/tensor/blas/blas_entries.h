/* The dense products and BLAS updates of @dtype@ arrays (blas_dot.c, blas_matmul.c,
   blas_tensordot.c, blas_update.c): defined in the family's library unit, compiled once per
   cache, and called by the op units. Each returns 0, or -1 with an exception set. */
int @NAME@_dot(const char *op, PyArrayObject *a, PyArrayObject *b, PyArrayObject **out);
int @NAME@_matmul(const char *op, PyArrayObject *a, PyArrayObject *b, int a_batch_one,
                  int b_batch_one, PyArrayObject **out);
int @NAME@_tensordot(const char *op, PyArrayObject *a, PyArrayObject *b, int n_axes,
                     const int *perm_a, const int *perm_b, PyArrayObject **out);
int @NAME@_blas_update(const char *op, PyArrayObject *z, PyArrayObject *x, PyArrayObject *y,
                       int y_row, PyArrayObject *alpha_array, PyArrayObject *beta_array,
                       int inplace, PyArrayObject **out);

#ifndef SYMPILE_BLAS_NODE_TABLES
#define SYMPILE_BLAS_NODE_TABLES
/* A Dot node's table: its name for messages. */
typedef struct {
    const char *op;
} SympileBlasDot;

/* A pair of lengths a BLAS update checks are equal, as perform does. */
typedef struct {
    const char *what;
    int first, first_axis, second, second_axis;
} SympileBlasCheck;

/* A BLAS update node's table: the input positions of z, x, y, alpha and beta (-1: 1) in
   alpha * x @ y + beta * z, y a row (y_row), written over z (inplace), its checks. */
typedef struct {
    const char *op;
    int n_inputs, z, x, y, alpha, beta, y_row, inplace, n_checks;
    const SympileBlasCheck *checks;
} SympileBlasUpdate;
#endif

/* The entry points of Dot (SympileBlasDot) and BLAS update (SympileBlasUpdate) nodes. */
int @NAME@_dot_node(PyObject *const *cells, const void *data);
int @NAME@_update_node(PyObject *const *cells, const void *data);
