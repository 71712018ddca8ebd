/* sympile.distributed's collectives, called from C: no Python between the node and MPI.

   Nothing here includes mpi.h or links to an MPI library. The MPI library is the one mpi4py
   loaded; init() fills one table, sympile_mpi_api, with its functions' addresses, the
   communicator and the datatype and operation handles (capi.py), and publishes the
   table's address as the capsule sympile.distributed.capi.capsule. A handle
   is an int in MPICH's ABI and a pointer in Open MPI's and the standard ABI: @HANDLE@ and
   @REQUEST@ are the C types of this process's library (the same for every node).

   The protocol of each collective is that of the ops' perform() (collectives.py), so that
   a rank running a node's perform() and one running its C code still agree. */

typedef @HANDLE@ sympile_mpi_handle;
typedef @REQUEST@ sympile_mpi_request;

/* The order of capi.py's OPERATIONS; types[] has one handle for each of its DTYPES. */
enum { SYMPILE_MPI_SUM, SYMPILE_MPI_MAX, SYMPILE_MPI_MIN, SYMPILE_MPI_N_OPERATIONS };
#define SYMPILE_MPI_N_TYPES @N_TYPES@
/* Broadcast's header: ndim, then the lengths (numpy's most dimensions). */
#define SYMPILE_MPI_HEADER @HEADER@

struct sympile_mpi_api {
    int rank, size;
    double timeout;                 /* seconds; < 0: wait forever */
    sympile_mpi_handle comm;
    void *in_place;                 /* MPI_IN_PLACE */
    sympile_mpi_handle operations[SYMPILE_MPI_N_OPERATIONS];
    sympile_mpi_handle types[SYMPILE_MPI_N_TYPES];
    int (*iallreduce)(const void *, void *, int, sympile_mpi_handle, sympile_mpi_handle,
                      sympile_mpi_handle, sympile_mpi_request *);
    int (*ibcast)(void *, int, sympile_mpi_handle, int, sympile_mpi_handle,
                  sympile_mpi_request *);
    int (*iallgather)(const void *, int, sympile_mpi_handle, void *, int, sympile_mpi_handle,
                      sympile_mpi_handle, sympile_mpi_request *);
    int (*iallgatherv)(const void *, int, sympile_mpi_handle, void *, const int *,
                       const int *, sympile_mpi_handle, sympile_mpi_handle,
                       sympile_mpi_request *);
    int (*test)(sympile_mpi_request *, int *, void *);
    int (*error_string)(int, char *, int *);
    /* all_reduce's buffer, shared by every module of the process and only grown: MPICH
       pays for each buffer address it has not seen before. */
    PyObject *work;
};

static struct sympile_mpi_api *sympile_mpi_api_get(const char *who)
{
    static struct sympile_mpi_api *api;
    if (api == NULL) {
        api = (struct sympile_mpi_api *)PyCapsule_Import(
            "sympile.distributed.capi.capsule", 0);
        if (api == NULL) {
            PyErr_Clear();
            PyErr_Format(PyExc_RuntimeError, "%s: call sympile.distributed.init() first (and "
                         "run the program under mpiexec)", who);
        }
    }
    return api;
}

static int sympile_mpi_failed(struct sympile_mpi_api *api, int code, const char *who)
{
    char text[1024];
    int length = 0;
    if (api->error_string(code, text, &length) != 0 || length <= 0
            || length >= (int)sizeof text)
        snprintf(text, sizeof text, "error %d", code);
    else
        text[length] = 0;
    PyErr_Format(PyExc_RuntimeError, "%s: rank %d of %d: MPI failed: %s", who, api->rank,
                 api->size, text);
    return -1;
}

static double sympile_mpi_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + 1e-9 * now.tv_nsec;
}

/* Waits for a started collective up to the timeout (world.wait's policy): MPI makes
   progress inside its calls only, so MPI_Test back to back for 0.2 s, then every
   millisecond, leaving the core to the others. Without the GIL, which it takes back every
   50 ms to let a signal (Ctrl-C) through. */
static int sympile_mpi_wait(struct sympile_mpi_api *api, sympile_mpi_request *request,
                            const char *who)
{
    long long status[32];           /* any MPI_Status (checked by init()) */
    const double start = sympile_mpi_now();
    int done = 0, code = 0, late = 0;
    while (!done) {
        Py_BEGIN_ALLOW_THREADS
        const double pause_at = sympile_mpi_now() + 0.05;
        for (;;) {
            code = api->test(request, &done, status);
            if (code != 0 || done)
                break;
            const double now = sympile_mpi_now();
            if (api->timeout >= 0 && now - start > api->timeout) {
                late = 1;
                break;
            }
            if (now - start > 0.2) {
                const struct timespec millisecond = {0, 1000000};
                nanosleep(&millisecond, NULL);
            }
            if (now > pause_at)
                break;
        }
        Py_END_ALLOW_THREADS
        if (code != 0)
            return sympile_mpi_failed(api, code, who);
        if (late) {
            char text[512];
            snprintf(text, sizeof text, "%s: rank %d of %d waited %g s for the other ranks; "
                     "one of them failed, stopped, or runs a different program", who,
                     api->rank, api->size, api->timeout);
            PyObject *world = PyImport_ImportModule("sympile.distributed.world");
            PyObject *kind = world ? PyObject_GetAttrString(world, "CollectiveTimeout") : NULL;
            Py_XDECREF(world);
            if (kind == NULL)
                return -1;
            PyErr_SetString(kind, text);
            Py_DECREF(kind);
            return -1;
        }
        if (!done && PyErr_CheckSignals())
            return -1;
    }
    return 0;
}

/* An element count as MPI's int, or -1 with a ValueError. */
static int sympile_mpi_count(npy_intp elements, const char *who)
{
    if (elements > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements in one collective; MPI counts them "
                     "in an int (at most %d)", who, (Py_ssize_t)elements, INT_MAX);
        return -1;
    }
    return (int)elements;
}

/* The number of elements of n tensors, as MPI's int count, or -1 with a ValueError. */
static int sympile_mpi_bucket_count(PyArrayObject *const *inputs, int n, const char *who)
{
    npy_intp elements = 0;
    for (int i = 0; i < n; i++)
        elements += PyArray_SIZE(inputs[i]);
    return sympile_mpi_count(elements, who);
}

/* Copies src's elements, in C order, to dst (PyArray_NBYTES(src) bytes). */
static int sympile_mpi_pack(void *dst, PyArrayObject *src)
{
    if (PyArray_IS_C_CONTIGUOUS(src)) {
        if (PyArray_NBYTES(src) > 0)
            memcpy(dst, PyArray_DATA(src), PyArray_NBYTES(src));
        return 0;
    }
    PyArray_Descr *descr = PyArray_DESCR(src);
    Py_INCREF(descr);
    PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, descr, PyArray_NDIM(src), PyArray_DIMS(src), NULL, dst,
        NPY_ARRAY_CARRAY, NULL);
    if (view == NULL)
        return -1;
    const int status = PyArray_CopyInto(view, src);
    Py_DECREF(view);
    return status;
}

/* count elements from src to dst (which may be src), each divided by `ranks` when it is
   not 0 (all_reduce's mean), vectorised. */
static __attribute__((optimize("tree-vectorize"))) void sympile_mpi_unpack(
    void *dst, const void *src, npy_intp count, int typenum, int itemsize, int ranks)
{
    if (ranks == 0) {
        if (dst != src && count > 0)
            memmove(dst, src, count * itemsize);
    } else if (typenum == NPY_FLOAT32) {
        for (npy_intp i = 0; i < count; i++)
            ((npy_float32 *)dst)[i] = ((const npy_float32 *)src)[i] / (npy_float32)ranks;
    } else {
        for (npy_intp i = 0; i < count; i++)
            ((npy_float64 *)dst)[i] = ((const npy_float64 *)src)[i] / (npy_float64)ranks;
    }
}

/* The n tensors (of one dtype, `bytes` in all) packed one after the other into *work, a
   numpy array of bytes grown to fit (and kept: its address stays the same from call to
   call); their start, or NULL with an exception set. */
static char *sympile_mpi_pack_bucket(PyObject **work, PyArrayObject *const *inputs, int n,
                                     npy_intp bytes)
{
    if (*work == NULL || PyArray_NBYTES((PyArrayObject *)*work) < bytes) {
        PyObject *grown = PyArray_EMPTY(1, &bytes, NPY_UINT8, 0);
        if (grown == NULL)
            return NULL;
        Py_XDECREF(*work);
        *work = grown;
    }
    char *buffer = PyArray_DATA((PyArrayObject *)*work);
    for (int i = 0; i < n; i++) {
        if (sympile_mpi_pack(buffer, inputs[i]))
            return NULL;
        buffer += PyArray_NBYTES(inputs[i]);
    }
    return PyArray_DATA((PyArrayObject *)*work);
}

/* The reduced `buffer` into n outputs shaped as the inputs (divided by `ranks` when it is
   not 0). */
static int sympile_mpi_unpack_bucket(const char *buffer, PyArrayObject *const *inputs,
                                     PyArrayObject **outputs, int n, int ranks)
{
    const int typenum = PyArray_TYPE(inputs[0]);
    for (int i = 0; i < n; i++) {
        if (sympile_prepare_output(&outputs[i], PyArray_NDIM(inputs[i]),
                                   PyArray_DIMS(inputs[i]), typenum))
            return -1;
        sympile_mpi_unpack(PyArray_DATA(outputs[i]), buffer, PyArray_SIZE(outputs[i]),
                           typenum, PyArray_ITEMSIZE(outputs[i]), ranks);
        buffer += PyArray_NBYTES(outputs[i]);
    }
    return 0;
}

/* all_reduce of n tensors of one dtype: one tensor is copied to its output and reduced
   there in place (reducing from the input into the output was no faster with MPICH), a
   bucket in place in the process's work buffer (packed, reduced, unpacked). */
static int sympile_mpi_all_reduce(PyArrayObject *const *inputs, PyArrayObject **outputs,
                                  int n, int operation, int mean, int type, const char *who)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL)
        return -1;
    const int typenum = PyArray_TYPE(inputs[0]);
    const int count = sympile_mpi_bucket_count(inputs, n, who);
    if (count < 0)
        return -1;
    char *buffer;
    if (n == 1) {
        if (sympile_prepare_output(&outputs[0], PyArray_NDIM(inputs[0]),
                                   PyArray_DIMS(inputs[0]), typenum))
            return -1;
        buffer = PyArray_DATA(outputs[0]);
        if (sympile_mpi_pack(buffer, inputs[0]))
            return -1;
    } else {
        buffer = sympile_mpi_pack_bucket(&api->work, inputs, n,
                                         (npy_intp)count * PyArray_ITEMSIZE(inputs[0]));
        if (buffer == NULL)
            return -1;
    }
    sympile_mpi_request request;
    const int code = api->iallreduce(api->in_place, buffer, count, api->types[type],
                                     api->operations[operation], api->comm, &request);
    if (code != 0)
        return sympile_mpi_failed(api, code, who);
    if (sympile_mpi_wait(api, &request, who))
        return -1;
    const int ranks = mean ? api->size : 0;
    if (n == 1) {
        sympile_mpi_unpack(buffer, buffer, count, typenum, 0, ranks);
        return 0;
    }
    return sympile_mpi_unpack_bucket(buffer, inputs, outputs, n, ranks);
}

/* The root's x on every rank: its header (ndim and lengths), then its data. */
static int sympile_mpi_broadcast(PyArrayObject *input, PyArrayObject **output, int root,
                                 int type, const char *who)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL)
        return -1;
    if (root >= api->size) {
        PyErr_Format(PyExc_ValueError, "%s: root %d is not a rank of %d", who, root,
                     api->size);
        return -1;
    }
    const int ndim = PyArray_NDIM(input);
    npy_int64 header[SYMPILE_MPI_HEADER] = {ndim};
    for (int axis = 0; axis < ndim; axis++)
        header[1 + axis] = PyArray_DIMS(input)[axis];
    sympile_mpi_request request;
    int code = api->ibcast(header, SYMPILE_MPI_HEADER, api->types[@INT64@], root, api->comm,
                           &request);
    if (code != 0)
        return sympile_mpi_failed(api, code, who);
    if (sympile_mpi_wait(api, &request, who))
        return -1;
    if (header[0] != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: the root's array has %d dimensions, this rank's "
                     "type %d", who, (int)header[0], ndim);
        return -1;
    }
    npy_intp dims[SYMPILE_MPI_HEADER];
    for (int axis = 0; axis < ndim; axis++)
        dims[axis] = (npy_intp)header[1 + axis];
    if (sympile_prepare_output(output, ndim, dims, PyArray_TYPE(input)))
        return -1;
    const int count = sympile_mpi_count(PyArray_SIZE(*output), who);
    if (count < 0 || (api->rank == root && sympile_mpi_pack(PyArray_DATA(*output), input)))
        return -1;
    code = api->ibcast(PyArray_DATA(*output), count, api->types[type], root, api->comm,
                       &request);
    if (code != 0)
        return sympile_mpi_failed(api, code, who);
    return sympile_mpi_wait(api, &request, who);
}

/* Every rank's header of `ndim` int64 (its first-axis length, then its other lengths),
   gathered in rank order into *headers (PyMem_Free it). */
static int sympile_mpi_gather_headers(struct sympile_mpi_api *api, const npy_int64 *header,
                                      int ndim, npy_int64 **headers, const char *who)
{
    *headers = PyMem_Malloc(sizeof(npy_int64) * ndim * api->size);
    if (*headers == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    sympile_mpi_request request;
    const int code = api->iallgather(header, ndim, api->types[@INT64@], *headers, ndim,
                                     api->types[@INT64@], api->comm, &request);
    if (code == 0 && sympile_mpi_wait(api, &request, who) == 0)
        return 0;
    if (code != 0)
        sympile_mpi_failed(api, code, who);
    PyMem_Free(*headers);
    *headers = NULL;
    return -1;
}

/* Every rank's x along the first axis, in rank order; the other axes must agree. */
static int sympile_mpi_all_gather(PyArrayObject *input, PyArrayObject **output, int type,
                                  const char *who)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL)
        return -1;
    const int ndim = PyArray_NDIM(input);
    npy_int64 header[SYMPILE_MPI_HEADER];
    for (int axis = 0; axis < ndim; axis++)
        header[axis] = PyArray_DIMS(input)[axis];
    npy_int64 *headers;
    if (sympile_mpi_gather_headers(api, header, ndim, &headers, who))
        return -1;
    int status = -1;
    int *counts = PyMem_Malloc(2 * sizeof(int) * api->size);
    if (counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int *offsets = counts + api->size;
    npy_intp row = 1, total = 0;
    for (int axis = 1; axis < ndim; axis++)
        row *= PyArray_DIMS(input)[axis];
    for (int r = 0; r < api->size; r++) {
        for (int axis = 1; axis < ndim; axis++)
            if (headers[r * ndim + axis] != header[axis]) {
                PyErr_Format(PyExc_ValueError, "%s: the ranks' arrays differ past the first "
                             "axis: rank %d's axis %d is %lld long, rank %d's %lld", who, r,
                             axis, (long long)headers[r * ndim + axis], api->rank,
                             (long long)header[axis]);
                goto done;
            }
        if (sympile_mpi_count(total * row, who) < 0
                || (counts[r] = sympile_mpi_count(headers[r * ndim] * row, who)) < 0)
            goto done;
        offsets[r] = (int)(total * row);
        total += headers[r * ndim];
    }
    npy_intp dims[SYMPILE_MPI_HEADER];
    dims[0] = total;
    for (int axis = 1; axis < ndim; axis++)
        dims[axis] = PyArray_DIMS(input)[axis];
    if (sympile_mpi_count(total * row, who) < 0
            || sympile_prepare_output(output, ndim, dims, PyArray_TYPE(input)))
        goto done;
    const void *send = PyArray_DATA(input);
    PyArrayObject *contiguous = NULL;
    if (!PyArray_IS_C_CONTIGUOUS(input)) {
        contiguous = (PyArrayObject *)PyArray_NewCopy(input, NPY_CORDER);
        if (contiguous == NULL)
            goto done;
        send = PyArray_DATA(contiguous);
    }
    sympile_mpi_request request;
    const int code = api->iallgatherv(send, counts[api->rank], api->types[type],
                                      PyArray_DATA(*output), counts, offsets,
                                      api->types[type], api->comm, &request);
    status = code != 0 ? sympile_mpi_failed(api, code, who)
                       : sympile_mpi_wait(api, &request, who);
    Py_XDECREF(contiguous);
done:
    PyMem_Free(counts);
    PyMem_Free(headers);
    return status;
}

/* This rank's rows of `total`, every rank's rows in rank order (all_gather's gradient);
   x's length is this rank's share. */
static int sympile_mpi_own_rows(PyArrayObject *x, PyArrayObject *total, PyArrayObject **output,
                                const char *who)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL)
        return -1;
    const npy_int64 length = PyArray_DIMS(x)[0];
    npy_int64 *lengths;
    if (sympile_mpi_gather_headers(api, &length, 1, &lengths, who))
        return -1;
    npy_intp start = 0;
    for (int r = 0; r < api->rank; r++)
        start += lengths[r];
    PyMem_Free(lengths);
    const int ndim = PyArray_NDIM(total);
    if (start + length > PyArray_DIMS(total)[0]) {
        PyErr_Format(PyExc_ValueError, "%s: rows %zd to %zd of a gradient %zd long", who,
                     (Py_ssize_t)start, (Py_ssize_t)(start + length),
                     (Py_ssize_t)PyArray_DIMS(total)[0]);
        return -1;
    }
    npy_intp dims[SYMPILE_MPI_HEADER];
    memcpy(dims, PyArray_DIMS(total), sizeof(npy_intp) * ndim);
    dims[0] = length;
    PyObject *rows = PySequence_GetSlice((PyObject *)total, start, start + length);
    if (rows == NULL || sympile_prepare_output(output, ndim, dims, PyArray_TYPE(total))) {
        Py_XDECREF(rows);
        return -1;
    }
    const int status = PyArray_CopyInto(*output, (PyArrayObject *)rows);
    Py_DECREF(rows);
    return status;
}

/* x on the root rank, zeros on the others (broadcast's gradient). */
static int sympile_mpi_at_root(PyArrayObject *x, PyArrayObject **output, int root,
                               const char *who)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL || sympile_prepare_output(output, PyArray_NDIM(x), PyArray_DIMS(x),
                                              PyArray_TYPE(x)))
        return -1;
    if (api->rank == root)
        return sympile_mpi_pack(PyArray_DATA(*output), x);
    memset(PyArray_DATA(*output), 0, PyArray_NBYTES(*output));
    return 0;
}
