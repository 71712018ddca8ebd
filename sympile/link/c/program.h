/* A compiled function's storage and run state; program.c defines the Program type that
   runs it. */
typedef struct Program {
    PyObject_HEAD
    PyObject **cells;          /* sympile_n_cells one-element lists */
    PyObject *thunks;          /* tuple: the perform() thunk of each node without C code */
    PyObject *updates;         /* tuple of (target cell, source cell index, copy?) */
    PyObject *copy;            /* copy.copy, for update values that are not arrays */
    int failed_node;           /* node whose C code raised, -1 otherwise */
    int bad_input;             /* input cell that failed its check, -1 otherwise */
    int profiling;
    Py_ssize_t n_call_inputs, n_call_outputs;
    int *call_inputs;          /* cell of each explicit input of call() */
    int *call_outputs;         /* cell of each output call() returns */
    char *copy_output;         /* return a copy (the function keeps using the value) */
    char *clear_output;        /* empty the cell before the next call if the caller holds it */
    int single_output;
    double *node_seconds;      /* per node, when profiling */
    long *node_calls;
    int busy;                  /* a call is running: another thread's call waits (program.c) */
} Program;

/* Defined by each module's main unit. */
extern const int sympile_n_cells, sympile_n_nodes;
int sympile_run_once(Program *self);

/* Defined by the program unit. */
extern PyTypeObject sympile_ProgramType;
int sympile_import_numpy(void);
double sympile_now(void);
int sympile_check_array(Program *self, int cell, int typenum, int ndim,
                        const npy_intp *static_shape);
int sympile_normalize_result(Program *self, int cell, int typenum, int ndim);
int sympile_call_thunk(Program *self, int index);
int sympile_condition(Program *self, int cell, int node);
int sympile_load_blas(PyObject *capi, const char *name, void **pointer);
