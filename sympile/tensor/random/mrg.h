/* MRG_RandomStreams' generator in C: the twin of mrg.py (which documents Theano's layout
   that both reproduce); its step is mrg_step.h, which the device's kernel shares. */

/* Element i from stream i mod n_streams, each stream's elements in sequence. Threads take
   blocks of streams; a block steps its streams round after round (round r gives the elements
   r n_streams + s), so the writes are contiguous and the states stay in cache. Every thread
   count gives the same numbers. */
#define SYMPILE_MRG_UNIFORM(T, NORM)                                                         \
static void sympile_mrg_uniform_##T(npy_int32 *states, npy_int64 n_streams, npy_##T *out,   \
                                    npy_int64 count, int threaded)                           \
{                                                                                            \
    const npy_int64 used = count < n_streams ? count : n_streams;                            \
    const npy_int64 blocks = (used + 255) / 256;                                             \
    _Pragma("omp parallel for schedule(dynamic, 16) if (threaded)")                         \
    for (npy_int64 block = 0; block < blocks; ++block) {                                     \
        const npy_int64 first = block * 256;                                                 \
        const npy_int64 last = first + 256 < used ? first + 256 : used;                      \
        for (npy_int64 round = 0; round < count; round += n_streams) {                       \
            const npy_int64 end = count - round < last ? count - round : last;               \
            for (npy_int64 stream = first; stream < end; ++stream)                           \
                out[round + stream] = (npy_##T)sympile_mrg_step(states + 6 * stream) * NORM; \
        }                                                                                    \
    }                                                                                        \
}

SYMPILE_MRG_UNIFORM(float32, 4.6566126e-10f)
SYMPILE_MRG_UNIFORM(float64, 4.656612873077392578125e-10)

/* Theano's MultinomialFromUniform: pvals (rows, categories) as float64 (exact for float32
   pvals: Theano sums them in double too), uniforms as float64. */
static void sympile_multinomial_from_uniform(const npy_float64 *pvals, npy_int64 rows,
                                             npy_int64 categories, const npy_float64 *uniforms,
                                             npy_int64 n, npy_int64 *out)
{
    memset(out, 0, sizeof(npy_int64) * rows * categories);
    for (npy_int64 c = 0; c < n; ++c) {
        for (npy_int64 row = 0; row < rows; ++row) {
            const npy_float64 u = uniforms[c * rows + row];
            npy_float64 running = 0.0;
            for (npy_int64 m = 0; m < categories; ++m) {
                running += pvals[row * categories + m];
                if (running > u) {
                    out[row * categories + m] += 1;
                    break;
                }
            }
        }
    }
}

/* Theano's ChoiceFromUniform without replacement, renormalising in the type T of pvals
   (which `weights` holds, a copy it may change), as Theano's C code does. */
#define SYMPILE_CHOICE_FROM_UNIFORM(T)                                                        \
static void sympile_choice_from_uniform_##T(T *weights, npy_int64 rows,                      \
                                            npy_int64 categories,                            \
                                            const npy_float64 *uniforms, npy_int64 n,        \
                                            npy_int64 *out)                                  \
{                                                                                            \
    for (npy_int64 k = 0; k < rows * n; ++k)                                                 \
        out[k] = -1;                                                                         \
    for (npy_int64 c = 0; c < n; ++c) {                                                      \
        for (npy_int64 row = 0; row < rows; ++row) {                                         \
            T *line = weights + row * categories;                                            \
            const npy_float64 u = uniforms[c * rows + row];                                  \
            npy_float64 running = 0.0;                                                       \
            for (npy_int64 m = 0; m < categories; ++m) {                                     \
                running += line[m];                                                          \
                if (running > u) {                                                           \
                    out[row * n + c] = m;                                                    \
                    if (c < n - 1) {                                                         \
                        T total = (T)(running - line[m]);                                    \
                        line[m] = 0;                                                         \
                        for (npy_int64 later = m; later < categories; ++later)               \
                            total = total + line[later];                                     \
                        for (npy_int64 k = 0; k < categories; ++k)                           \
                            line[k] = line[k] / total;                                       \
                    }                                                                        \
                    break;                                                                   \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
}

SYMPILE_CHOICE_FROM_UNIFORM(npy_float32)
SYMPILE_CHOICE_FROM_UNIFORM(npy_float64)

/* MultinomialFromUniform (`multinomial`) or ChoiceFromUniform: *output (of `typenum`) holds,
   per row of pvals, the category each of its n uniforms selects (with replacement), or n
   categories drawn without replacement; perform's checks with its messages (`label` names
   the caller). Returns 0, or -1 with a Python exception set. */
static int sympile_from_uniform(PyArrayObject *pvals, PyArrayObject *uniforms,
                                PyArrayObject *n, int multinomial, int typenum,
                                PyArrayObject **output, const char *label)
{
    const npy_intp rows = PyArray_DIM(pvals, 0), categories = PyArray_DIM(pvals, 1);
    const npy_int64 samples = *(npy_int64 *)PyArray_DATA(n);
    if (!multinomial && samples > categories) {
        PyErr_Format(PyExc_ValueError, "%s: cannot take %lld samples without replacement "
                     "from %lld categories", label, (long long)samples, (long long)categories);
        return -1;
    }
    if (samples < 0 || PyArray_DIM(uniforms, 0) != rows * samples) {
        PyErr_Format(PyExc_ValueError, "%s: expected %lld uniforms (rows of pvals times n), "
                     "got %lld", label, (long long)(rows * samples),
                     (long long)PyArray_DIM(uniforms, 0));
        return -1;
    }
    const int pvals_type = !multinomial && PyArray_TYPE(pvals) == NPY_FLOAT32
                           ? NPY_FLOAT32 : NPY_FLOAT64;
    PyArrayObject *weights = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)pvals, pvals_type, 2, 2, NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY);
    PyArrayObject *unis = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)uniforms, NPY_FLOAT64, 1, 1, NPY_ARRAY_CARRAY_RO);
    npy_intp dims[2] = {rows, multinomial ? categories : samples};
    PyArrayObject *work = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_INT64);
    int status = weights != NULL && unis != NULL && work != NULL ? 0 : -1;
    if (status == 0) {
        const npy_float64 *u = (const npy_float64 *)PyArray_DATA(unis);
        npy_int64 *out = (npy_int64 *)PyArray_DATA(work);
        if (multinomial)
            sympile_multinomial_from_uniform((const npy_float64 *)PyArray_DATA(weights), rows,
                                             categories, u, samples, out);
        else if (pvals_type == NPY_FLOAT32)
            sympile_choice_from_uniform_npy_float32((npy_float32 *)PyArray_DATA(weights),
                                                    rows, categories, u, samples, out);
        else
            sympile_choice_from_uniform_npy_float64((npy_float64 *)PyArray_DATA(weights),
                                                    rows, categories, u, samples, out);
        status = sympile_prepare_output(output, 2, dims, typenum);
    }
    if (status == 0 && PyArray_CopyInto(*output, work) < 0)
        status = -1;
    Py_XDECREF(weights);
    Py_XDECREF(unis);
    Py_XDECREF(work);
    return status;
}
