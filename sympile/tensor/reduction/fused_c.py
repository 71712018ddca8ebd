"""C code of FusedCAReduce: a reduction whose values are an elementwise scalar op of several
broadcast inputs, computed where they are folded (no temporary array).

The loop nest is CAReduce's (sympile.tensor.reduction.careduce_c) with one pointer per input: the
broadcast shape is checked as Elemwise checks it, length-1 axes are dropped, neighbouring kept
(and reduced) axes merged where every input's strides allow it (an input broadcast along an
axis steps by 0 there), the output walked in order and each element's block folded. Two fast
paths, both with the plain reduction's accumulation order and precision:

- a block that is one contiguous run of every input that varies over the reduced axes (the
  others, whose type has length 1 on every reduced axis, read once per block) is folded by a
  vectorised kernel: 16 independent accumulators for sums and products, 64 for max, min, and,
  or, over blocks of 4096 elements combined pairwise, exactly as CAReduce's contiguous kernel
  does (so sum(f(x)) gives the bits sum of the stored f(x) gives on the C backend);
- one kept axis that is contiguous (or broadcast) in every input and one reduced axis (a sum
  over axis 0 of a C-contiguous matrix): the rows are read in order, each folded into the
  output's accumulators, as CAReduce's rows path does (sequential down each column).

Scalar code that calls sympile.scalar.c_fastmath's functions with a limited range reports an
element outside it through FALLBACK_FLAG; a kernel's leaf block (or a row) is then folded again
with libm's functions, as Elemwise's loops recompute their block. The general path uses libm's
functions throughout. Errors reported through C_ERROR_FLAG are raised after the loop, with the
messages of Elemwise's C code.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_string
from sympile.scalar.c_fastmath import FALLBACK_FLAG, precise_statements
from sympile.scalar.c_rules import C_ERROR_FLAG, C_ERRORS, FLOAT_TO_INT
from sympile.tensor.c_toolkit import SHAPE_ERROR
from sympile.tensor.elemwise.elemwise_c import broadcast_shape_checks
from sympile.tensor.reduction.careduce_c import (
    BLOCK,
    KERNEL_ATTRIBUTE,
    LAYOUT,
    c_cast,
    combine_lanes,
    fold_statement,
    lane_loops,
    lanes_for,
    named_kernel,
)

__all__ = ["fused_careduce_c_code"]


class _Operands:
    """The inputs of one FusedCAReduce node, as its kernels read them."""

    def __init__(self, node: Apply, axes: tuple[int, ...], statements: str):
        self.count = len(node.inputs)
        self.types = [C_TYPES[v.type.dtype] for v in node.inputs]
        # Inputs whose type has length 1 on every reduced axis: one value per block.
        self.block_constant = [all(v.type.shape[a] == 1 for a in axes) for v in node.inputs]
        kept = [a for a in range(node.inputs[0].type.ndim) if a not in axes]
        # Inputs whose type has length 1 on every kept axis: one value per row (rows path).
        self.row_constant = [all(v.type.shape[a] == 1 for a in kept) for v in node.inputs]
        self.value_dtype = node.op.pre_op.output_dtypes(*(v.type.dtype for v in node.inputs))[0]
        self.value_type = C_TYPES[self.value_dtype]
        self.statements = statements
        self.fallback = FALLBACK_FLAG in statements

    def compute(self, loads: list[str], precise: bool) -> str:
        """Statements computing z0, the elementwise value, from the inputs' `loads`."""
        lines = [f"const {t} x{k} = {load};" for k, (t, load) in enumerate(zip(self.types,
                                                                                  loads))]
        lines.append(f"{self.value_type} z0;")
        lines.append(precise_statements(self.statements) if precise else self.statements)
        return " ".join(lines)


def _contiguous_kernel(operands: _Operands, acc_dtype: str, identity: str, statement: str,
                       lanes: int) -> tuple[str, str]:
    """(name, definition) of the fold of n elements whose varying inputs are contiguous runs
    from pointers[k] (the block-constant ones one value there): pairwise over blocks of
    BLOCK, each block in `lanes` accumulators, as CAReduce's contiguous kernel."""
    acc_type = C_TYPES[acc_dtype]
    declarations, lane_loads, tail_loads, advances = [], [], [], []
    for k, t in enumerate(operands.types):
        if operands.block_constant[k]:
            declarations.append(f"const {t} v{k} = *(const {t} *)pointers[{k}];")
            lane_loads.append(f"v{k}")
            tail_loads.append(f"v{k}")
            advances.append(f"second[{k}] = pointers[{k}];")
        else:
            declarations.append(f"const {t} *restrict p{k} = (const {t} *)pointers[{k}];")
            lane_loads.append(f"p{k}[i + lane]")
            tail_loads.append(f"p{k}[i]")
            advances.append(f"second[{k}] = pointers[{k}] + half * (npy_intp)sizeof({t});")
    load = c_cast("z0", operands.value_dtype, acc_dtype)

    def leaf(precise: bool) -> str:
        return f"""{{
        {acc_type} lanes[{lanes}];
        for (int lane = 0; lane < {lanes}; ++lane)
            lanes[lane] = {identity};
        npy_intp i = 0;
        {lane_loops(acc_type, statement, load, "n", lanes,
                     operands.compute(lane_loads, precise))}
        {combine_lanes(acc_type, statement, lanes)}
        for (; i < n; ++i) {{
            {operands.compute(tail_loads, precise)}
            const {acc_type} value = {load};
            {statement}
        }}
        result = acc;
    }}"""

    fallback_declaration, fallback = "", ""
    if operands.fallback:
        fallback_declaration = f"int {FALLBACK_FLAG} = 0;"
        fallback = f"if ({FALLBACK_FLAG}) {leaf(precise=True)}"
    declared = "\n    ".join(declarations)
    chained = "\n        ".join(advances)
    return named_kernel("fused_contiguous", f"""
{KERNEL_ATTRIBUTE}
static {acc_type} @NAME@(const char *const *pointers, npy_intp n, int *errors)
{{
    if (n > {BLOCK}) {{
        /* Halves (a multiple of the block) folded apart and combined, as CAReduce's. */
        const npy_intp half = (n / 2 + {BLOCK - 1}) / {BLOCK} * {BLOCK};
        const char *second[{operands.count}];
        {chained}
        {acc_type} acc = @NAME@(pointers, half, errors);
        const {acc_type} value = @NAME@(second, n - half, errors);
        {statement}
        return acc;
    }}
    {declared}
    int {C_ERROR_FLAG} = 0;
    {fallback_declaration}
    {acc_type} result;
    {leaf(precise=False)}
    {fallback}
    *errors |= {C_ERROR_FLAG};
    return result;
}}
""")


def _rows_kernel(operands: _Operands, acc_dtype: str, identity: str,
                 statement: str) -> tuple[str, str]:
    """(name, definition) of the fold of `rows` rows of `length` values into
    accumulators[0..length), as CAReduce's rows kernel: input k's element j of row r is at
    starts[k] + r * row_strides[k] + j * column_strides[k], its column stride its itemsize (or
    0 for the row-constant inputs, read once per row). The columns are taken BLOCK at a time
    (their accumulators stay in cache); with fallbacks, a chunk of a row that fell back is
    folded again, with libm's functions, from the accumulators saved before it."""
    acc_type = C_TYPES[acc_dtype]
    setup, loads = [], []
    for k, t in enumerate(operands.types):
        start = f"(const {t} *)(starts[{k}] + r * row_strides[{k}] + first * column_strides[{k}])"
        if operands.row_constant[k]:
            setup.append(f"const {t} v{k} = *{start};")
            loads.append(f"v{k}")
        else:
            setup.append(f"const {t} *restrict p{k} = {start};")
            loads.append(f"p{k}[j]")
    row_setup = "\n            ".join(setup)

    def row(precise: bool) -> str:
        return f"""for (npy_intp j = 0; j < chunk; ++j) {{
                {acc_type} acc = accumulators[j];
                {operands.compute(loads, precise)}
                const {acc_type} value = {c_cast("z0", operands.value_dtype, acc_dtype)};
                {statement}
                accumulators[j] = acc;
            }}"""

    if operands.fallback:
        fold_row = f"""int {FALLBACK_FLAG} = 0;
            {acc_type} saved[{BLOCK}];
            memcpy(saved, accumulators, sizeof({acc_type}) * (size_t)chunk);
            {row(precise=False)}
            if ({FALLBACK_FLAG}) {{
                memcpy(accumulators, saved, sizeof({acc_type}) * (size_t)chunk);
                {row(precise=True)}
            }}"""
    else:
        fold_row = row(precise=False)
    return named_kernel("fused_rows", f"""
{KERNEL_ATTRIBUTE}
static int @NAME@(const char *const *starts, npy_intp rows, const npy_intp *row_strides,
                  const npy_intp *column_strides, npy_intp length,
                  {acc_type} *restrict all_accumulators)
{{
    int {C_ERROR_FLAG} = 0;
    for (npy_intp first = 0; first < length; first += {BLOCK}) {{
        const npy_intp chunk = length - first < {BLOCK} ? length - first : {BLOCK};
        {acc_type} *restrict accumulators = all_accumulators + first;
        for (npy_intp j = 0; j < chunk; ++j)
            accumulators[j] = {identity};
        for (npy_intp r = 0; r < rows; ++r) {{
            {row_setup}
            {fold_row}
        }}
    }}
    return {C_ERROR_FLAG};
}}
""")


def fused_careduce_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of a FusedCAReduce node, or None (perform) where the dtypes or the scalar op
    have no C."""
    input_dtypes = tuple(v.type.dtype for v in node.inputs)
    value_dtype = op.pre_op.output_dtypes(*input_dtypes)[0]
    output_dtype = node.outputs[0].type.dtype
    acc_dtype = op.acc_dtype or output_dtype
    if not all(d in C_TYPES for d in (*input_dtypes, value_dtype, output_dtype, acc_dtype)):
        return None
    fold = fold_statement(op.scalar_op, acc_dtype)
    scalar_code = op.pre_op.c_scalar(tuple(f"x{k}" for k in range(len(node.inputs))), ("z0",),
                                     input_dtypes, (value_dtype,))
    if fold is None or scalar_code is None:
        return None
    identity, statement = fold
    ndim = node.inputs[0].type.ndim
    axes = tuple(range(ndim)) if op.axis is None else op.axis
    operands = _Operands(node, axes, scalar_code.statements)
    contiguous_name, contiguous = _contiguous_kernel(operands, acc_dtype, identity, statement,
                                                     lanes_for(op.scalar_op))
    kernels = [contiguous]
    rows_name = None
    # A reduction over every axis keeps none: its rows path never runs, and the rows kernel
    # would compile the scalar code once more (a third of the unit's compile time).
    if len(axes) < ndim:
        rows_name, rows = _rows_kernel(operands, acc_dtype, identity, statement)
        kernels.append(rows)
    body = _body(op, node, names, operands, axes, acc_dtype, identity, statement,
                 contiguous_name, rows_name)
    # The pre-op's helpers may hold float_to_int.h already: each piece once.
    support = dict.fromkeys((*scalar_code.support, FLOAT_TO_INT, SHAPE_ERROR, LAYOUT,
                             *kernels))
    return CCode(body=body, support=tuple(support))


def _body(op, node: Apply, names: CNames, operands: _Operands, axes: tuple[int, ...],
          acc_dtype: str, identity: str, statement: str, contiguous_name: str,
          rows_name: str | None) -> str:
    ndim = node.inputs[0].type.ndim
    length = max(ndim, 1)
    count = operands.count
    acc_type, output_type = C_TYPES[acc_dtype], C_TYPES[node.outputs[0].type.dtype]
    output_dtype = node.outputs[0].type.dtype
    reduced_flags = ", ".join("1" if axis in axes else "0" for axis in range(ndim)) or "0"
    check = "" if op.scalar_op.identity is not None else (
        f"if (sympile_reduction_check_nonempty({ndim}, dims, reduced_flags, "
        f"{c_string(op)}) != 0) {{ {names.fail} }}")
    varying = [k for k in range(count) if not operands.block_constant[k]]
    contiguous_test = " && ".join(
        [f"inner_strides[{k}] == (npy_intp)sizeof({operands.types[k]})" for k in varying]
        or ["1"])
    row_tests = " && ".join(
        f"kept_strides[{k}] == " + ("0" if operands.row_constant[k]
                                    else f"(npy_intp)sizeof({operands.types[k]})")
        for k in range(count))
    general_loads = [f"*(const {t} *)(row[{k}] + j * inner_strides[{k}])"
                     for k, t in enumerate(operands.types)]
    rows_path = "" if rows_name is None else f"""
    if (kept_count == 1 && block_count == 1 && {row_tests}) {{
        /* One contiguous kept axis, one reduced axis: the rows read in order. */
        {_rows_call(rows_name, acc_dtype, output_dtype, names)}
    }} else """
    error_checks = "\n".join(
        f"if ({C_ERROR_FLAG} & {code}) {{\n"
        f"    PyErr_SetString({exception}, {c_string(f'{op}: {message}')});\n"
        f"    {names.fail}\n}}" for code, exception, message in C_ERRORS)
    operand_list = ", ".join(names.inputs)
    checks = "\n".join(broadcast_shape_checks(op, node, names))
    layout = f"""
PyArrayObject *operands[{count}] = {{{operand_list}}};
npy_intp dims[{length}] = {{{', '.join(['1'] * length)}}};
{checks}
int {C_ERROR_FLAG} = 0;
static const int reduced_flags[{length}] = {{{reduced_flags}}};
npy_intp output_dims[{length}], block_size;
{check}
const int output_ndim = sympile_reduction_output_shape({ndim}, dims, reduced_flags,
                                                       output_dims, &block_size);
if (sympile_prepare_output(&{names.outputs[0]}, output_ndim, output_dims,
                           {NPY_TYPES[output_dtype]}) != 0) {{
    {names.fail}
}}
const npy_intp output_size = PyArray_SIZE({names.outputs[0]});
if (output_size > 0) {{
    npy_intp kept_lengths[{length}], kept_strides[{length * count}];
    npy_intp block_lengths[{length}], block_strides[{length * count}];
    int kept_count, block_count;
    sympile_reduction_merge_axes(operands, {count}, {ndim}, dims, reduced_flags, kept_lengths,
                                 kept_strides, &kept_count, block_lengths, block_strides,
                                 &block_count);
    {output_type} *output = ({output_type} *)PyArray_DATA({names.outputs[0]});
    const char *outer[{count}];
    for (int k = 0; k < {count}; ++k)
        outer[k] = PyArray_BYTES(operands[k]);"""
    walk = f"""
    static const npy_intp no_strides[{count}] = {{0}};
    const npy_intp inner_length = block_count > 0 ? block_lengths[block_count - 1] : 1;
    const npy_intp *inner_strides = block_count > 0
        ? block_strides + (block_count - 1) * {count} : no_strides;
    const int contiguous_blocks = block_count == 1 && {contiguous_test};
    {rows_path}{{
        npy_intp kept_index[{length}] = {{0}};
        for (npy_intp o = 0; o < output_size; ++o) {{
            {acc_type} acc = {identity};
            if (contiguous_blocks) {{
                acc = {contiguous_name}(outer, block_size, &{C_ERROR_FLAG});
            }} else if (block_size > 0) {{
                {_block_walk(operands, length, general_loads, acc_dtype, statement)}
            }}
            output[o] = {c_cast("acc", acc_dtype, output_dtype)};
            sympile_reduction_step(outer, {count}, kept_index, kept_lengths, kept_strides,
                                   kept_count);
        }}
    }}
}}
{error_checks}
"""
    return layout + walk


def _rows_call(rows_name: str, acc_dtype: str, output_dtype: str, names: CNames) -> str:
    """The call of the rows kernel `rows_name`, into the output or, where the accumulators'
    dtype is not the output's, into accumulators cast to it after."""
    acc_type = C_TYPES[acc_dtype]
    if acc_dtype == output_dtype:
        return f"""sympile_error |= {rows_name}(outer, block_lengths[0], block_strides,
                                       kept_strides, kept_lengths[0], ({acc_type} *)output);"""
    return f"""{acc_type} *accumulators = ({acc_type} *)malloc(
            sizeof({acc_type}) * (size_t)kept_lengths[0]);
        if (accumulators == NULL) {{
            PyErr_NoMemory();
            {names.fail}
        }}
        sympile_error |= {rows_name}(outer, block_lengths[0], block_strides, kept_strides,
                                     kept_lengths[0], accumulators);
        for (npy_intp k = 0; k < kept_lengths[0]; ++k)
            output[k] = {c_cast("accumulators[k]", acc_dtype, output_dtype)};
        free(accumulators);"""


def _block_walk(operands: _Operands, length: int, loads: list[str], acc_dtype: str,
                statement: str) -> str:
    """The fold of the block from `outer` into `acc`: its innermost axis a strided loop
    computing the elementwise value from `loads`, the others an odometer."""
    count = operands.count
    return f"""npy_intp block_index[{length}] = {{0}};
                const char *row[{count}];
                for (int k = 0; k < {count}; ++k)
                    row[k] = outer[k];
                do {{
                    for (npy_intp j = 0; j < inner_length; ++j) {{
                        {operands.compute(loads, precise=True)}
                        const {C_TYPES[acc_dtype]} value = {c_cast("z0", operands.value_dtype,
                                                                 acc_dtype)};
                        {statement}
                    }}
                }} while (sympile_reduction_step(row, {count}, block_index, block_lengths,
                                                 block_strides, block_count - 1));"""
