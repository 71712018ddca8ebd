"""The vectorised C kernels of the softmax family, one contiguous slice at a time (nnet_c runs
them over every slice along the op's axis, copying strided slices to a buffer and back).

Each kernel reads and writes plain arrays of `length` elements through restrict pointers, so
gcc vectorises its loops; it is compiled for this machine's widest vectors
(sympile.cpu.vector_target). Reductions run in _LANES independent partial results, combined
in a fixed order at the end: the vectoriser cannot reorder a single floating-point sum.

Accuracy (the ulp errors measured are in tests/tensor/nnet/test_basic_c.py):

- exp(x - peak) uses sympile.scalar.c_fastmath's vectorisable exp on an exact argument: a
  float32 difference in double is exact; one in the input's dtype is corrected by its
  rounding error (Knuth's two-sum: exp(d + error) = exp(d) (1 + error)), so that a logit far
  below the peak keeps its probability's relative accuracy.
- Softmax stores each exp in the output and scales it by 1 / total; float32 computes its
  exps in float (the two-sum way), sums them in double and scales in double, rounding once.
- Where the exps feed a total whose log is the output (LogSoftmax), float32 computes them
  in double, so that the log stays as accurate as its inputs for a class whose probability
  is near 1. The cross-entropy, whose probabilities are an output too, takes Softmax's float
  exps: its loss is then within 0.55 ulp, against 0.5 with exps in double at half the speed.
- Sums of products (SoftmaxGrad) accumulate in double; float32 products are exact there.
- float64 totals are compensated (see _lane_total); float32 ones, in double, need not be.

Edge values as perform: a slice without a finite maximum (all -inf, or a +inf) is shifted by
0; NaN is ignored by the maximum and propagates through the total to the whole slice.
"""

from __future__ import annotations

import functools

from sympile.graph.ccode import C_TYPES, library_code
from sympile.scalar.c_fastmath import FAST_MATH_SUPPORT, fast_function
from sympile.tensor.c_toolkit import vectorized_kernel_attribute

__all__ = ["ROW_KINDS", "kernel_name", "row_library", "scaled_row_kernel"]

# Partial results per reduction: one AVX-512 vector of float32, two of float64.
_LANES = 16


# Each kernel's prototype; @NAME@ is its library unit's name (row_library).
_SIGNATURES = {
    "softmax": "void @NAME@_softmax(npy_intp length, const {T} *restrict x, {T} *restrict out)",
    "log_softmax": "void @NAME@_log_softmax(npy_intp length, const {T} *restrict x, "
                   "{T} *restrict out)",
    "softmax_grad": "void @NAME@_softmax_grad(npy_intp length, const {T} *restrict dy, "
                    "const {T} *restrict sm, {T} *restrict out)",
    "crossentropy": "double @NAME@_crossentropy(npy_intp length, const {T} *restrict x, "
                    "{T} *restrict out, npy_intp target)",
}


def kernel_name(kind: str, dtype: str) -> str:
    """The C name of the row kernel of `kind` ('softmax', 'log_softmax', 'softmax_grad' or
    'crossentropy') for `dtype`, declared by row_library's declarations."""
    return f"{row_library(kind, dtype)[0]}_{kind}"


def _signature(kind: str, dtype: str) -> str:
    return _SIGNATURES[kind].format(T=C_TYPES[dtype])


def _over_lanes(T: str, body: str, inputs: dict[str, str], outputs: tuple[str, ...] = ()) -> str:
    """C running `body` on every element of the slice, _LANES at a time (`lane` the element's
    place in its block), all of it vectorised. `body` reads an input's element as {name} and
    writes an output's the same way; {fresh} is 0 for an element it saw before. A slice of
    _LANES or more ends with the block of its last _LANES elements, overlapping the one
    before; a shorter one runs on copies of the inputs padded with their `inputs` values
    (that must leave the reductions unchanged)."""
    names = (*inputs, *outputs)
    main = body.format(fresh="1", **{name: f"{name}[k + lane]" for name in names})
    last = body.format(fresh="(start + lane >= k)",
                       **{name: f"{name}[start + lane]" for name in names})
    short = body.format(fresh="1", **{name: f"{name}_padded[lane]" for name in names})
    declarations = " ".join(f"{T} {name}_padded[{_LANES}];" for name in names)
    padded = " ".join(f"{name}_padded[lane] = lane < length ? {name}[lane] : {value};"
                      for name, value in inputs.items())
    copy_back = " ".join(f"memcpy({name}, {name}_padded, (size_t)length * sizeof({T}));"
                         for name in outputs)
    return f"""{{
    npy_intp k = 0;
    for (; k + {_LANES} <= length; k += {_LANES})
        for (int lane = 0; lane < {_LANES}; ++lane) {{ {main} }}
    if (k < length && length >= {_LANES}) {{
        const npy_intp start = length - {_LANES};
        for (int lane = 0; lane < {_LANES}; ++lane) {{ {last} }}
    }} else if (k < length) {{
        {declarations}
        for (int lane = 0; lane < {_LANES}; ++lane) {{ {padded} }}
        for (int lane = 0; lane < {_LANES}; ++lane) {{ {short} }}
        {copy_back}
    }}
    }}"""


def _combine(lanes: str, combined: str) -> str:
    """C folding the array `lanes` into lanes[0] by halves, each lanes[lane] becoming
    `combined` (of lane and lane + width): log2(_LANES) vector steps, in a fixed order."""
    return _by_halves(f"{lanes}[lane] = {combined};")


def _by_halves(statement: str) -> str:
    """C running `statement` for lane in [0, width), width = _LANES / 2, ..., 2, 1; each width
    a constant, so that gcc turns each step into straight vector code."""
    steps, width = [], _LANES // 2
    while width:
        steps.append(f"{{ const int width = {width}; "
                     f"for (int lane = 0; lane < width; ++lane) {{ {statement} }} }}")
        width //= 2
    return "\n    ".join(steps)


# One step of the compensated combination: the sum of two lanes, its rounding error (two-sum)
# added to their errors.
_COMPENSATED_HALVES = (
    "const double sum = partial[lane] + partial[lane + width], back = sum - partial[lane]; "
    "errors[lane] += errors[lane + width] + ((partial[lane] - (sum - back)) "
    "+ (partial[lane + width] - back)); partial[lane] = sum;")


def _lane_total(T: str, term_type: str, term: str, inputs: dict[str, str],
                store: str = "") -> str:
    """C declaring `total` (double), the sum of `term` (of type term_type, its inputs'
    elements, of type T, written {name}) over the slice in _LANES partial sums; `store` (an
    output's element written {name}) = `term` for each element, when given.

    float64 sums are compensated (each partial sum's rounding errors, from two-sum, summed
    on the side): a probability near 1 would otherwise absorb the small terms added to it,
    and bias the total by up to length / _LANES rounding errors. float32 inputs sum in
    double, far beyond their precision."""
    outputs = (store,) if store else ()
    assignment = f"{{{store}}} = term;" if store else ""
    added = f"const {term_type} term = {term}; {assignment} const double added = " \
            "{fresh} ? term : 0;"
    if T != C_TYPES["float64"]:
        return f"""double partial[{_LANES}] = {{0}};
    {_over_lanes(T, added + " partial[lane] += added;", inputs, outputs)}
    {_combine("partial", "partial[lane] + partial[lane + width]")}
    const double total = partial[0];"""
    compensated = (added + " const double sum = partial[lane] + added, back = sum - "
                   "partial[lane]; errors[lane] += (partial[lane] - (sum - back)) + (added - "
                   "back); partial[lane] = sum;")
    # An infinite or NaN partial sum makes its error NaN: the sum alone is the total then.
    return f"""double partial[{_LANES}] = {{0}}, errors[{_LANES}] = {{0}};
    {_over_lanes(T, compensated, inputs, outputs)}
    {_by_halves(_COMPENSATED_HALVES)}
    const double total = partial[0] + (isfinite(errors[0]) ? errors[0] : 0);"""


def _peak(T: str) -> str:
    """C declaring `peak` (of type T), the largest element of x, NaN ignored; 0 when no
    element is finite (all -inf, or a +inf), which perform shifts by."""
    body = "lanes[lane] = {x} > lanes[lane] ? {x} : lanes[lane];"
    return f"""{T} lanes[{_LANES}];
    for (int lane = 0; lane < {_LANES}; ++lane) lanes[lane] = -INFINITY;
    {_over_lanes(T, body, {"x": "-INFINITY"})}
    {_combine("lanes", "lanes[lane + width] > lanes[lane] ? lanes[lane + width] : lanes[lane]")}
    const {T} peak = isfinite(lanes[0]) ? lanes[0] : 0;"""


# exp(x - peak) with the subtraction's rounding error folded in (two-sum); the error is NaN
# where the difference is infinite (or NaN), which has no error to fold.
_SHIFTED_EXP = """
static inline SYMPILE_INLINE {T} sympile_shifted_exp_{dtype}({T} x, {T} peak)
{{
    const {T} difference = x - peak, back = difference - x;
    const {T} error = (x - (difference - back)) - (peak + back);
    const {T} value = {exp}(difference);
    return error == error ? value + value * error : value;
}}
"""


def _exp_total(dtype: str, store: str = "") -> str:
    """C declaring `peak` and `total`, the sum of exp(x - peak) (stored in `store` when
    given): in double from float32 inputs (exact differences), else with the two-sum."""
    T = C_TYPES[dtype]
    if dtype == "float32" and not store:
        term = f"{fast_function('exp', 'float64')}((double){{x}} - (double)peak)"
        return f"{_peak(T)}\n    {_lane_total(T, 'double', term, {'x': '-INFINITY'})}"
    term = f"sympile_shifted_exp_{dtype}({{x}}, peak)"
    return f"{_peak(T)}\n    {_lane_total(T, T, term, {'x': '-INFINITY'}, store)}"


def _softmax_row(dtype: str, attribute: str) -> str:
    T = C_TYPES[dtype]
    return f"""
/* out = exp(x - peak) / total, each exp computed once (float32: in float, its total and
   scaling in double). */
{attribute}
{_signature("softmax", dtype)}
{{
    {_exp_total(dtype, "out")}
    const double scale = 1.0 / total;
    for (npy_intp i = 0; i < length; ++i) out[i] = ({T})((double)out[i] * scale);
}}
"""


def _log_softmax_row(dtype: str, attribute: str) -> str:
    T = C_TYPES[dtype]
    return f"""
/* out = (x - peak) - log(total). */
{attribute}
{_signature("log_softmax", dtype)}
{{
    {_exp_total(dtype)}
    const double log_total = log(total);
    for (npy_intp i = 0; i < length; ++i)
        out[i] = ({T})(((double)x[i] - (double)peak) - log_total);
}}
"""


def _softmax_grad_row(dtype: str, attribute: str) -> str:
    T = C_TYPES[dtype]
    return f"""
/* out = sm * (dy - total), total = sum(dy * sm). */
{attribute}
{_signature("softmax_grad", dtype)}
{{
    {_lane_total(T, "double", "(double){dy} * (double){sm}", {"dy": "0", "sm": "0"})}
    for (npy_intp i = 0; i < length; ++i)
        out[i] = ({T})((double)sm[i] * ((double)dy[i] - total));
}}
"""


def _crossentropy_row(dtype: str, attribute: str) -> str:
    T = C_TYPES[dtype]
    return f"""
/* out = softmax(x) as the softmax kernel computes it; returns the loss
   -((x[target] - peak) - log(total)), in double. */
{attribute}
{_signature("crossentropy", dtype)}
{{
    {_exp_total(dtype, "out")}
    const double scale = 1.0 / total;
    for (npy_intp i = 0; i < length; ++i) out[i] = ({T})((double)out[i] * scale);
    return -(((double)x[target] - (double)peak) - log(total));
}}
"""


_ROWS = {"softmax": _softmax_row, "log_softmax": _log_softmax_row,
         "softmax_grad": _softmax_grad_row, "crossentropy": _crossentropy_row}
ROW_KINDS = tuple(_ROWS)


def row_library(kind: str, dtype: str) -> tuple[str, str, str]:
    """(name, declarations, library unit) of the row kernel of `kind` for `dtype`: the
    kernel, c_fastmath's functions and the helpers it uses, compiled once per cache as a
    library unit (in each op unit they were most of its compile time; one unit per kind, not
    per dtype, since each kernel takes a few tenths of a second and a model uses one or two);
    `declarations` declare the kernel (kernel_name) for the op units that call it."""
    return _row_library(kind, dtype, vectorized_kernel_attribute(compute_bound=True))


@functools.lru_cache(maxsize=16)
def _row_library(kind: str, dtype: str, attribute: str) -> tuple[str, str, str]:
    T = C_TYPES[dtype]
    helpers = () if kind == "softmax_grad" else (
        FAST_MATH_SUPPORT,
        _SHIFTED_EXP.format(T=T, dtype=dtype, exp=fast_function("exp", dtype)))
    return library_code(f"sympile_{kind}_{dtype}", f"{_signature(kind, dtype)};\n",
                        "".join([*helpers, _ROWS[kind](dtype, attribute)]))


def scaled_row_kernel(input_dtype: str, output_dtype: str) -> tuple[str, str]:
    """(name, support C) of the kernel out[k] = (output type)values[k] * scale over a
    contiguous row (CrossentropySoftmax1HotDx's, before its target's element)."""
    name = f"sympile_scaled_row_{input_dtype}_{output_dtype}"
    source, target = C_TYPES[input_dtype], C_TYPES[output_dtype]
    return name, f"""
{vectorized_kernel_attribute(compute_bound=True)}
static void {name}(npy_intp length, const {source} *restrict values, {target} *restrict out,
                   {target} scale)
{{
    for (npy_intp i = 0; i < length; ++i) out[i] = ({target})values[i] * scale;
}}
"""
