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
    PyObject **node_cells;     /* each node's cells, in sympile_node_cells' order */
    double *node_seconds;      /* per node, when profiling */
    long *node_calls;
    int busy;                  /* a call is running: another thread's call waits (program.c) */
} Program;

/* A node of the program: its C function, called with its cells (inputs, then outputs:
   sympile_node_cells from first_cell) and its data (the table of a node served by a library
   function, NULL for an op unit's function), or, where function is NULL, its perform()
   thunk, whose n_results results (sympile_results from first_result) are made arrays of
   their types and checked. */
typedef int (*SympileNodeFunction)(PyObject *const *cells, const void *data);
typedef struct SympileNode {
    SympileNodeFunction function;
    const void *data;
    int thunk, first_cell, n_cells, first_result, n_results;
} SympileNode;

/* An array a cell must hold: its dtype, rank and static lengths (sympile_lengths from
   first_length; -1 where any length goes). */
typedef struct SympileArrayCheck {
    int cell, typenum, ndim, first_length;
} SympileArrayCheck;

/* Defined by each module's main unit: tables, so that it compiles fast. sympile_steps is
   the order the nodes run in: a node's index, or a conditional's four entries -1 - node,
   its condition's cell, and the lengths of the steps of its two branches, which follow;
   the conditional's node runs after the branch taken. Every table has an entry more than
   its count (C has no empty arrays). */
extern const int sympile_n_cells, sympile_n_nodes;
extern const SympileNode sympile_nodes[];
extern const int sympile_node_cells[];
extern const int sympile_n_inputs;
extern const SympileArrayCheck sympile_inputs[], sympile_results[];
extern const npy_intp sympile_lengths[];
extern const int sympile_n_steps, sympile_steps[];
extern const int sympile_n_between;
typedef void (*SympileBetween)(void);  /* called after each node */
extern const SympileBetween sympile_between[];
int sympile_run_once(Program *self);

/* Defined by the program unit. */
extern PyTypeObject sympile_ProgramType;
int sympile_import_numpy(void);
double sympile_now(void);
int sympile_run_program(Program *self);

/* Defined by the thread governor's library unit (thread_governor.c), in the modules that
   have one. */
void sympile_governor_start(void);
int sympile_govern_threads(void);
void sympile_restore_threads(int threads);
int sympile_load_blas(PyObject *capi, const char *name, void **pointer);
