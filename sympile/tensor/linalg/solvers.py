"""Solvers (numpy.linalg's and scipy.linalg's): solve, solve_triangular, cho_solve, lstsq,
solve_continuous_lyapunov and tensorsolve, each over a matrix or a stack of them.

Derivatives (L_op and R_op)::

  solve             x = A⁻¹ b: b̄ = A⁻ᵀ x̄, Ā = -b̄ xᵀ; dx = A⁻¹ (db - dA x)
  solve_triangular  the same, kept on A's triangle (and off its diagonal when unit_diagonal)
  cho_solve         two solve_triangular, differentiated through them
  solve_continuous_lyapunov
                    A X + X Aᵀ = Q: Q̄ = S = lyap(Aᵀ, X̄), Ā = -(S Xᵀ + Sᵀ X);
                    dX = lyap(A, dQ - dA X - X dAᵀ)
  tensorsolve       through solve

lstsq has none (grad raises, naming the op). Errors are numpy's and scipy's (LinAlgError for
a singular matrix), named with the op, the input shapes and the user's line by the run-time
error handling. perform runs numpy/scipy; solve and solve_triangular also have C code
calling LAPACK (lapack_c.py).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np
import scipy.linalg

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import eye, zeros_like
from sympile.tensor.extra_ops import tril, triu
from sympile.tensor.linalg.common import (
    NoGradientOp,
    check_square,
    float_matrices,
    matrix_transpose,
    mm,
    outer_grad,
    read_triangle_grad,
    solve_node,
    stack_of,
    symmetric_from_triangle,
    tangent_right_side,
)
from sympile.tensor.linalg.lapack_c import solve_c_code
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Lstsq", "Solve", "SolveContinuousLyapunov", "SolveTriangular", "cho_solve", "lstsq",
           "solve", "solve_continuous_lyapunov", "solve_triangular", "tensorsolve"]


class Lstsq(NoGradientOp):
    """numpy.linalg.lstsq(a, b, rcond): [x, residuals, rank, singular values]."""

    __props__ = ("rcond",)

    def __init__(self, rcond: float | None = None):
        self.rcond = rcond

    def make_node(self, a, b):
        a = as_tensor_variable(a, op="lstsq", argument="a")
        b = as_tensor_variable(b, op="lstsq", argument="b")
        if a.type.ndim != 2 or b.type.ndim not in (1, 2):
            raise ValueError(f"lstsq: a must be a matrix and b a vector or matrix, got "
                             f"{a.type} and {b.type}")
        dtype = np.result_type(a.type.dtype, b.type.dtype, np.float32).name
        return Apply(self, [a, b], [tensor_type(dtype, (None,) * b.type.ndim)(),
                                    tensor_type(dtype, (None,))(),
                                    tensor_type("int64", ())(),
                                    tensor_type(dtype, (None,))()])

    def perform(self, node, inputs, output_storage):
        result = np.linalg.lstsq(inputs[0], inputs[1], rcond=self.rcond)
        for cell, value, output in zip(output_storage, result, node.outputs):
            cell[0] = np.asarray(value, dtype=output.type.dtype)


def lstsq(a: Any, b: Any, rcond: float | None = None) -> list[Variable]:
    """numpy.linalg.lstsq(a, b, rcond)."""
    return Lstsq(rcond)(a, b)


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Variable:
    """numpy.linalg.tensorsolve(a, b) (axes=None): x with tensordot(a, x, x.ndim) = b;
    differentiable through solve."""
    if axes is not None:
        raise NotImplementedError("tensorsolve: axes is not supported; move them first")
    a = as_tensor_variable(a, op="tensorsolve", argument="a")
    b = as_tensor_variable(b, op="tensorsolve", argument="b")
    unknown = a.type.ndim - b.type.ndim
    if unknown < 1:
        raise ValueError(f"tensorsolve: a must have more dimensions than b, got {a.type} and "
                         f"{b.type}")
    x_shape = [a.shape[i] for i in range(b.type.ndim, a.type.ndim)]
    rows = b.size if b.type.ndim else 1
    square = a.reshape((rows, reduce(lambda x, y: x * y, x_shape)), ndim=2)
    return solve(square, b.flatten()).reshape(x_shape, ndim=unknown)


def _same_batch(a: np.ndarray, b: np.ndarray) -> None:
    """The solves take one right-hand side per matrix: equal leading axes (as the C code)."""
    if a.shape[:-2] != b.shape[:a.ndim - 2]:
        raise ValueError(f"a and b must have the same batch shape, got {a.shape} and "
                         f"{b.shape}")


def _batched(function, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`function(a_i, b_i)` over the leading axes of a and b."""
    _same_batch(a, b)
    batch = a.shape[:-2]
    result = np.empty(batch + b.shape[len(batch):], dtype=np.result_type(a, b))
    for index in np.ndindex(*batch):
        result[index] = function(a[index], b[index])
    return result


class Solve(Op):
    """x with a x = b (scipy.linalg.solve): assume_a 'gen' (LU), 'sym' or 'pos' (reading
    the lower or upper triangle of a as the symmetric matrix)."""

    __props__ = ("assume_a", "lower")

    def __init__(self, assume_a: str = "gen", lower: bool = False):
        if assume_a not in ("gen", "sym", "pos"):
            raise ValueError(f"solve: assume_a must be 'gen', 'sym' or 'pos', got "
                             f"{assume_a!r}")
        self.assume_a = assume_a
        self.lower = bool(lower)

    def make_node(self, a, b):
        return solve_node(self, "solve", a, b)

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        vector = b.ndim == a.ndim - 1
        dtype = node.outputs[0].type.dtype
        _same_batch(a, b)
        if self.assume_a == "gen" and not vector:
            result = np.linalg.solve(a, b)
        elif self.assume_a == "gen":
            result = np.linalg.solve(a, b[..., None])[..., 0]
        else:
            result = _batched(lambda m, r: scipy.linalg.solve(
                m, r, assume_a=self.assume_a, lower=self.lower, check_finite=False), a, b)
        output_storage[0][0] = np.asarray(result, dtype=dtype)

    def c_code(self, node, names):
        return solve_c_code(node, names, self.assume_a, lower=self.lower)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def _effective(self, a: Variable) -> Variable:
        return a if self.assume_a == "gen" else symmetric_from_triangle(a, self.lower)

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type(), disconnected_type()]
        vector = b.type.ndim == a.type.ndim - 1
        transposed = matrix_transpose(self._effective(a))
        gb = solve(transposed, g)
        ga = outer_grad(gb, outputs[0], vector)
        if self.assume_a != "gen":
            ga = read_triangle_grad(ga, self.lower)
        return [ga, gb]

    def R_op(self, inputs, eval_points):
        a, b = inputs
        da, db = eval_points
        if da is None and db is None:
            return [None]
        d = None if da is None else self._effective(da)
        return [solve(self._effective(a), tangent_right_side(self(a, b), a, b, d, db))]


def solve(a: Any, b: Any, assume_a: str = "gen", lower: bool = False) -> Variable:
    """scipy.linalg.solve(a, b, assume_a, lower), over stacks as numpy.linalg.solve: b is a
    vector (stack) when it has one axis fewer than a."""
    return Solve(assume_a, lower)(a, b)


class SolveTriangular(Op):
    """x with a x = b (trans=0) or aᵀ x = b (trans=1) for triangular a (its lower or upper
    triangle; unit_diagonal: a's diagonal is taken as ones)."""

    __props__ = ("lower", "trans", "unit_diagonal")

    def __init__(self, lower: bool = False, trans: int | str = 0, unit_diagonal: bool = False):
        trans = {"N": 0, "T": 1, "C": 1}.get(trans, trans)
        if trans not in (0, 1):
            raise ValueError(f"solve_triangular: trans must be 0, 1, 'N', 'T' or 'C', got "
                             f"{trans!r}")
        self.lower, self.trans = bool(lower), int(trans)
        self.unit_diagonal = bool(unit_diagonal)

    def make_node(self, a, b):
        return solve_node(self, "solve_triangular", a, b)

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        result = _batched(lambda m, r: scipy.linalg.solve_triangular(
            m, r, trans=self.trans, lower=self.lower, unit_diagonal=self.unit_diagonal,
            check_finite=False), a, b)
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return solve_c_code(node, names, "triangular", lower=self.lower, trans=self.trans,
                            unit=self.unit_diagonal)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def _triangle(self, x: Variable) -> Variable:
        """x on the entries of a that are read."""
        offset = -1 if self.unit_diagonal else 0
        return tril(x, offset) if self.lower else triu(x, -offset)

    def _effective(self, a: Variable) -> Variable:
        """The matrix a stands for: its triangle, with ones on the diagonal if unit."""
        part = self._triangle(a)
        if self.unit_diagonal:
            part = part + eye(a.shape[-1], dtype=a.type.dtype)
        return part

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type(), disconnected_type()]
        vector = b.type.ndim == a.type.ndim - 1
        x = outputs[0]
        gb = SolveTriangular(self.lower, 1 - self.trans, self.unit_diagonal)(a, g)
        ga = outer_grad(gb, x, vector) if self.trans == 0 else \
            matrix_transpose(outer_grad(gb, x, vector))
        return [self._triangle(ga), gb]

    def R_op(self, inputs, eval_points):
        a, b = inputs
        da, db = eval_points
        if da is None and db is None:
            return [None]
        d = None
        if da is not None:
            d = self._triangle(da) if self.trans == 0 else matrix_transpose(self._triangle(da))
        return [self(a, tangent_right_side(self(a, b), a, b, d, db))]


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False) -> Variable:
    """scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal), over stacks."""
    return SolveTriangular(lower, trans, unit_diagonal)(a, b)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Variable:
    """scipy.linalg.cho_solve((c, lower), b): x with (c cᵀ) x = b for the Cholesky factor c
    (lower) or with (cᵀ c) x = b (upper): two triangular solves."""
    c, lower = c_and_lower
    if lower:
        return solve_triangular(c, solve_triangular(c, b, lower=True), lower=True, trans=1)
    return solve_triangular(c, solve_triangular(c, b, lower=False, trans=1), lower=False)


class SolveContinuousLyapunov(Op):
    """X with A X + X Aᵀ = Q (scipy.linalg.solve_continuous_lyapunov), over stacks."""

    __props__ = ()

    def make_node(self, a, q):
        a = float_matrices("solve_continuous_lyapunov", a)
        q = float_matrices("solve_continuous_lyapunov", q, "q")
        check_square("solve_continuous_lyapunov", a)
        dtype = np.result_type(a.type.dtype, q.type.dtype).name
        return Apply(self, [a, q], [stack_of(q, dtype=dtype)])

    def perform(self, node, inputs, output_storage):
        a, q = inputs
        batch = np.broadcast_shapes(a.shape[:-2], q.shape[:-2])
        a, q = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(q, batch + q.shape[-2:])
        result = np.empty(batch + q.shape[-2:], dtype=node.outputs[0].type.dtype)
        for index in np.ndindex(*batch):
            result[index] = scipy.linalg.solve_continuous_lyapunov(a[index], q[index])
        output_storage[0][0] = result

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def L_op(self, inputs, outputs, output_grads):
        a, _ = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type(), disconnected_type()]
        x = outputs[0]
        s = self(matrix_transpose(a), g)
        return [-(mm(s, matrix_transpose(x)) + mm(matrix_transpose(s), x)), s]

    def R_op(self, inputs, eval_points):
        a, q = inputs
        da, dq = eval_points
        if da is None and dq is None:
            return [None]
        x = self(a, q)
        right = zeros_like(x) if dq is None else dq
        if da is not None:
            right = right - mm(da, x) - mm(x, matrix_transpose(da))
        return [self(a, right)]


def solve_continuous_lyapunov(a: Any, q: Any) -> Variable:
    """scipy.linalg.solve_continuous_lyapunov(a, q): X with a X + X aᵀ = q."""
    return SolveContinuousLyapunov()(a, q)

