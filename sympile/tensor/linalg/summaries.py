"""Summaries of a matrix: det, slogdet and norm (numpy.linalg's), each over a matrix or a
stack of them.

Derivatives (L_op and R_op)::

  det             d = det A: Ā = d̄ d A⁻ᵀ, dd = d tr(A⁻¹ dA)
  slogdet         (sign, log|det A|): Ā = l̄ A⁻ᵀ, dl = tr(A⁻¹ dA), the sign constant
  norm            built from sums and products (matrix norms 2, -2 and nuc from the
                  singular values)

perform runs numpy; det and slogdet also have C code calling LAPACK (lapack_c.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import zeros_like
from sympile.tensor.linalg.common import check_square, float_matrices, matrix_transpose, stack_of
from sympile.tensor.linalg.decompositions import svd
from sympile.tensor.linalg.lapack_c import lu_reduction_c_code
from sympile.tensor.linalg.matrix_functions import matrix_inverse
from sympile.tensor.math import abs as absolute
from sympile.tensor.math import sqrt
from sympile.tensor.reduction import max as reduce_max
from sympile.tensor.reduction import min as reduce_min
from sympile.tensor.shape import expand_dims
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Det", "SLogDet", "det", "norm", "slogdet"]


def _batch_dims(x: Variable, value: Variable) -> Variable:
    """value (one per matrix of x's stack) with two length-1 axes, to scale matrices."""
    return expand_dims(expand_dims(value, value.type.ndim), value.type.ndim + 1)


def _trace_of_product(a: Variable, b: Variable) -> Variable:
    """tr(a b) for each matrix of the stacks: sum(aᵀ ∘ b)."""
    return (matrix_transpose(a) * b).sum(axis=(-2, -1))


class Det(Op):
    """The determinant (numpy.linalg.det): one per matrix of the stack."""

    __props__ = ()

    def make_node(self, a):
        a = float_matrices("det", a)
        check_square("det", a)
        return Apply(self, [a], [stack_of(a, 2)])

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
        return Apply(self, [a], [stack_of(a, 2), stack_of(a, 2)])

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


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """numpy.linalg.norm for vectors (ord None/2, 1, inf, -inf, 0, other p) and matrices
    (ord None/'fro', 1, -1, inf, -inf, 2, -2, 'nuc'), over `axis` (an int or a pair), or
    the whole of a vector or matrix when axis is None. Theano's spellings 'inf' and '-inf'
    stand for inf and -inf."""
    x = as_tensor_variable(x, op="norm", argument="x")
    ord = {"inf": np.inf, "-inf": -np.inf}.get(ord, ord) if isinstance(ord, str) else ord
    if axis is None:
        if x.type.ndim not in (1, 2) and ord is not None:
            raise ValueError(f"norm: ord={ord!r} needs a vector or a matrix, or an axis")
        axis = tuple(range(x.type.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(a % x.type.ndim for a in axes)
    if ord is None or (ord == "fro" and len(axes) == 2) or (ord == 2 and len(axes) == 1):
        # |x|² for complex x, as numpy; x * x keeps the real case's graph as it was.
        square = x * x if x.type.dtype[0] != "c" else absolute(x) * absolute(x)
        return sqrt(square.sum(axis=axes, keepdims=keepdims))
    if len(axes) == 1:
        magnitude = absolute(x)
        if ord == np.inf:
            return reduce_max(magnitude, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return reduce_min(magnitude, axis=axes, keepdims=keepdims)
        if ord == 0:
            # numpy counts in the input's float dtype (float64 for other inputs).
            count = (magnitude > 0).sum(axis=axes, keepdims=keepdims)
            return count.astype(magnitude.type.dtype if magnitude.type.dtype[0] == "f"
                                else "float64")
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

