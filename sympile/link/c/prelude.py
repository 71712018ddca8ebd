"""The fixed parts of every generated module: helpers for op bodies, BLAS prototypes, and the
Program type that holds a compiled function's storage and runs it."""

from __future__ import annotations

HEADER = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static int sympile_prepare_output(PyArrayObject **out, int ndim, const npy_intp *dims,
                                  int typenum)
{
    PyArrayObject *old = *out;
    /* Reuse only an array nothing else refers to: a user or a view may hold any other. */
    if (old != NULL && Py_REFCNT(old) == 1 && PyArray_NDIM(old) == ndim
            && PyArray_TYPE(old) == typenum && PyArray_BASE(old) == NULL
            && PyArray_IS_C_CONTIGUOUS(old) && PyArray_ISWRITEABLE(old)) {
        int same = 1;
        for (int axis = 0; axis < ndim; axis++)
            same &= PyArray_DIMS(old)[axis] == dims[axis];
        if (same)
            return 0;
    }
    Py_XDECREF(old);
    *out = (PyArrayObject *)PyArray_EMPTY(ndim, (npy_intp *)dims, typenum, 0);
    return *out == NULL ? -1 : 0;
}

static int sympile_assign_output(PyArrayObject **out, PyArrayObject *value)
{
    Py_XDECREF(*out);
    *out = value;
    return value == NULL ? -1 : 0;
}
"""

# Fortran BLAS prototypes of the routines ops may ask for (scipy.linalg.cython_blas names).
_REAL_BLAS = {
    "gemm": "void (*)(char *, char *, int *, int *, int *, T *, T *, int *, T *, int *, T *, "
            "T *, int *)",
    "gemv": "void (*)(char *, int *, int *, T *, T *, int *, T *, int *, T *, T *, int *)",
    "ger": "void (*)(int *, int *, T *, T *, int *, T *, int *, T *, int *)",
    "dot": "T (*)(int *, T *, int *, T *, int *)",
    "axpy": "void (*)(int *, T *, T *, int *, T *, int *)",
    "scal": "void (*)(int *, T *, T *, int *)",
}
BLAS_PROTOTYPES = {prefix + name: prototype.replace("T", c_type)
                   for prefix, c_type in (("s", "float"), ("d", "double"))
                   for name, prototype in _REAL_BLAS.items()}


def blas_declaration(name: str) -> str:
    """The pointer variable `sympile_blas_<name>`, filled in by the module's init."""
    prototype = BLAS_PROTOTYPES[name]
    return f"static {prototype.replace('(*)', f'(*sympile_blas_{name})', 1)};"


def blas_loader(names: list[str]) -> str:
    """C for the module init: load each routine's pointer from scipy.linalg.cython_blas."""
    if not names:
        return ""
    loads = "\n".join(
        f'    if (sympile_load_blas(capi, "{name}", (void **)&sympile_blas_{name})) goto fail;'
        for name in names)
    return f"""
    {{
        PyObject *blas = PyImport_ImportModule("scipy.linalg.cython_blas");
        PyObject *capi = blas ? PyObject_GetAttrString(blas, "__pyx_capi__") : NULL;
        if (capi == NULL) goto fail;
{loads}
        Py_DECREF(capi);
        Py_DECREF(blas);
    }}"""


BLAS_LOAD_HELPER = r"""
static int sympile_load_blas(PyObject *capi, const char *name, void **pointer)
{
    PyObject *capsule = PyDict_GetItemString(capi, name);
    if (capsule == NULL) {
        PyErr_Format(PyExc_ImportError, "scipy.linalg.cython_blas has no %s", name);
        return -1;
    }
    *pointer = PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
    return *pointer == NULL ? -1 : 0;
}
"""

# The Program type; the generator fills in N_CELLS, N_NODES, the node functions and run_once.
PROGRAM = r"""
typedef struct {
    PyObject_HEAD
    PyObject *cells[SYMPILE_N_CELLS > 0 ? SYMPILE_N_CELLS : 1];
    PyObject *thunks;          /* tuple: the perform() thunk of each node without C code */
    PyObject *updates;         /* tuple of (target cell, source cell index, copy?) */
    PyObject *copy;            /* copy.copy, for update values that are not arrays */
    int failed_node;           /* node whose C code raised, -1 otherwise */
    int bad_input;             /* input cell that failed its check, -1 otherwise */
    int profiling;
    double node_seconds[SYMPILE_N_NODES > 0 ? SYMPILE_N_NODES : 1];
    long node_calls[SYMPILE_N_NODES > 0 ? SYMPILE_N_NODES : 1];
} Program;

static double sympile_now(void)
{
    struct timespec moment;
    clock_gettime(CLOCK_MONOTONIC, &moment);
    return moment.tv_sec + 1e-9 * moment.tv_nsec;
}

static PyArrayObject *sympile_take_output(PyObject *cell)
{
    PyObject *value = PyList_GET_ITEM(cell, 0);
    if (value == Py_None)
        return NULL;
    /* The cell's reference moves to the node, so an array nobody else holds has count 1. */
    Py_INCREF(Py_None);
    PyList_SET_ITEM(cell, 0, Py_None);
    if (!PyArray_Check(value)) {
        Py_DECREF(value);
        return NULL;
    }
    return (PyArrayObject *)value;
}

static void sympile_store_output(PyObject *cell, PyArrayObject *value)
{
    PyObject *old = PyList_GET_ITEM(cell, 0);
    PyList_SET_ITEM(cell, 0, (PyObject *)value);
    Py_XDECREF(old);
}

static int sympile_check_array(Program *self, int cell, int typenum, int ndim,
                               const npy_intp *static_shape)
{
    PyObject *value = PyList_GET_ITEM(self->cells[cell], 0);
    if (!PyArray_Check(value) || PyArray_TYPE((PyArrayObject *)value) != typenum
            || PyArray_NDIM((PyArrayObject *)value) != ndim)
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

static int sympile_call_thunk(Program *self, int index)
{
    PyObject *result = PyObject_CallNoArgs(PyTuple_GET_ITEM(self->thunks, index));
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}
"""

PROGRAM_METHODS = r"""
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

static PyObject *Program_run(Program *self, PyObject *argument)
{
    long n_calls = PyLong_AsLong(argument);
    if (n_calls == -1 && PyErr_Occurred())
        return NULL;
    self->failed_node = -1;
    self->bad_input = -1;
    for (long call = 0; call < n_calls; call++) {
        if (call > 0 && sympile_apply_updates(self))
            return NULL;
        if (sympile_run_once(self))
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Program_profile(Program *self, PyObject *unused)
{
    PyObject *result = PyList_New(SYMPILE_N_NODES);
    if (result == NULL)
        return NULL;
    for (int i = 0; i < SYMPILE_N_NODES; i++)
        PyList_SET_ITEM(result, i, Py_BuildValue("(dl)", self->node_seconds[i],
                                                 self->node_calls[i]));
    return result;
}

static int Program_init(Program *self, PyObject *args, PyObject *kwargs)
{
    PyObject *cells, *thunks, *updates, *copy;
    int profiling = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!O|p", &PyTuple_Type, &cells, &PyTuple_Type, &thunks,
                          &PyTuple_Type, &updates, &copy, &profiling))
        return -1;
    if (PyTuple_GET_SIZE(cells) != SYMPILE_N_CELLS) {
        PyErr_Format(PyExc_ValueError, "Program: expected %d cells, got %zd",
                     SYMPILE_N_CELLS, PyTuple_GET_SIZE(cells));
        return -1;
    }
    for (Py_ssize_t i = 0; i < SYMPILE_N_CELLS; i++) {
        PyObject *cell = PyTuple_GET_ITEM(cells, i);
        if (!PyList_CheckExact(cell) || PyList_GET_SIZE(cell) != 1) {
            PyErr_SetString(PyExc_TypeError, "Program: every cell must be a 1-element list");
            return -1;
        }
        Py_INCREF(cell);
        Py_XSETREF(self->cells[i], cell);
    }
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
    for (int i = 0; i < SYMPILE_N_CELLS; i++)
        Py_XDECREF(self->cells[i]);
    Py_XDECREF(self->thunks);
    Py_XDECREF(self->updates);
    Py_XDECREF(self->copy);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Program_methods[] = {
    {"run", (PyCFunction)Program_run, METH_O, "run(n_calls): run the program n_calls times"},
    {"profile", (PyCFunction)Program_profile, METH_NOARGS,
     "[(seconds, calls)] of each node since creation (when profiling)"},
    {NULL}
};

static PyMemberDef Program_members[] = {
    {"failed_node", T_INT, offsetof(Program, failed_node), READONLY, NULL},
    {"bad_input", T_INT, offsetof(Program, bad_input), READONLY, NULL},
    {NULL}
};

static PyTypeObject ProgramType = {
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

static struct PyModuleDef sympile_module = {
    PyModuleDef_HEAD_INIT, SYMPILE_MODULE_NAME, NULL, -1, NULL
};

PyMODINIT_FUNC SYMPILE_PYINIT(void)
{
    import_array();
    if (PyType_Ready(&ProgramType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&sympile_module);
    if (module == NULL)
        return NULL;
@BLAS_LOADS@
    Py_INCREF(&ProgramType);
    if (PyModule_AddObject(module, "Program", (PyObject *)&ProgramType) < 0)
        goto fail;
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
"""
