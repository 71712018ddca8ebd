/* What every unit of a generated module includes first. numpy's C-API table is one symbol
   per module: the program unit defines and fills it (import_array), the other units define
   NO_IMPORT_ARRAY before this file and only use it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL sympile_PyArray_API
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
