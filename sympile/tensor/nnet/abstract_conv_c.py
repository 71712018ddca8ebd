"""The C code of the 2d convolution ops (abstract_conv.py) on float32 and float64: im2col and
BLAS gemm (conv_gemm.c), threads chosen as for the BLAS products (blas_threads.c); 3d and
other dtypes run perform()."""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import NPY_TYPES, CCode, CNames, c_file, render
from sympile.tensor.blas.blas_c import blas_threads_support

__all__ = ["conv_c_code"]

_GEMM = c_file(__file__, "conv_gemm.c")
_BORDERS = {"valid": 0, "full": 1, "half": 2}


def conv_c_code(op, node: Apply, names: CNames, kind: int) -> CCode | None:
    """kind 0: AbstractConv, 1: AbstractConvGradWeights, 2: AbstractConvGradInputs."""
    dtype = node.outputs[0].type.dtype
    if op.convdim != 2 or dtype not in ("float32", "float64") or any(
            variable.type.dtype != dtype for variable in node.inputs[:2]):
        return None
    prefix = "s" if dtype == "float32" else "d"
    c_type = f"npy_{dtype}"
    border = _BORDERS.get(op.border_mode, 3)
    pads = (0, 0) if border != 3 else op.border_mode
    a, b = names.inputs[:2]
    shape = names.inputs[2] if kind else "NULL"
    (output,) = names.outputs
    label = f"conv{op.convdim}d"
    typenum = NPY_TYPES[dtype]
    body = f"""
const char *label = "{label}";
const npy_intp pads[2] = {{{pads[0]}, {pads[1]}}};
const npy_intp strides[2] = {{{op.subsample[0]}, {op.subsample[1]}}};
const npy_intp dilations[2] = {{{op.filter_dilation[0]}, {op.filter_dilation[1]}}};
sympile_conv2d_geometry_{c_type} geometry;
npy_intp filters = 0, out_dims[4];
PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY((PyObject *){a}, {typenum}, 4, 4,
                                                    NPY_ARRAY_CARRAY_RO);
PyArrayObject *b = a == NULL ? NULL : (PyArrayObject *)PyArray_FROMANY(
    (PyObject *){b}, {typenum}, 4, 4, NPY_ARRAY_CARRAY_RO);
int status = b == NULL ? -1 : sympile_conv2d_setup_{c_type}(
    {kind}, a, b, {shape}, {border}, pads, strides, dilations, {int(op.filter_flip)},
    {op.num_groups}, label, &geometry, &filters, out_dims);
if (status == 0) {{
    status = sympile_prepare_output(&{output}, 4, out_dims, {typenum});
}}
if (status == 0) {{
    const npy_intp batch = {"PyArray_DIM(a, 0)" if kind != 2 else "PyArray_DIM(b, 0)"};
    status = sympile_conv2d_gemm_{c_type}({kind}, &geometry, batch, filters, {op.num_groups},
                                         (const {c_type} *)PyArray_DATA(a),
                                         (const {c_type} *)PyArray_DATA(b),
                                         ({c_type} *)PyArray_DATA({output}));
}}
Py_XDECREF(a);
Py_XDECREF(b);
if (status != 0) {{
    {names.fail}
}}
"""
    support = (blas_threads_support(dtype), render(_GEMM, {"T": c_type, "p": prefix}))
    return CCode(body=body, support=support, blas=(f"{prefix}gemm",), openmp=config.openmp)
