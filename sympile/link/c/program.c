/* The Program type and what the generated code calls, the same for every module: compiled
   once and cached, then linked into each module (after includes.h, output_helpers.h and
   program.h). It reads each module's tables (program.h) and sympile_run_once, and runs
   the module's nodes in sympile_run_program. */
int sympile_load_blas(PyObject *capi, const char *name, void **pointer)
{
    PyObject *capsule = PyDict_GetItemString(capi, name);
    if (capsule == NULL) {
        PyErr_Format(PyExc_ImportError, "scipy.linalg's cython_blas / cython_lapack have no %s",
                     name);
        return -1;
    }
    *pointer = PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
    return *pointer == NULL ? -1 : 0;
}
double sympile_now(void)
{
    struct timespec moment;
    clock_gettime(CLOCK_MONOTONIC, &moment);
    return moment.tv_sec + 1e-9 * moment.tv_nsec;
}

static int sympile_check_array(Program *self, const SympileArrayCheck *check)
{
    const int cell = check->cell, typenum = check->typenum, ndim = check->ndim;
    const npy_intp *static_shape = sympile_lengths + check->first_length;
    PyObject *value = PyList_GET_ITEM(self->cells[cell], 0);
    /* The machine's byte order only: C code reads the values as they are in memory. */
    if (!PyArray_Check(value) || PyArray_TYPE((PyArrayObject *)value) != typenum
            || PyArray_NDIM((PyArrayObject *)value) != ndim
            || PyArray_ISBYTESWAPPED((PyArrayObject *)value))
        goto bad;
    for (int axis = 0; axis < ndim; axis++)
        if (static_shape[axis] >= 0
                && PyArray_DIMS((PyArrayObject *)value)[axis] != static_shape[axis])
            goto bad;
    return 0;
bad:
    self->bad_input = cell;
    PyErr_SetString(PyExc_TypeError, "bad input");
    return -1;
}

/* A perform() result read by C code: made an array of the declared type (numpy scalars and
   0-d results become 0-d arrays), or a TypeError. */
static int sympile_normalize_result(Program *self, int cell, int typenum, int ndim)
{
    PyObject *value = PyList_GET_ITEM(self->cells[cell], 0);
    if (PyArray_Check(value) && PyArray_TYPE((PyArrayObject *)value) == typenum
            && PyArray_NDIM((PyArrayObject *)value) == ndim)
        return 0;
    PyObject *array = PyArray_FromAny(value, PyArray_DescrFromType(typenum), 0, 0, 0, NULL);
    if (array == NULL)
        return -1;
    if (PyArray_NDIM((PyArrayObject *)array) != ndim) {
        Py_DECREF(array);
        self->bad_input = cell;
        PyErr_SetString(PyExc_TypeError, "bad result");
        return -1;
    }
    sympile_store_output(self->cells[cell], (PyArrayObject *)array);
    return 0;
}

/* A perform() node: its thunk (which raises naming the node), then its results that C code
   reads, made arrays of their types and checked. */
static int sympile_run_thunk(Program *self, const SympileNode *node)
{
    PyObject *result = PyObject_CallNoArgs(PyTuple_GET_ITEM(self->thunks, node->thunk));
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    for (int i = 0; i < node->n_results; i++) {
        const SympileArrayCheck *check = &sympile_results[node->first_result + i];
        if (sympile_normalize_result(self, check->cell, check->typenum, check->ndim)
                || sympile_check_array(self, check))
            return -1;
    }
    return 0;
}

static int sympile_run_node(Program *self, int k)
{
    const SympileNode *node = &sympile_nodes[k];
    double start = self->profiling ? sympile_now() : 0.0;
    int failed;
    if (node->function != NULL) {
        failed = node->function(self->node_cells + node->first_cell, node->data);
        if (failed)
            self->failed_node = k;
    } else {
        failed = sympile_run_thunk(self, node);
    }
    if (self->profiling) {
        self->node_seconds[k] += sympile_now() - start;
        self->node_calls[k]++;
    }
    if (failed)
        return -1;
    for (int i = 0; i < sympile_n_between; i++)
        sympile_between[i]();
    return 0;
}

/* Runs the `n` entries of sympile_steps from `first` (see program.h). */
static int sympile_run_steps(Program *self, int first, int n)
{
    for (int i = first; i < first + n;) {
        const int step = sympile_steps[i];
        if (step >= 0) {
            if (sympile_run_node(self, step))
                return -1;
            i++;
            continue;
        }
        const int node = -1 - step, then_length = sympile_steps[i + 2];
        const int else_length = sympile_steps[i + 3];
        const int truth = PyObject_IsTrue(PyList_GET_ITEM(self->cells[sympile_steps[i + 1]], 0));
        if (truth < 0) {
            self->failed_node = node;
            return -1;
        }
        if (truth ? sympile_run_steps(self, i + 4, then_length)
                  : sympile_run_steps(self, i + 4 + then_length, else_length))
            return -1;
        if (sympile_run_node(self, node))
            return -1;
        i += 4 + then_length + else_length;
    }
    return 0;
}

/* Checks the graph's inputs (a wrong value is a TypeError, never a crash), then runs the
   nodes. */
int sympile_run_program(Program *self)
{
    for (int i = 0; i < sympile_n_inputs; i++)
        if (sympile_check_array(self, &sympile_inputs[i]))
            return -1;
    return sympile_run_steps(self, 0, sympile_n_steps);
}

static int sympile_apply_updates(Program *self)
{
    Py_ssize_t count = PyTuple_GET_SIZE(self->updates);
    PyObject *values[count > 0 ? count : 1];
    /* Every new value is read before any is written: updates are simultaneous. */
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *update = PyTuple_GET_ITEM(self->updates, i);
        PyObject *value = PyList_GET_ITEM(
            self->cells[PyLong_AsLong(PyTuple_GET_ITEM(update, 1))], 0);
        if (PyObject_IsTrue(PyTuple_GET_ITEM(update, 2))) {
            value = PyArray_Check(value)
                ? PyArray_NewCopy((PyArrayObject *)value, NPY_KEEPORDER)
                : PyObject_CallOneArg(self->copy, value);
            if (value == NULL) {
                for (Py_ssize_t j = 0; j < i; j++)
                    Py_DECREF(values[j]);
                return -1;
            }
        } else {
            Py_INCREF(value);
        }
        values[i] = value;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *target = PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->updates, i), 0);
        PyObject *old = PyList_GET_ITEM(target, 0);
        PyList_SET_ITEM(target, 0, values[i]);
        Py_XDECREF(old);
    }
    return 0;
}

static PyObject *Program_run_locked(Program *self, PyObject *argument)
{
    long n_calls = PyLong_AsLong(argument);
    if (n_calls == -1 && PyErr_Occurred())
        return NULL;
    self->failed_node = -1;
    self->bad_input = -1;
    for (long call = 0; call < n_calls; call++) {
        if (sympile_run_once(self) || sympile_apply_updates(self))
            return NULL;
        /* Ctrl-C (any Python signal handler that raises) stops the loop between two calls:
           the calls made so far stay applied, the next one never starts. */
        if (call + 1 < n_calls && PyErr_CheckSignals() != 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* One call of the compiled function: empty the cells of outputs the caller still holds
   from the last call, store the inputs, run, take the outputs, apply the updates. An output
   the caller has let go of stays in its cell, where its node can reuse the array (a new one
   of 40 MB costs more in page faults than the loop that fills it). */
static PyObject *Program_call_locked(Program *self, PyObject *args)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != self->n_call_inputs) {
        PyErr_Format(PyExc_TypeError, "expected a tuple of %zd inputs", self->n_call_inputs);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < self->n_call_outputs; j++) {
        PyObject *cell = self->cells[self->call_outputs[j]];
        PyObject *old = PyList_GET_ITEM(cell, 0);
        /* Held elsewhere too (by the caller, or by a view of it): never written again. */
        if (self->clear_output[j] && old != Py_None && Py_REFCNT(old) > 1) {
            Py_INCREF(Py_None);
            PyList_SET_ITEM(cell, 0, Py_None);
            Py_DECREF(old);
        }
    }
    for (Py_ssize_t i = 0; i < self->n_call_inputs; i++) {
        PyObject *cell = self->cells[self->call_inputs[i]];
        PyObject *old = PyList_GET_ITEM(cell, 0);
        PyObject *value = PyTuple_GET_ITEM(args, i);
        Py_INCREF(value);
        PyList_SET_ITEM(cell, 0, value);
        Py_XDECREF(old);
    }
    self->failed_node = -1;
    self->bad_input = -1;
    if (sympile_run_once(self))
        return NULL;
    PyObject *result = self->single_output ? NULL : PyList_New(self->n_call_outputs);
    if (result == NULL && !self->single_output)
        return NULL;
    for (Py_ssize_t j = 0; j < self->n_call_outputs; j++) {
        PyObject *value = PyList_GET_ITEM(self->cells[self->call_outputs[j]], 0);
        if (self->copy_output[j]) {
            value = PyArray_Check(value)
                ? PyArray_NewCopy((PyArrayObject *)value, NPY_KEEPORDER)
                : PyObject_CallOneArg(self->copy, value);
            if (value == NULL) {
                Py_XDECREF(result);
                return NULL;
            }
        } else {
            Py_INCREF(value);
        }
        if (self->single_output)
            result = value;
        else
            PyList_SET_ITEM(result, j, value);
    }
    if (sympile_apply_updates(self)) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

static void Program_free_call(Program *self)
{
    PyMem_Free(self->call_inputs);
    PyMem_Free(self->call_outputs);
    PyMem_Free(self->copy_output);
    PyMem_Free(self->clear_output);
    self->call_inputs = self->call_outputs = NULL;
    self->copy_output = self->clear_output = NULL;
    self->n_call_inputs = self->n_call_outputs = 0;
}

/* set_call(input cells, ((output cell, copy?, clear?), ...), single?) */
static PyObject *Program_set_call(Program *self, PyObject *args)
{
    PyObject *inputs, *outputs;
    int single;
    if (!PyArg_ParseTuple(args, "O!O!p", &PyTuple_Type, &inputs, &PyTuple_Type, &outputs,
                          &single))
        return NULL;
    Program_free_call(self);
    Py_ssize_t n_inputs = PyTuple_GET_SIZE(inputs), n_outputs = PyTuple_GET_SIZE(outputs);
    if (single && n_outputs != 1) {
        PyErr_SetString(PyExc_ValueError, "set_call: a single output needs one output");
        return NULL;
    }
    self->call_inputs = PyMem_Calloc(n_inputs + 1, sizeof(int));
    self->call_outputs = PyMem_Calloc(n_outputs + 1, sizeof(int));
    self->copy_output = PyMem_Calloc(n_outputs + 1, 1);
    self->clear_output = PyMem_Calloc(n_outputs + 1, 1);
    if (!self->call_inputs || !self->call_outputs || !self->copy_output || !self->clear_output) {
        Program_free_call(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        long cell = PyLong_AsLong(PyTuple_GET_ITEM(inputs, i));
        if (cell < 0 || cell >= sympile_n_cells) {
            Program_free_call(self);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_IndexError, "set_call: input cell out of range");
            return NULL;
        }
        self->call_inputs[i] = (int)cell;
    }
    for (Py_ssize_t j = 0; j < n_outputs; j++) {
        long cell;
        int copy_needed, clear;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(outputs, j), "lpp", &cell, &copy_needed, &clear)
                || cell < 0 || cell >= sympile_n_cells) {
            Program_free_call(self);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_IndexError, "set_call: output cell out of range");
            return NULL;
        }
        self->call_outputs[j] = (int)cell;
        self->copy_output[j] = (char)copy_needed;
        self->clear_output[j] = (char)clear;
    }
    self->n_call_inputs = n_inputs;
    self->n_call_outputs = n_outputs;
    self->single_output = single;
    Py_RETURN_NONE;
}

/* A view whose data pointer run_steps moves along its array's rows, one row per step. Moving
   the pointer of a view made once costs no allocation per step; it is safe because run_steps
   makes the view itself (held only by it and a cell), the pointer stays inside the base array
   the view keeps alive, and nothing computed from the view outlives its step: views of it
   that ops make take its pointer when made, and each result is copied out before the next
   move. Rows keep their alignment when the row stride is a multiple of the itemsize (every
   numeric dtype's alignment divides its itemsize); else the flag is recomputed after each
   move. */
typedef struct {
    PyArrayObject *view;       /* owned */
    char *origin;              /* row 0 of the array the view moves along */
    npy_intp stride;           /* bytes from one row to the next */
    Py_ssize_t first_row;      /* the row of step 0 */
    Py_ssize_t period;         /* > 0: the rows wrap around (a circular buffer of that many) */
    int realign;
} SympileMovingView;

static inline void sympile_move_view(SympileMovingView *moving, Py_ssize_t step)
{
    Py_ssize_t row = moving->first_row + step;
    if (moving->period > 0)
        row %= moving->period;
    ((PyArrayObject_fields *)moving->view)->data = moving->origin + row * moving->stride;
    if (moving->realign)
        PyArray_UpdateFlags(moving->view, NPY_ARRAY_ALIGNED);
}

/* `moving` takes `row`, a new view of row 0 of `array`: stride is the array's first. */
static void sympile_start_moving(SympileMovingView *moving, PyArrayObject *row,
                                 PyArrayObject *array, Py_ssize_t first_row, Py_ssize_t period)
{
    moving->view = row;
    moving->origin = PyArray_BYTES(row);
    moving->stride = PyArray_STRIDES(array)[0];
    moving->first_row = first_row;
    moving->period = period;
    moving->realign = PyArray_ITEMSIZE(row) > 0 && moving->stride % PyArray_ITEMSIZE(row) != 0;
}

/* A new view of row 0 of `array` (ndim >= 1) that keeps the array alive; NULL on error. */
static PyArrayObject *sympile_row_view(PyArrayObject *array)
{
    PyArray_Descr *descr = PyArray_DESCR(array);
    Py_INCREF(descr);
    PyArrayObject *row = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, descr, PyArray_NDIM(array) - 1, PyArray_DIMS(array) + 1,
        PyArray_STRIDES(array) + 1, PyArray_BYTES(array),
        PyArray_FLAGS(array) & NPY_ARRAY_WRITEABLE, NULL);
    if (row == NULL)
        return NULL;
    Py_INCREF(array);
    if (PyArray_SetBaseObject(row, (PyObject *)array) < 0) {
        Py_DECREF(row);
        return NULL;
    }
    return row;
}

/* dest[...] = value: one memmove when both are C-contiguous arrays of one dtype and shape. */
static int sympile_copy_result(PyArrayObject *destination, PyObject *value)
{
    if (PyArray_Check(value)) {
        PyArrayObject *array = (PyArrayObject *)value;
        int same = PyArray_TYPE(array) == PyArray_TYPE(destination)
            && PyArray_NDIM(array) == PyArray_NDIM(destination)
            && PyArray_IS_C_CONTIGUOUS(array) && PyArray_IS_C_CONTIGUOUS(destination);
        for (int axis = 0; same && axis < PyArray_NDIM(array); axis++)
            same = PyArray_DIMS(array)[axis] == PyArray_DIMS(destination)[axis];
        if (same) {
            /* memmove: a result may be a view of the state buffer the row belongs to. */
            memmove(PyArray_BYTES(destination), PyArray_BYTES(array), PyArray_NBYTES(array));
            return 0;
        }
    }
    return PyArray_CopyObject(destination, value);
}

/* A new (n_steps, *shape of value) buffer of dtype typenum, which becomes *buffer; NULL on
   error. */
static PyArrayObject *sympile_allocate_rows(PyObject *value, int typenum, Py_ssize_t n_steps)
{
    PyArrayObject *array = (PyArrayObject *)PyArray_FromAny(value, NULL, 0, 0, 0, NULL);
    if (array == NULL)
        return NULL;
    int ndim = PyArray_NDIM(array);
    npy_intp dims[NPY_MAXDIMS + 1];
    dims[0] = n_steps;
    for (int axis = 0; axis < ndim; axis++)
        dims[axis + 1] = PyArray_DIMS(array)[axis];
    Py_DECREF(array);
    if (ndim + 1 > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "run_steps: too many dimensions for a buffer");
        return NULL;
    }
    return (PyArrayObject *)PyArray_EMPTY(ndim + 1, dims, typenum, 0);
}

/* The truth of an until condition: a 0-d bool array is read in place. */
static inline int sympile_truth(PyObject *value)
{
    if (PyArray_Check(value) && PyArray_NDIM((PyArrayObject *)value) == 0
            && PyArray_TYPE((PyArrayObject *)value) == NPY_BOOL)
        return *(npy_bool *)PyArray_DATA((PyArrayObject *)value) != 0;
    return PyObject_IsTrue(value);
}

/* How a Scan's loop feeds the program and reads it back (made once by prepare_steps).
   An input's cell holds, at step k: the call's array `source` itself (FIXED), its row
   first_row + k (SEQUENCE) or its row (first_row + k) modulo its length (STATE: a state
   buffer, circular when kept_steps makes it shorter than the loop). After each step an
   output's cell value is copied into row (first_row + k) modulo the length of the array
   `source`, or with source -1 into row k of a buffer of typenum allocated after step 0
   with n_steps rows of step 0's shape; with `clear`, the cell is then emptied if another
   cell holds its value too (the output of an in-place op), so that the op that made the
   value finds it held by its own cell alone and reuses it at the next step. */
enum { SYMPILE_STEP_FIXED, SYMPILE_STEP_SEQUENCE, SYMPILE_STEP_STATE };

typedef struct {
    int cell, source, kind;
    Py_ssize_t first_row;
} SympileStepInput;

typedef struct {
    int cell, source, typenum, clear;
    Py_ssize_t first_row;
} SympileStepOutput;

typedef struct {
    int n_cells;               /* of the module it was made for */
    int condition;             /* the cell of the until condition, or -1 */
    int clear_condition;
    Py_ssize_t n_inputs, n_outputs, n_arrays;
    SympileStepInput *inputs;
    SympileStepOutput *outputs;
} SympileStepPlan;

static const char SYMPILE_STEP_PLAN[] = "sympile.step_plan";

static void sympile_free_step_plan(PyObject *capsule)
{
    PyMem_Free(PyCapsule_GetPointer(capsule, SYMPILE_STEP_PLAN));
}

static int sympile_check_cell(long cell, const char *what)
{
    if (cell >= 0 && cell < sympile_n_cells)
        return 0;
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_IndexError, "prepare_steps: %s cell %ld out of range", what, cell);
    return -1;
}

/* prepare_steps(((cell, source, kind, first row), ...), ((cell, source, typenum, first row,
   clear), ...), condition cell or -1, clear the condition?): a plan for run_steps. */
static PyObject *Program_prepare_steps(Program *self, PyObject *args)
{
    (void)self;  /* the method's signature is Python's */
    PyObject *inputs, *outputs;
    int condition, clear_condition;
    if (!PyArg_ParseTuple(args, "O!O!ip", &PyTuple_Type, &inputs, &PyTuple_Type, &outputs,
                          &condition, &clear_condition))
        return NULL;
    if (condition != -1 && sympile_check_cell(condition, "condition"))
        return NULL;
    Py_ssize_t n_inputs = PyTuple_GET_SIZE(inputs), n_outputs = PyTuple_GET_SIZE(outputs);
    SympileStepPlan *plan = PyMem_Malloc(sizeof(SympileStepPlan)
                                         + n_inputs * sizeof(SympileStepInput)
                                         + n_outputs * sizeof(SympileStepOutput));
    if (plan == NULL)
        return PyErr_NoMemory();
    plan->n_cells = sympile_n_cells;
    plan->condition = condition;
    plan->clear_condition = clear_condition;
    plan->n_inputs = n_inputs;
    plan->n_outputs = n_outputs;
    plan->n_arrays = 0;
    plan->inputs = (SympileStepInput *)(plan + 1);
    plan->outputs = (SympileStepOutput *)(plan->inputs + n_inputs);
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        SympileStepInput *input = &plan->inputs[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(inputs, i), "iiin", &input->cell,
                              &input->source, &input->kind, &input->first_row)
                || sympile_check_cell(input->cell, "input"))
            goto fail;
        if (input->source < 0 || input->first_row < 0 || input->kind < SYMPILE_STEP_FIXED
                || input->kind > SYMPILE_STEP_STATE) {
            PyErr_SetString(PyExc_ValueError, "prepare_steps: bad input entry");
            goto fail;
        }
        if (input->source >= plan->n_arrays)
            plan->n_arrays = input->source + 1;
    }
    for (Py_ssize_t j = 0; j < n_outputs; j++) {
        SympileStepOutput *output = &plan->outputs[j];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(outputs, j), "iiinp", &output->cell,
                              &output->source, &output->typenum, &output->first_row,
                              &output->clear)
                || sympile_check_cell(output->cell, "output"))
            goto fail;
        if (output->source < -1 || output->first_row < 0) {
            PyErr_SetString(PyExc_ValueError, "prepare_steps: bad output entry");
            goto fail;
        }
        if (output->source < 0) {
            PyArray_Descr *descr = PyArray_DescrFromType(output->typenum);
            if (descr == NULL)
                goto fail;
            Py_DECREF(descr);
        }
        if (output->source >= plan->n_arrays)
            plan->n_arrays = output->source + 1;
    }
    PyObject *capsule = PyCapsule_New(plan, SYMPILE_STEP_PLAN, sympile_free_step_plan);
    if (capsule == NULL)
        goto fail;
    return capsule;
fail:
    PyMem_Free(plan);
    return NULL;
}

/* Whether `value` can be `kind` input or a state output's destination (source >= 0) for
   n_steps steps from first_row: an array with rows, enough of them unless they wrap. */
static int sympile_check_step_array(PyObject *value, int wraps, Py_ssize_t first_row,
                                    Py_ssize_t n_steps)
{
    if (!PyArray_Check(value) || PyArray_NDIM((PyArrayObject *)value) < 1) {
        PyErr_SetString(PyExc_TypeError, "run_steps: a moving input or output needs an "
                        "array of at least 1 dimension");
        return -1;
    }
    npy_intp rows = PyArray_DIMS((PyArrayObject *)value)[0];
    if (wraps ? rows < 1 : first_row + n_steps > rows) {
        PyErr_Format(PyExc_ValueError, "run_steps: an array of %zd rows is too short for "
                     "%zd steps from row %zd", (Py_ssize_t)rows, n_steps, first_row);
        return -1;
    }
    return 0;
}

/* run_steps(plan, n_steps, arrays): the loop of a Scan, up to n_steps runs of the program
   without returning to Python, fed and read as `plan` (prepare_steps) says from the tuple
   `arrays`; the updates are applied after each run, as run() does, and the loop stops
   after a step whose condition is true. Returns (steps run, [the buffer allocated for each
   output given source -1, None for the others]); on error, failed_node/bad_input tell
   what. */
static PyObject *Program_run_steps_locked(Program *self, PyObject *args)
{
    PyObject *capsule, *arrays;
    Py_ssize_t n_steps;
    if (!PyArg_ParseTuple(args, "O!nO!", &PyCapsule_Type, &capsule, &n_steps, &PyTuple_Type,
                          &arrays))
        return NULL;
    SympileStepPlan *plan = PyCapsule_GetPointer(capsule, SYMPILE_STEP_PLAN);
    if (plan == NULL)
        return NULL;
    if (plan->n_cells != sympile_n_cells || PyTuple_GET_SIZE(arrays) != plan->n_arrays
            || n_steps < 0) {
        PyErr_Format(PyExc_ValueError, "run_steps: a plan of this program for %zd arrays "
                     "and n_steps >= 0 expected, got %zd arrays and n_steps %zd",
                     plan->n_arrays, PyTuple_GET_SIZE(arrays), n_steps);
        return NULL;
    }
    Py_ssize_t n_inputs = plan->n_inputs, n_outputs = plan->n_outputs;
    SympileMovingView *moving = PyMem_Calloc(n_inputs + n_outputs + 1,
                                             sizeof(SympileMovingView));
    SympileMovingView *destinations = moving + n_inputs;
    PyObject *allocated = PyList_New(n_outputs);
    PyObject *result = NULL;
    Py_ssize_t steps_run = 0;
    self->failed_node = -1;
    self->bad_input = -1;
    if (moving == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (allocated == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < n_outputs; j++) {
        Py_INCREF(Py_None);
        PyList_SET_ITEM(allocated, j, Py_None);
    }
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        const SympileStepInput *input = &plan->inputs[i];
        PyObject *value = PyTuple_GET_ITEM(arrays, input->source);
        if (input->kind == SYMPILE_STEP_FIXED) {
            Py_INCREF(value);
            sympile_store_output(self->cells[input->cell], (PyArrayObject *)value);
            continue;
        }
        int wraps = input->kind == SYMPILE_STEP_STATE;
        if (sympile_check_step_array(value, wraps, input->first_row, n_steps))
            goto done;
        PyArrayObject *row = sympile_row_view((PyArrayObject *)value);
        if (row == NULL)
            goto done;
        sympile_start_moving(&moving[i], row, (PyArrayObject *)value, input->first_row,
                             wraps ? PyArray_DIMS((PyArrayObject *)value)[0] : 0);
        Py_INCREF(row);
        sympile_store_output(self->cells[input->cell], row);
    }
    for (Py_ssize_t j = 0; j < n_outputs; j++) {
        const SympileStepOutput *output = &plan->outputs[j];
        if (output->source < 0)
            continue;
        PyObject *value = PyTuple_GET_ITEM(arrays, output->source);
        if (sympile_check_step_array(value, 1, output->first_row, n_steps))
            goto done;
        PyArrayObject *row = sympile_row_view((PyArrayObject *)value);
        if (row == NULL)
            goto done;
        sympile_start_moving(&destinations[j], row, (PyArrayObject *)value, output->first_row,
                             PyArray_DIMS((PyArrayObject *)value)[0]);
    }
    for (Py_ssize_t step = 0; step < n_steps; step++) {
        for (Py_ssize_t i = 0; i < n_inputs; i++)
            if (moving[i].view != NULL)
                sympile_move_view(&moving[i], step);
        if (sympile_run_once(self))
            goto done;
        for (Py_ssize_t j = 0; j < n_outputs; j++) {
            PyObject *value = PyList_GET_ITEM(self->cells[plan->outputs[j].cell], 0);
            if (destinations[j].view == NULL) {
                PyArrayObject *buffer = sympile_allocate_rows(value, plan->outputs[j].typenum,
                                                              n_steps);
                if (buffer == NULL)
                    goto done;
                PyList_SetItem(allocated, j, (PyObject *)buffer);
                PyArrayObject *row = sympile_row_view(buffer);
                if (row == NULL)
                    goto done;
                sympile_start_moving(&destinations[j], row, buffer, 0, 0);
            }
            sympile_move_view(&destinations[j], step);
            if (sympile_copy_result(destinations[j].view, value))
                goto done;
        }
        if (sympile_apply_updates(self))
            goto done;
        steps_run = step + 1;
        /* Ctrl-C stops a long loop within a step: the call it is part of fails whole. */
        if (PyErr_CheckSignals() != 0)
            goto done;
        int stop = 0;
        if (plan->condition >= 0) {
            stop = sympile_truth(PyList_GET_ITEM(self->cells[plan->condition], 0));
            if (stop < 0)
                goto done;
        }
        /* After the updates and the condition, which read the cells. */
        for (Py_ssize_t j = 0; j <= n_outputs; j++) {
            int cell = j < n_outputs ? plan->outputs[j].cell : plan->condition;
            int clear = j < n_outputs ? plan->outputs[j].clear : plan->clear_condition;
            PyObject *value = cell >= 0 ? PyList_GET_ITEM(self->cells[cell], 0) : NULL;
            if (clear && value != Py_None && Py_REFCNT(value) > 1) {
                Py_INCREF(Py_None);
                sympile_store_output(self->cells[cell], (PyArrayObject *)Py_None);
            }
        }
        if (stop)
            break;
    }
    result = Py_BuildValue("(nO)", steps_run, allocated);
done:
    for (Py_ssize_t k = 0; moving != NULL && k < n_inputs + n_outputs; k++)
        Py_XDECREF(moving[k].view);
    Py_XDECREF(allocated);
    PyMem_Free(moving);
    return result;
}

static PyObject *Program_run_once_locked(Program *self, PyObject *unused)
{
    (void)unused;  /* the method's signature is Python's */
    self->failed_node = -1;
    self->bad_input = -1;
    if (sympile_run_once(self))
        return NULL;
    Py_RETURN_NONE;
}

/* One thread at a time runs a program. A call holds the GIL from start to end, except inside
   Python thunks (perform() of nodes without C code), the only place another thread's call can
   start: so `busy` is only read and written under the GIL, and a call that finds it set
   waits, with the GIL released, for the running one to finish. The uncontended path is
   one test and two stores. */
static void sympile_enter(Program *self)
{
    while (self->busy) {
        Py_BEGIN_ALLOW_THREADS
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
        Py_END_ALLOW_THREADS
    }
    self->busy = 1;
}

#define SYMPILE_LOCKED_METHOD(name, argument_type)                         \
    static PyObject *name(Program *self, argument_type argument)           \
    {                                                                      \
        sympile_enter(self);                                               \
        PyObject *result = name##_locked(self, argument);                  \
        self->busy = 0;                                                    \
        return result;                                                     \
    }

SYMPILE_LOCKED_METHOD(Program_run, PyObject *)
SYMPILE_LOCKED_METHOD(Program_call, PyObject *)
SYMPILE_LOCKED_METHOD(Program_run_steps, PyObject *)
SYMPILE_LOCKED_METHOD(Program_run_once, PyObject *)

static PyObject *Program_profile(Program *self, PyObject *unused)
{
    (void)unused;  /* the method's signature is Python's */
    PyObject *result = PyList_New(sympile_n_nodes);
    if (result == NULL)
        return NULL;
    for (int i = 0; i < sympile_n_nodes; i++)
        PyList_SET_ITEM(result, i, Py_BuildValue("(dl)", self->node_seconds[i],
                                                 self->node_calls[i]));
    return result;
}

static int Program_init(Program *self, PyObject *args, PyObject *kwargs)
{
    (void)kwargs;  /* the method's signature is Python's */
    PyObject *cells, *thunks, *updates, *copy;
    int profiling = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!O|p", &PyTuple_Type, &cells, &PyTuple_Type, &thunks,
                          &PyTuple_Type, &updates, &copy, &profiling))
        return -1;
    if (PyTuple_GET_SIZE(cells) != sympile_n_cells) {
        PyErr_Format(PyExc_ValueError, "Program: expected %d cells, got %zd",
                     sympile_n_cells, PyTuple_GET_SIZE(cells));
        return -1;
    }
    if (self->cells == NULL) {
        self->cells = PyMem_Calloc(sympile_n_cells + 1, sizeof(PyObject *));
        self->node_seconds = PyMem_Calloc(sympile_n_nodes + 1, sizeof(double));
        self->node_calls = PyMem_Calloc(sympile_n_nodes + 1, sizeof(long));
        const SympileNode *last = &sympile_nodes[sympile_n_nodes > 0 ? sympile_n_nodes - 1 : 0];
        self->node_cells = PyMem_Calloc(last->first_cell + last->n_cells + 1,
                                        sizeof(PyObject *));
        if (!self->cells || !self->node_seconds || !self->node_calls || !self->node_cells) {
            PyErr_NoMemory();
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < sympile_n_cells; i++) {
        PyObject *cell = PyTuple_GET_ITEM(cells, i);
        if (!PyList_CheckExact(cell) || PyList_GET_SIZE(cell) != 1) {
            PyErr_SetString(PyExc_TypeError, "Program: every cell must be a 1-element list");
            return -1;
        }
        Py_INCREF(cell);
        Py_XSETREF(self->cells[i], cell);
    }
    for (int k = 0; k < sympile_n_nodes; k++)
        for (int i = 0; i < sympile_nodes[k].n_cells; i++)
            self->node_cells[sympile_nodes[k].first_cell + i] =
                self->cells[sympile_node_cells[sympile_nodes[k].first_cell + i]];
    Py_INCREF(thunks);
    Py_XSETREF(self->thunks, thunks);
    Py_INCREF(updates);
    Py_XSETREF(self->updates, updates);
    Py_INCREF(copy);
    Py_XSETREF(self->copy, copy);
    self->profiling = profiling;
    self->failed_node = -1;
    self->bad_input = -1;
    return 0;
}

static void Program_dealloc(Program *self)
{
    for (int i = 0; self->cells != NULL && i < sympile_n_cells; i++)
        Py_XDECREF(self->cells[i]);
    Py_XDECREF(self->thunks);
    Py_XDECREF(self->updates);
    Py_XDECREF(self->copy);
    Program_free_call(self);
    PyMem_Free(self->cells);
    PyMem_Free(self->node_seconds);
    PyMem_Free(self->node_calls);
    PyMem_Free(self->node_cells);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Program_methods[] = {
    {"run", (PyCFunction)Program_run, METH_O, "run(n_calls): run the program and apply the updates, n_calls times"},
    {"run_once", (PyCFunction)Program_run_once, METH_NOARGS,
     "run the program once, without updates"},
    {"call", (PyCFunction)Program_call, METH_O,
     "call(inputs): one call of the function (see set_call)"},
    {"prepare_steps", (PyCFunction)Program_prepare_steps, METH_VARARGS,
     "prepare_steps(inputs, outputs, condition cell, clear it?): a plan for run_steps"},
    {"run_steps", (PyCFunction)Program_run_steps, METH_VARARGS,
     "run_steps(plan, n_steps, arrays): a Scan's loop (see the C)"},
    {"set_call", (PyCFunction)Program_set_call, METH_VARARGS,
     "set_call(input cells, ((output cell, copy?, clear?), ...), single?)"},
    {"profile", (PyCFunction)Program_profile, METH_NOARGS,
     "[(seconds, calls)] of each node since creation (when profiling)"},
    {NULL}
};

static PyMemberDef Program_members[] = {
    {"failed_node", T_INT, offsetof(Program, failed_node), READONLY, NULL},
    {"bad_input", T_INT, offsetof(Program, bad_input), READONLY, NULL},
    {NULL}
};

PyTypeObject sympile_ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sympile_module.Program",
    .tp_basicsize = sizeof(Program),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Program_init,
    .tp_dealloc = (destructor)Program_dealloc,
    .tp_methods = Program_methods,
    .tp_members = Program_members,
};

int sympile_import_numpy(void)
{
    import_array1(-1);
    return 0;
}
