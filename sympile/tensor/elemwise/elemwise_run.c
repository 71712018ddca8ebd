/* Everything of an Elemwise node that is not its loops, driven by its table: the broadcast
   check, the outputs, and the choice and setup of a kernel. One copy for every node, so a
   node's own C is its kernels (a library unit per computation, shared by every shape) and its
   table. And DimShuffle's view, which needs no code of its node's at all. */

#ifdef _OPENMP
#include <omp.h>
#endif

/* sympile_elemwise_blocks's blocks: up to SYMPILE_ELEMWISE_BLOCK elements, their buffers in
   an arena of SYMPILE_ELEMWISE_ARENA bytes on the stack. A node's strided kernel (where it
   has one) serves rows of SYMPILE_ELEMWISE_SHORT_ROW elements or more; shorter rows run in
   blocks of several rows, faster than a loop per row (a 1000 x 16 float32 x * b + 1: 5.9
   instead of 8.6 us), except rows of 8 or more with a value per row (x * c + 1 for a column
   c: 8.9 instead of 8.1 us). */
#define SYMPILE_ELEMWISE_BLOCK 4096
#define SYMPILE_ELEMWISE_SHORT_ROW 64
#define SYMPILE_ELEMWISE_ARENA 32768

/* `length` elements of `itemsize` bytes from `from` (a step of `from_step` bytes; 0: one
   value repeated) into `to` (a step of `to_step`). The common cases are loops of known
   steps, which the vectoriser turns into vector loads, stores and broadcasts. */
#define SYMPILE_ELEMWISE_COPY_RUN(type)                                                       \
    if (to_step == itemsize && from_step == 0) {                                            \
        const type value = *(const type *)from;                                             \
        for (npy_intp e = 0; e < length; e++)                                               \
            ((type *)to)[e] = value;                                                        \
    } else if (to_step == itemsize) {                                                       \
        for (npy_intp e = 0; e < length; e++)                                               \
            ((type *)to)[e] = *(const type *)(from + e * from_step);                        \
    } else if (from_step == itemsize) {                                                     \
        for (npy_intp e = 0; e < length; e++)                                               \
            *(type *)(to + e * to_step) = ((const type *)from)[e];                          \
    } else {                                                                                \
        for (npy_intp e = 0; e < length; e++)                                               \
            *(type *)(to + e * to_step) = *(const type *)(from + e * from_step);            \
    }

static __attribute__((optimize("tree-vectorize")))
void sympile_elemwise_copy_run(char *to, npy_intp to_step, const char *from,
                               npy_intp from_step, npy_intp length, int itemsize)
{
    switch (itemsize) {
    case 1: SYMPILE_ELEMWISE_COPY_RUN(npy_uint8) break;
    case 2: SYMPILE_ELEMWISE_COPY_RUN(npy_uint16) break;
    case 4: SYMPILE_ELEMWISE_COPY_RUN(npy_uint32) break;
    case 8: SYMPILE_ELEMWISE_COPY_RUN(npy_uint64) break;
    default:
        for (npy_intp e = 0; e < length; e++)
            memcpy(to + e * to_step, from + e * from_step, (size_t)itemsize);
    }
}

/* The layout of sympile_elemwise_blocks's blocks: `rows` rows of `columns` elements, row
   after row (rows of more than `block` elements are cut into blocks of one row; shorter rows
   are grouped, up to `block` elements, within a run of the next-to-last axis). */
typedef struct {
    int nd, count;
    const npy_intp *shape, *strides;
    const int *itemsizes;
    npy_intp block, per_row, group, run, groups;
} SympileElemwiseBlocks;

/* Block `index`: its first row and column, and its rows and columns. */
static void sympile_elemwise_block_at(const SympileElemwiseBlocks *layout, npy_intp index,
                                      npy_intp *row, npy_intp *column, npy_intp *rows,
                                      npy_intp *columns)
{
    const npy_intp inner = layout->shape[layout->nd - 1];
    if (layout->per_row > 0) {
        *row = index / layout->per_row;
        *column = index % layout->per_row * layout->block;
        *rows = 1;
        *columns = inner - *column < layout->block ? inner - *column : layout->block;
    } else {
        const npy_intp first = index % layout->groups * layout->group;
        *row = index / layout->groups * layout->run + first;
        *column = 0;
        *rows = layout->run - first < layout->group ? layout->run - first : layout->group;
        *columns = inner;
    }
}

/* The blocks [first, last): each operand that a block reads or writes as one contiguous run
   (contiguous along the rows, and its rows one after the other where the block has several;
   or a single input) is passed to the span as it is, the others through their buffers
   (`buffers[k]`, NULL for those passed as they are): gathered before the span (an input,
   kept for the next block where it reads the same elements: a broadcast row or column)
   or scattered after it (an output). */
static int sympile_elemwise_block_range(const SympileElemwise *node,
                                        const SympileElemwiseBlocks *layout,
                                        char *const *pointers, char *const *buffers,
                                        npy_intp first, npy_intp last)
{
    const int n_inputs = node->n_inputs, count = layout->count, nd = layout->nd;
    const npy_intp *strides = layout->strides;
    char *operands[SYMPILE_ELEMWISE_OPERANDS];
    const char *gathered[SYMPILE_ELEMWISE_OPERANDS];
    npy_intp gathered_rows[SYMPILE_ELEMWISE_OPERANDS], gathered_columns[SYMPILE_ELEMWISE_OPERANDS];
    npy_intp offsets[SYMPILE_ELEMWISE_OPERANDS];
    for (int k = 0; k < n_inputs; k++)
        gathered[k] = NULL;
    int flags = 0;
    for (npy_intp b = first; b < last; b++) {
        npy_intp row, column, rows, columns;
        sympile_elemwise_block_at(layout, b, &row, &column, &rows, &columns);
        sympile_elemwise_row_offsets(nd, count, layout->shape, strides, row, offsets);
        for (int k = 0; k < count; k++) {
            const npy_intp step = strides[k * nd + nd - 1];
            const npy_intp row_step = nd > 1 ? strides[k * nd + nd - 2] : 0;
            char *start = pointers[k] + offsets[k] + column * step;
            operands[k] = buffers[k] != NULL ? buffers[k] : start;
            if (buffers[k] == NULL || k >= n_inputs || (gathered[k] == start
                    && rows <= gathered_rows[k] && columns <= gathered_columns[k]))
                continue;
            for (npy_intp r = 0; r < rows; r++)
                sympile_elemwise_copy_run(buffers[k] + r * columns * layout->itemsizes[k],
                                          layout->itemsizes[k], start + r * row_step, step,
                                          columns, layout->itemsizes[k]);
            gathered[k] = start;
            gathered_rows[k] = rows;
            gathered_columns[k] = columns;
        }
        flags |= node->span(rows * columns, operands);
        for (int k = n_inputs; k < count; k++) {
            if (buffers[k] == NULL)
                continue;
            const npy_intp step = strides[k * nd + nd - 1];
            const npy_intp row_step = nd > 1 ? strides[k * nd + nd - 2] : 0;
            char *start = pointers[k] + offsets[k] + column * step;
            for (npy_intp r = 0; r < rows; r++)
                sympile_elemwise_copy_run(start + r * row_step, step,
                                          buffers[k] + r * columns * layout->itemsizes[k],
                                          layout->itemsizes[k], columns, layout->itemsizes[k]);
        }
    }
    return flags;
}

/* The span kernel on operands of any strides (in bytes, 0 along broadcast axes), a block at
   a time (SympileElemwiseBlocks, sympile_elemwise_block_range): the computation is
   compiled once, in the span, for every layout; the memory-bound computations whose types
   say an input is broadcast along the rows or may be a view have a strided kernel that
   needs no buffers (elemwise_c.py's needs_strided_kernel). Blocks are split among threads
   from the node's parallel_minimum elements. */
static __attribute__((noinline))
int sympile_elemwise_blocks(const SympileElemwise *node, int nd, const npy_intp *shape,
                            char *const *pointers, const npy_intp *strides,
                            const int *itemsizes)
{
    const int n_inputs = node->n_inputs, count = n_inputs + node->n_outputs;
    const npy_intp inner = shape[nd - 1], run = nd > 1 ? shape[nd - 2] : 1;
    npy_intp total = inner;
    for (int axis = 0; axis < nd - 1; axis++)
        total *= shape[axis];
    SympileElemwiseBlocks layout = {nd, count, shape, strides, itemsizes, 0, 0, 0, run, 0};
    /* Buffers of SYMPILE_ELEMWISE_BLOCK elements at most, all in the arena. */
    int buffered[SYMPILE_ELEMWISE_OPERANDS], buffer_bytes = 0;
    for (int pass = 0; pass < 2; pass++) {
        npy_intp block = SYMPILE_ELEMWISE_BLOCK;
        while (block > 1 && block * buffer_bytes > SYMPILE_ELEMWISE_ARENA)
            block /= 2;
        layout.block = block;
        layout.per_row = inner > block ? (inner + block - 1) / block : 0;
        layout.group = inner > block ? 1 : (block / inner < run ? block / inner : run);
        buffer_bytes = 0;
        for (int k = 0; k < count; k++) {
            const npy_intp step = strides[k * nd + nd - 1];
            const npy_intp row_step = nd > 1 ? strides[k * nd + nd - 2] : 0;
            buffered[k] = !(k < n_inputs && node->single[k]) && !(
                step == itemsizes[k] && (layout.group == 1 || row_step == inner * step));
            buffer_bytes += buffered[k] ? itemsizes[k] : 0;
        }
        if (layout.block * buffer_bytes <= SYMPILE_ELEMWISE_ARENA)
            break;
    }
    layout.groups = (run + layout.group - 1) / layout.group;
    const npy_intp blocks = layout.per_row > 0 ? total / inner * layout.per_row
                                               : total / inner / run * layout.groups;
    int flags = 0;
    #pragma omp parallel reduction(|:flags) \
        if (node->parallel_minimum >= 0 && total >= node->parallel_minimum)
    {
#ifdef _OPENMP
        const npy_intp parts = omp_get_num_threads(), part = omp_get_thread_num();
#else
        const npy_intp parts = 1, part = 0;
#endif
        _Alignas(64) char arena[SYMPILE_ELEMWISE_ARENA];
        char *buffers[SYMPILE_ELEMWISE_OPERANDS];
        npy_intp used = 0;
        for (int k = 0; k < count; k++) {
            buffers[k] = buffered[k] ? arena + used : NULL;
            used += buffered[k] ? layout.block * itemsizes[k] : 0;
        }
        flags |= sympile_elemwise_block_range(node, &layout, pointers, buffers,
                                              blocks * part / parts,
                                              blocks * (part + 1) / parts);
    }
    return flags;
}

/* The strided kernel on the operands, or sympile_elemwise_blocks where the node has none:
   length-1 axes dropped, neighbouring axes merged where every operand's strides allow it. */
static __attribute__((noinline))
int sympile_elemwise_strided(const SympileElemwise *node, const npy_intp *dims,
                             PyArrayObject *const *operands, char **pointers)
{
    const int count = node->n_inputs + node->n_outputs, ndim = node->ndim;
    const int length = ndim > 0 ? ndim : 1;
    npy_intp shape[NPY_MAXDIMS], merged[count * length];
    int nd = 0;
    for (int axis = 0; axis < ndim; axis++) {
        if (dims[axis] == 1)
            continue;
        int merge = nd > 0;
        npy_intp axis_strides[count];
        for (int k = 0; k < count; k++) {
            axis_strides[k] = PyArray_DIMS(operands[k])[axis] == 1
                ? 0 : PyArray_STRIDES(operands[k])[axis];
            merge = merge && merged[k * length + nd - 1] == axis_strides[k] * dims[axis];
        }
        if (merge) {
            shape[nd - 1] *= dims[axis];
        } else {
            shape[nd] = dims[axis];
            nd++;
        }
        for (int k = 0; k < count; k++)
            merged[k * length + nd - 1] = axis_strides[k];
    }
    if (nd == 0) {
        nd = 1;
        shape[0] = 1;
        for (int k = 0; k < count; k++)
            merged[k * length] = 0;
    }
    npy_intp strides[count * nd];
    for (int k = 0; k < count; k++)
        for (int axis = 0; axis < nd; axis++)
            strides[k * nd + axis] = merged[k * length + axis];
    if (node->strided != NULL && shape[nd - 1] >= SYMPILE_ELEMWISE_SHORT_ROW / 8) {
        /* A value per row (an input broadcast along the rows) costs the blocks a buffer
           filled per row: rows of 8 to 63 elements go to them only without one. */
        int per_row_value = shape[nd - 1] >= SYMPILE_ELEMWISE_SHORT_ROW;
        for (int i = 0; i < node->n_inputs && !per_row_value; i++)
            per_row_value = !node->single[i] && strides[i * nd + nd - 1] == 0;
        if (per_row_value)
            return node->strided(nd, shape, pointers, strides);
    }
    int itemsizes[SYMPILE_ELEMWISE_OPERANDS];
    for (int k = 0; k < count; k++)
        itemsizes[k] = (int)PyArray_ITEMSIZE(operands[k]);
    return sympile_elemwise_blocks(node, nd, shape, pointers, strides, itemsizes);
}

/* The kernels' error flags (>= 0), or -1 with a Python exception set. The operands are the
   node's inputs, then its outputs: NULL or arrays it gave before, owned; on return they hold
   what it gives now. */
static inline __attribute__((always_inline))
int sympile_elemwise_apply(const SympileElemwise *node, PyArrayObject **operands)
{
    const int n_inputs = node->n_inputs, ndim = node->ndim;
    PyArrayObject *const *inputs = operands, **outputs = operands + n_inputs;
    npy_intp dims[NPY_MAXDIMS];
    npy_intp size = 1;
    /* An axis's length is that of the first input whose type does not say 1 there. */
    for (int axis = 0; axis < ndim; axis++) {
        int found = 0;
        dims[axis] = 1;
        for (int i = 0; i < n_inputs; i++) {
            if (node->length_one[i * ndim + axis])
                continue;
            const npy_intp here = PyArray_DIMS(inputs[i])[axis];
            if (!found) {
                found = 1;
                dims[axis] = here;
            } else if (here != dims[axis]) {
                sympile_elemwise_shape_error(node->op, n_inputs, inputs, axis, dims[axis], here);
                return -1;
            }
        }
        size *= dims[axis];
    }
    char *pointers[SYMPILE_ELEMWISE_OPERANDS];
    /* Outside the single inputs, every operand has the output's shape unless one of its
       axes is broadcast (its type says length 1 where the output's length is not 1). */
    int contiguous = 1;
    for (int i = 0; i < n_inputs; i++) {
        pointers[i] = PyArray_BYTES(inputs[i]);
        if (node->single[i])
            continue;
        contiguous = contiguous && PyArray_IS_C_CONTIGUOUS(inputs[i]);
        for (int axis = 0; axis < ndim && contiguous; axis++)
            contiguous = !node->length_one[i * ndim + axis] || dims[axis] == 1;
    }
    for (int j = 0; j < node->n_outputs; j++) {
        const int target = node->written[j];
        if (target >= 0) {
            if (!PyArray_ISWRITEABLE(inputs[target])) {
                PyErr_Format(PyExc_ValueError, "%s: input %d is read-only, but output %d is "
                             "to be written over it", node->op, target, j);
                return -1;
            }
            Py_INCREF(inputs[target]);
            Py_XDECREF(outputs[j]);
            outputs[j] = inputs[target];
            contiguous = contiguous && PyArray_IS_C_CONTIGUOUS(outputs[j]);
        } else if (sympile_prepare_output(&outputs[j], ndim, dims, node->typenums[j])) {
            return -1;
        }
        pointers[n_inputs + j] = PyArray_BYTES(outputs[j]);
    }
    if (size == 0)
        return 0;
    if (contiguous)
        return node->contiguous(size, pointers);
    return sympile_elemwise_strided(node, dims, operands, pointers);
}

int @NAME@_run(PyObject *const *cells, const void *data)
{
    const SympileElemwise *node = data;
    const int n_inputs = node->n_inputs, n_outputs = node->n_outputs;
    PyArrayObject *operands[SYMPILE_ELEMWISE_OPERANDS], **outputs = operands + n_inputs;
    for (int i = 0; i < n_inputs; i++)
        operands[i] = (PyArrayObject *)PyList_GET_ITEM(cells[i], 0);
    for (int j = 0; j < n_outputs; j++)
        outputs[j] = sympile_take_output(cells[n_inputs + j]);
    int flags = sympile_elemwise_apply(node, operands);
    for (int e = 0; e < node->n_errors && flags > 0; e++) {
        if (flags & node->errors[e].code) {
            PyErr_Format(*node->errors[e].exception, "%s: %s", node->op, node->errors[e].message);
            flags = -1;
        }
    }
    if (flags < 0) {
        for (int j = 0; j < n_outputs; j++)
            Py_XDECREF(outputs[j]);
        return -1;
    }
    for (int j = 0; j < n_outputs; j++)
        sympile_store_output(cells[n_inputs + j], outputs[j]);
    return 0;
}

int @NAME@_dimshuffle(PyObject *const *cells, const void *data)
{
    const SympileDimShuffle *node = data;
    PyArrayObject *x = (PyArrayObject *)PyList_GET_ITEM(cells[0], 0);
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int axis = 0; axis < node->ndim; axis++) {
        const int source = node->order[axis];
        dims[axis] = source < 0 ? 1 : PyArray_DIMS(x)[source];
        strides[axis] = source < 0 ? 0 : PyArray_STRIDES(x)[source];
    }
    Py_INCREF(PyArray_DESCR(x));
    PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, PyArray_DESCR(x), node->ndim, dims, strides, PyArray_DATA(x),
        PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL)
        return -1;
    Py_INCREF(x);
    if (PyArray_SetBaseObject(view, (PyObject *)x)) {
        Py_DECREF(view);
        return -1;
    }
    sympile_store_output(cells[1], view);
    return 0;
}
