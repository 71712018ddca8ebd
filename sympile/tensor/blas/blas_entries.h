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
