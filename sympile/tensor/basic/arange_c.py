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

uint64 bounds, and bool, float16 and complex outputs give no C code (perform runs). The C is
arange.c, one function per output dtype and kind of bounds.
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, c_string, render

__all__ = ["arange_c_code"]


_ARANGE = c_file(__file__, "arange.c")


def arange_support(dtype: str, integer_bounds: bool) -> tuple[str, str]:
    """(name, definition) of arange.c's function for output `dtype` and bounds read as
    npy_int64 (`integer_bounds`) or double."""
    name = f"sympile_arange_{dtype}_{'int64' if integer_bounds else 'double'}"
    values = {"NAME": name.removeprefix("sympile_arange_"), "DTYPE": dtype,
              "T": C_TYPES[dtype], "S": "npy_int64" if integer_bounds else "double",
              "NPY": NPY_TYPES[dtype], "INTEGER_BOUNDS": int(integer_bounds),
              "FLOAT_OUTPUT": int(dtype.startswith("float")), "MIN": "0", "UPPER": ""}
    if not dtype.startswith("float"):
        info = np.iinfo(dtype)
        values["MIN"] = "NPY_MIN_INT64" if dtype == "int64" else f"{info.min}LL"
        # int64 and uint64 hold every npy_int64 that is not below their minimum.
        if dtype not in ("int64", "uint64"):
            values["UPPER"] = f"|| integer > {info.max}LL"
    return name, render(_ARANGE, values)


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
    function, support = arange_support(dtype, integer_bounds)
    return CCode(body=f"""
if ({function}({start}, {stop}, {step}, &{names.outputs[0]}, {c_string(op)}) != 0) {{
    {names.fail}
}}
""", support=(support,))
