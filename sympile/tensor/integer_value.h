/* The integer at element `index` of a vector (or in a 0-d array: index ignored) of any
   integer or bool dtype, as an npy_int64 (a uint64 above INT64_MAX wraps, as a C cast does:
   callers that compare such values as Python does refuse uint64). */
static npy_int64 sympile_integer_value(PyArrayObject *a, npy_intp index)
{
    const char *p = PyArray_BYTES(a) + (PyArray_NDIM(a) ? index * PyArray_STRIDE(a, 0) : 0);
    switch (PyArray_TYPE(a)) {
    case NPY_BOOL: return *(const npy_bool *)p;
    case NPY_INT8: return *(const npy_int8 *)p;
    case NPY_INT16: return *(const npy_int16 *)p;
    case NPY_INT32: return *(const npy_int32 *)p;
    case NPY_UINT8: return *(const npy_uint8 *)p;
    case NPY_UINT16: return *(const npy_uint16 *)p;
    case NPY_UINT32: return *(const npy_uint32 *)p;
    case NPY_UINT64: return (npy_int64)*(const npy_uint64 *)p;
    default: return *(const npy_int64 *)p;
    }
}
