"""CUDA of CAReduce and FusedCAReduce: one pass of a reduction, from the same scalar C the
CPU loops run (the fold's, and for a fused reduction the elementwise op's).

A pass reduces, for each of `n_out` outputs, `R` values into `K` partial results: thread t
in [0, n_out * K) takes output o = t / K and folds the values r = t % K, r + K, r + 2K, ...
(neighbouring threads read neighbouring elements), starting from the fold's identity (or
from its first value for max and min, which have none), and stores its result at t. The
runtime runs one pass with K > 1 over the input, then passes over the partial results
([n_out, K], in the accumulation dtype) until K = 1, whose pass stores the output dtype:
no thread waits for another, so the kernel needs no shared memory or synchronisation (and
the CPU emulation runs it as it runs every kernel). Each pass's partial sums make the
result's rounding error grow with R / K + log(K), not with R.

Parameters, in order: n_out, K, R, the output coordinates' lengths (`kept_ndim`), the
reduced coordinates' lengths (`reduced_ndim`), then for each input its pointer, its strides
along the kept and along the reduced coordinates (in elements, 0 where it broadcasts), then
the output's pointer (C-contiguous [n_out, K]), and the error flag when the elementwise op
can report one. A value is computed in the elementwise op's dtype, converted to the
accumulation dtype (numpy's reduce(dtype=acc) does the same) and folded; the result is
converted to the output dtype. float16 accumulates in float32.
"""

from __future__ import annotations

from collections.abc import Sequence

from sympile.graph.ccode import C_TYPES
from sympile.scalar.basic import ScalarOp, cast_op
from sympile.scalar.c_rules import c_literal
from sympile.tensor.elemwise.elemwise_cuda import (
    CudaKernel,
    computed_dtype,
    coordinates,
    cuda_kernel,
    error_flag,
    load,
    offset,
    pointer_parameter,
    scalar_cuda,
    stored,
)

__all__ = ["careduce_cuda_kernel"]


def careduce_cuda_kernel(fold_op: ScalarOp, pre_op: ScalarOp | None,
                         input_dtypes: Sequence[str], acc_dtype: str, out_dtype: str,
                         kept_ndim: int, reduced_ndim: int,
                         empty_value: float | None = None) -> CudaKernel | None:
    """One pass folding `fold_op` (add, mul, maximum, ...) over the values of `pre_op`
    applied to the inputs (None: the single input's elements) in `acc_dtype`, storing
    `out_dtype`; None when a scalar op has no C for these dtypes. empty_value: the result of
    an empty fold for an op without identity (max's -inf, numpy's `initial`)."""
    if kept_ndim < 1 or reduced_ndim < 1:
        raise ValueError("careduce_cuda_kernel: kept_ndim and reduced_ndim must be at least 1")
    acc = computed_dtype(acc_dtype)
    names = [f"x{i}" for i in range(len(input_dtypes))]
    pieces = []
    if pre_op is None:
        (value_dtype,) = input_dtypes
        value = "x0"
    else:
        (value_dtype,) = pre_op.output_dtypes(*input_dtypes)
        value = "value"
        pieces.append((pre_op, names, [value], input_dtypes, [value_dtype]))
    if computed_dtype(value_dtype) != acc:
        pieces.append((cast_op(acc), [value], ["converted"], [computed_dtype(value_dtype)],
                       [acc]))
        value = "converted"
    pieces.append((fold_op, ["acc", value], ["folded"], [acc, acc], [acc]))
    result = "acc"
    if computed_dtype(out_dtype) != acc:
        pieces.append((cast_op(computed_dtype(out_dtype)), ["acc"], ["result"], [acc],
                       [computed_dtype(out_dtype)]))
        result = "result"
    codes = [scalar_cuda(*piece) for piece in pieces]
    if any(code is None for code in codes):
        return None
    *value_codes, fold_code = codes[:len(codes) - (result != "acc")]
    result_code = codes[-1] if result != "acc" else None
    reports_errors = any(code.reports_errors for code in codes)

    parameters = ["const npy_int64 n_out", "const npy_int64 K", "const npy_int64 R"]
    parameters += [f"const npy_int64 k_n{a}" for a in range(kept_ndim)]
    parameters += [f"const npy_int64 r_n{a}" for a in range(reduced_ndim)]
    bases, loads = [], []
    for i, dtype in enumerate(input_dtypes):
        name = f"in{i}"
        parameters.append(pointer_parameter(name, dtype, output=False))
        parameters += [f"const npy_int64 {name}_k{a}" for a in range(kept_ndim)]
        parameters += [f"const npy_int64 {name}_r{a}" for a in range(reduced_ndim)]
        bases.append(f"const npy_int64 {name}_base = {offset(name, 'k', kept_ndim)};")
        element = f"{name}[{name}_base + {offset(name, 'r', reduced_ndim)}]"
        loads.append(f"const {C_TYPES[computed_dtype(dtype)]} x{i} = {load(dtype, element)};")
    parameters.append(pointer_parameter("out", out_dtype, output=True))
    if reports_errors:
        parameters.append("int *const error")

    locals_ = []
    if pre_op is not None:
        locals_.append(f"{C_TYPES[computed_dtype(value_dtype)]} value;")
    if "converted" in value:
        locals_.append(f"{C_TYPES[acc]} converted;")
    element_statements = [*coordinates("r", "r", reduced_ndim), *loads, *locals_,
                          *(code.statements for code in value_codes)]
    fold = f"{{ {C_TYPES[acc]} folded; {fold_code.statements} acc = folded; }}"
    if fold_op.identity is not None:
        start = f"{C_TYPES[acc]} acc = {c_literal(fold_op.identity, acc)};"
        accumulate = fold
    else:
        empty = 0 if empty_value is None else c_literal(empty_value, acc)
        start = f"{C_TYPES[acc]} acc = {empty}; int have = 0;"
        accumulate = f"if (have) {fold} else {{ acc = {value}; have = 1; }}"
    finish = []
    if result_code is not None:
        finish = [f"{C_TYPES[computed_dtype(out_dtype)]} result;", result_code.statements]
    flag_start, flag_end = error_flag(reports_errors)
    inner = "\n            ".join([*element_statements, accumulate])
    outer = "\n        ".join([*coordinates("o", "k", kept_ndim), *bases, start])
    body = f"""{{
    {flag_start}
    for (npy_int64 t = SYMPILE_GRID_START; t < n_out * K; t += SYMPILE_GRID_STEP) {{
        const npy_int64 o = t / K;
        {outer}
        for (npy_int64 r = t % K; r < R; r += K) {{
            {inner}
        }}
        {" ".join(finish)}
        out[t] = {stored(out_dtype, result)};
    }}
    {flag_end}
}}
"""
    support = [piece for code in codes for piece in code.support]
    return cuda_kernel("careduce", parameters, body, support, reports_errors)
