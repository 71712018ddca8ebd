"""What the linear-algebra ops share (the modules of sympile.tensor.linalg): input checks,
the matrix transpose of stacks, output types, the map of a gradient onto the triangle a
decomposition reads, and the calculus of a solve.

Every op takes a matrix or a stack of them (leading axes are a batch, as in numpy and
scipy) and runs numpy/scipy in perform; Cholesky, Solve, SolveTriangular, MatrixInverse,
Det, SLogDet, Eigh and Eigvalsh also have C code calling LAPACK (lapack_c.py, lapack.c).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import grad_not_implemented
from sympile.graph.op import Op
from sympile.tensor.basic import eye, zeros_like
from sympile.tensor.blas.basic import matmul
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.extra_ops import tril, triu
from sympile.tensor.shape import expand_dims
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["NoGradientOp", "as_columns", "check_square", "float_matrices", "from_columns",
           "matrix_transpose", "mm", "outer_grad", "read_triangle_grad", "solve_node",
           "stack_of", "symmetric_from_triangle", "tangent_right_side"]


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


def stack_of(x: Variable, drop: int = 0, dtype: str | None = None) -> Variable:
    """A new variable for a stack like x's, with `drop` trailing axes fewer (lengths
    unknown), of `dtype` (x's by default): an op's output type."""
    return tensor_type(dtype or x.type.dtype, (None,) * (x.type.ndim - drop))()


# The calculus of x = a⁻¹ b that every solver shares (b a stack of vectors or matrices).

def as_columns(b: Variable, vector: bool) -> Variable:
    return expand_dims(b, b.type.ndim) if vector else b


def from_columns(x: Variable, vector: bool) -> Variable:
    return x[..., 0] if vector else x


def tangent_right_side(x: Variable, a: Variable, b: Variable, d: Variable | None,
                        db: Variable | None) -> Variable:
    """db - d x: solved with the matrix, the tangent of x = a⁻¹ b along (d, db) (d the
    tangent of the matrix as the solve reads it; None where a tangent is zero)."""
    vector = b.type.ndim == a.type.ndim - 1
    right = zeros_like(x) if db is None else db
    if d is not None:
        right = right - from_columns(mm(d, as_columns(x, vector)), vector)
    return right


def outer_grad(gb: Variable, x: Variable, vector: bool) -> Variable:
    """-gb xᵀ for matrices, -outer(gb, x) for vectors (both stacked)."""
    return -mm(as_columns(gb, vector), matrix_transpose(as_columns(x, vector)))

