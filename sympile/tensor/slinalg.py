"""scipy.linalg's decompositions and solvers (PyTensor's pytensor.tensor.slinalg): cholesky,
solve, solve_triangular, cho_solve, eigvalsh, each over a matrix or a stack of them.

Derivatives (L_op and R_op)::

  cholesky          A = L Lᵀ: Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ (Φ: the lower triangle, diagonal halved),
                    dL = L Φ(L⁻¹ dA L⁻ᵀ); A's lower triangle is what is read
  solve             x = A⁻¹ b: b̄ = A⁻ᵀ x̄, Ā = -b̄ xᵀ; dx = A⁻¹ (db - dA x)
  solve_triangular  the same, kept on A's triangle (and off its diagonal when unit_diagonal)
  cho_solve         two solve_triangular, differentiated through them
  eigvalsh          Ā = V diag(w̄) Vᵀ, dw = diag(Vᵀ dA V); A's lower triangle is read
  expm              by the Fréchet derivative L(A, E) (scipy.linalg.expm_frechet):
                    Ā = L(Aᵀ, Ē), dX = L(A, dA)
  block_diag        built from set_subtensor, differentiable through it
  solve_continuous_lyapunov
                    A X + X Aᵀ = Q: Q̄ = S = lyap(Aᵀ, X̄), Ā = -(S Xᵀ + Sᵀ X);
                    dX = lyap(A, dQ - dA X - X dAᵀ)
  lu, lu_factor, lu_solve
                    A = P L U: Ā = P L⁻ᵀ [tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)] U⁻ᵀ; lu_solve as
                    solve, its Ā reaching the packed factors through A = P L U

Where an op reads one triangle of a symmetric matrix, its gradient lies on that triangle
(linalg_common.read_triangle_grad), so that it matches finite differences of every entry.

Errors are numpy's and scipy's (LinAlgError for a matrix that is singular or not positive
definite), named with the op, the input shapes and the user's line by the run-time error
handling. perform runs numpy/scipy; cholesky, solve, solve_triangular and eigvalsh also
have C code calling LAPACK (linalg_c.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import eye, zeros_like
from sympile.tensor.extra_ops import tril, triu
from sympile.tensor.linalg_c import cholesky_c_code, eigh_c_code, solve_c_code
from sympile.tensor.linalg_common import (
    check_square,
    float_matrices,
    matrix_transpose,
    mm,
    read_triangle_grad,
    solve_node,
    symmetric_from_triangle,
)
from sympile.tensor.shape import expand_dims
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Cholesky", "Eigvalsh", "Expm", "ExpmFrechet", "LU", "Solve",
           "SolveContinuousLyapunov", "SolveTriangular", "block_diag", "cho_solve", "cholesky",
           "eigvalsh", "expm", "lu", "lu_factor", "lu_solve", "solve", "solve_continuous_lyapunov",
           "solve_triangular"]


def _like(x: Variable, dtype: str | None = None) -> Variable:
    return tensor_type(dtype or x.type.dtype, (None,) * x.type.ndim)()


class Cholesky(Op):
    """The Cholesky factor of a positive definite matrix: lower (L, A = L Lᵀ) or upper
    (U = Lᵀ). Reads A's lower triangle. on_error='nan' (PyTensor's): a matrix that is not
    positive definite gives a factor of NaNs instead of a LinAlgError (each matrix of a
    stack on its own)."""

    __props__ = ("lower", "on_error")

    def __init__(self, lower: bool = True, on_error: str = "raise"):
        if on_error not in ("raise", "nan"):
            raise ValueError(f"cholesky: on_error must be 'raise' or 'nan', got {on_error!r}")
        self.lower = bool(lower)
        self.on_error = on_error

    def make_node(self, a):
        a = float_matrices("cholesky", a)
        check_square("cholesky", a)
        return Apply(self, [a], [_like(a)])

    def perform(self, node, inputs, output_storage):
        try:
            factor = np.linalg.cholesky(inputs[0])
        except np.linalg.LinAlgError:
            if self.on_error == "raise":
                raise
            factor = self._factor_or_nan(inputs[0])
        output_storage[0][0] = factor if self.lower else np.swapaxes(factor, -1, -2).copy()

    def c_code(self, node, names):
        return cholesky_c_code(self, node, names)

    @staticmethod
    def _factor_or_nan(a: np.ndarray) -> np.ndarray:
        factor = np.empty_like(a)
        for index in np.ndindex(*a.shape[:-2]):
            try:
                factor[index] = np.linalg.cholesky(a[index])
            except np.linalg.LinAlgError:
                factor[index] = np.nan
        return factor

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def _lower_factor(self, output):
        return output if self.lower else matrix_transpose(output)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        L = self._lower_factor(outputs[0])
        g = g if self.lower else matrix_transpose(g)
        solve_upper = SolveTriangular(lower=False)
        inner = _phi(mm(matrix_transpose(L), g))
        # L⁻ᵀ inner L⁻¹ by two triangular solves.
        left = solve_upper(matrix_transpose(L), inner)
        symmetric = matrix_transpose(solve_upper(matrix_transpose(L), matrix_transpose(left)))
        return [read_triangle_grad(symmetric, lower=True)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        L = self._lower_factor(self(inputs[0]))
        dA = symmetric_from_triangle(eval_points[0], lower=True)
        inner = solve_triangular(L, matrix_transpose(
            solve_triangular(L, matrix_transpose(dA), lower=True)), lower=True)
        dL = mm(L, _phi(inner))
        return [dL if self.lower else matrix_transpose(dL)]


def _phi(x: Variable) -> Variable:
    """The lower triangle of x with its diagonal halved."""
    n = x.shape[-1]
    return tril(x) - 0.5 * x * eye(n, dtype=x.type.dtype)


def cholesky(a: Any, lower: bool = True, on_error: str = "raise") -> Variable:
    """scipy.linalg.cholesky(a, lower): L with A = L Lᵀ (lower) or its transpose;
    on_error='nan' gives NaNs for a matrix that is not positive definite."""
    return Cholesky(lower, on_error)(a)


def _as_columns(b: Variable, vector: bool) -> Variable:
    return expand_dims(b, b.type.ndim) if vector else b


def _from_columns(x: Variable, vector: bool) -> Variable:
    return x[..., 0] if vector else x


def _tangent_right_side(x: Variable, a: Variable, b: Variable, d: Variable | None,
                        db: Variable | None) -> Variable:
    """db - d x: solved with the matrix, the tangent of x = a⁻¹ b along (d, db) (d the
    tangent of the matrix as the solve reads it; None where a tangent is zero)."""
    vector = b.type.ndim == a.type.ndim - 1
    right = zeros_like(x) if db is None else db
    if d is not None:
        right = right - _from_columns(mm(d, _as_columns(x, vector)), vector)
    return right


def _outer_grad(gb: Variable, x: Variable, vector: bool) -> Variable:
    """-gb xᵀ for matrices, -outer(gb, x) for vectors (both stacked)."""
    return -mm(_as_columns(gb, vector), matrix_transpose(_as_columns(x, vector)))


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
        ga = _outer_grad(gb, outputs[0], vector)
        if self.assume_a != "gen":
            ga = read_triangle_grad(ga, self.lower)
        return [ga, gb]

    def R_op(self, inputs, eval_points):
        a, b = inputs
        da, db = eval_points
        if da is None and db is None:
            return [None]
        d = None if da is None else self._effective(da)
        return [solve(self._effective(a), _tangent_right_side(self(a, b), a, b, d, db))]


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
        ga = _outer_grad(gb, x, vector) if self.trans == 0 else \
            matrix_transpose(_outer_grad(gb, x, vector))
        return [self._triangle(ga), gb]

    def R_op(self, inputs, eval_points):
        a, b = inputs
        da, db = eval_points
        if da is None and db is None:
            return [None]
        d = None
        if da is not None:
            d = self._triangle(da) if self.trans == 0 else matrix_transpose(self._triangle(da))
        return [self(a, _tangent_right_side(self(a, b), a, b, d, db))]


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


class Eigvalsh(Op):
    """The eigenvalues of a symmetric matrix (its lower triangle read), ascending."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("eigvalsh", a)
        check_square("eigvalsh", a)
        return Apply(self, [a], [tensor_type(a.type.dtype, (None,) * (a.type.ndim - 1))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.linalg.eigvalsh(inputs[0], UPLO="L").astype(
            node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return eigh_c_code(node, names, lower=True)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:-1]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        from sympile.tensor.nlinalg import eigh
        _, v = eigh(inputs[0])
        symmetric = mm(v * expand_dims(g, g.type.ndim - 1), matrix_transpose(v))
        return [read_triangle_grad(symmetric, lower=True)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        from sympile.tensor.nlinalg import eigh
        _, v = eigh(inputs[0])
        da = symmetric_from_triangle(eval_points[0], lower=True)
        return [(v * mm(da, v)).sum(axis=-2)]


def eigvalsh(a: Any, b: Any = None) -> Variable:
    """scipy.linalg.eigvalsh(a): a symmetric matrix's eigenvalues (b, the generalized
    problem, is not supported)."""
    if b is not None:
        raise NotImplementedError("eigvalsh: the generalized problem (b) is not supported; "
                                  "use eigvalsh(a)")
    return Eigvalsh()(a)


class ExpmFrechet(Op):
    """L(A, E): the Fréchet derivative of expm at A in the direction E (no derivative of
    its own)."""

    __props__ = ()

    def make_node(self, a, e):
        a = float_matrices("expm_frechet", a)
        e = float_matrices("expm_frechet", e, "e")
        return Apply(self, [a, e], [_like(a)])

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
        return Apply(self, [a], [_like(a)])

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


def _unit_lower(lu: Variable) -> Variable:
    """L of packed LU factors: the strict lower triangle with ones on the diagonal."""
    return tril(lu, -1) + eye(lu.shape[-1], dtype=lu.type.dtype)


def _lu_factor_grad(lower: Variable, upper: Variable, gl: Variable | None,
                    gu: Variable | None) -> Variable:
    """Pᵀ Ā for A = P L U from L̄ and Ū (None: zero): L⁻ᵀ [tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)] U⁻ᵀ."""
    middle = zeros_like(lower)
    if gl is not None:
        middle = middle + tril(mm(matrix_transpose(lower), gl), -1)
    if gu is not None:
        middle = middle + triu(mm(gu, matrix_transpose(upper)))
    left = solve_triangular(lower, middle, lower=True, trans=1, unit_diagonal=True)
    # left U⁻ᵀ = (U⁻¹ leftᵀ)ᵀ
    return matrix_transpose(solve_triangular(upper, matrix_transpose(left)))


def _lu_factor_tangent(lower: Variable, upper: Variable, pt_da: Variable):
    """(dL, dU) for A = P L U along dA, from Pᵀ dA: F = L⁻¹ Pᵀ dA U⁻¹,
    dL = L tril(F, -1), dU = triu(F) U."""
    left = solve_triangular(lower, pt_da, lower=True, unit_diagonal=True)
    f = matrix_transpose(solve_triangular(upper, matrix_transpose(left), trans=1))
    return mm(lower, tril(f, -1)), mm(triu(f), upper)


class LU(Op):
    """scipy.linalg.lu: [p, l, u] with a = p l u (permute_l: [p l, u]). Differentiable
    for square a (p is piecewise constant): Ā = P L⁻ᵀ [tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)] U⁻ᵀ,
    and with F = L⁻¹ Pᵀ dA U⁻¹: dL = L tril(F, -1), dU = triu(F) U."""

    __props__ = ("permute_l",)

    def __init__(self, permute_l: bool = False):
        self.permute_l = bool(permute_l)

    def make_node(self, a):
        a = float_matrices("lu", a)
        count = 2 if self.permute_l else 3
        return Apply(self, [a], [_like(a) for _ in range(count)])

    def perform(self, node, inputs, output_storage):
        result = scipy.linalg.lu(inputs[0], permute_l=self.permute_l, check_finite=False)
        for cell, value, output in zip(output_storage, result, node.outputs):
            cell[0] = np.asarray(value, dtype=output.type.dtype)

    def _check_square(self, a: Variable) -> None:
        rows, cols = a.type.shape[-2:]
        if rows is not None and cols is not None and rows != cols:
            raise ValueError(f"lu: the derivative is for square matrices, got {a.type}")

    def L_op(self, inputs, outputs, output_grads):
        a = inputs[0]
        if all(is_disconnected(g) for g in output_grads):
            return [disconnected_type()]
        self._check_square(a)
        p, lower, upper = LU()(a) if self.permute_l else outputs
        if self.permute_l:
            gpl, gu = output_grads
            gl = None if is_disconnected(gpl) else mm(matrix_transpose(p), gpl)
        else:
            _, gl, gu = output_grads
            gl = None if is_disconnected(gl) else gl
        gu = None if is_disconnected(gu) else gu
        return [mm(p, _lu_factor_grad(lower, upper, gl, gu))]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None] * (2 if self.permute_l else 3)
        a = inputs[0]
        self._check_square(a)
        p, lower, upper = LU()(a)
        dl, du = _lu_factor_tangent(lower, upper, mm(matrix_transpose(p), eval_points[0]))
        if self.permute_l:
            return [mm(p, dl), du]
        return [zeros_like(p), dl, du]


def lu(a: Any, permute_l: bool = False):
    """scipy.linalg.lu(a, permute_l) (over stacks): [p, l, u], or [p l, u]."""
    return LU(permute_l)(a)


def block_diag(*matrices: Any) -> Variable:
    """scipy.linalg.block_diag of matrices: each on the diagonal of a zero matrix."""
    from sympile.tensor.basic import zeros
    from sympile.tensor.subtensor import set_subtensor
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


class SolveContinuousLyapunov(Op):
    """X with A X + X Aᵀ = Q (scipy.linalg.solve_continuous_lyapunov), over stacks."""

    __props__ = ()

    def make_node(self, a, q):
        a = float_matrices("solve_continuous_lyapunov", a)
        q = float_matrices("solve_continuous_lyapunov", q, "q")
        check_square("solve_continuous_lyapunov", a)
        dtype = np.result_type(a.type.dtype, q.type.dtype).name
        return Apply(self, [a, q], [_like(q, dtype)])

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


class PivotToPermutation(Op):
    """The row order of lu_factor's pivots (LAPACK's row swaps, in turn): perm with
    a[perm] = L U, so that Pᵀ x = x[perm]; or (inverse) its inverse, P x = x[inverse]."""

    __props__ = ("inverse",)

    def __init__(self, inverse: bool = False):
        self.inverse = bool(inverse)

    def make_node(self, piv):
        piv = as_tensor_variable(piv, op="pivot_to_permutation", argument="piv")
        if piv.type.ndim != 1 or not piv.type.dtype.startswith("int"):
            raise TypeError(f"pivot_to_permutation: piv must be an integer vector, got "
                            f"{piv.type}")
        return Apply(self, [piv], [tensor_type("int64", (None,))()])

    def perform(self, node, inputs, output_storage):
        (piv,) = inputs
        perm = np.arange(len(piv))
        for row, other in enumerate(piv):
            perm[row], perm[other] = perm[other], perm[row]
        output_storage[0][0] = np.argsort(perm) if self.inverse else perm

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]


class LUFactor(Op):
    """scipy.linalg.lu_factor: [lu, piv] (one square matrix): L and U packed in one matrix
    (L's unit diagonal implied), and LAPACK's row swaps. Differentiable as lu is."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("lu_factor", a)
        check_square("lu_factor", a)
        if a.type.ndim != 2:
            raise ValueError(f"lu_factor: a must be one matrix, got {a.type}")
        return Apply(self, [a], [_like(a), tensor_type("int32", (None,))()])

    def perform(self, node, inputs, output_storage):
        factors, pivots = scipy.linalg.lu_factor(inputs[0], check_finite=False)
        output_storage[0][0] = np.asarray(factors, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(pivots, dtype="int32")

    def L_op(self, inputs, outputs, output_grads):
        g = output_grads[0]
        if is_disconnected(g):
            return [disconnected_type()]
        factors, piv = outputs
        pt_grad = _lu_factor_grad(_unit_lower(factors), triu(factors), tril(g, -1), triu(g))
        return [pt_grad[PivotToPermutation(inverse=True)(piv)]]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None, None]
        factors, piv = self(inputs[0])
        pt_da = eval_points[0][PivotToPermutation()(piv)]
        dl, du = _lu_factor_tangent(_unit_lower(factors), triu(factors), pt_da)
        return [dl + du, zeros_like(piv)]


def lu_factor(a: Any) -> list[Variable]:
    """scipy.linalg.lu_factor(a): [lu, piv]; use with lu_solve."""
    return LUFactor()(a)


class LUSolve(Op):
    """scipy.linalg.lu_solve((lu, piv), b, trans): x with A x = b (trans=0) or Aᵀ x = b,
    A = P L U from lu_factor's output (one matrix).

    With b̄ the solve of x̄ by the other trans, Ā = -b̄ xᵀ (trans=0) or -x b̄ᵀ, reaching the
    packed factors as L̄ = Pᵀ Ā Uᵀ (below the diagonal) and Ū = Lᵀ Pᵀ Ā (on and above it);
    dx = A⁻¹ (db - dA x) (Aᵀ for trans=1), dA = P (dL U + L dU)."""

    __props__ = ("trans",)

    def __init__(self, trans: int = 0):
        if trans not in (0, 1):
            raise ValueError(f"lu_solve: trans must be 0 or 1, got {trans!r}")
        self.trans = trans

    def make_node(self, lu, piv, b):
        node = solve_node(self, "lu_solve", lu, b)  # checks and the output's type
        if node.inputs[0].type.ndim != 2:
            raise ValueError(f"lu_solve: lu must be one matrix (lu_factor's), got "
                             f"{node.inputs[0].type}")
        piv = as_tensor_variable(piv, op="lu_solve", argument="piv")
        return Apply(self, [node.inputs[0], piv, node.inputs[1]],
                     [node.outputs[0].type()])

    def perform(self, node, inputs, output_storage):
        lu, piv, b = inputs
        output_storage[0][0] = np.asarray(
            scipy.linalg.lu_solve((lu, piv), b, trans=self.trans, check_finite=False),
            dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[2]]

    def L_op(self, inputs, outputs, output_grads):
        factors, piv, b = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 3
        vector = b.type.ndim == 1
        x = outputs[0]
        gb = LUSolve(1 - self.trans)(factors, piv, g)
        ga = _outer_grad(gb, x, vector)
        if self.trans:
            ga = matrix_transpose(ga)
        pt_ga = ga[PivotToPermutation()(piv)]
        lower, upper = _unit_lower(factors), triu(factors)
        g_factors = tril(mm(pt_ga, matrix_transpose(upper)), -1) + \
            triu(mm(matrix_transpose(lower), pt_ga))
        return [g_factors, disconnected_type(), gb]

    def R_op(self, inputs, eval_points):
        factors, piv, b = inputs
        d_factors, _, db = eval_points
        if d_factors is None and db is None:
            return [None]
        x = self(factors, piv, b)
        d = None
        if d_factors is not None:
            lower, upper = _unit_lower(factors), triu(factors)
            dl, du = tril(d_factors, -1), triu(d_factors)
            # dA = P (dL U + L dU): P reorders rows by the inverse permutation
            d = (mm(dl, upper) + mm(lower, du))[PivotToPermutation(inverse=True)(piv)]
            if self.trans:
                d = matrix_transpose(d)
        return [self(factors, piv, _tangent_right_side(x, factors, b, d, db))]


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0) -> Variable:
    """scipy.linalg.lu_solve((lu, piv), b, trans)."""
    lu, piv = lu_and_piv
    return LUSolve(trans)(lu, piv, b)
