"""C code of ARange for every output dtype with C arithmetic but bool, from integer, bool or
float bounds, computed as numpy.arange computes it from Python scalars (ARange.perform):

- the length is ceil((stop - start) / step) in double arithmetic, or 0 (NaN: ValueError
  "arange: cannot compute length"; beyond npy_intp: ValueError "Maximum allowed size
  exceeded"); with integer bounds stop - start is exact before the division;
- the first element is start and the second start + step (exact for integer bounds, double
  otherwise), each converted as numpy converts a Python scalar: a float truncated to an
  integer, an integer out of an integer dtype's range an OverflowError;
- the others are numpy's fill: first + i * (second - first) in the dtype's own arithmetic
  (integers wrap).

uint64 bounds, and bool, float16 and complex outputs give no C code (perform runs).
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_string

__all__ = ["arange_c_code"]


def _convert(dtype: str, integer_bounds: bool, value: str, target: str, fail: str) -> str:
    """C that stores the Python-scalar `value` (npy_int64 for integer bounds, else double)
    in `target` of the output dtype as numpy's setitem does."""
    element_type = C_TYPES[dtype]
    if dtype.startswith("float"):
        # numpy makes a Python int a double first (then, for float32, rounds again).
        return f"{target} = ({element_type})(double){value};"
    info = np.iinfo(dtype)
    if integer_bounds:
        integer = value
        check_double = ""
    else:
        integer = "truncated"
        # numpy converts the truncated float to a C long first.
        check_double = f"""const double truncated_double = trunc({value});
if (!(truncated_double >= -9223372036854775808.0 && truncated_double < 9223372036854775808.0)) {{
    PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
    {fail}
}}
const npy_int64 truncated = (npy_int64)truncated_double;"""
    maximum = f"{info.max}LL" if dtype != "uint64" else f"{info.max}ULL"
    upper = "" if dtype in ("int64", "uint64") else f" || {integer} > {maximum}"
    return f"""{{
{check_double}
if ({integer} < {info.min}LL{upper}) {{
    PyErr_Format(PyExc_OverflowError, "Python integer %lld out of bounds for {dtype}",
                 (long long){integer});
    {fail}
}}
{target} = ({element_type}){integer};
}}"""


def arange_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of ARange: see the module docstring."""
    dtype = op.dtype
    bound_dtypes = [v.type.dtype for v in node.inputs]
    if dtype not in C_TYPES or dtype == "bool" \
            or any(d not in C_TYPES or d == "uint64" for d in bound_dtypes):
        return None
    integer_bounds = all(not d.startswith("float") for d in bound_dtypes)
    scalar_type = "npy_int64" if integer_bounds else "double"
    start, stop, step = (f"({scalar_type})*(const {C_TYPES[d]} *)PyArray_DATA({name})"
                         for d, name in zip(bound_dtypes, names.inputs))
    element_type = C_TYPES[dtype]
    output = names.outputs[0]
    if integer_bounds:
        # Exact: the bounds are int64, their differences fit in 128 bits.
        span = "(double)((__int128)stop - (__int128)start)"
        second = "(npy_int64)((npy_uint64)start + (npy_uint64)step)"
        second_check = f"""if ((step > 0 && start > NPY_MAX_INT64 - step)
        || (step < 0 && start < NPY_MIN_INT64 - step)) {{
    PyErr_SetString(PyExc_OverflowError, "Python integer out of bounds for {dtype}");
    {names.fail}
}}"""
    else:
        span = "(stop - start)"
        second = "(start + step)"
        second_check = ""
    return CCode(body=f"""
const {scalar_type} start = {start}, stop = {stop}, step = {step};
if (step == 0) {{
    PyErr_Format(PyExc_ValueError, "%s: step must not be zero", {c_string(op)});
    {names.fail}
}}
const double quotient = {span} / (double)step;
if (quotient != quotient) {{
    PyErr_SetString(PyExc_ValueError, "arange: cannot compute length");
    {names.fail}
}}
const double rounded = ceil(quotient);
if (rounded >= (double)NPY_MAX_INTP) {{
    PyErr_SetString(PyExc_ValueError, "Maximum allowed size exceeded");
    {names.fail}
}}
npy_intp length = rounded > 0 ? (npy_intp)rounded : 0;
{element_type} first = 0, second = 0;
if (length >= 1) {{
    {_convert(dtype, integer_bounds, "start", "first", names.fail)}
}}
if (length >= 2) {{
    {second_check}
    const {scalar_type} next = {second};
    {_convert(dtype, integer_bounds, "next", "second", names.fail)}
}}
if (sympile_prepare_output(&{output}, 1, &length, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
{element_type} *values = ({element_type} *)PyArray_DATA({output});
if (length >= 1) values[0] = first;
if (length >= 2) {{
    values[1] = second;
    /* numpy's fill, in the same types. */
    {element_type} delta = second;
    delta -= first;
    for (npy_intp i = 2; i < length; ++i) values[i] = first + i * delta;
}}
""")
