/* Basic indexing (view.c, a library unit compiled once per cache; basic_c.py): the view of
   Subtensor and of IncSubtensor's region, and SliceLength, read from the node's table. */

/* A part of an index: absent (kind 0), the constant `value` (1), or the integer in the
   node's index input number `value` (2). */
typedef struct {
    int kind;
    npy_int64 value;
} SympileIndexPart;

/* An entry of idx_list: a new axis (kind 0), a slice start:stop:step (1), or an integer,
   `start` (2). */
typedef struct {
    int kind;
    SympileIndexPart start, stop, step;
} SympileIndexEntry;

typedef struct {
    const char *op;                   /* str(op), for messages */
    int n_entries, ndim, n_indices;   /* ndim: the view's; n_indices: the index inputs */
    const SympileIndexEntry *entries;
} SympileSubtensor;

/* *view becomes the view of x that `node` takes (its index inputs `indices`), or NULL with a
   Python exception set (returns -1; 0 on success). */
int @NAME@_view(const SympileSubtensor *node, PyArrayObject *x,
                PyArrayObject *const *indices, PyArrayObject **view);

/* The Subtensor node of the table `data` (a SympileSubtensor) on its cells: x, the index
   inputs, the view (program.h's SympileNodeFunction). */
int @NAME@_subtensor(PyObject *const *cells, const void *data);

/* SliceLength's table: which of start, stop and step it is given (its inputs after the
   length, in that order). */
typedef struct {
    const char *op;
    int given[3];
} SympileSliceLength;

int @NAME@_slice_length(PyObject *const *cells, const void *data);
