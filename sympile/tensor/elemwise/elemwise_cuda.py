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

float16 is stored as float16 and computed in float32: loads convert to float32, the scalar
graph is rebuilt with float32 where it had float16 and each float16 result rounded to
float16 (RoundToHalf), as numpy's float16 loops round after each op, and stores convert
back to float16.

elemwise.cu is the prelude of the source: it compiles with NVRTC, and with the C compiler for
the CPU emulation (sympile.gpu.emulation), which runs the grid serially.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sympile.graph.basic import Constant
from sympile.graph.ccode import C_TYPES, c_file, resolve_resume_lines
from sympile.scalar.basic import Cast, ScalarOp, cast_op, get_scalar_type
from sympile.scalar.c_fastmath import FAST_MATH_SUPPORT, precise_statements
from sympile.scalar.c_rules import C_ERROR_FLAG, C_ERRORS
from sympile.scalar.composite import Composite

__all__ = ["CUDA_PRELUDE", "CudaKernel", "ScalarCuda", "computed_dtype", "coordinates",
           "cuda_kernel", "elemwise_cuda_kernel", "error_flag", "load", "offset",
           "pointer_parameter", "scalar_cuda", "stored"]

CUDA_PRELUDE = c_file(__file__, "elemwise.cu")


@dataclass(frozen=True)
class CudaKernel:
    """A kernel's source (a whole translation unit), its name, and what its parameters
    are: see the module's docstring."""

    name: str
    source: str
    parameters: tuple[str, ...]  # the C declarations, in order
    reports_errors: bool  # its last parameter is the error flag
    # (bit, Python exception's C name, message) of each error the flag can report.
    errors: tuple[tuple[int, str, str], ...] = C_ERRORS


def computed_dtype(dtype: str) -> str:
    """The dtype a value of `dtype` is computed in (float16 in float32)."""
    return "float32" if dtype == "float16" else dtype


class RoundToHalf(ScalarOp):
    """A float32 rounded to the nearest float16, as a float32: numpy's float16 loops compute
    each op in float32 and round its result to float16, so a float16 graph computed in
    float32 rounds after each op to give numpy's values."""

    nin = 1

    @staticmethod
    def nfunc(x):
        return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)

    @staticmethod
    def c_rule(c):
        return c.assign(f"sympile_half_to_float(sympile_float_to_half({c.inputs[0]}))")


round_to_half = RoundToHalf()


def _computed_node(op: ScalarOp, inputs: Sequence, original_outputs: Sequence) -> list:
    """The outputs of `op` applied to `inputs` (float32 where the original node read
    float16), in the computed dtypes of the original outputs: an op whose output dtype
    follows its inputs' (exp of int8 gives float16, erf of float16 float64) gets its inputs
    cast to that dtype first, as numpy's loop for it would; a float16 result is rounded to
    float16 (RoundToHalf), as numpy rounds it."""
    if isinstance(op, Cast) and op.dtype == "float16":
        op = cast_op("float32")
    targets = [computed_dtype(v.type.dtype) for v in original_outputs]
    outputs = op.make_node(*inputs).outputs
    if [v.type.dtype for v in outputs] != targets and len(set(targets)) == 1:
        cast = cast_op(targets[0])
        outputs = op.make_node(*[v if v.type.dtype == targets[0] else cast(v)
                                 for v in inputs]).outputs
    return [round_to_half(computed) if original.type.dtype == "float16" else computed
            for computed, original in zip(outputs, original_outputs)]


def _float32_arithmetic(scalar_op: ScalarOp, input_dtypes: Sequence[str],
                        output_dtypes: Sequence[str]) -> ScalarOp | None:
    """`scalar_op` rebuilt to compute in float32 where it reads or makes float16 (see
    _computed_node); None when the rebuilt graph's outputs are not the computed dtypes of
    `output_dtypes`."""
    inputs = [get_scalar_type(computed_dtype(d))() for d in input_dtypes]
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
    if [v.type.dtype for v in outputs] != [computed_dtype(d) for d in output_dtypes]:
        return None
    return Composite(inputs, outputs)


@dataclass(frozen=True)
class ScalarCuda:
    """The scalar C of one op for a CUDA kernel: statements and the helpers they call."""

    statements: str
    support: tuple[str, ...]

    @property
    def reports_errors(self) -> bool:
        return C_ERROR_FLAG in self.statements


def scalar_cuda(scalar_op: ScalarOp, inputs: Sequence[str], outputs: Sequence[str],
                input_dtypes: Sequence[str], output_dtypes: Sequence[str]) -> ScalarCuda | None:
    """The statements computing `scalar_op` from the C variables `inputs` (of the computed
    dtypes of `input_dtypes`) into `outputs` (computed dtypes of `output_dtypes`): float16
    read and made as float32, libm's functions. None where the op has no C."""
    computed_op = scalar_op
    if "float16" in (*input_dtypes, *output_dtypes):
        computed_op = _float32_arithmetic(scalar_op, input_dtypes, output_dtypes)
        if computed_op is None:
            return None
    code = computed_op.c_scalar(tuple(inputs), tuple(outputs),
                                tuple(map(computed_dtype, input_dtypes)),
                                tuple(map(computed_dtype, output_dtypes)))
    if code is None:
        return None
    # The CPU's vectorisable functions are replaced by libm's: their definitions are not
    # needed (nor compilable: they copy bits with __builtin_memcpy).
    return ScalarCuda(precise_statements(code.statements),
                      tuple(piece for piece in code.support if piece != FAST_MATH_SUPPORT))


def pointer_parameter(name: str, dtype: str, output: bool) -> str:
    """The parameter of an array of `dtype` (float16 as its 16 bits)."""
    storage = "npy_uint16" if dtype == "float16" else C_TYPES[dtype]
    return f"{storage} *const {name}" if output else f"const {storage} *const {name}"


def load(dtype: str, element: str) -> str:
    """`element` of an array of `dtype`, in the computed dtype."""
    return f"sympile_half_to_float({element})" if dtype == "float16" else element


def stored(dtype: str, value: str) -> str:
    """`value` (of the computed dtype) as stored in an array of `dtype`."""
    return f"sympile_float_to_half({value})" if dtype == "float16" else value


def coordinates(index: str, prefix: str, ndim: int) -> list[str]:
    """Statements splitting `index` into the C-order coordinates {prefix}0.. of a shape
    whose lengths are the parameters {prefix}_n0.. (the first one is never divided)."""
    lines = [f"npy_int64 {prefix}_rest = {index};"]
    lines += [f"const npy_int64 {prefix}{a} = {prefix}_rest % {prefix}_n{a}; "
              f"{prefix}_rest /= {prefix}_n{a};" for a in range(ndim - 1, 0, -1)]
    return [*lines, f"const npy_int64 {prefix}0 = {prefix}_rest;"]


def offset(name: str, prefix: str, ndim: int) -> str:
    """The offset in operand `name` of the coordinates {prefix}0.., its strides being the
    parameters {name}_{prefix}0.."""
    return " + ".join(f"{prefix}{a} * {name}_{prefix}{a}" for a in range(ndim))


def error_flag(reports_errors: bool) -> tuple[str, str]:
    """The statements declaring the kernel's error flag and reporting it at its end."""
    if not reports_errors:
        return "", ""
    return (f"int {C_ERROR_FLAG} = 0;",
            f"if ({C_ERROR_FLAG}) SYMPILE_ERROR_OR(error, {C_ERROR_FLAG});")


def cuda_kernel(kind: str, parameters: Sequence[str], body: str, support: Sequence[str],
                reports_errors: bool,
                errors: tuple[tuple[int, str, str], ...] = C_ERRORS) -> CudaKernel:
    """The kernel `body` (its text, with @NAME@ for its name) as a whole translation unit:
    the prelude, the helpers, the kernel named after a hash of its text."""
    unique_support = "".join(dict.fromkeys(support))
    text = f"SYMPILE_KERNEL void @NAME@({', '.join(parameters)})\n{body}"
    digest = hashlib.sha1((unique_support + text).encode()).hexdigest()[:16]
    name = f"sympile_gpu_{kind}_{digest}"
    source = resolve_resume_lines(CUDA_PRELUDE + unique_support + text.replace("@NAME@", name),
                                  f"{name}.cu")
    return CudaKernel(name, source, tuple(parameters), reports_errors, errors)


def elemwise_cuda_kernel(scalar_op: ScalarOp, input_dtypes: Sequence[str],
                         output_dtypes: Sequence[str], ndim: int) -> CudaKernel | None:
    """The kernel computing `scalar_op` elementwise over an `ndim`-dimensional output
    (ndim >= 1), or None when the scalar op has no C for these dtypes (complex, or a function
    C lacks: the node then stays on the host)."""
    if ndim < 1:
        raise ValueError(f"elemwise_cuda_kernel: ndim must be at least 1, got {ndim}")
    scalar = scalar_cuda(scalar_op, [f"x{i}" for i in range(len(input_dtypes))],
                         [f"z{j}" for j in range(len(output_dtypes))], input_dtypes,
                         output_dtypes)
    if scalar is None:
        return None
    parameters = ["const npy_int64 n", *(f"const npy_int64 c_n{a}" for a in range(ndim))]
    loads, stores = [], []
    operands = [(f"in{i}", d, False) for i, d in enumerate(input_dtypes)]
    operands += [(f"out{j}", d, True) for j, d in enumerate(output_dtypes)]
    for name, dtype, output in operands:
        parameters.append(pointer_parameter(name, dtype, output))
        parameters += [f"const npy_int64 {name}_c{a}" for a in range(ndim)]
        element = f"{name}[{offset(name, 'c', ndim)}]"
        if output:
            stores.append(f"{element} = {stored(dtype, 'z' + name[3:])};")
        else:
            loads.append(f"const {C_TYPES[computed_dtype(dtype)]} x{name[2:]} = "
                         f"{load(dtype, element)};")
    if scalar.reports_errors:
        parameters.append("int *const error")
    declarations = [f"{C_TYPES[computed_dtype(d)]} z{j};" for j, d in enumerate(output_dtypes)]
    lines = "\n        ".join([*coordinates("i", "c", ndim), *loads, *declarations,
                               scalar.statements, *stores])
    flag_start, flag_end = error_flag(scalar.reports_errors)
    body = f"""{{
    {flag_start}
    for (npy_int64 i = SYMPILE_GRID_START; i < n; i += SYMPILE_GRID_STEP) {{
        {lines}
    }}
    {flag_end}
}}
"""
    return cuda_kernel("elemwise", parameters, body, scalar.support, scalar.reports_errors)
