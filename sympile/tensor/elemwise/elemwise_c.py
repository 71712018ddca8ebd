"""C code of Elemwise and DimShuffle (a view), served by the run library (elemwise_run.c).

An Elemwise node compiles no C of its own: the program calls elemwise_run.c's entry with the
node's table (its rank, its inputs' broadcast pattern, its outputs, its kernels), which does
the broadcast check, prepares the outputs and picks a kernel. Its kernels, a library unit
named after a hash of their text (so that every node of the same computation, dtypes and
broadcast pattern shares them, whatever its rank), are around the scalar op's C
(sympile.scalar.c_rules, or a fused Composite's statements):

- a span: a flat loop over n elements of contiguous operands (inputs whose type has only
  length-1 axes are read once, before the loop), with `restrict` pointers so the compiler
  vectorises it. It is never inlined: the vectorised loop is the costliest code to compile;
- the contiguous kernel, when every operand is C-contiguous with the output's shape: the span
  on the whole array, or on blocks of _BLOCK elements spread over the threads;
- for any strides, the run library's blocks (elemwise_run.c's sympile_elemwise_blocks): the
  run library drops length-1 axes and merges neighbouring axes where every operand's strides
  allow it, then runs the span on blocks of up to 4096 elements (rows cut into blocks, or
  short rows grouped into one), each operand that the block reads as one contiguous run
  passed as it is and the others through buffers on the stack: gathered before (an input;
  a broadcast row or column is filled once and kept), scattered after (an output). The
  computation is compiled once, in the span, for every layout; a compute-bound one (it calls
  c_fastmath's functions) runs there at the speed of a loop of its own (tanh(x + b) on a
  1000 x 16 float32 matrix: 13 us, 19.5 us with the loop per row it had; tanh(m.T + b):
  34 instead of 59 us), and its unit compiles in half the time (tanh(x + b): 0.15 to 0.07 s of
  gcc);
- a strided loop, only where a memory-bound computation's types say an input is broadcast
  along the rows (a value per row) or may be a view (needs_strided_kernel): the buffers
  would cost it 1.3-2x on rows of 64 elements or more (m.T * 2 + 1), which this loop serves
  (shorter rows still go to the blocks, faster there). Its rows, along the innermost axis,
  run one by one (each row's offsets computed from its index, so rows can run on several
  threads). When every operand steps along the rows by one element (or, for an input whose
  type has length 1 on the rows' axis, by 0: it is read once per row), the rows run as plain
  arrays the compiler vectorises (a matrix plus a broadcast row or column); others run
  through their strides.

All run under OpenMP (`parallel for` over elements, rows or blocks) when config.openmp is set
and the output has at least config.openmp_elemwise_minsize elements; both flags are read when
the C code is generated. Errors the scalar code reports through C_ERROR_FLAG are raised after the
loop. Statements that call sympile.scalar.c_fastmath's functions with a limited range report an
element outside it through FALLBACK_FLAG: the loops then run in blocks of _BLOCK elements, and
a block where the flag was set is computed again with libm's functions. A loop that writes an
output over an input computes each block into a buffer on the stack and stores it after the
block (and its recomputation), so it reads its inputs untouched and keeps the fast functions.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import (
    C_TYPES,
    NPY_TYPES,
    CCode,
    CNames,
    c_array,
    c_file,
    c_string,
    library_code,
    served_by,
)
from sympile.scalar.c_fastmath import FALLBACK_FLAG, FAST_PREFIX, precise_statements
from sympile.scalar.c_rules import C_ERROR_FLAG, C_ERRORS
from sympile.tensor.c_toolkit import SHAPE_ERROR, vectorized_kernel_attribute

__all__ = ["OPERAND_LIMIT", "broadcast_shape_checks", "dimshuffle_c_code", "elemwise_c_code",
           "run_library"]

# The loops' OpenMP split: static, error flags OR-ed across the threads.
_PARALLEL_FOR = f"#pragma omp parallel for reduction(|:{C_ERROR_FLAG}) schedule(static)"

# The most operands (inputs and outputs) of a node with C code: elemwise_run.c keeps its
# arrays of them on the stack (SYMPILE_ELEMWISE_OPERANDS). Fusion makes nodes of at most
# MAX_FUSED_INPUTS (32) inputs; a wider node built by hand runs perform().
OPERAND_LIMIT = 64

# Elements per block of a loop whose statements may fall back to libm, or whose outputs are
# buffered (written over an input).
_BLOCK = 1024

def _kernel_attribute(statements: str) -> str:
    return vectorized_kernel_attribute(FAST_PREFIX in statements)


def _comment(op) -> str:
    return str(op).replace("*/", "* /")


class _Loop:
    """What both kernels of one Elemwise node share."""

    def __init__(self, node: Apply, statements: str, destroyed: dict[int, int]):
        self.node = node
        # What the kernels' comments call them: the scalar computation, the same for every
        # node that shares them.
        self.name = _comment(node.op.scalar_op)
        self.statements = statements
        self.n_inputs, self.n_outputs = len(node.inputs), len(node.outputs)
        self.input_types = [C_TYPES[v.type.dtype] for v in node.inputs]
        self.output_types = [C_TYPES[v.type.dtype] for v in node.outputs]
        # Inputs whose type has only length-1 axes (0-d included): one element, whatever
        # the output's shape.
        self.single = [all(length == 1 for length in v.type.shape) for v in node.inputs]
        self.destroyed = destroyed  # input index -> index of the output written over it
        self.ndim = node.outputs[0].type.ndim
        self.fallback = FALLBACK_FLAG in statements
        # Outputs written over an input are computed a block at a time into local buffers and
        # stored after it, so a block is computed again from its inputs when it fell back,
        # and the computing loop stores only into memory nothing else can point to.
        self.buffered = bool(destroyed)
        self.row_constant = _row_constant(node)

    def element(self, load_input: Sequence[str], store_output: Sequence[str],
                precise: bool = False) -> str:
        lines = [f"const {t} x{i} = {load};"
                 for i, (t, load) in enumerate(zip(self.input_types, load_input))]
        lines += [f"{t} z{j};" for j, t in enumerate(self.output_types)]
        lines.append(precise_statements(self.statements) if precise else self.statements)
        lines += [f"{store} = z{j};" for j, store in enumerate(store_output)]
        return "\n            ".join(lines)

    def elements(self, size: str, loads: Sequence[str], stores: Sequence[str]) -> str:
        """A loop over i in [0, size) storing the elements of `loads` into `stores`. Statements
        that may fall back run in blocks, each computed again with libm's functions when one
        of its elements fell back; buffered outputs are stored after each block."""
        if not self.fallback and not self.buffered:
            return (f"for (npy_intp i = 0; i < {size}; i++) {{\n            "
                    f"{self.element(loads, stores)}\n        }}")
        targets, buffers, store_back = stores, "", ""
        if self.buffered:
            targets = [f"buffer{j}[i - start]" for j in range(self.n_outputs)]
            buffers = " ".join(f"{t} buffer{j}[{_BLOCK}];"
                               for j, t in enumerate(self.output_types))
            copies = " ".join(f"{store} = buffer{j}[i - start];"
                              for j, store in enumerate(stores))
            store_back = f"for (npy_intp i = start; i < stop; i++) {{ {copies} }}"
        flag, rerun = "", ""
        if self.fallback:
            flag = f"int {FALLBACK_FLAG} = 0;"
            rerun = f"""if ({FALLBACK_FLAG}) {{
                for (npy_intp i = start; i < stop; i++) {{
            {self.element(loads, targets, precise=True)}
                }}
            }}"""
        return f"""for (npy_intp start = 0; start < {size}; start += {_BLOCK}) {{
            const npy_intp stop = {size} - start < {_BLOCK} ? {size} : start + {_BLOCK};
            {buffers}
            {flag}
            for (npy_intp i = start; i < stop; i++) {{
            {self.element(loads, targets)}
            }}
            {rerun}
            {store_back}
        }}"""

    def _restrict(self, output: int | None = None) -> str:
        """The qualifier of an input's pointer (output None) or an output's: restrict unless it
        may point where another operand does (every input of a buffered loop, whose outputs
        may be written over any of them; an output written over an input)."""
        if output is None:
            return "" if self.buffered else " restrict"
        return "" if output in self.destroyed.values() else " restrict"

    def parallel(self, loop: str, size: str, minimum_size: int | None) -> str:
        """`loop`, run on several threads when `size` reaches `minimum_size`."""
        if minimum_size is None:
            return loop
        return f"{_PARALLEL_FOR} if ({size} >= {minimum_size})\n    {loop}"

    def span_kernel(self) -> tuple[str, str]:
        """A run of `size` elements of contiguous operands (the single inputs: one value,
        read before the loop), for the contiguous kernel to run on the whole array or on
        each thread's blocks. Never inlined: its loop is the costliest code of the unit to
        compile, so it is compiled once, not in both branches."""
        declarations, loads, stores = [], [], []
        for i, t in enumerate(self.input_types):
            if self.single[i]:
                declarations.append(f"const {t} v{i} = *(const {t} *)pointers[{i}];")
                loads.append(f"v{i}")
            else:
                declarations.append(f"const {t} *{self._restrict()} p{i} = "
                                    f"(const {t} *)pointers[{i}];")
                loads.append(f"p{i}[i]")
        for j, t in enumerate(self.output_types):
            declarations.append(f"{t} *{self._restrict(j)} q{j} = "
                                f"({t} *)pointers[{self.n_inputs + j}];")
            stores.append(f"q{j}[i]")
        declared = "\n    ".join(declarations)
        return "@NAME@_span", (f"""
/* {self.name}: a run of elements */
{_kernel_attribute(self.statements)} __attribute__((noinline))
int @NAME@_span(npy_intp size, char *const *pointers)
{{
    int {C_ERROR_FLAG} = 0;
    {declared}
    {self.elements("size", loads, stores)}
    return {C_ERROR_FLAG};
}}
""")

    def contiguous_kernel(self, span: str, minimum_size: int) -> tuple[str, str]:
        """The kernel of contiguous operands under OpenMP: the `span` kernel (of the single
        inputs) on the whole array, or on blocks of it spread over the threads from
        `minimum_size` elements. (Without OpenMP the span kernel is the contiguous kernel.)"""
        operands = self.n_inputs + self.n_outputs
        types = [*self.input_types, *self.output_types]
        steps = "\n            ".join(
            f"block[{k}] = pointers[{k}]"
            + ("" if k < self.n_inputs and self.single[k] else f" + start * sizeof({t})") + ";"
            for k, t in enumerate(types))
        return "@NAME@_contiguous", (f"""
/* {self.name}: contiguous operands */
int @NAME@_contiguous(npy_intp size, char *const *pointers)
{{
    if (size < {minimum_size})
        return {span}(size, pointers);
    int {C_ERROR_FLAG} = 0;
    {_PARALLEL_FOR}
    for (npy_intp start = 0; start < size; start += {_BLOCK}) {{
        char *block[{operands}];
        {steps}
        {C_ERROR_FLAG} |= {span}(size - start < {_BLOCK} ? size - start : {_BLOCK}, block);
    }}
    return {C_ERROR_FLAG};
}}
""")

    def strided_kernel(self, minimum_size: int | None) -> tuple[str, str]:
        """Any strides: plain rows (see the module docstring) as arrays, others row by row
        through their strides."""
        operands = self.n_inputs + self.n_outputs
        # Rows where every operand is contiguous, or constant for the inputs the type says
        # are, run as plain arrays (vectorised).
        checks, plain, plain_loads, plain_stores = [], [], [], []
        for i, t in enumerate(self.input_types):
            pointer = f"pointers[{i}] + offsets[{i}]"
            if self.row_constant[i]:
                checks.append(f"strides[{i} * nd + nd - 1] == 0")
                plain.append(f"const {t} v{i} = *(const {t} *)({pointer});")
                plain_loads.append(f"v{i}")
            else:
                checks.append(f"strides[{i} * nd + nd - 1] == (npy_intp)sizeof({t})")
                plain.append(f"const {t} *{self._restrict()} r{i} = (const {t} *)({pointer});")
                plain_loads.append(f"r{i}[i]")
        for j, t in enumerate(self.output_types):
            k = self.n_inputs + j
            checks.append(f"strides[{k} * nd + nd - 1] == (npy_intp)sizeof({t})")
            plain.append(f"{t} *{self._restrict(j)} w{j} = "
                         f"({t} *)(pointers[{k}] + offsets[{k}]);")
            plain_stores.append(f"w{j}[i]")
        plain_setup = "\n            ".join(plain)
        rows = _each_row(operands, plain_setup, self.elements("inner", plain_loads,
                                                             plain_stores))
        rows_setup = "\n            ".join(
            f"{'const ' if k < self.n_inputs else ''}char *b{k} = pointers[{k}] + "
            f"offsets[{k}];\n            const npy_intp s{k} = strides[{k} * nd + nd - 1];"
            for k in range(operands))
        loads = [f"*(const {t} *)(b{i} + i * s{i})" for i, t in enumerate(self.input_types)]
        stores = [f"*({t} *)(b{self.n_inputs + j} + i * s{self.n_inputs + j})"
                  for j, t in enumerate(self.output_types)]
        others = _each_row(operands, rows_setup, self.elements("inner", loads, stores))
        return "@NAME@_strided", (f"""
/* {self.name}: any strides (in bytes; 0 along broadcast axes) */
{_kernel_attribute(self.statements)}
int @NAME@_strided(int nd, const npy_intp *shape, char *const *pointers,
                  const npy_intp *strides)
{{
    int {C_ERROR_FLAG} = 0;
    const npy_intp inner = shape[nd - 1];
    npy_intp outer = 1;
    for (int axis = 0; axis < nd - 1; axis++)
        outer *= shape[axis];
    const npy_intp total = outer * inner;
    if ({" && ".join(checks)}) {{
        {self.parallel(rows, "total", minimum_size)}
    }} else {{
        {self.parallel(others, "total", minimum_size)}
    }}
    return {C_ERROR_FLAG};
}}
""")


def _each_row(operands: int, setup: str, elements: str) -> str:
    """The strided kernel's loop over its rows: each row's offsets, `setup`, `elements`."""
    return f"""for (npy_intp row = 0; row < outer; row++) {{
            npy_intp offsets[{operands}];
            sympile_elemwise_row_offsets(nd, {operands}, shape, strides, row, offsets);
            {setup}
            {elements}
        }}"""


def elemwise_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """The C of `node`, an Apply of the Elemwise `op`; None if its scalar op has none for
    these dtypes. The kernels are a library unit of their own, named by their text, which
    every node of the same computation on the same dtypes and broadcast pattern shares
    whatever its number of dimensions; the node compiles no code of its own: the program
    calls the run library's entry with the node's table (SympileElemwise), which the main
    unit holds."""
    variables = node.inputs + node.outputs
    if len(variables) > OPERAND_LIMIT or not all(v.type.dtype in C_TYPES for v in variables):
        return None
    scalar = op.scalar_op.c_scalar(tuple(f"x{i}" for i in range(len(node.inputs))),
                                   tuple(f"z{j}" for j in range(len(node.outputs))),
                                   tuple(v.type.dtype for v in node.inputs),
                                   tuple(v.type.dtype for v in node.outputs))
    if scalar is None:
        return None
    destroyed = {in_index: out_index for out_index, in_index in op.inplace_pattern}
    loop = _Loop(node, scalar.statements, destroyed)
    minimum_size = config.openmp_elemwise_minsize if config.openmp else None
    span_name, span = loop.span_kernel()
    contiguous_name = span_name
    kernels = [span]
    if minimum_size is not None:
        contiguous_name, contiguous = loop.contiguous_kernel(contiguous_name, minimum_size)
        kernels.append(contiguous)
    declarations = "\n".join(dict.fromkeys(
        f"int {kernel}(npy_intp size, char *const *pointers);"
        for kernel in (span_name, contiguous_name)))
    support = scalar.support
    strided_name = None
    if needs_strided_kernel(node, scalar.statements):
        strided_name, strided = loop.strided_kernel(minimum_size)
        kernels.append(strided)
        declarations += (f"\nint {strided_name}(int nd, const npy_intp *shape, "
                         "char *const *pointers, const npy_intp *strides);")
        support = (*support, _ROW_OFFSETS)
    name, declarations, kernel_unit = library_code(
        "sympile_elemwise", declarations, "\n".join((*support, *kernels)))
    strided_field = "NULL" if strided_name is None else strided_name.replace("@NAME@", name)
    kernel_names = [kernel.replace("@NAME@", name) for kernel in (span_name, contiguous_name)]
    return served_by(run_library(), "run", "SympileElemwise",
                     _fields(op, node, loop, *kernel_names, strided_field,
                             -1 if minimum_size is None else minimum_size),
                     units=(kernel_unit,), declarations=(declarations,),
                     openmp=minimum_size is not None)


def needs_strided_kernel(node: Apply, statements: str) -> bool:
    """Whether `node`, of the scalar `statements`, gets a strided kernel: a memory-bound
    computation (no call of c_fastmath's functions) whose types say an input is broadcast
    along the rows' axis (the last one the output's type does not say has length 1: a
    value per row) or that has an input that may be a view (_may_be_strided). Everywhere
    else the run library runs the span on blocks of any strides (sympile_elemwise_blocks):
    a row of every operand that is contiguous along the rows (a matrix plus a broadcast row)
    is passed as it is, the others go through buffers, which costs a memory-bound loop 1.3
    to 2x but a compute-bound one little. The strided kernel is 60% of a kernel unit's
    compile time (0.06 of 0.1 s of gcc for an add; 0.08 of 0.15 s for tanh(x + b))."""
    if FAST_PREFIX in statements:
        return False
    for variable, row_constant in zip(node.inputs, _row_constant(node)):
        if all(length == 1 for length in variable.type.shape):
            continue
        if row_constant or _may_be_strided(variable):
            return True
    return False


def _row_constant(node: Apply) -> list[bool]:
    """Per input of `node`, whether it is one value per row of the strided loops: the rows
    run along the last axis the output's type does not say has length 1, and the input's
    type has length 1 there (or there is no such axis)."""
    last_axis = max((axis for axis, length in enumerate(node.outputs[0].type.shape)
                     if length != 1), default=None)
    return [last_axis is None or v.type.shape[last_axis] == 1 for v in node.inputs]


def _may_be_strided(variable) -> bool:
    """Whether `variable` may be an array that is not C-contiguous, as far as its graph
    tells: a view's output (other than an input passed through: a check), or an output
    written over one."""
    while variable.owner is not None:
        node = variable.owner
        index = node.outputs.index(variable)
        if node.op.is_identity_view and index == 0:
            variable = node.inputs[0]
            continue
        if node.op.view_map.get(index):
            return True
        destroyed = node.op.destroy_map.get(index)
        if not destroyed:
            return False
        variable = node.inputs[destroyed[0]]
    return False


_RUN = c_file(__file__, "elemwise_run.c")
_ROW_OFFSETS = c_file(__file__, "row_offsets.h")
_RUN_DECLARATIONS = c_file(__file__, "elemwise_run.h")


@functools.cache
def run_library() -> tuple[str, str, str]:
    """(name, declarations, library unit) of elemwise_run.c: `<name>_run` (an Elemwise
    node, its table a SympileElemwise) and `<name>_dimshuffle` (a DimShuffle node, its table
    a SympileDimShuffle)."""
    return library_code("sympile_elemwise", _RUN_DECLARATIONS, SHAPE_ERROR + _ROW_OFFSETS + _RUN)


def _fields(op, node: Apply, loop: _Loop, span: str, contiguous: str, strided: str,
            parallel_minimum: int) -> list[str]:
    """The fields of `node`'s SympileElemwise."""
    ndim = loop.ndim
    length_one = [int(v.type.shape[axis] == 1) for v in node.inputs for axis in range(ndim)]
    written = [next((i for i, out in loop.destroyed.items() if out == j), -1)
               for j in range(loop.n_outputs)]
    errors = ", ".join(f"{{{code}, &{exception}, {c_string(message)}}}"
                       for code, exception, message in C_ERRORS)
    return [c_string(str(op)), str(loop.n_inputs), str(loop.n_outputs), str(ndim),
            c_array("signed char", length_one), c_array("signed char", map(int, loop.single)),
            c_array("int", written), c_array("int", [NPY_TYPES[v.type.dtype]
                                                     for v in node.outputs]),
            span, contiguous, strided, str(parallel_minimum), str(len(C_ERRORS)),
            f"(const SympileElemwiseError[]){{{errors}}}"]


def broadcast_shape_checks(op, node: Apply, names: CNames) -> list[str]:
    """Lines setting dims[axis] to the broadcast length of `node`'s inputs (C arrays `dims`
    and `operands`, the inputs first, declared by the caller), with the Python backend's
    error for inputs that do not broadcast."""
    lines = []
    for axis in range(node.inputs[0].type.ndim):
        candidates = [i for i, v in enumerate(node.inputs) if v.type.shape[axis] != 1]
        if not candidates:
            continue
        first = candidates[0]
        lines.append(f"dims[{axis}] = PyArray_DIMS({names.inputs[first]})[{axis}];")
        for i in candidates[1:]:
            lines.append(
                f"if (PyArray_DIMS({names.inputs[i]})[{axis}] != dims[{axis}]) {{\n"
                f"    sympile_elemwise_shape_error({c_string(str(op))}, {len(node.inputs)}, "
                f"operands, {axis}, dims[{axis}], PyArray_DIMS({names.inputs[i]})[{axis}]);\n"
                f"    {names.fail}\n}}")
    return lines


def dimshuffle_c_code(op, node: Apply, names: CNames) -> CCode:
    """A view of the input: its data and strides rearranged (inserted axes have length 1 and
    stride 0), the input as its base; served by the run library (elemwise_run.c)."""
    order = [-1 if source == "x" else source for source in op.new_order]
    return served_by(run_library(), "dimshuffle", "SympileDimShuffle",
                     [str(len(order)), c_array("int", order)])
