"""The sparse products on a matrix's arrays, with C code (kernels.c): what the specialize
rewrites (sympile.sparse.rewriting) turn structured_dot, dot and sampling_dot into, once
the gradients are built. They take (data, indices, indptr, shape) rather than a sparse
matrix, so that the C backend sees arrays only.

  SparseDenseProduct(format)   S @ y for S given by its arrays, y dense: dense
  SparseDenseAccumulate(format)
                               z + alpha S @ y (Theano's Usmm); its _Inplace form writes
                               over z: a gradient step W - lr Sᵀ g adds into W at S's
                               stored positions, without a dense gradient matrix
  SampledProducts(format, scaled)
                               x[i] · y[j] at each stored position (i, j) of a pattern,
                               times the pattern's value when scaled: the data of
                               sampling_dot's result
perform builds the scipy.sparse matrix and runs scipy. These ops are made after
differentiation and have no derivative of their own.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import CCode, c_file, render
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from sympile.tensor.basic.ops import as_tensor_variable
from sympile.tensor.blas.blas_c import VECTORIZE
from sympile.tensor.inplace import register_inplace_form
from sympile.tensor.type import tensor_type

__all__ = ["SampledProducts", "SparseDenseAccumulate", "SparseDenseAccumulateInplace",
           "SparseDenseProduct"]

_KERNELS = c_file(__file__, "kernels.c")
_SUBSTITUTIONS = {"float32": {"T": "npy_float32", "npy": "NPY_FLOAT32"},
                  "float64": {"T": "npy_float64", "npy": "NPY_FLOAT64"}}


def _support(dtype: str) -> str:
    return render(_KERNELS, {"dtype": dtype, "minsize": f"{config.blas_parallel_minsize}.0",
                             "vectorize": VECTORIZE, **_SUBSTITUTIONS[dtype]})


def _owned(name: str, flags: str) -> str:
    """C that takes `name` as an array with `flags` (a new reference in `name`_owned)."""
    return (f"PyArrayObject *{name}_owned = (PyArrayObject *)PyArray_FromAny((PyObject *)"
            f"{name}, NULL, 0, 0, {flags}, NULL);")


def _call(arrays: list[tuple[str, str]], call: str, fail: str) -> str:
    """C that takes each (name, flags) array, runs `call` (with the _owned names), and
    releases them; `fail` on an error."""
    takes = "\n".join(_owned(name, flags) for name, flags in arrays)
    missing = " || ".join(f"{name}_owned == NULL" for name, _ in arrays)
    releases = " ".join(f"Py_XDECREF({name}_owned);" for name, _ in arrays)
    return f"""{{
{takes}
int status = ({missing}) ? -1 : {call};
{releases}
if (status < 0) {{
    {fail}
}}
}}"""


# The kernels read rows of the dense operands as contiguous vectors: a strided operand (a
# transposed view) is copied first.
_CONTIGUOUS = "NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED"


def _kernel_code(dtype: str, operands: tuple[str, ...], call: str, fail: str) -> CCode:
    """The CCode running `call` (kernels.c's, for `dtype`) on the `operands` taken as
    contiguous arrays (their _owned names)."""
    return CCode(body=_call([(name, _CONTIGUOUS) for name in operands], call, fail),
                 support=(_support(dtype),), openmp=True)


def _matrix(format: str, data, indices, indptr, shape):
    matrix_class = scipy.sparse.csr_matrix if format == "csr" else scipy.sparse.csc_matrix
    return matrix_class((data, indices, indptr), shape=tuple(int(s) for s in shape))


class SparseDenseProduct(Op):
    """S @ y, S (format) given by data, indices, indptr (int32) and shape (int64), y dense
    (of data's dtype)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, data, indices, indptr, shape, y):
        inputs = [as_tensor_variable(v, op="SparseDenseProduct")
                  for v in (data, indices, indptr, shape, y)]
        return Apply(self, inputs, [tensor_type(inputs[4].type.dtype, (None, None))()])

    def perform(self, node, inputs, output_storage):
        data, indices, indptr, shape, y = inputs
        if y.ndim != 2 or y.shape[0] != shape[1]:
            raise ValueError(f"structured_dot: the shapes {tuple(shape)} and {y.shape} do not "
                             f"multiply")
        output_storage[0][0] = np.asarray(_matrix(self.format, data, indices, indptr, shape)
                                          @ y, dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        dtype = node.outputs[0].type.dtype
        if dtype not in _SUBSTITUTIONS or node.inputs[0].type.dtype != dtype:
            return None
        data, indices, indptr, shape, y = names.inputs
        call = (f"sympile_sparse_dense_{dtype}({data}_owned, {indices}_owned, "
                f"{indptr}_owned, {shape}, {y}_owned, &{names.outputs[0]}, "
                f"{int(self.format == 'csr')})")
        return _kernel_code(dtype, (data, indices, indptr, y), call, names.fail)

    def L_op(self, inputs, outputs, output_grads):
        raise MethodNotDefined("SparseDenseProduct is made after differentiation")


class SparseDenseAccumulate(Op):
    """z + alpha * (S @ y), S (format) given by data, indices, indptr (int32) and shape
    (int64), z, y and the 0-d alpha dense, all of z's dtype."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, z, alpha, data, indices, indptr, shape, y):
        inputs = [as_tensor_variable(v, op=type(self).__name__)
                  for v in (z, alpha, data, indices, indptr, shape, y)]
        dtype = inputs[0].type.dtype
        if inputs[0].type.ndim != 2 or inputs[1].type.ndim != 0 or any(
                inputs[i].type.dtype != dtype for i in (1, 2, 6)):
            raise TypeError(f"{type(self).__name__}: z must be a matrix, alpha a scalar, and "
                            f"alpha, data and y of z's dtype {dtype}")
        return Apply(self, inputs, [inputs[0].type()])

    def perform(self, node, inputs, output_storage):
        z, alpha, data, indices, indptr, shape, y = inputs
        if y.ndim != 2 or y.shape[0] != shape[1] or z.shape != (shape[0], y.shape[1]):
            raise ValueError(f"z + alpha structured_dot: the shapes {z.shape}, "
                             f"{tuple(shape)} and {y.shape} do not fit")
        result = z if self.destroy_map else z.copy()
        result += alpha * (_matrix(self.format, data, indices, indptr, shape) @ y)
        output_storage[0][0] = result

    def c_code(self, node, names):
        dtype = node.outputs[0].type.dtype
        if dtype not in _SUBSTITUTIONS:
            return None
        z, alpha, data, indices, indptr, shape, y = names.inputs
        # z as it is: the inplace form writes over the caller's array.
        call = (f"sympile_sparse_accumulate_{dtype}({z}, {alpha}, {data}_owned, "
                f"{indices}_owned, {indptr}_owned, {shape}, {y}_owned, &{names.outputs[0]}, "
                f"{int(self.format == 'csr')}, {int(bool(self.destroy_map))})")
        return _kernel_code(dtype, (data, indices, indptr, y), call, names.fail)

    def L_op(self, inputs, outputs, output_grads):
        raise MethodNotDefined(f"{type(self).__name__} is made after differentiation")


class SparseDenseAccumulateInplace(SparseDenseAccumulate):
    """SparseDenseAccumulate written over z (input 0)."""

    destroy_map = {0: [0]}


register_inplace_form(SparseDenseAccumulate, SparseDenseAccumulateInplace)


class SampledProducts(Op):
    """x[i] · y[j] at each stored position (i, j) of the pattern (indices, indptr) of a
    matrix of `format` (times its data when scaled): one value per stored position."""

    __props__ = ("format", "scaled")

    def __init__(self, format: str, scaled: bool):
        self.format, self.scaled = format, bool(scaled)

    def make_node(self, x, y, data, indices, indptr):
        inputs = [as_tensor_variable(v, op="SampledProducts")
                  for v in (x, y, data, indices, indptr)]
        dtype = np.result_type(inputs[0].type.dtype, inputs[1].type.dtype).name
        return Apply(self, inputs, [tensor_type(dtype, (None,))()])

    def perform(self, node, inputs, output_storage):
        x, y, data, indices, indptr = inputs
        pattern = _matrix(self.format, np.ones(len(indices)), indices, indptr,
                          (x.shape[0], y.shape[0]))
        coo = pattern.tocoo()
        products = np.einsum("ij,ij->i", x[coo.row], y[coo.col])
        if self.scaled:
            products = products * data
        output_storage[0][0] = np.asarray(products, dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        dtype = node.outputs[0].type.dtype
        if dtype not in _SUBSTITUTIONS or any(v.type.dtype != dtype
                                              for v in node.inputs[:3]):
            return None
        x, y, data, indices, indptr = names.inputs
        call = (f"sympile_sampling_dot_{dtype}({x}_owned, {y}_owned, {data}_owned, "
                f"{indices}_owned, {indptr}_owned, &{names.outputs[0]}, "
                f"{int(self.format == 'csr')}, {int(self.scaled)})")
        return _kernel_code(dtype, (x, y, data, indices, indptr), call, names.fail)

    def L_op(self, inputs, outputs, output_grads):
        raise MethodNotDefined("SampledProducts is made after differentiation")
