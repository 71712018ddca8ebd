"""numpy.linalg's operations (PyTensor's pytensor.tensor.nlinalg): matrix_inverse, det,
slogdet, eigh, svd, qr, pinv, and matrix_power, matrix_dot, kron built from products; each
over a matrix or a stack of them.

Derivatives (L_op and R_op):
  matrix_inverse  X = A⁻¹: Ā = -Xᵀ X̄ Xᵀ, dX = -X dA X
  det             d = det A: Ā = d̄ d A⁻ᵀ, dd = d tr(A⁻¹ dA)
  slogdet         (sign, log|det A|): Ā = l̄ A⁻ᵀ, dl = tr(A⁻¹ dA), the sign constant
  eigh            w, V of a symmetric A (its lower triangle read):
                  Ā = V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ with F_ij = 1 / (w_j - w_i) (i ≠ j),
                  dw = diag(Vᵀ dA V), dV = V (F ∘ (Vᵀ dA V)); distinct eigenvalues
svd's singular values have one (Ā = U diag(s̄) Vᴴ, ds = diag(Uᵀ dA V), distinct values), its
vectors, qr, pinv, eig and lstsq not yet (grad raises, naming the op); norm is built from
sums and products (matrix norms 2 and nuc from the singular values).

Errors are numpy's (LinAlgError for a singular matrix), named with the op, the input
shapes and the user's line by the run-time error handling. perform runs numpy;
matrix_inverse, det and slogdet also have C code calling LAPACK (linalg_c.py).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from sympile.tensor.basic import eye, zeros_like
from sympile.tensor.linalg_c import lu_reduction_c_code
from sympile.tensor.linalg_common import (
    NoGradientOp,
    check_square,
    float_matrices,
    matrix_transpose,
    mm,
    read_triangle_grad,
    symmetric_from_triangle,
)
from sympile.tensor.math import eq, switch
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


class SVD(NoGradientOp):
    """numpy.linalg.svd: [u, s, vh] (compute_uv) or s; full_matrices as numpy. The singular
    values have a derivative (distinct ones: Ā = U diag(s̄) Vᴴ, ds = diag(Uᵀ dA V)); the
    singular vectors not yet (grad raises where their gradient is needed)."""

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

    def L_op(self, inputs, outputs, output_grads):
        vectors = [g for index, g in enumerate(output_grads)
                   if self.compute_uv and index != 1]
        if any(not is_disconnected(g) for g in vectors):
            return super().L_op(inputs, outputs, output_grads)
        gs = output_grads[1] if self.compute_uv else output_grads[0]
        if is_disconnected(gs):
            return [disconnected_type()]
        u, _, vh = SVD(full_matrices=False)(inputs[0])
        return [mm(u * expand_dims(gs, gs.type.ndim - 1), vh)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None] * (3 if self.compute_uv else 1)
        if self.compute_uv:
            raise MethodNotDefined("the tangents of the singular vectors are not implemented; "
                                   "svd(a, compute_uv=False) has the singular values' tangents")
        u, _, vh = SVD(full_matrices=False)(inputs[0])
        return [(u * mm(eval_points[0], matrix_transpose(vh))).sum(axis=-2)]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True):
    """numpy.linalg.svd(a, full_matrices, compute_uv)."""
    return SVD(full_matrices, compute_uv)(a)


class QR(NoGradientOp):
    """numpy.linalg.qr: [q, r] (mode 'reduced' or 'complete') or r ('r')."""

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


def qr(a: Any, mode: str = "reduced"):
    """numpy.linalg.qr(a, mode)."""
    return QR(mode)(a)


class PInv(NoGradientOp):
    """The Moore-Penrose pseudo-inverse (numpy.linalg.pinv)."""

    __props__ = ("hermitian",)

    def __init__(self, hermitian: bool = False):
        self.hermitian = bool(hermitian)

    def make_node(self, a):
        a = float_matrices("pinv", a)
        return Apply(self, [a], [_stack_of(a, 0)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.linalg.pinv(inputs[0], hermitian=self.hermitian).astype(
            node.outputs[0].type.dtype)


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
