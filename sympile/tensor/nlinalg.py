"""numpy.linalg's operations (PyTensor's pytensor.tensor.nlinalg): matrix_inverse, det,
slogdet, eigh, svd, qr, pinv, and matrix_power, matrix_dot, kron built from products; each
over a matrix or a stack of them.

Derivatives (L_op and R_op)::

  matrix_inverse  X = A⁻¹: Ā = -Xᵀ X̄ Xᵀ, dX = -X dA X
  det             d = det A: Ā = d̄ d A⁻ᵀ, dd = d tr(A⁻¹ dA)
  slogdet         (sign, log|det A|): Ā = l̄ A⁻ᵀ, dl = tr(A⁻¹ dA), the sign constant
  eigh            w, V of a symmetric A (its lower triangle read):
                  Ā = V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ with F_ij = 1 / (w_j - w_i) (i ≠ j),
                  dw = diag(Vᵀ dA V), dV = V (F ∘ (Vᵀ dA V)); distinct eigenvalues
  svd             distinct nonzero singular values, vectors included (SVD's docstring)
  qr              A's leading min(m, n) columns of full rank (QR's docstring)
  pinv            where the rank is constant (PInv's docstring)

eig and lstsq have none (grad raises, naming the op); norm is built from sums and products
(matrix norms 2, -2 and nuc from the singular values).

Errors are numpy's (LinAlgError for a singular matrix), named with the op, the input
shapes and the user's line by the run-time error handling. perform runs numpy;
matrix_inverse, det, slogdet and eigh also have C code calling LAPACK (linalg_c.py).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import NullType, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import eye, join, zeros_like
from sympile.tensor.extra_ops import tril, triu
from sympile.tensor.linalg_c import eigh_c_code, lu_reduction_c_code
from sympile.tensor.linalg_common import (
    NoGradientOp,
    check_square,
    float_matrices,
    matrix_transpose,
    mm,
    read_triangle_grad,
    symmetric_from_triangle,
)
from sympile.tensor.math import eq, minimum, switch
from sympile.tensor.shape import expand_dims
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Det", "Eig", "Eigh", "Lstsq", "MatrixInverse", "QR", "SLogDet", "SVD", "det",
           "eig", "eigh", "kron", "lstsq", "matrix_dot", "matrix_inverse", "matrix_power",
           "norm", "pinv", "qr", "slogdet", "svd", "tensorinv", "tensorsolve"]


def _stack_of(x: Variable, drop: int, dtype: str | None = None) -> Variable:
    return tensor_type(dtype or x.type.dtype, (None,) * (x.type.ndim - drop))()


def _batch_dims(x: Variable, value: Variable) -> Variable:
    """value (one per matrix of x's stack) with two length-1 axes, to scale matrices."""
    return expand_dims(expand_dims(value, value.type.ndim), value.type.ndim + 1)


def _trace_of_product(a: Variable, b: Variable) -> Variable:
    """tr(a b) for each matrix of the stacks: sum(aᵀ ∘ b)."""
    return (matrix_transpose(a) * b).sum(axis=(-2, -1))


class MatrixInverse(Op):
    """The inverse of a square matrix (numpy.linalg.inv)."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("matrix_inverse", a)
        check_square("matrix_inverse", a)
        return Apply(self, [a], [_stack_of(a, 0)])

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


class Det(Op):
    """The determinant (numpy.linalg.det): one per matrix of the stack."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("det", a)
        check_square("det", a)
        return Apply(self, [a], [_stack_of(a, 2)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(np.linalg.det(inputs[0]),
                                          dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return lu_reduction_c_code("det", node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:-2]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        inverse_t = matrix_transpose(matrix_inverse(inputs[0]))
        return [_batch_dims(inputs[0], g * outputs[0]) * inverse_t]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        a = inputs[0]
        return [self(a) * _trace_of_product(matrix_inverse(a), eval_points[0])]


def det(a: Any) -> Variable:
    """numpy.linalg.det(a)."""
    return Det()(a)


class SLogDet(Op):
    """(sign, log|det|) of each matrix (numpy.linalg.slogdet)."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("slogdet", a)
        check_square("slogdet", a)
        return Apply(self, [a], [_stack_of(a, 2), _stack_of(a, 2)])

    def perform(self, node, inputs, output_storage):
        sign, log = np.linalg.slogdet(inputs[0])
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(sign, dtype=dtype)
        output_storage[1][0] = np.asarray(log, dtype=dtype)

    def c_code(self, node, names):
        return lu_reduction_c_code("slogdet", node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:-2]] * 2

    def L_op(self, inputs, outputs, output_grads):
        g_log = output_grads[1]
        if is_disconnected(g_log):
            return [disconnected_type()]
        inverse_t = matrix_transpose(matrix_inverse(inputs[0]))
        return [_batch_dims(inputs[0], g_log) * inverse_t]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None, None]
        a = inputs[0]
        sign, _ = self(a)
        return [zeros_like(sign), _trace_of_product(matrix_inverse(a), eval_points[0])]


def slogdet(a: Any) -> list[Variable]:
    """numpy.linalg.slogdet(a): [sign, log|det a|]."""
    return SLogDet()(a)


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
        return Apply(self, [a], [_stack_of(a, 1), _stack_of(a, 0)])

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
        s = _stack_of(a, 1)
        outputs = [_stack_of(a, 0), s, _stack_of(a, 0)] if self.compute_uv else [s]
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
        outputs = [_stack_of(a, 0)] if self.mode == "r" else [_stack_of(a, 0), _stack_of(a, 0)]
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
        from sympile.tensor.slinalg import solve_triangular
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
        from sympile.tensor.slinalg import solve_triangular
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
        return Apply(self, [a], [_stack_of(a, 0)])

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
    """numpy.kron of two matrices, from their outer product; differentiable."""
    a = as_tensor_variable(a, op="kron", argument="a")
    b = as_tensor_variable(b, op="kron", argument="b")
    if a.type.ndim != 2 or b.type.ndim != 2:
        raise ValueError(f"kron: a and b must be matrices, got {a.type} and {b.type}")
    product = a.dimshuffle(0, "x", 1, "x") * b.dimshuffle("x", 0, "x", 1)
    return product.reshape((a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]), ndim=2)


class Eig(NoGradientOp):
    """Eigenvalues and right eigenvectors of a general square matrix (numpy.linalg.eig);
    complex128 (complex64 for float32 input), as numpy gives them."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("eig", a)
        check_square("eig", a)
        complex_dtype = "complex64" if a.type.dtype == "float32" else "complex128"
        return Apply(self, [a], [_stack_of(a, 1, complex_dtype),
                                 _stack_of(a, 0, complex_dtype)])

    def perform(self, node, inputs, output_storage):
        w, v = np.linalg.eig(inputs[0])
        output_storage[0][0] = w.astype(node.outputs[0].type.dtype)
        output_storage[1][0] = v.astype(node.outputs[1].type.dtype)


def eig(a: Any) -> list[Variable]:
    """numpy.linalg.eig(a): [eigenvalues, eigenvectors], complex."""
    return Eig()(a)


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


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """numpy.linalg.norm for vectors (ord None/2, 1, inf, -inf, 0, other p) and matrices
    (ord None/'fro', 1, -1, inf, -inf, 2, -2, 'nuc'), over `axis` (an int or a pair), or
    the whole of a vector or matrix when axis is None."""
    from sympile.tensor.math import abs as absolute
    from sympile.tensor.math import sqrt
    from sympile.tensor.reduction import max as reduce_max
    from sympile.tensor.reduction import min as reduce_min
    x = as_tensor_variable(x, op="norm", argument="x")
    if axis is None:
        if x.type.ndim not in (1, 2) and ord is not None:
            raise ValueError(f"norm: ord={ord!r} needs a vector or a matrix, or an axis")
        axis = tuple(range(x.type.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(a % x.type.ndim for a in axes)
    if ord is None or (ord == "fro" and len(axes) == 2):
        return sqrt((x * x).sum(axis=axes, keepdims=keepdims))
    if len(axes) == 1:
        magnitude = absolute(x)
        if ord == np.inf:
            return reduce_max(magnitude, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return reduce_min(magnitude, axis=axes, keepdims=keepdims)
        if ord == 0:
            return (magnitude > 0).sum(axis=axes, keepdims=keepdims)
        if ord == 1:
            return magnitude.sum(axis=axes, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"norm: ord {ord!r} is for matrices, got one axis")
        return (magnitude ** ord).sum(axis=axes, keepdims=keepdims) ** (1.0 / ord)
    if len(axes) != 2:
        raise ValueError(f"norm: axis must be an int or a pair, got {axis!r}")
    rows, cols = axes
    magnitude = absolute(x)
    if ord in (1, -1, np.inf, -np.inf):
        summed_axis, over = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = magnitude.sum(axis=summed_axis, keepdims=True)
        pick = reduce_max if ord in (1, np.inf) else reduce_min
        result = pick(sums, axis=over, keepdims=True)
    elif ord in (2, -2, "nuc"):
        moved = x.dimshuffle(*[a for a in range(x.type.ndim) if a not in axes], rows, cols)
        values = svd(moved, compute_uv=False)
        result = (values.max(axis=-1) if ord == 2 else values.min(axis=-1) if ord == -2
                  else values.sum(axis=-1))
        if keepdims:
            for a in sorted(axes):
                result = expand_dims(result, a)
        return result
    else:
        raise ValueError(f"norm: ord {ord!r} is not a matrix norm")
    if not keepdims:
        result = result.dimshuffle(*[a for a in range(x.type.ndim) if a not in axes])
    return result


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


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Variable:
    """numpy.linalg.tensorsolve(a, b) (axes=None): x with tensordot(a, x, x.ndim) = b;
    differentiable through solve."""
    from sympile.tensor.slinalg import solve
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
