/* The shape family's entry points (shape.c, a library unit compiled once per cache;
   shape_c.py), each called by the program with its node's cells and table (program.h's
   SympileNodeFunction): 0, or -1 with a Python exception set. */

/* shape(x); no table. */
int @NAME@_shape(PyObject *const *cells, const void *data);
/* shape_i(x): the length of axis *(const int *)data. */
int @NAME@_shape_i(PyObject *const *cells, const void *data);
/* An op whose output is its input itself (a view changing only the type); no table. */
int @NAME@_view(PyObject *const *cells, const void *data);
/* specify_shape(x, *lengths): *(const int *)data lengths, each an integer 0-d array. */
int @NAME@_specify_shape(PyObject *const *cells, const void *data);

/* MakeVector of *(const int *)data integer scalars (not uint64) into an int64 vector. */
int @NAME@_make_vector(PyObject *const *cells, const void *data);

/* Reshape to `ndim` axes; `op` names the op in messages. */
typedef struct {
    int ndim;
    const char *op;
} SympileReshape;
int @NAME@_reshape(PyObject *const *cells, const void *data);
