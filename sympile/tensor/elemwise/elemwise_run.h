/* What the family's nodes do that is not their loops (elemwise_run.c, a library unit compiled
   once per cache; elemwise_c.py): the tables of the nodes, in the function's main unit, and
   the entry points that the program calls with them (program.h's SympileNodeFunction). */

typedef int (*SympileElemwiseContiguous)(npy_intp size, char *const *pointers);
typedef int (*SympileElemwiseStrided)(int nd, const npy_intp *shape, char *const *pointers,
                                      const npy_intp *strides);

/* The most operands (inputs and outputs) of a node the run library serves (elemwise_c.py's
   OPERAND_LIMIT): its arrays of them are on the stack. */
#define SYMPILE_ELEMWISE_OPERANDS 64

/* An error the kernels report by or-ing `code` into their flags. */
typedef struct {
    int code;
    PyObject **exception;
    const char *message;
} SympileElemwiseError;

typedef struct {
    const char *op;                   /* str(op), for messages */
    int n_inputs, n_outputs, ndim;
    const signed char *length_one;    /* [n_inputs * ndim]: the input's type has length 1 */
    const signed char *single;        /* [n_inputs]: only length-1 axes, read once */
    const int *written;               /* [n_outputs]: the input written over, or -1 */
    const int *typenums;              /* [n_outputs] */
    SympileElemwiseContiguous span;   /* a run of contiguous operands, on one thread */
    SympileElemwiseContiguous contiguous;
    SympileElemwiseStrided strided;   /* strides[k * nd + axis], in bytes, 0 if broadcast;
                                         NULL: the node has none (the span in blocks) */
    npy_intp parallel_minimum;        /* elements from which blocks run on threads; -1: never */
    int n_errors;
    const SympileElemwiseError *errors;
} SympileElemwise;

/* The node of the table `data` (a SympileElemwise) on its cells (program.h's
   SympileNodeFunction): 0, or -1 with a Python exception set. */
int @NAME@_run(PyObject *const *cells, const void *data);

/* A DimShuffle: output axis k is input axis order[k], or a new axis of length 1 where
   order[k] is -1. */
typedef struct {
    int ndim;
    const int *order;
} SympileDimShuffle;

/* The view of the DimShuffle of the table `data` (a SympileDimShuffle): 0, or -1 with a
   Python exception set. */
int @NAME@_dimshuffle(PyObject *const *cells, const void *data);
