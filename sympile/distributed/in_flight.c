/* all_reduce split in two nodes, so that the nodes between them overlap it: AllReduceStart
   starts the collective (@start@), AllReduceWait finishes it (@finish@), and the module
   calls @progress@ after every node it runs, because MPI moves a collective's data only
   inside its own calls. A library unit, after collectives.c: one table of collectives in
   flight per module, a start's token being its slot. Each slot keeps its buffer from call
   to call (MPICH pays for each buffer address it has not seen before). */

#define SYMPILE_MPI_SLOTS 64

enum { SYMPILE_MPI_FREE, SYMPILE_MPI_IN_FLIGHT, SYMPILE_MPI_DONE, SYMPILE_MPI_LOST };

static struct sympile_mpi_slot {
    sympile_mpi_request request;
    int state;
    int code;              /* MPI's error, from a progress call */
    PyObject *work;        /* the slot's buffer: a numpy array of bytes, only grown */
} sympile_mpi_slots[SYMPILE_MPI_SLOTS];
static int sympile_mpi_in_flight;

/* Packs the n tensors (one dtype) into a free slot's buffer and starts their all-reduce
   (`operation` of sympile_mpi_api's, of types[type]); *token becomes a 0-d int64 array
   holding the slot. */
int @start@(PyArrayObject *const *inputs, int n, int operation, int type, const char *who,
            PyArrayObject **token)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL)
        return -1;
    int index = 0;
    while (index < SYMPILE_MPI_SLOTS && sympile_mpi_slots[index].state != SYMPILE_MPI_FREE)
        index++;
    if (index == SYMPILE_MPI_SLOTS) {
        PyErr_Format(PyExc_RuntimeError, "%s: %d collectives already in flight in this "
                     "function (calls that failed before finishing them leave them there)",
                     who, SYMPILE_MPI_SLOTS);
        return -1;
    }
    struct sympile_mpi_slot *slot = &sympile_mpi_slots[index];
    const int count = sympile_mpi_bucket_count(inputs, n, who);
    if (count < 0 || sympile_prepare_output(token, 0, NULL, NPY_INT64))
        return -1;
    char *buffer = sympile_mpi_pack_bucket(&slot->work, inputs, n,
                                           (npy_intp)count * PyArray_ITEMSIZE(inputs[0]));
    if (buffer == NULL)
        return -1;
    const int code = api->iallreduce(api->in_place, buffer, count, api->types[type],
                                     api->operations[operation], api->comm, &slot->request);
    if (code != 0)
        return sympile_mpi_failed(api, code, who);
    slot->state = SYMPILE_MPI_IN_FLIGHT;
    slot->code = 0;
    sympile_mpi_in_flight++;
    *(npy_int64 *)PyArray_DATA(*token) = index;
    return 0;
}

/* One MPI_Test of each collective in flight: returns at once when there is none. */
void @progress@(void)
{
    if (sympile_mpi_in_flight == 0)
        return;
    /* A start ran, so the table is found (no exception can be set). */
    struct sympile_mpi_api *api = sympile_mpi_api_get("all_reduce");
    long long status[32];
    for (int index = 0; index < SYMPILE_MPI_SLOTS; index++) {
        struct sympile_mpi_slot *slot = &sympile_mpi_slots[index];
        if (slot->state != SYMPILE_MPI_IN_FLIGHT)
            continue;
        int done = 0;
        slot->code = api->test(&slot->request, &done, status);
        if (done || slot->code != 0) {
            slot->state = SYMPILE_MPI_DONE;
            sympile_mpi_in_flight--;
        }
    }
}

/* Waits for the collective of the slot in `token_array` (a start's token, with the
   timeout) and unpacks it into n outputs shaped as the inputs, divided by the number of
   ranks when `mean`. */
int @finish@(PyArrayObject *token_array, PyArrayObject *const *inputs,
             PyArrayObject **outputs, int n, int mean, const char *who)
{
    struct sympile_mpi_api *api = sympile_mpi_api_get(who);
    if (api == NULL)
        return -1;
    const npy_int64 token = *(const npy_int64 *)PyArray_DATA(token_array);
    if (token < 0 || token >= SYMPILE_MPI_SLOTS
            || sympile_mpi_slots[token].state == SYMPILE_MPI_FREE
            || sympile_mpi_slots[token].state == SYMPILE_MPI_LOST) {
        PyErr_Format(PyExc_RuntimeError, "%s: no collective in flight for token %lld", who,
                     (long long)token);
        return -1;
    }
    struct sympile_mpi_slot *slot = &sympile_mpi_slots[token];
    if (slot->state == SYMPILE_MPI_IN_FLIGHT) {
        sympile_mpi_in_flight--;
        if (sympile_mpi_wait(api, &slot->request, who)) {
            /* MPI may still write to the buffer: the slot is never used again. */
            slot->state = SYMPILE_MPI_LOST;
            return -1;
        }
    }
    slot->state = SYMPILE_MPI_FREE;
    if (slot->code != 0)
        return sympile_mpi_failed(api, slot->code, who);
    return sympile_mpi_unpack_bucket(PyArray_DATA((PyArrayObject *)slot->work), inputs,
                                     outputs, n, mean ? api->size : 0);
}
