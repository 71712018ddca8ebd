"""Functions of matrices: matrix_inverse, pinv, expm, matrix_power, and the products and
assemblies matrix_dot, kron, block_diag, tensorinv, each over a matrix or a stack of them.

Derivatives (L_op and R_op)::

  matrix_inverse  X = A⁻¹: Ā = -Xᵀ X̄ Xᵀ, dX = -X dA X
  pinv            where the rank is constant (PInv's docstring)
  expm            by the Fréchet derivative L(A, E) (scipy.linalg.expm_frechet):
                  Ā = L(Aᵀ, Ē), dX = L(A, dA)
  the others      built from products, set_subtensor and matrix_inverse, differentiable
                  through them

perform runs numpy/scipy; matrix_inverse also has C code calling LAPACK (lapack_c.py).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np
import scipy.linalg

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import eye, zeros, zeros_like
from sympile.tensor.linalg.common import (
    check_square,
    float_matrices,
    matrix_transpose,
    mm,
    stack_of,
)
from sympile.tensor.linalg.lapack_c import lu_reduction_c_code
from sympile.tensor.subtensor import set_subtensor
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Expm", "ExpmFrechet", "MatrixInverse", "PInv", "block_diag", "expm", "kron",
           "matrix_dot", "matrix_inverse", "matrix_power", "pinv", "tensorinv"]


class MatrixInverse(Op):
    """The inverse of a square matrix (numpy.linalg.inv)."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("matrix_inverse", a)
        check_square("matrix_inverse", a)
        return Apply(self, [a], [stack_of(a, 0)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.linalg.inv(inputs[0])

    def c_code(self, node, names):
        return lu_reduction_c_code("inverse", node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        xt = matrix_transpose(outputs[0])
        return [-mm(mm(xt, g), xt)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        x = self(inputs[0])
        return [-mm(mm(x, eval_points[0]), x)]


def matrix_inverse(a: Any) -> Variable:
    """numpy.linalg.inv(a)."""
    return MatrixInverse()(a)


class PInv(Op):
    """The Moore-Penrose pseudo-inverse (numpy.linalg.pinv). Where the rank is constant,
    with X = A⁺:
      dX = -X dA X + X Xᵀ dAᵀ (I - A X) + (I - X A) dAᵀ Xᵀ X,
      Ā = -Xᵀ X̄ Xᵀ + (I - A X) X̄ᵀ X Xᵀ + Xᵀ X X̄ᵀ (I - X A)."""

    __props__ = ("hermitian",)

    def __init__(self, hermitian: bool = False):
        self.hermitian = bool(hermitian)

    def make_node(self, a):
        a = float_matrices("pinv", a)
        return Apply(self, [a], [stack_of(a, 0)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.linalg.pinv(inputs[0], hermitian=self.hermitian).astype(
            node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        shape = input_shapes[0]
        return [(*shape[:-2], shape[-1], shape[-2])]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        a, x = inputs[0], outputs[0]
        xt, gt = matrix_transpose(x), matrix_transpose(g)
        # (I - A X) Y and Y (I - X A) without forming I
        left = gt - mm(a, mm(x, gt))
        right = gt - mm(mm(gt, x), a)
        return [-mm(mm(xt, g), xt) + mm(mm(left, x), xt) + mm(mm(xt, x), right)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        a, da = inputs[0], eval_points[0]
        x = self(a)
        xt, dat = matrix_transpose(x), matrix_transpose(da)
        return [-mm(mm(x, da), x) + mm(mm(x, xt), dat - mm(mm(dat, a), x))
                + mm(dat - mm(mm(x, a), dat), mm(xt, x))]


def pinv(a: Any, hermitian: bool = False) -> Variable:
    """numpy.linalg.pinv(a, hermitian=hermitian)."""
    return PInv(hermitian)(a)


def matrix_power(a: Any, n: int) -> Variable:
    """numpy.linalg.matrix_power(a, n) for an int n (negative: of the inverse), by repeated
    squaring; differentiable through its products."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"matrix_power: n must be an int, got {n!r}")
    a = float_matrices("matrix_power", a)
    check_square("matrix_power", a)
    if n < 0:
        a, n = matrix_inverse(a), -n
    result = None
    square = a
    while True:
        if n & 1:
            result = square if result is None else mm(result, square)
        n >>= 1
        if not n:
            break
        square = mm(square, square)
    if result is None:
        return zeros_like(a) + eye(a.shape[-1], dtype=a.type.dtype)
    return result


def matrix_dot(*matrices: Any) -> Variable:
    """The product of the matrices, left to right (PyTensor's matrix_dot)."""
    if not matrices:
        raise TypeError("matrix_dot: give at least one matrix")
    return reduce(mm, [as_tensor_variable(m, op="matrix_dot") for m in matrices])


def kron(a: Any, b: Any) -> Variable:
    """numpy.kron of tensors of any ranks (the lower-ranked one given leading axes of length
    1), from their outer product; differentiable."""
    a = as_tensor_variable(a, op="kron", argument="a")
    b = as_tensor_variable(b, op="kron", argument="b")
    ndim = max(a.type.ndim, b.type.ndim)
    a = a.dimshuffle(*("x",) * (ndim - a.type.ndim), *range(a.type.ndim))
    b = b.dimshuffle(*("x",) * (ndim - b.type.ndim), *range(b.type.ndim))
    # (a0, b0, a1, b1, ...), each pair then merged.
    product = a.dimshuffle(*[entry for axis in range(ndim) for entry in (axis, "x")]) * \
        b.dimshuffle(*[entry for axis in range(ndim) for entry in ("x", axis)])
    return product.reshape([a.shape[axis] * b.shape[axis] for axis in range(ndim)], ndim=ndim)


def tensorinv(a: Any, ind: int = 2) -> Variable:
    """numpy.linalg.tensorinv(a, ind): the inverse of a as a matrix of its first `ind` axes
    by the others, shaped back; differentiable through matrix_inverse."""
    a = as_tensor_variable(a, op="tensorinv")
    if not 0 < ind < a.type.ndim:
        raise ValueError(f"tensorinv: ind must be between 1 and {a.type.ndim - 1}, got {ind}")
    rows = [a.shape[i] for i in range(ind)]
    cols = [a.shape[i] for i in range(ind, a.type.ndim)]
    square = a.reshape((reduce(lambda x, y: x * y, rows), reduce(lambda x, y: x * y, cols)),
                       ndim=2)
    return matrix_inverse(square).reshape((*cols, *rows), ndim=a.type.ndim)


class ExpmFrechet(Op):
    """L(A, E): the Fréchet derivative of expm at A in the direction E (no derivative of
    its own)."""

    __props__ = ()

    def make_node(self, a, e):
        a = float_matrices("expm_frechet", a)
        e = float_matrices("expm_frechet", e, "e")
        return Apply(self, [a, e], [stack_of(a)])

    def perform(self, node, inputs, output_storage):
        a, e = inputs
        batch = np.broadcast_shapes(a.shape[:-2], e.shape[:-2])
        a, e = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(e, batch + e.shape[-2:])
        result = np.empty(batch + a.shape[-2:], dtype=node.outputs[0].type.dtype)
        for index in np.ndindex(*batch):
            result[index] = scipy.linalg.expm_frechet(a[index], e[index],
                                                      compute_expm=False)
        output_storage[0][0] = result

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class Expm(Op):
    """The matrix exponential (scipy.linalg.expm)."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("expm", a)
        check_square("expm", a)
        return Apply(self, [a], [stack_of(a)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(scipy.linalg.expm(inputs[0]),
                                          dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        return [ExpmFrechet()(matrix_transpose(inputs[0]), g)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [ExpmFrechet()(inputs[0], eval_points[0])]


def expm(a: Any) -> Variable:
    """scipy.linalg.expm(a)."""
    return Expm()(a)


def block_diag(*matrices: Any) -> Variable:
    """scipy.linalg.block_diag of matrices: each on the diagonal of a zero matrix."""
    if not matrices:
        raise TypeError("block_diag: give at least one matrix")
    blocks = [as_tensor_variable(m, op="block_diag") for m in matrices]
    for index, block in enumerate(blocks):
        if block.type.ndim != 2:
            raise ValueError(f"block_diag: argument {index} must be a matrix, got {block.type}")
    rows = sum(block.shape[0] for block in blocks[1:]) + blocks[0].shape[0]
    cols = sum(block.shape[1] for block in blocks[1:]) + blocks[0].shape[1]
    dtype = np.result_type(*[block.type.dtype for block in blocks]).name
    result = zeros((rows, cols), dtype=dtype)
    row = col = 0
    for block in blocks:
        result = set_subtensor(result[row:row + block.shape[0], col:col + block.shape[1]],
                               block)
        row, col = row + block.shape[0], col + block.shape[1]
    return result

