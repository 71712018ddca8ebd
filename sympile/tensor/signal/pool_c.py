"""The C code of 2d pooling (pool.py) on float32 and float64: Pool, MaxPoolGrad and
AveragePoolGrad as loops over the windows of each plane (pool.c), planes threaded above
config.openmp_elemwise_minsize input elements; pool_3d and the second-order ops run
perform(). The loops are one library unit per dtype (pool_library), compiled once per
cache: a node's op unit holds its options and calls."""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import NPY_TYPES, CCode, CNames, c_file, library_code, render

__all__ = ["pool_c_code", "pool_library"]

_POOL = c_file(__file__, "pool.c")
_DECLARATIONS = c_file(__file__, "pool.h")
_MODES = {"max": 0, "sum": 1, "average_inc_pad": 2, "average_exc_pad": 3}


def pool_library(dtype: str) -> tuple[str, str, str]:
    """(name, declarations, library unit) of the pooling loops for `dtype`:
    `<name>_pool_setup`, `_pool_forward` and `_pool_backward` as pool.h declares them."""
    values = {"T": f"npy_{dtype}"}
    return library_code(f"sympile_pool_{dtype}", render(_DECLARATIONS, values),
                        render(_POOL, values))


def pool_c_code(op, node: Apply, names: CNames, kind: str) -> CCode | None:
    """kind 'forward' (Pool(x)), 'max_grad' (MaxPoolGrad(x, maxout, gz)) or 'average_grad'
    (AveragePoolGrad(x, gz))."""
    dtype = node.outputs[0].type.dtype
    if op.nd != 2 or dtype not in ("float32", "float64") or any(
            variable.type.dtype != dtype for variable in node.inputs):
        return None
    c_type, typenum = f"npy_{dtype}", NPY_TYPES[dtype]
    library, declarations, unit = pool_library(dtype)
    (output,) = names.outputs
    ndim = node.inputs[0].type.ndim
    threaded = (f"PyArray_SIZE(x) >= {config.openmp_elemwise_minsize}" if config.openmp
                else "0")
    arrays = {"forward": ["x"], "max_grad": ["x", "maxout", "gz"],
              "average_grad": ["x", "gz"]}[kind]
    conversions = "\n".join(
        f"PyArrayObject *{name} = status != 0 ? NULL : (PyArrayObject *)PyArray_FROMANY("
        f"(PyObject *){variable}, {typenum}, 0, 0, NPY_ARRAY_CARRAY_RO);\n"
        f"if ({name} == NULL) status = -1;"
        for name, variable in zip(arrays, names.inputs))
    if kind == "forward":
        shape = (f"npy_intp dims[{ndim}]; for (int a = 0; a < {ndim - 2}; ++a) "
                 f"dims[a] = PyArray_DIM(x, a); dims[{ndim - 2}] = geometry.out_rows; "
                 f"dims[{ndim - 1}] = geometry.out_cols;")
        call = (f"status = {library}_pool_forward(&geometry, "
                f"(const {c_type} *)PyArray_DATA(x), ({c_type} *)PyArray_DATA({output}), "
                f"planes, {threaded});")
    else:
        shape = "npy_intp *dims = PyArray_DIMS(x);"
        maxout = f"(const {c_type} *)PyArray_DATA(maxout)" if kind == "max_grad" \
            else "NULL"
        call = (f"status = {library}_pool_backward(&geometry, "
                f"(const {c_type} *)PyArray_DATA(x), "
                f"{maxout}, (const {c_type} *)PyArray_DATA(gz), "
                f"({c_type} *)PyArray_DATA({output}), planes, {threaded});")
    gz_check = "" if kind == "forward" else (
        "if (status == 0 && (PyArray_SIZE(gz) != planes * geometry.out_rows * geometry.out_cols"
        + (" || PyArray_SIZE(maxout) != PyArray_SIZE(gz)" if kind == "max_grad" else "")
        + ")) { PyErr_Format(PyExc_ValueError, \"%s: the output gradient has %ld elements, "
        "expected %ld\", label, (long)PyArray_SIZE(gz), "
        "(long)(planes * geometry.out_rows * geometry.out_cols)); status = -1; }")
    releases = " ".join(f"Py_XDECREF({name});" for name in arrays)
    body = f"""
const char *label = "{op.label}";
const npy_intp ws[2] = {{{op.ws[0]}, {op.ws[1]}}};
const npy_intp stride[2] = {{{op.stride[0]}, {op.stride[1]}}};
const npy_intp pad[2] = {{{op.pad[0]}, {op.pad[1]}}};
sympile_pool_geometry_{c_type} geometry;
int status = 0;
{conversions}
if (status == 0) {{
    status = {library}_pool_setup(x, ws, stride, pad, {int(op.ignore_border)},
                                         {_MODES[op.mode]}, label, &geometry);
}}
const npy_intp planes = status != 0 || geometry.rows * geometry.cols == 0 ? 0
                        : PyArray_SIZE(x) / (geometry.rows * geometry.cols);
{gz_check}
if (status == 0) {{
    {shape}
    status = sympile_prepare_output(&{output}, {ndim}, dims, {typenum});
}}
if (status == 0 && planes > 0) {{
    {call}
}} else if (status == 0) {{
    memset(PyArray_DATA({output}), 0, PyArray_NBYTES({output}));
}}
{releases}
if (status != 0) {{
    {names.fail}
}}
"""
    return CCode(body=body, support=(declarations,), units=(unit,), openmp=config.openmp)
