"""Decompositions (numpy.linalg's and scipy.linalg's): cholesky, eigh, eigvalsh, eig, svd,
qr, and the LU family (lu, lu_factor, lu_solve), each over a matrix or a stack of them.

Derivatives (L_op and R_op)::

  cholesky          A = L Lᵀ: Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ (Φ: the lower triangle, diagonal halved),
                    dL = L Φ(L⁻¹ dA L⁻ᵀ); A's lower triangle is what is read
  eigh              w, V of a symmetric A (its lower triangle read):
                    Ā = V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ with F_ij = 1 / (w_j - w_i) (i ≠ j),
                    dw = diag(Vᵀ dA V), dV = V (F ∘ (Vᵀ dA V)); distinct eigenvalues
  eigvalsh          Ā = V diag(w̄) Vᵀ, dw = diag(Vᵀ dA V); A's lower triangle is read
  svd               distinct nonzero singular values, vectors included (SVD's docstring)
  qr                A's leading min(m, n) columns of full rank (QR's docstring)
  lu, lu_factor, lu_solve
                    A = P L U: Ā = P L⁻ᵀ [tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)] U⁻ᵀ; lu_solve as
                    solve, its Ā reaching the packed factors through A = P L U

eig has none (grad raises, naming the op). Where an op reads one triangle of a symmetric
matrix, its gradient lies on that triangle (common.read_triangle_grad), so that it matches
finite differences of every entry. perform runs numpy/scipy; cholesky, eigh and eigvalsh
also have C code calling LAPACK (lapack_c.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import (
    NullType,
    disconnected_type,
    grad_not_implemented,
    is_disconnected,
)
from sympile.graph.op import Op
from sympile.tensor.basic import eye, join, zeros_like
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
from sympile.tensor.linalg.lapack_c import cholesky_c_code, eigh_c_code
from sympile.tensor.linalg.solvers import SolveTriangular, solve_triangular
from sympile.tensor.math import eq, minimum, switch
from sympile.tensor.shape import expand_dims
from sympile.tensor.type import tensor_type
from sympile.tensor.type_other import NoneTypeT
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Cholesky", "Eig", "Eigh", "Eigvalsh", "LU", "LUFactor", "LUSolve", "PivotToPermutation",
           "QR", "SVD", "cholesky", "eig", "eigh", "eigvalsh", "lu", "lu_factor", "lu_solve", "qr",
           "svd"]


class Eigh(Op):
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix
    (numpy.linalg.eigh, reading the triangle UPLO names)."""

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        self.UPLO = UPLO

    def make_node(self, a):
        a = float_matrices("eigh", a)
        check_square("eigh", a)
        return Apply(self, [a], [stack_of(a, 1), stack_of(a, 0)])

    def perform(self, node, inputs, output_storage):
        w, v = np.linalg.eigh(inputs[0], UPLO=self.UPLO)
        output_storage[0][0] = w
        output_storage[1][0] = v

    def c_code(self, node, names):
        return eigh_c_code(node, names, lower=self.UPLO == "L")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:-1], input_shapes[0]]

    def _gaps(self, w: Variable) -> Variable:
        """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
        differences = expand_dims(w, w.type.ndim - 1) - expand_dims(w, w.type.ndim)
        identity = eye(w.shape[-1], dtype=w.type.dtype)
        return switch(eq(identity, 1), 0.0, 1.0 / (differences + identity))

    def L_op(self, inputs, outputs, output_grads):
        w, v = outputs
        gw, gv = output_grads
        if is_disconnected(gw) and is_disconnected(gv):
            return [disconnected_type()]
        inner = zeros_like(inputs[0])
        if not is_disconnected(gw):
            inner = inner + expand_dims(gw, gw.type.ndim - 1) * eye(w.shape[-1],
                                                                   dtype=w.type.dtype)
        if not is_disconnected(gv):
            inner = inner + self._gaps(w) * mm(matrix_transpose(v), gv)
        symmetric = mm(mm(v, inner), matrix_transpose(v))
        return [read_triangle_grad(symmetric, lower=self.UPLO == "L")]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None, None]
        w, v = self(inputs[0])
        da = symmetric_from_triangle(eval_points[0], lower=self.UPLO == "L")
        projected = mm(mm(matrix_transpose(v), da), v)
        dw = (projected * eye(w.shape[-1], dtype=w.type.dtype)).sum(axis=-1)
        return [dw, mm(v, self._gaps(w) * projected)]


def eigh(a: Any, UPLO: str = "L") -> list[Variable]:
    """numpy.linalg.eigh(a, UPLO): [eigenvalues, eigenvectors]."""
    return Eigh(UPLO)(a)


def _inverse_gaps_squared(s: Variable) -> Variable:
    """F_ij = 1 / (s_j² - s_i²) off the diagonal, 0 on it (s: one vector per matrix)."""
    squares = s * s
    differences = expand_dims(squares, s.type.ndim - 1) - expand_dims(squares, s.type.ndim)
    identity = eye(s.shape[-1], dtype=s.type.dtype)
    return switch(eq(identity, 1), 0.0, 1.0 / (differences + identity))


def _leading_columns(x: Variable, k: Variable) -> Variable:
    return x[..., :, :k]


def _leading_rows(x: Variable, k: Variable) -> Variable:
    return x[..., :k, :]


class SVD(Op):
    """numpy.linalg.svd: [u, s, vh] (compute_uv) or s; full_matrices as numpy.

    With distinct nonzero singular values s, k = min(m, n) and V = vhᵀ (Townsend 2016)::

      Ā = U [(F ∘ (J - Jᵀ)) S + diag(s̄) + S (F ∘ (K - Kᵀ))] Vᵀ
          + (Ū - U J) S⁻¹ Vᵀ + U S⁻¹ (V̄ᵀ - Kᵀ Vᵀ),    J = Uᵀ Ū, K = Vᵀ V̄,
      F_ij = 1 / (s_j² - s_i²) (i ≠ j);
      dP = Uᵀ dA V: ds = diag(dP), dU = U (F ∘ (dP S + S dPᵀ)) + (dA V - U dP) S⁻¹,
      dV = V (F ∘ (S dP + dPᵀ S)) + (dAᵀ U - V dPᵀ) S⁻¹.

    With full_matrices the columns of u and rows of vh past k are any basis of the
    complements: their gradients are ignored (as torch does) and their tangents are not
    defined (Rop raises where they are needed; use full_matrices=False)."""

    __props__ = ("full_matrices", "compute_uv")

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices, self.compute_uv = bool(full_matrices), bool(compute_uv)

    def make_node(self, a):
        a = float_matrices("svd", a)
        s = stack_of(a, 1)
        outputs = [stack_of(a, 0), s, stack_of(a, 0)] if self.compute_uv else [s]
        return Apply(self, [a], outputs)

    def perform(self, node, inputs, output_storage):
        result = np.linalg.svd(inputs[0], full_matrices=self.full_matrices,
                               compute_uv=self.compute_uv)
        for cell, value in zip(output_storage, result if self.compute_uv else [result]):
            cell[0] = value

    def _reduced(self, a: Variable, outputs) -> tuple[Variable, Variable, Variable]:
        """u, s, v of the reduced decomposition (v = vhᵀ)."""
        if not self.compute_uv:
            u, s, vh = SVD(full_matrices=False)(a)
        elif self.full_matrices:
            k = outputs[1].shape[-1]
            u, s, vh = (_leading_columns(outputs[0], k), outputs[1],
                        _leading_rows(outputs[2], k))
        else:
            u, s, vh = outputs
        return u, s, matrix_transpose(vh)

    def L_op(self, inputs, outputs, output_grads):
        grads = list(output_grads) if self.compute_uv else \
            [disconnected_type(), output_grads[0], disconnected_type()]
        gu, gs, gvh = grads
        if all(is_disconnected(g) for g in grads):
            return [disconnected_type()]
        a = inputs[0]
        u, s, v = self._reduced(a, outputs)
        row = expand_dims(s, s.type.ndim - 1)  # s along the columns: x S is x * row
        column = expand_dims(s, s.type.ndim)  # S x is column * x
        gaps = _inverse_gaps_squared(s)
        inner = zeros_like(gaps)
        if not is_disconnected(gs):
            inner = inner + expand_dims(gs, gs.type.ndim - 1) * eye(s.shape[-1],
                                                                   dtype=s.type.dtype)
        result = zeros_like(a)
        if not is_disconnected(gu):
            gu = _leading_columns(gu, s.shape[-1]) if self.full_matrices else gu
            j = mm(matrix_transpose(u), gu)
            inner = inner + gaps * (j - matrix_transpose(j)) * row
            result = result + mm((gu - mm(u, j)) / row, matrix_transpose(v))
        if not is_disconnected(gvh):
            gv = matrix_transpose(_leading_rows(gvh, s.shape[-1]) if self.full_matrices
                                  else gvh)
            k = mm(matrix_transpose(v), gv)
            inner = inner + column * (gaps * (k - matrix_transpose(k)))
            result = result + mm(u, (matrix_transpose(gv) - mm(matrix_transpose(k),
                                                               matrix_transpose(v))) / column)
        return [result + mm(mm(u, inner), matrix_transpose(v))]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None] * (3 if self.compute_uv else 1)
        a, da = inputs[0], eval_points[0]
        u, s, v = SVD(full_matrices=False)(a)
        v = matrix_transpose(v)
        dp = mm(mm(matrix_transpose(u), da), v)
        ds = (dp * eye(s.shape[-1], dtype=s.type.dtype)).sum(axis=-1)
        if not self.compute_uv:
            return [ds]
        row = expand_dims(s, s.type.ndim - 1)
        column = expand_dims(s, s.type.ndim)
        gaps = _inverse_gaps_squared(s)
        dpt = matrix_transpose(dp)
        du = mm(u, gaps * (dp * row + column * dpt)) + (mm(da, v) - mm(u, dp)) / row
        dv = mm(v, gaps * (column * dp + dpt * row)) + \
            (mm(matrix_transpose(da), u) - mm(v, dpt)) / row
        if self.full_matrices:
            undefined = NullType("svd: with full_matrices=True the singular vectors past "
                                 "min(m, n) have no defined tangent; use "
                                 "full_matrices=False")
            return [undefined(), ds, undefined()]
        return [du, ds, matrix_transpose(dv)]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True):
    """numpy.linalg.svd(a, full_matrices, compute_uv)."""
    return SVD(full_matrices, compute_uv)(a)


class QR(Op):
    """numpy.linalg.qr: [q, r] (mode 'reduced' or 'complete') or r ('r').

    With k = min(m, n), A = [A₁ | A₂] (A₁ its first k columns), R = [R₁ | R₂] (R₁ k × k)
    and Q̄' = Q̄ + A₂ R̄₂ᵀ::

      Ā = [(Q̄' + Q N) R₁⁻ᵀ | Q R̄₂], N = triu(M) + triu(M, 1)ᵀ, M = R̄₁ R₁ᵀ - Qᵀ Q̄';
      B = Qᵀ dA₁ R₁⁻¹, C = tril(B, -1) - tril(B, -1)ᵀ: dR₁ = (B - C) R₁,
      dQ = dA₁ R₁⁻¹ - Q (B - C), dR₂ = dQᵀ A₂ + Qᵀ dA₂.

    A₁ must have full rank. In 'complete' mode the columns of q past k are any basis of the
    complement: their gradients are ignored (as torch does) and their tangents are not
    defined (Rop raises where they are needed)."""

    __props__ = ("mode",)

    def __init__(self, mode: str = "reduced"):
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
        self.mode = mode

    def make_node(self, a):
        a = float_matrices("qr", a)
        outputs = [stack_of(a, 0)] if self.mode == "r" else [stack_of(a, 0), stack_of(a, 0)]
        return Apply(self, [a], outputs)

    def perform(self, node, inputs, output_storage):
        result = np.linalg.qr(inputs[0], mode=self.mode)
        for cell, value in zip(output_storage, [result] if self.mode == "r" else result):
            cell[0] = value

    @staticmethod
    def _parts(a: Variable, q: Variable, r: Variable):
        """k, A₁, A₂, the reduced Q, R₁, and R's rows (k of them)."""
        k = minimum(a.shape[-2], a.shape[-1])
        r = _leading_rows(r, k)
        return (k, _leading_columns(a, k), a[..., :, k:], _leading_columns(q, k),
                r[..., :, :k])

    def _q_r(self, a: Variable, outputs):
        return QR("reduced")(a) if self.mode == "r" else outputs

    def L_op(self, inputs, outputs, output_grads):
        gq, gr = [disconnected_type(), output_grads[0]] if self.mode == "r" else output_grads
        if is_disconnected(gq) and is_disconnected(gr):
            return [disconnected_type()]
        a = inputs[0]
        q, r = self._q_r(a, outputs)
        k, _, a2, q, r1 = self._parts(a, q, r)
        gq = zeros_like(q) if is_disconnected(gq) else _leading_columns(gq, k)
        gr = zeros_like(_leading_rows(r, k)) if is_disconnected(gr) else _leading_rows(gr, k)
        gq = gq + mm(a2, matrix_transpose(gr[..., :, k:]))
        m = mm(gr[..., :, :k], matrix_transpose(r1)) - mm(matrix_transpose(q), gq)
        n = triu(m) + matrix_transpose(triu(m, 1))
        # (Q̄' + Q N) R₁⁻ᵀ = (R₁⁻¹ (Q̄' + Q N)ᵀ)ᵀ
        g1 = matrix_transpose(solve_triangular(r1, matrix_transpose(gq + mm(q, n))))
        return [join(-1, g1, mm(q, gr[..., :, k:]))]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None] * (1 if self.mode == "r" else 2)
        a, da = inputs[0], eval_points[0]
        k, _, a2, q, r1 = self._parts(a, *QR("reduced")(a))
        da1, da2 = _leading_columns(da, k), da[..., :, k:]
        # dA₁ R₁⁻¹ = (R₁⁻ᵀ dA₁ᵀ)ᵀ
        right = matrix_transpose(solve_triangular(r1, matrix_transpose(da1), trans=1))
        b = mm(matrix_transpose(q), right)
        lower = tril(b, -1)
        b_minus_c = b - lower + matrix_transpose(lower)
        dq = right - mm(q, b_minus_c)
        dr = join(-1, mm(b_minus_c, r1), mm(matrix_transpose(dq), a2) +
                  mm(matrix_transpose(q), da2))
        if self.mode == "complete":
            dq = NullType("qr: in 'complete' mode the columns of q past min(m, n) have no "
                          "defined tangent; use mode='reduced'")()
        return [dr] if self.mode == "r" else [dq, dr]


def qr(a: Any, mode: str = "reduced"):
    """numpy.linalg.qr(a, mode)."""
    return QR(mode)(a)


class Eig(NoGradientOp):
    """Eigenvalues and right eigenvectors of a general square matrix (numpy.linalg.eig);
    complex128 (complex64 for float32 input), as numpy gives them."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("eig", a)
        check_square("eig", a)
        complex_dtype = "complex64" if a.type.dtype == "float32" else "complex128"
        return Apply(self, [a], [stack_of(a, 1, complex_dtype),
                                 stack_of(a, 0, complex_dtype)])

    def perform(self, node, inputs, output_storage):
        w, v = np.linalg.eig(inputs[0])
        output_storage[0][0] = w.astype(node.outputs[0].type.dtype)
        output_storage[1][0] = v.astype(node.outputs[1].type.dtype)


# numpy.linalg.eig(a): [eigenvalues, eigenvectors], complex. An op instance, as Theano's
# (code keeps it as a class attribute, where a function would become a method).
eig = Eig()


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
        return Apply(self, [a], [stack_of(a)])

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
        _, v = eigh(inputs[0])
        symmetric = mm(v * expand_dims(g, g.type.ndim - 1), matrix_transpose(v))
        return [read_triangle_grad(symmetric, lower=True)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        _, v = eigh(inputs[0])
        da = symmetric_from_triangle(eval_points[0], lower=True)
        return [(v * mm(da, v)).sum(axis=-2)]


class GeneralizedEigh(Op):
    """scipy.linalg.eigh(a, b): [w, v] of the generalized symmetric problem a v = w b v, a
    symmetric and b symmetric positive definite (their lower triangles read), w ascending,
    v's columns b-orthonormal (vᵀ b v = I). Matrices, not stacks.

    With vᵢᵀ b vᵢ = 1: dwᵢ = vᵢᵀ (da - wᵢ db) vᵢ, so the eigenvalues' gradient is
    ā = V diag(w̄) Vᵀ, b̄ = -V diag(w̄ w) Vᵀ (on the triangles read); the eigenvectors' is
    not written (a NullType gradient)."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = float_matrices("eigvalsh", a), float_matrices("eigvalsh", b, "b")
        for argument, matrix in (("a", a), ("b", b)):
            check_square("eigvalsh", matrix, argument)
            if matrix.type.ndim != 2:
                raise ValueError(f"eigvalsh: the generalized problem takes matrices, got "
                                 f"{argument} of type {matrix.type}")
        dtype = np.result_type(a.type.dtype, b.type.dtype).name
        return Apply(self, [a, b], [tensor_type(dtype, (None,))(),
                                    tensor_type(dtype, (None, None))()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape != b.shape:
            raise ValueError(f"eigvalsh: a and b must have one shape, got {a.shape} and "
                             f"{b.shape}")
        try:
            w, v = scipy.linalg.eigh(a, b, lower=True, check_finite=False)
        except np.linalg.LinAlgError as error:
            raise np.linalg.LinAlgError(f"eigvalsh: {error} (b must be positive "
                                        f"definite)") from None
        dtype = node.outputs[0].type.dtype
        output_storage[0][0], output_storage[1][0] = w.astype(dtype), v.astype(dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:1], input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        w, v = outputs
        gw, gv = output_grads
        if not is_disconnected(gv):
            return [grad_not_implemented(self, index, x, "the generalized eigenvectors' "
                                         "gradient is not written")
                    for index, x in enumerate(inputs)]
        if is_disconnected(gw):
            return [disconnected_type(), disconnected_type()]
        ga = mm(v * expand_dims(gw, 0), matrix_transpose(v))
        gb = -mm(v * expand_dims(gw * w, 0), matrix_transpose(v))
        return [read_triangle_grad(ga, lower=True).astype(a.type.dtype),
                read_triangle_grad(gb, lower=True).astype(b.type.dtype)]

    def R_op(self, inputs, eval_points):
        w, v = self(*inputs)
        da, db = eval_points
        if da is None and db is None:
            return [None, None]
        def along_vectors(d):
            """vᵢᵀ d vᵢ for each eigenvector, d's lower triangle read as symmetric."""
            return (v * mm(symmetric_from_triangle(d, lower=True), v)).sum(axis=0)

        change = zeros_like(w)
        if da is not None:
            change = change + along_vectors(da)
        if db is not None:
            change = change - w * along_vectors(db)
        return [change, None]


def eigvalsh(a: Any, b: Any = None) -> Variable:
    """scipy.linalg.eigvalsh(a, b): the eigenvalues (ascending) of a symmetric matrix a
    (stacks too), or of the generalized problem a v = w b v with b symmetric positive
    definite (matrices); the lower triangles are read. b None or NoneConst: the standard
    problem."""
    if b is not None and not (isinstance(b, Variable) and isinstance(b.type, NoneTypeT)):
        return GeneralizedEigh()(a, b)[0]
    return Eigvalsh()(a)


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
        return Apply(self, [a], [stack_of(a) for _ in range(count)])

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
        return Apply(self, [a], [stack_of(a), tensor_type("int32", (None,))()])

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
        ga = outer_grad(gb, x, vector)
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
        return [self(factors, piv, tangent_right_side(x, factors, b, d, db))]


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0) -> Variable:
    """scipy.linalg.lu_solve((lu, piv), b, trans)."""
    lu, piv = lu_and_piv
    return LUSolve(trans)(lu, piv, b)

