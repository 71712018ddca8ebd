"""C code of CenteredSquareSum: sum((x - mean(x))**2) over every axis of a float32 or
float64 array in one read of memory (centered.c), on several threads above
config.openmp_elemwise_minsize elements. A non-contiguous input is copied first."""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, render
from sympile.tensor.c_toolkit import vectorized_kernel_attribute

__all__ = ["centered_square_sum_c_code", "centered_support"]

_CENTERED = c_file(__file__, "centered.c")
# Values per block (read twice, the second time from the L1 cache while the next block is
# prefetched; 4096 float32 fill half of a 32 KiB L1: on Intel with 48 KiB, 8192 without the
# prefetch read 1e7 float32 at 21-23 GB/s of the 24 two cores read, 2048 at 17-19; on AMD
# with 32 KiB, 4096 and the prefetch took 0.77-0.98 ms against 8192's 0.91-1.08, and 1e6
# 0.064 against 0.076) and blocks per chunk (the unit of work of a thread, 131072 values);
# the deviations' sums run in float vectors over RUN values (16 steps) before they are added
# in double.
_BLOCK, _CHUNK, _RUN = 4096, 32, 512


def centered_support(dtype: str) -> str:
    ctype = C_TYPES[dtype]
    lanes = 16 if dtype == "float32" else 8
    return render(_CENTERED, {"T": ctype, "BYTES": lanes * 4 * (1 if dtype == "float32" else 2),
                              "LANES": lanes, "HALF": lanes // 2, "RUN": _RUN,
                              "BLOCK": _BLOCK, "CHUNK": _CHUNK,
                              "ATTRIBUTE": vectorized_kernel_attribute(compute_bound=True)})


def centered_square_sum_c_code(op, node: Apply, names: CNames) -> CCode | None:
    dtype = node.inputs[0].type.dtype
    if dtype not in ("float32", "float64") or node.outputs[0].type.dtype != dtype:
        return None
    ctype = C_TYPES[dtype]
    (x,), (out,) = names.inputs, names.outputs
    threaded = (f"(PyArray_SIZE(contiguous) >= {config.openmp_elemwise_minsize})"
                if config.openmp else "0")
    body = f"""
PyArrayObject *contiguous = (PyArrayObject *)PyArray_GETCONTIGUOUS({x});
if (contiguous == NULL) {{
    {names.fail}
}}
double result = 0.0;
const int status = sympile_centered_square_sum_{ctype}(
    (const {ctype} *)PyArray_DATA(contiguous), PyArray_SIZE(contiguous), {threaded}, &result);
Py_DECREF(contiguous);
if (status != 0) {{
    PyErr_NoMemory();
    {names.fail}
}}
if (sympile_prepare_output(&{out}, 0, NULL, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
*({ctype} *)PyArray_DATA({out}) = ({ctype})result;
"""
    return CCode(body=body, support=(centered_support(dtype),), openmp=config.openmp)
