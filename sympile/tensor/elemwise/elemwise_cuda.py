"""CUDA of Elemwise: one kernel per node (a fused Composite included), from the same scalar C
that the CPU loops run (sympile.scalar.c_rules), with libm's functions instead of the CPU's
vectorisable ones (sympile.scalar.c_fastmath.precise_statements).

The kernel is a grid-stride loop over the output's elements. Each thread turns its element
number into the coordinates of an `ndim`-dimensional output and each operand's offset from
its strides (in elements; 0 along a broadcast axis), so one kernel serves every layout: the
runtime first merges the axes that every operand's strides allow, so a contiguous operation
runs the 1-d kernel. Parameters, in order: the number of elements, the output's `ndim`
lengths, then for each input and each output its pointer and `ndim` strides, and last, when
the scalar code can report an error (C_ERROR_FLAG), a pointer to one int the kernel or-s its
code into.

float16 is stored as float16 and computed in float32 (as Theano's GPU backend did): loads
convert to float32, the scalar graph is rebuilt with float32 where it had float16, and stores
round back to float16.

elemwise.cu is the prelude of the source: it compiles with NVRTC, and with the C compiler for
the CPU emulation (sympile.gpu.emulation), which runs the grid serially.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from sympile.graph.basic import Constant
from sympile.graph.ccode import C_TYPES, c_file, resolve_resume_lines
from sympile.scalar.basic import Cast, ScalarOp, cast_op, get_scalar_type
from sympile.scalar.c_fastmath import FAST_MATH_SUPPORT, precise_statements
from sympile.scalar.c_rules import C_ERROR_FLAG
from sympile.scalar.composite import Composite

__all__ = ["CUDA_PRELUDE", "CudaKernel", "elemwise_cuda_kernel"]

CUDA_PRELUDE = c_file(__file__, "elemwise.cu")


@dataclass(frozen=True)
class CudaKernel:
    """A kernel's source (a whole translation unit), its name, and what its parameters
    are: see the module's docstring."""

    name: str
    source: str
    parameters: tuple[str, ...]  # the C declarations, in order
    ndim: int
    n_inputs: int
    n_outputs: int
    reports_errors: bool


def _computed_dtype(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def _computed_node(op: ScalarOp, inputs: Sequence, original_outputs: Sequence) -> list:
    """The outputs of `op` applied to `inputs` (float32 where the original node read
    float16), in the computed dtypes of the original outputs: an op whose output dtype
    follows its inputs' (exp of int8 gives float16, erf of float16 float64) gets its inputs
    cast to that dtype first, as numpy's loop for it would."""
    if isinstance(op, Cast) and op.dtype == "float16":
        op = cast_op("float32")
    targets = [_computed_dtype(v.type.dtype) for v in original_outputs]
    outputs = op.make_node(*inputs).outputs
    if [v.type.dtype for v in outputs] != targets and len(set(targets)) == 1:
        cast = cast_op(targets[0])
        outputs = op.make_node(*[v if v.type.dtype == targets[0] else cast(v)
                                 for v in inputs]).outputs
    return outputs


def _float32_arithmetic(scalar_op: ScalarOp, input_dtypes: Sequence[str],
                        output_dtypes: Sequence[str]) -> ScalarOp | None:
    """`scalar_op` rebuilt to compute in float32 where it reads or makes float16 (see
    _computed_node); None when the rebuilt graph's outputs are not the computed dtypes of
    `output_dtypes`."""
    inputs = [get_scalar_type(_computed_dtype(d))() for d in input_dtypes]
    if not isinstance(scalar_op, Composite):
        original = [get_scalar_type(d)() for d in output_dtypes]
        outputs = _computed_node(scalar_op, inputs, original)
    else:
        values = dict(zip(scalar_op.inputs, inputs))

        def value(variable):
            if not isinstance(variable, Constant):
                return values[variable]
            if variable.type.dtype != "float16":
                return variable
            return get_scalar_type("float32").make_constant(variable.data.astype("float32"))

        for node in scalar_op.nodes:
            values.update(zip(node.outputs, _computed_node(node.op, [value(v) for v in node.inputs],
                                                           node.outputs)))
        outputs = [value(v) for v in scalar_op.outputs]
    if [v.type.dtype for v in outputs] != [_computed_dtype(d) for d in output_dtypes]:
        return None
    return Composite(inputs, outputs)


def _operand(index: int, dtype: str, ndim: int, output: bool) -> tuple[list[str], str]:
    """(the parameters, the element expression) of operand `index`."""
    name = f"{'out' if output else 'in'}{index}"
    storage = "npy_uint16" if dtype == "float16" else C_TYPES[dtype]
    pointer = f"{storage} *const {name}" if output else f"const {storage} *const {name}"
    strides = [f"const npy_int64 {name}_s{axis}" for axis in range(ndim)]
    offset = " + ".join(f"c{axis} * {name}_s{axis}" for axis in range(ndim))
    return [pointer, *strides], f"{name}[{offset}]"


def elemwise_cuda_kernel(scalar_op: ScalarOp, input_dtypes: Sequence[str],
                         output_dtypes: Sequence[str], ndim: int) -> CudaKernel | None:
    """The kernel computing `scalar_op` elementwise over an `ndim`-dimensional output
    (ndim >= 1), or None when the scalar op has no C for these dtypes (complex, or a function
    C lacks: the node then stays on the host)."""
    if ndim < 1:
        raise ValueError(f"elemwise_cuda_kernel: ndim must be at least 1, got {ndim}")
    computed_op = scalar_op
    if "float16" in (*input_dtypes, *output_dtypes):
        computed_op = _float32_arithmetic(scalar_op, input_dtypes, output_dtypes)
        if computed_op is None:
            return None
    computed_in = [_computed_dtype(d) for d in input_dtypes]
    computed_out = [_computed_dtype(d) for d in output_dtypes]
    scalar = computed_op.c_scalar(tuple(f"x{i}" for i in range(len(input_dtypes))),
                                  tuple(f"z{j}" for j in range(len(output_dtypes))),
                                  tuple(computed_in), tuple(computed_out))
    if scalar is None:
        return None
    statements = precise_statements(scalar.statements)
    reports_errors = C_ERROR_FLAG in statements
    parameters = ["const npy_int64 n", *(f"const npy_int64 shape{a}" for a in range(ndim))]
    loads, stores = [], []
    for i, dtype in enumerate(input_dtypes):
        declared, element = _operand(i, dtype, ndim, output=False)
        parameters += declared
        value = f"sympile_half_to_float({element})" if dtype == "float16" else element
        loads.append(f"const {C_TYPES[computed_in[i]]} x{i} = {value};")
    for j, dtype in enumerate(output_dtypes):
        declared, element = _operand(j, dtype, ndim, output=True)
        parameters += declared
        value = f"sympile_float_to_half(z{j})" if dtype == "float16" else f"z{j}"
        stores.append(f"{element} = {value};")
    if reports_errors:
        parameters.append("int *const error")
    coordinates = [f"const npy_int64 c{a} = rest % shape{a}; rest /= shape{a};"
                   for a in range(ndim - 1, 0, -1)] + ["const npy_int64 c0 = rest;"]
    declarations = [f"{C_TYPES[d]} z{j};" for j, d in enumerate(computed_out)]
    body = "\n        ".join(["npy_int64 rest = i;", *coordinates, *loads, *declarations,
                              statements, *stores])
    flag_start = f"int {C_ERROR_FLAG} = 0;" if reports_errors else ""
    flag_end = (f"if ({C_ERROR_FLAG}) SYMPILE_ERROR_OR(error, {C_ERROR_FLAG});"
                if reports_errors else "")
    kernel = f"""SYMPILE_KERNEL void @NAME@({", ".join(parameters)})
{{
    {flag_start}
    for (npy_int64 i = SYMPILE_GRID_START; i < n; i += SYMPILE_GRID_STEP) {{
        {body}
    }}
    {flag_end}
}}
"""
    # The CPU's vectorisable functions are replaced by libm's: their definitions are not
    # needed (nor compilable: they copy bits with __builtin_memcpy).
    support = "".join(piece for piece in scalar.support if piece != FAST_MATH_SUPPORT)
    name = "sympile_gpu_elemwise_" + hashlib.sha1((support + kernel).encode()).hexdigest()[:16]
    source = resolve_resume_lines(CUDA_PRELUDE + support + kernel.replace("@NAME@", name),
                                  f"{name}.cu")
    return CudaKernel(name, source, tuple(parameters), ndim, len(input_dtypes), len(output_dtypes),
                      reports_errors)
