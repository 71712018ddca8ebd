"""C code of CAReduce (sum, prod, max, min, all, any) and Argmax/Argmin.

One loop nest serves every set of axes and every layout: at run time the kept axes and the
reduced axes are listed with their lengths and strides, length-1 axes dropped and neighbours
merged where the strides allow it (so reducing all of a C-contiguous array, or its innermost
contiguous axes, is one flat inner loop). The output, C-contiguous, is walked in order; for
each of its elements the reduced block is folded, its innermost axis as a plain strided loop
and the others by an odometer. Three fast paths of CAReduce: a block that is one contiguous run
is folded by a vectorised kernel into independent accumulators (16 for sums and products, 64
for the other folds, whose chains of compares and selects then overlap; blocks of 4096
elements, combined pairwise); a block of several contiguous runs of at least 16 elements
has each run folded so and the runs' values folded in order; and when the output is one
contiguous run of the input's innermost axis (sum over axis 0 of a C-contiguous matrix), the
input is read row by row, each row folded into the output (or an accumulator buffer), instead
of column by column. Argmax and Argmin have the first and the last: a contiguous run is
folded block by block (1024 elements), the first block whose extreme beats the best so far
remembered and searched alone at the end; rows are read in order, each column's best value
and position kept.

Values follow perform(): each element is cast to acc_dtype, folded there (max and min give NaN
when the slice holds one, as numpy's maximum does), and the result cast to the output dtype.
Signed integer sums and products wrap as numpy's do (computed in unsigned arithmetic, where C
defines overflow). Float sums of contiguous runs add 16 partial sums per block of 4096 and
combine blocks pairwise; numpy's pairwise sums group differently, so they can differ in the
last bits (the error grows like numpy's, far slower than one accumulator's); row-wise sums are
sequential down each column, as numpy's are.
"""

from __future__ import annotations

import hashlib

from sympile.graph.basic import Apply
from sympile.graph.ccode import (
    C_TYPES,
    NPY_TYPES,
    CCode,
    CNames,
    c_array,
    c_file,
    c_string,
    constant_table,
    render,
)
from sympile.scalar import basic as scalar
from sympile.scalar.c_rules import FLOAT_TO_INT, c_conversion
from sympile.tensor.c_toolkit import vectorized_kernel_attribute

__all__ = ["REDUCTION_TABLE", "argreduce_c_code", "careduce_c_code", "reduction_table"]

_FLOATS = ("float32", "float64")
_SIGNED = ("int8", "int16", "int32", "int64")

# The C limits of each integer dtype, the identities of max and min.
_LIMITS = {
    "bool": ("0", "1"), "int8": ("NPY_MIN_INT8", "NPY_MAX_INT8"),
    "int16": ("NPY_MIN_INT16", "NPY_MAX_INT16"), "int32": ("NPY_MIN_INT32", "NPY_MAX_INT32"),
    "int64": ("NPY_MIN_INT64", "NPY_MAX_INT64"), "uint8": ("0", "NPY_MAX_UINT8"),
    "uint16": ("0", "NPY_MAX_UINT16"), "uint32": ("0", "NPY_MAX_UINT32"),
    "uint64": ("0", "NPY_MAX_UINT64"), "float32": ("-INFINITY", "INFINITY"),
    "float64": ("-INFINITY", "INFINITY"),
}


def c_cast(expression: str, source_dtype: str, dtype: str) -> str:
    """`expression` (of `source_dtype`) converted to `dtype` as numpy's astype does: nonzero
    is True for bool, floats become integers through float_to_int.h (in every reduction's
    support, FLOAT_TO_INT) where C's conversion is undefined."""
    if source_dtype == dtype:
        return expression
    return c_conversion(expression, source_dtype, dtype)


def fold_statement(scalar_op: scalar.ScalarOp, acc_dtype: str) -> tuple[str, str] | None:
    """(the identity, the statement folding `value` into `acc`) of `scalar_op` in acc_dtype."""
    low, high = _LIMITS[acc_dtype]
    if acc_dtype == "bool":
        # numpy folds bools with add/max as `or`, with mul/min as `and`.
        if scalar_op in (scalar.add, scalar.maximum, scalar.logical_or):
            return "0", "acc = acc || value;"
        if scalar_op in (scalar.mul, scalar.minimum, scalar.logical_and):
            return "1", "acc = acc && value;"
        return None
    acc_type = C_TYPES[acc_dtype]
    if scalar_op in (scalar.add, scalar.mul):
        symbol = "+" if scalar_op == scalar.add else "*"
        identity = "0" if scalar_op == scalar.add else "1"
        if acc_dtype in _SIGNED:
            return identity, (f"acc = ({acc_type})((npy_uint64)acc {symbol} "
                              f"(npy_uint64)value);")
        return identity, f"acc = acc {symbol} value;"
    if scalar_op in (scalar.maximum, scalar.minimum):
        compare = ">=" if scalar_op == scalar.maximum else "<="
        identity = low if scalar_op == scalar.maximum else high
        if acc_dtype in _FLOATS:
            # | rather than ||: no branch, so the contiguous fold vectorises.
            return identity, f"acc = ((acc {compare} value) | (acc != acc)) ? acc : value;"
        return identity, f"acc = acc {compare} value ? acc : value;"
    if scalar_op == scalar.logical_and:
        return "1", f"acc = ({acc_type})(acc && value);"
    if scalar_op == scalar.logical_or:
        return "0", f"acc = ({acc_type})(acc || value);"
    return None


# The axes' layout and the odometer every reduction's loop nest uses (fused_c.py's too).
LAYOUT = c_file(__file__, "layout.c")


def _loop(names: CNames, before_block: str, per_value: str, after_block: str,
          output_dtype: str, contiguous_block: str = "", whole: str = "",
          per_run: str = "") -> str:
    """The loop nest, for any rank and axes (the node's table, a SympileReduction, in
    `data`): `before_block` then `per_value` for each element `value_pointer` of the reduced
    block (its position `position`), then `after_block` storing into `output[o]`. The table's
    op: check that no reduced axis is empty (a reduction with no identity), naming the op.
    contiguous_block: statements folding a block that is one contiguous run from `outer` (of
    block_size elements) instead; whole: statements that may do the whole reduction from the
    merged axes (layout.c), setting `handled`; per_run: statements folding a contiguous run
    of the block's innermost axis from `row` (inner_length elements, at least _LANES) into
    the block's value, for blocks of several such runs (a sum over axes 0, 2 and 3 of an
    NCHW gradient, a bias's: 60 runs of 784 folded one element at a time took 3x numpy's
    time)."""
    output, output_type = names.outputs[0], C_TYPES[output_dtype]
    layout = f"""
const SympileReduction *reduction = (const SympileReduction *)data;
PyArrayObject *input = {names.inputs[0]};
const int *reduced_flags = reduction->reduced;
const npy_intp *shape = PyArray_DIMS(input);
npy_intp output_dims[NPY_MAXDIMS], kept_lengths[NPY_MAXDIMS], kept_strides[NPY_MAXDIMS];
npy_intp block_lengths[NPY_MAXDIMS], block_strides[NPY_MAXDIMS], block_size;
int kept_count, block_count;
if (reduction->op != NULL && sympile_reduction_check_nonempty(
        reduction->ndim, shape, reduced_flags, reduction->op) != 0) {{
    {names.fail}
}}
const int output_ndim = sympile_reduction_output_shape(reduction->ndim, shape, reduced_flags,
                                                       output_dims, &block_size);
if (sympile_prepare_output(&{output}, output_ndim, output_dims, {NPY_TYPES[output_dtype]})) {{
    {names.fail}
}}
const npy_intp output_size = PyArray_SIZE({output});
if (output_size > 0) {{
    sympile_reduction_merge_axes(&input, 1, reduction->ndim, shape, reduced_flags,
                                 kept_lengths, kept_strides, &kept_count, block_lengths,
                                 block_strides, &block_count);"""
    return layout + f"""
    {output_type} *output = ({output_type} *)PyArray_DATA({output});
    const char *data = PyArray_BYTES(input), *outer = data;
    npy_intp kept_index[NPY_MAXDIMS] = {{0}};
    const npy_intp inner_length = block_count > 0 ? block_lengths[block_count - 1] : 1;
    const npy_intp inner_stride = block_count > 0 ? block_strides[block_count - 1] : 0;
    const int contiguous_blocks = {1 if contiguous_block else 0} && block_count == 1
        && inner_stride == (npy_intp)PyArray_ITEMSIZE(input);
    const int contiguous_runs = {1 if per_run else 0} && block_count > 1
        && inner_stride == (npy_intp)PyArray_ITEMSIZE(input) && inner_length >= {_LANES};
    int handled = 0;
    {whole}
    for (npy_intp o = 0; o < output_size && !handled; ++o) {{
        {before_block}
        if (contiguous_blocks) {{
            {contiguous_block}
        }} else if (contiguous_runs) {{
            {_runs_walk(per_run)}
        }} else if (block_size > 0) {{
            {_block_walk(per_value)}
        }}
        {after_block}
        sympile_reduction_step(&outer, 1, kept_index, kept_lengths, kept_strides, kept_count);
    }}
}}
"""


REDUCTION_TABLE = c_file(__file__, "reduction.h")


def reduction_table(op, node: Apply, checked: bool) -> tuple[str, tuple[str, ...]]:
    """(name, the main unit's pieces) of `node`'s SympileReduction; `checked`: the op has
    no value for an empty axis."""
    ndim = node.inputs[0].type.ndim
    axes = _axes(op, node)
    name, table = constant_table("sympile_reduction", "SympileReduction", [
        str(ndim), c_array("int", [int(axis in axes) for axis in range(ndim)]),
        c_string(op) if checked else "NULL"])
    return name, (REDUCTION_TABLE, table)


def _block_walk(per_value: str) -> str:
    """`per_value` for each element `value_pointer` of the block from `outer`, its innermost
    axis a strided loop and the others an odometer."""
    return f"""npy_intp block_index[NPY_MAXDIMS] = {{0}};
            const char *row = outer;
            npy_intp position = 0;
            do {{
                for (npy_intp j = 0; j < inner_length; ++j, ++position) {{
                    const char *value_pointer = row + j * inner_stride;
                    {per_value}
                }}
            }} while (sympile_reduction_step(&row, 1, block_index, block_lengths,
                                             block_strides, block_count - 1));"""


def _runs_walk(per_run: str) -> str:
    """`per_run` for each contiguous run `row` of the block's innermost axis from `outer`,
    the other axes an odometer."""
    return f"""npy_intp block_index[NPY_MAXDIMS] = {{0}};
            const char *row = outer;
            do {{
                {per_run}
            }} while (sympile_reduction_step(&row, 1, block_index, block_lengths,
                                             block_strides, block_count - 1));"""


# Vectorisation of the helper kernels (see sympile.tensor.elemwise.elemwise_c), compiled for this
# machine's widest vectors: a max or min fold is compute-bound on SSE2's compares and selects.
KERNEL_ATTRIBUTE = vectorized_kernel_attribute(compute_bound=True)
# Independent accumulators of a contiguous sum or product: as many as an AVX-512 register of
# float32 holds, so the fold vectorises without reassociating one accumulator's sum.
_LANES = 16
# Those of the other folds (max, min, and, or), whose value does not depend on the grouping:
# four registers, so that four compare-and-select chains overlap.
_WIDE_LANES = 64
# Elements folded into the lanes at a time; longer runs are halved recursively (pairwise), so
# the float error of a sum grows with BLOCK / _LANES + log2(n / BLOCK) additions, not n.
BLOCK = 4096


def named_kernel(kind: str, text: str) -> tuple[str, str]:
    """(name, definition) of a helper whose definition is `text` with NAME replaced."""
    name = f"sympile_reduce_{kind}_{hashlib.sha1(text.encode()).hexdigest()[:16]}"
    return name, text.replace("@NAME@", name)


def lanes_for(scalar_op: scalar.ScalarOp) -> int:
    return _LANES if scalar_op in (scalar.add, scalar.mul) else _WIDE_LANES


def lane_loops(acc_type: str, statement: str, load: str, count: str, lanes: int,
                prelude: str = "") -> str:
    """Loops folding elements `load` (of i + lane, after the statements `prelude`) into
    lanes[lane] while whole chunks of `lanes` remain, then (wide lanes) while chunks of _LANES
    remain, so that at most _LANES - 1 elements are left to a scalar loop."""
    loops = []
    for width in (lanes, _LANES) if lanes != _LANES else (lanes,):
        loops.append(f"""for (; i + {width} <= {count}; i += {width}) {{
        for (int lane = 0; lane < {width}; ++lane) {{
            {acc_type} acc = lanes[lane];
            {prelude}
            const {acc_type} value = {load};
            {statement}
            lanes[lane] = acc;
        }}
    }}""")
    return "\n    ".join(loops)


def combine_lanes(acc_type: str, statement: str, lanes: int) -> str:
    """Statements folding lanes[0..lanes) into `acc`: halves folded into halves, each step a
    loop of constant length the compiler vectorises (sums and products: in lane order, so
    their rounding does not depend on the machine's vector width)."""
    if lanes == _LANES:
        return f"""{acc_type} acc = lanes[0];
    for (int lane = 1; lane < {lanes}; ++lane) {{
        const {acc_type} value = lanes[lane];
        {statement}
    }}"""
    steps = []
    width = lanes // 2
    while width >= 1:
        steps.append(f"""for (int lane = 0; lane < {width}; ++lane) {{
        {acc_type} acc = lanes[lane];
        const {acc_type} value = lanes[lane + {width}];
        {statement}
        lanes[lane] = acc;
    }}""")
        width //= 2
    return "\n    ".join(steps) + f"\n    {acc_type} acc = lanes[0];"


# The contiguous max or min (see _extreme_helper), and the bytes of one of its vectors: an
# AVX-512 register; four are folded at once.
_EXTREME = c_file(__file__, "extreme.c")
_VECTOR_BYTES = 64
_MASK_TYPES = {1: "npy_int8", 2: "npy_int16", 4: "npy_int32", 8: "npy_int64"}
_SIZES = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
          "float32": 4, "int64": 8, "uint64": 8, "float64": 8}


def _extreme_helper(dtype: str, maximum: bool) -> tuple[str, str]:
    """(name, definition) of `T name(const T *data, npy_intp n)`: the maximum (or minimum)
    of n contiguous elements of `dtype` (not bool), the identity when n is 0, NaN when one
    is NaN (extreme.c). Its accumulators are vectors in registers: the arrays of
    lane_loops are stored and loaded again at every step, which made max 2x slower than
    numpy's."""
    low, high = _LIMITS[dtype]
    return named_kernel("extreme", render(_EXTREME, {
        "attribute": KERNEL_ATTRIBUTE, "T": C_TYPES[dtype], "M": _MASK_TYPES[_SIZES[dtype]],
        "bytes": _VECTOR_BYTES, "identity": low if maximum else high,
        "compare": ">=" if maximum else "<=", "floats": int(dtype in _FLOATS)}))


def _contiguous_fold(input_dtype: str, acc_dtype: str, identity: str, statement: str,
                     lanes: int) -> tuple[str, str]:
    """(name, definition) of `acc name(const T *data, npy_intp n)`: the fold of n contiguous
    elements in `lanes` accumulators, pairwise over blocks of BLOCK elements."""
    value_type, acc_type = C_TYPES[input_dtype], C_TYPES[acc_dtype]
    load = c_cast("data[i + lane]", input_dtype, acc_dtype)
    return named_kernel("contiguous", f"""
{KERNEL_ATTRIBUTE}
static {acc_type} @NAME@(const {value_type} *data, npy_intp n)
{{
    if (n > {BLOCK}) {{
        /* Halves (a multiple of the block) folded apart and combined: pairwise above the
           block, as numpy's sums are. */
        const npy_intp half = (n / 2 + {BLOCK - 1}) / {BLOCK} * {BLOCK};
        {acc_type} acc = @NAME@(data, half);
        const {acc_type} value = @NAME@(data + half, n - half);
        {statement}
        return acc;
    }}
    {acc_type} lanes[{lanes}];
    for (int lane = 0; lane < {lanes}; ++lane)
        lanes[lane] = {identity};
    npy_intp i = 0;
    {lane_loops(acc_type, statement, load, "n", lanes)}
    {combine_lanes(acc_type, statement, lanes)}
    for (; i < n; ++i) {{
        const {acc_type} value = {c_cast("data[i]", input_dtype, acc_dtype)};
        {statement}
    }}
    return acc;
}}
""")


def _rows_fold(input_dtype: str, acc_dtype: str, identity: str,
               statement: str) -> tuple[str, str]:
    """(name, definition): the fold of `rows` rows of `length` contiguous elements
    (`row_stride` bytes apart) into acc[0..length), row by row (a reduction over outer axes
    of a C-contiguous array, reading memory in order)."""
    value_type, acc_type = C_TYPES[input_dtype], C_TYPES[acc_dtype]
    return named_kernel("rows", f"""
{KERNEL_ATTRIBUTE}
static void @NAME@(const char *data, npy_intp rows, npy_intp row_stride, npy_intp length,
                   {acc_type} *restrict accumulators)
{{
    for (npy_intp k = 0; k < length; ++k)
        accumulators[k] = {identity};
    for (npy_intp r = 0; r < rows; ++r) {{
        const {value_type} *restrict row = (const {value_type} *)(data + r * row_stride);
        for (npy_intp k = 0; k < length; ++k) {{
            {acc_type} acc = accumulators[k];
            const {acc_type} value = {c_cast("row[k]", input_dtype, acc_dtype)};
            {statement}
            accumulators[k] = acc;
        }}
    }}
}}
""")


def _rows_path(rows_name: str, acc_dtype: str, output_dtype: str, names: CNames) -> str:
    """The whole reduction by rows when the output is one contiguous run of the input's
    innermost axis and one reduced axis remains: accumulated in the output itself when it
    has the accumulator's C type, else in a temporary buffer."""
    acc_type = C_TYPES[acc_dtype]
    if acc_dtype == output_dtype:
        accumulate = f"{rows_name}(data, block_lengths[0], block_strides[0], kept_lengths[0], " \
                     f"({acc_type} *)output);"
    else:
        accumulate = f"""{acc_type} *accumulators = ({acc_type} *)malloc(
            sizeof({acc_type}) * (size_t)kept_lengths[0]);
        if (accumulators == NULL) {{
            PyErr_NoMemory();
            {names.fail}
        }}
        {rows_name}(data, block_lengths[0], block_strides[0], kept_lengths[0], accumulators);
        for (npy_intp k = 0; k < kept_lengths[0]; ++k)
            output[k] = {c_cast("accumulators[k]", acc_dtype, output_dtype)};
        free(accumulators);"""
    return f"""if (kept_count == 1 && block_count == 1
        && kept_strides[0] == (npy_intp)PyArray_ITEMSIZE(input)) {{
        {accumulate}
        handled = 1;
    }}"""


def _axes(op, node: Apply) -> tuple[int, ...]:
    return tuple(range(node.inputs[0].type.ndim)) if op.axis is None else op.axis


def careduce_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of a CAReduce node, or None (perform) for dtypes C has no arithmetic for."""
    input_dtype = node.inputs[0].type.dtype
    output_dtype = node.outputs[0].type.dtype
    acc_dtype = op.acc_dtype or output_dtype
    if not all(dtype in C_TYPES for dtype in (input_dtype, output_dtype, acc_dtype)):
        return None
    fold = fold_statement(op.scalar_op, acc_dtype)
    if fold is None:
        return None
    identity, statement = fold
    acc_type = C_TYPES[acc_dtype]
    value = c_cast(f"*(const {C_TYPES[input_dtype]} *)value_pointer", input_dtype, acc_dtype)
    per_value = f"{acc_type} value = {value}; {statement}"
    if (op.scalar_op in (scalar.maximum, scalar.minimum) and input_dtype == acc_dtype
            and input_dtype in _SIZES):
        contiguous_name, contiguous = _extreme_helper(input_dtype,
                                                      op.scalar_op == scalar.maximum)
    else:
        contiguous_name, contiguous = _contiguous_fold(input_dtype, acc_dtype, identity,
                                                       statement, lanes_for(op.scalar_op))
    rows_name, rows = _rows_fold(input_dtype, acc_dtype, identity, statement)
    table, pieces = reduction_table(op, node, checked=op.scalar_op.identity is None)
    body = _loop(names,
                 before_block=f"{acc_type} acc = {identity};",
                 per_value=per_value,
                 after_block=f"output[o] = {c_cast('acc', acc_dtype, output_dtype)};",
                 output_dtype=output_dtype,
                 contiguous_block=(f"acc = {contiguous_name}"
                                   f"((const {C_TYPES[input_dtype]} *)outer, block_size);"),
                 whole=_rows_path(rows_name, acc_dtype, output_dtype, names),
                 per_run=(f"const {acc_type} value = {contiguous_name}"
                          f"((const {C_TYPES[input_dtype]} *)row, inner_length); {statement}"))
    return CCode(body=body, support=(FLOAT_TO_INT, LAYOUT, REDUCTION_TABLE, contiguous, rows),
                 data=table, table=pieces)


# Elements an arg-reduction folds at a time: the block whose extreme beats the best so far is
# remembered, and the first position of the best is searched in it alone, at the end.
_ARG_BLOCK = 1024
_ARG_EXTREME = c_file(__file__, "argextreme.c")


def _argreduce_helpers(input_dtype: str, maximum: bool) -> tuple[str, str, str, str]:
    """(contiguous name, rows name, definitions): the first position of the extreme of n >= 1
    contiguous elements (the first NaN when there is one), in one pass of vectorised block
    folds; and the positions of the extremes of `length` columns over `rows` rows of
    `length` contiguous elements (`row_stride` bytes apart), into positions[0..length),
    reading the rows in order (an arg-reduction over the outer axis of a C-contiguous array).
    """
    value_type = C_TYPES[input_dtype]
    identity, statement = fold_statement(scalar.maximum if maximum else scalar.minimum, input_dtype)
    compare = ">" if maximum else "<"
    floats = input_dtype in _FLOATS
    # Whether `value` replaces `best`: strictly better, or the first NaN.
    better = (f"(value {compare} best || (value != value && best == best))" if floats
              else f"value {compare} best")
    # Whether run[i] is the block's best (for a NaN best: the NaN).
    hit = "run[i] == best || (best != best && run[i] != run[i])" if floats else "run[i] == best"
    # The same of `value`, without branches.
    chunk_hit = ("(value == best) | ((best != best) & (value != value))" if floats
                 else "value == best")
    extreme_name, extreme = (
        _extreme_helper(input_dtype, maximum) if input_dtype in _SIZES
        else _contiguous_fold(input_dtype, input_dtype, identity, statement, _WIDE_LANES))
    contiguous_name, contiguous = named_kernel("argcontiguous", extreme + render(
        _ARG_EXTREME, {"attribute": KERNEL_ATTRIBUTE, "T": value_type, "identity": identity,
                       "BLOCK": _ARG_BLOCK, "EXTREME": extreme_name, "LANES": _LANES,
                       "better": better, "chunk_hit": chunk_hit, "hit": hit}))
    rows_name, rows = named_kernel("argrows", f"""
{KERNEL_ATTRIBUTE}
static void @NAME@(const char *data, npy_intp rows, npy_intp row_stride, npy_intp length,
                   {value_type} *restrict best_values, npy_int64 *restrict positions)
{{
    const {value_type} *restrict first = (const {value_type} *)data;
    for (npy_intp k = 0; k < length; ++k) {{
        best_values[k] = first[k];
        positions[k] = 0;
    }}
    for (npy_intp r = 1; r < rows; ++r) {{
        const {value_type} *restrict row = (const {value_type} *)(data + r * row_stride);
        for (npy_intp k = 0; k < length; ++k) {{
            const {value_type} value = row[k], best = best_values[k];
            const int take = {better};
            best_values[k] = take ? value : best;
            positions[k] = take ? (npy_int64)r : positions[k];
        }}
    }}
}}
""")
    return contiguous_name, rows_name, contiguous, rows


def argreduce_c_code(op, node: Apply, names: CNames, maximum: bool) -> CCode | None:
    """C code of an Argmax (maximum) or Argmin node: the first extreme index, the first NaN
    when there is one (numpy's rule)."""
    input_dtype = node.inputs[0].type.dtype
    if input_dtype not in C_TYPES:
        return None
    value_type = C_TYPES[input_dtype]
    compare = ">" if maximum else "<"
    if input_dtype in _FLOATS:
        better = f"(!isnan(best) && (value {compare} best || isnan(value)))"
    else:
        better = f"value {compare} best"
    per_value = (f"{value_type} value = *(const {value_type} *)value_pointer; "
                 f"if (position == 0 || {better}) {{ best = value; best_position = position; }}")
    contiguous_name, rows_name, contiguous, rows = _argreduce_helpers(input_dtype, maximum)
    # The output one contiguous run of the input's innermost axis, one reduced axis left:
    # the rows read in order, the best values kept in a buffer.
    whole = f"""if (kept_count == 1 && block_count == 1
        && kept_strides[0] == (npy_intp)PyArray_ITEMSIZE(input)) {{
        {value_type} *best_values = ({value_type} *)malloc(
            sizeof({value_type}) * (size_t)kept_lengths[0]);
        if (best_values == NULL) {{
            PyErr_NoMemory();
            {names.fail}
        }}
        {rows_name}(data, block_lengths[0], block_strides[0], kept_lengths[0], best_values,
                    (npy_int64 *)output);
        free(best_values);
        handled = 1;
    }}"""
    table, pieces = reduction_table(op, node, checked=True)
    body = _loop(names,
                 before_block=f"{value_type} best = 0; npy_intp best_position = 0;",
                 per_value=per_value,
                 after_block="output[o] = (npy_int64)best_position;",
                 output_dtype="int64",
                 contiguous_block=(f"best_position = {contiguous_name}"
                                   f"((const {value_type} *)outer, block_size);"),
                 whole=whole)
    return CCode(body=body, support=(FLOAT_TO_INT, LAYOUT, REDUCTION_TABLE, contiguous, rows),
                 data=table, table=pieces)
