"""What the linear-algebra ops share (sympile.tensor.nlinalg, slinalg): input checks, the
matrix transpose of stacks, and the map of a gradient onto the triangle a decomposition
reads.

Every op takes a matrix or a stack of them (leading axes are a batch, as in numpy and
scipy) and runs numpy/scipy in perform; Cholesky, Solve, SolveTriangular, MatrixInverse,
Det, SLogDet, Eigh and Eigvalsh also have C code calling LAPACK (linalg_c.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import grad_not_implemented
from sympile.graph.op import Op
from sympile.tensor.basic import eye
from sympile.tensor.blas.basic import matmul
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.extra_ops import tril, triu
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["NoGradientOp", "check_square", "float_matrices", "matrix_transpose",
           "read_triangle_grad", "solve_node", "symmetric_from_triangle"]


def float_matrices(who: str, x: Any, argument: str = "a") -> Variable:
    """`x` as a float tensor of at least 2 dimensions, else a clear error."""
    x = as_tensor_variable(x, op=who, argument=argument)
    if x.type.ndim < 2:
        raise ValueError(f"{who}: {argument} must be a matrix or a stack of matrices, got "
                         f"{x.type}")
    if x.type.dtype not in ("float32", "float64"):
        raise TypeError(f"{who}: {argument} must be float32 or float64, got {x.type.dtype}")
    return x


def check_square(who: str, x: Variable, argument: str = "a") -> None:
    rows, cols = x.type.shape[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"{who}: {argument} must be square, got {x.type}")


def matrix_transpose(x: Variable) -> Variable:
    """x with its last two axes swapped (each matrix of the stack transposed)."""
    ndim = x.type.ndim
    return DimShuffle(ndim, (*range(ndim - 2), ndim - 1, ndim - 2))(x)


def symmetric_from_triangle(x: Variable, lower: bool) -> Variable:
    """The symmetric matrix that reading only x's lower (upper) triangle means."""
    if lower:
        return tril(x) + matrix_transpose(tril(x, -1))
    return triu(x) + matrix_transpose(triu(x, 1))


def read_triangle_grad(gradient: Variable, lower: bool) -> Variable:
    """The gradient with respect to a matrix of which only the lower (upper) triangle is read
    as a symmetric one, from `gradient`, the gradient with respect to that symmetric
    matrix: off the diagonal both halves land on the triangle read."""
    both = gradient + matrix_transpose(gradient)
    n = gradient.shape[-1]
    diagonal = gradient * eye(n, dtype=gradient.type.dtype)
    return (tril(both) if lower else triu(both)) - diagonal


def mm(a: Variable, b: Variable) -> Variable:
    return matmul(a, b)


class NoGradientOp(Op):
    """A linear-algebra op whose derivative is not implemented yet (grad raises, naming
    it)."""

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, index, x) for index, x in enumerate(inputs)]


def solve_node(op: Op, who: str, a: Any, b: Any) -> Apply:
    """The node of a solve op: a square float matrix (stack) and b with as many axes
    (matrices of right-hand sides) or one fewer (vectors); the result is b's shape, in the
    dtype both promote to."""
    a = float_matrices(who, a)
    check_square(who, a)
    b = as_tensor_variable(b, op=who, argument="b")
    if b.type.ndim not in (a.type.ndim - 1, a.type.ndim):
        raise ValueError(f"{who}: b must have {a.type.ndim - 1} or {a.type.ndim} dimensions "
                         f"for a of {a.type}, got {b.type}")
    dtype = np.result_type(a.type.dtype, b.type.dtype, np.float32).name
    return Apply(op, [a, b], [tensor_type(dtype, (None,) * b.type.ndim)()])
