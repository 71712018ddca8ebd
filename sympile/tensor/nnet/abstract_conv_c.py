"""The C code of the convolution ops (abstract_conv.py), 2d and 3d, on float32 and float64:
im2col and BLAS gemm (conv_gemm.c), threads chosen as for the BLAS products
(blas_threads.c); other dtypes run perform(). The kernels are one library unit per dtype
(conv_library), compiled once per cache: a node's op unit holds its geometry and calls."""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import NPY_TYPES, CCode, CNames, c_file, library_code, render
from sympile.tensor.blas.blas_c import blas_threads_support

__all__ = ["conv_c_code", "conv_library"]

_GEMM = c_file(__file__, "conv_gemm.c")
_DECLARATIONS = c_file(__file__, "conv_gemm.h")


def conv_library(dtype: str) -> tuple[str, str, str, tuple[str, ...]]:
    """(name, declarations, library unit, the BLAS routines it calls) of the convolution
    kernels for `dtype`: `<name>_conv_setup` and `<name>_conv_gemm` as conv_gemm.h declares
    them."""
    prefix = "s" if dtype == "float32" else "d"
    values = {"T": f"npy_{dtype}", "p": prefix}
    return (*library_code(f"sympile_conv_{dtype}", render(_DECLARATIONS, values),
                          blas_threads_support(dtype) + render(_GEMM, values)),
            (f"{prefix}gemm",))
_BORDERS = {"valid": 0, "full": 1, "half": 2}


def conv_c_code(op, node: Apply, names: CNames, kind: int) -> CCode | None:
    """kind 0: AbstractConv, 1: AbstractConvGradWeights, 2: AbstractConvGradInputs."""
    dtype = node.outputs[0].type.dtype
    if dtype not in ("float32", "float64") or any(
            variable.type.dtype != dtype for variable in node.inputs[:2]):
        return None
    c_type = f"npy_{dtype}"
    border = _BORDERS.get(op.border_mode, 3)
    nd = op.convdim
    pads = (0,) * nd if border != 3 else op.border_mode
    a, b = names.inputs[:2]
    shape = names.inputs[2] if kind else "NULL"
    (output,) = names.outputs
    label = f"conv{op.convdim}d"
    library, declarations, unit, blas = conv_library(dtype)
    typenum = NPY_TYPES[dtype]
    body = f"""
const char *label = "{label}";
const npy_intp pads[{nd}] = {{{", ".join(map(str, pads))}}};
const npy_intp strides[{nd}] = {{{", ".join(map(str, op.subsample))}}};
const npy_intp dilations[{nd}] = {{{", ".join(map(str, op.filter_dilation))}}};
sympile_conv_geometry_{c_type} geometry;
npy_intp filters = 0, out_dims[{nd + 2}];
PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY((PyObject *){a}, {typenum}, {nd + 2},
                                                    {nd + 2}, NPY_ARRAY_CARRAY_RO);
PyArrayObject *b = a == NULL ? NULL : (PyArrayObject *)PyArray_FROMANY(
    (PyObject *){b}, {typenum}, {nd + 2}, {nd + 2}, NPY_ARRAY_CARRAY_RO);
int status = b == NULL ? -1 : {library}_conv_setup(
    {kind}, {nd}, a, b, {shape}, {border}, pads, strides, dilations, {int(op.filter_flip)},
    {op.num_groups}, label, &geometry, &filters, out_dims);
if (status == 0) {{
    status = sympile_prepare_output(&{output}, {nd + 2}, out_dims, {typenum});
}}
if (status == 0) {{
    const npy_intp batch = {"PyArray_DIM(a, 0)" if kind != 2 else "PyArray_DIM(b, 0)"};
    status = {library}_conv_gemm({kind}, &geometry, batch, filters, {op.num_groups},
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
    return CCode(body=body, support=(declarations,), blas=blas,
                 units=(unit,), openmp=config.openmp)
