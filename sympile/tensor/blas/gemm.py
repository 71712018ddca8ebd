"""BLAS level-2 and level-3 updates, the ops the BLAS rewrites (sympile.tensor.rewriting.blas)
put in place of a product and the elementwise terms around it:

  Gemm(z, alpha, x, y, beta) = alpha * dot(x, y) + beta * z     (x, y, z matrices)
  Gemv(y, alpha, a, x, beta) = alpha * dot(a, x) + beta * y     (a a matrix, x and y vectors)
  Ger(a, alpha, x, y)        = a + alpha * outer(x, y)          (a a matrix, x and y vectors)

alpha and beta are 0-d. Every input has the same dtype, float32 or float64, and the output
has it too. The ops never broadcast: z (y, a) has exactly the shape of the product. They
compute a new array; a variant with destroy_map {0: [0]} (made by the inplace rewrites) writes
the result over z (y, a) in the C backend.

perform evaluates the formula with numpy (whose dot is BLAS). scipy's ?gemm was measured
2.6x slower here on C-ordered float32 operands (it copies them to Fortran order), and a zero
alpha or beta would let BLAS skip a term where the formula propagates 0 * nan = nan. The C
backend calls BLAS directly, on the layouts it controls, and computes every term as perform
does (sympile.tensor.blas.blas_c).

Derivatives are those of the formula above (each op is linear in its array operands and in
alpha and beta): L_op and R_op differentiate that formula written with dot, mul and add.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import DisconnectedType, disconnected_type
from sympile.graph.op import Op
from sympile.tensor import math
from sympile.tensor.blas.basic import dot, outer
from sympile.tensor.blas.blas_c import BLAS_C_DTYPES, update_c_code
from sympile.tensor.reduction import sum as tensor_sum
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Gemm", "Gemv", "Ger", "gemm", "gemv", "ger"]

BLAS_DTYPES = ("float32", "float64")


def _check_inputs(op: Op, named: Sequence[tuple[str, Variable, int]]) -> str:
    """TypeError unless each (name, variable, ndim) has that ndim and all share one dtype of
    BLAS_DTYPES; returns the dtype."""
    for name, variable, ndim in named:
        if variable.type.ndim != ndim:
            raise TypeError(f"{op}: input {name} must be {ndim}-d, got {variable} of type "
                            f"{variable.type}")
    dtypes = {variable.type.dtype for _, variable, _ in named}
    dtype = named[0][1].type.dtype
    if len(dtypes) != 1 or dtype not in BLAS_DTYPES:
        listing = ", ".join(f"{name}: {variable.type.dtype}" for name, variable, _ in named)
        raise TypeError(f"{op}: the inputs must all be float32 or all float64, got {listing}")
    return dtype


def _merge_length(op: Op, what: str, lengths: Sequence[int | None]) -> int | None:
    """The one static length that `lengths` (None: unknown) agree on; ValueError if two
    differ."""
    known = {length for length in lengths if length is not None}
    if len(known) > 1:
        raise ValueError(f"{op}: {what} have different lengths {sorted(known)}")
    return known.pop() if known else None


def check_runtime_lengths(op: Op, what: str, lengths: Sequence[int]) -> None:
    if len(set(lengths)) > 1:
        raise ValueError(f"{op}: {what} have different lengths {list(lengths)}")


def _store(output_storage: list[list[Any]], node: Apply, result: Any) -> None:
    output_storage[0][0] = np.asarray(result).astype(node.outputs[0].type.dtype, copy=False)


class _BlasUpdate(Op):
    """What Gemm, Gemv and Ger share: each is alpha * P(u, v) + beta * w for a bilinear
    product P of two of its inputs (dot or outer), and its derivatives follow from that form:
    `terms` names the inputs, `product` is P, `left_adjoint(g, v)` and `right_adjoint(u, g)`
    are P's transposes (the u and v of <g, P(u, v)>)."""

    @property
    def terms(self) -> tuple[int, int, int, int, int | None]:
        """Input indices of w, alpha, u, v and beta (None: beta is 1, as in Ger)."""
        w, u, v, alpha, beta = self.c_operands
        return w, alpha, u, v, beta

    def product(self, u: Variable, v: Variable) -> Variable:
        raise NotImplementedError

    def left_adjoint(self, output_grad: Variable, v: Variable) -> Variable:
        raise NotImplementedError

    def right_adjoint(self, u: Variable, output_grad: Variable) -> Variable:
        raise NotImplementedError

    def L_op(self, inputs, outputs, output_grads):
        """<g, alpha P(u, v) + beta w>: beta g for w, sum(g * P(u, v)) for alpha, alpha
        times P's transposes applied to g for u and v, sum(g * w) for beta."""
        (output_grad,) = output_grads
        if isinstance(output_grad.type, DisconnectedType):
            return [disconnected_type() for _ in inputs]
        w_index, alpha_index, u_index, v_index, beta_index = self.terms
        w, alpha, u, v = (inputs[index] for index in self.terms[:4])
        grads: list[Variable] = [None] * len(inputs)  # type: ignore[list-item]
        grads[w_index] = (output_grad if beta_index is None
                          else math.mul(inputs[beta_index], output_grad))
        grads[alpha_index] = tensor_sum(math.mul(output_grad, self.product(u, v)))
        grads[u_index] = math.mul(alpha, self.left_adjoint(output_grad, v))
        grads[v_index] = math.mul(alpha, self.right_adjoint(u, output_grad))
        if beta_index is not None:
            grads[beta_index] = tensor_sum(math.mul(output_grad, w))
        return grads

    def R_op(self, inputs, eval_points):
        """d(alpha P(u, v) + beta w) = dalpha P(u, v) + alpha (P(du, v) + P(u, dv))
        + dbeta w + beta dw, the terms of constant inputs (None) left out."""
        if all(point is None for point in eval_points):
            return [None]
        w_index, alpha_index, u_index, v_index, beta_index = self.terms
        w, alpha, u, v = (inputs[index] for index in self.terms[:4])
        parts: list[Variable] = []
        if eval_points[alpha_index] is not None:
            parts.append(math.mul(eval_points[alpha_index], self.product(u, v)))
        if eval_points[u_index] is not None:
            parts.append(math.mul(alpha, self.product(eval_points[u_index], v)))
        if eval_points[v_index] is not None:
            parts.append(math.mul(alpha, self.product(u, eval_points[v_index])))
        if beta_index is not None and eval_points[beta_index] is not None:
            parts.append(math.mul(eval_points[beta_index], w))
        if eval_points[w_index] is not None:
            parts.append(eval_points[w_index] if beta_index is None
                         else math.mul(inputs[beta_index], eval_points[w_index]))
        total = parts[0]
        for part in parts[1:]:
            total = math.add(total, part)
        return [total]

    # For the C code: the input indices of z, x, y, alpha and beta (None: 1) in
    # alpha * x @ y + beta * z (1-d operands are columns, y a row when c_y_row), and the
    # lengths perform checks, as (what, (input, axis), (input, axis)).
    c_operands: tuple[int, int, int, int, int | None]
    c_y_row = False
    c_lengths: tuple[tuple[str, tuple[int, int], tuple[int, int]], ...]

    def c_code(self, node, names):
        """One BLAS call (gemm, gemv or ger) into a new array, or over the destroyed input
        when the op has a destroy_map; see sympile.tensor.blas.blas_c."""
        dtype = node.outputs[0].type.dtype
        if dtype not in BLAS_C_DTYPES:
            return None
        return update_c_code(str(self), dtype, len(node.inputs), self.c_operands,
                             self.c_y_row, self.c_lengths, inplace=bool(self.destroy_map))


class Gemm(_BlasUpdate):
    """Gemm(z, alpha, x, y, beta) = alpha * dot(x, y) + beta * z, for matrices x (m, k),
    y (k, n) and z (m, n) and 0-d alpha and beta, all float32 or all float64."""

    __props__ = ()

    c_operands = (0, 2, 3, 1, 4)
    c_lengths = (("the columns of x and the rows of y", (2, 1), (3, 0)),
                 ("the rows of z and of x", (0, 0), (2, 0)),
                 ("the columns of z and of y", (0, 1), (3, 1)))

    def make_node(self, z, alpha, x, y, beta):
        z, alpha, x, y, beta = (as_tensor_variable(value, op=self, argument=name)
                                for name, value in (("z", z), ("alpha", alpha), ("x", x),
                                                    ("y", y), ("beta", beta)))
        dtype = _check_inputs(self, [("z", z, 2), ("alpha", alpha, 0), ("x", x, 2),
                                     ("y", y, 2), ("beta", beta, 0)])
        _merge_length(self, "the columns of x and the rows of y", [x.type.shape[1],
                                                                   y.type.shape[0]])
        rows = _merge_length(self, "the rows of z and of x", [z.type.shape[0], x.type.shape[0]])
        columns = _merge_length(self, "the columns of z and of y",
                                [z.type.shape[1], y.type.shape[1]])
        return Apply(self, [z, alpha, x, y, beta], [tensor_type(dtype, (rows, columns))()])

    def perform(self, node, inputs, output_storage):
        z, alpha, x, y, beta = inputs
        check_runtime_lengths(self, "the columns of x and the rows of y", [x.shape[1], y.shape[0]])
        check_runtime_lengths(self, "the rows of z and of x", [z.shape[0], x.shape[0]])
        check_runtime_lengths(self, "the columns of z and of y", [z.shape[1], y.shape[1]])
        result = np.dot(x, y)
        result *= alpha
        result += beta * z
        _store(output_storage, node, result)

    def infer_shape(self, fgraph, node, input_shapes):
        z_shape = input_shapes[0]
        return [tuple(z_shape)]

    def length_constraints(self, node):
        # z, alpha, x, y, beta: z is x.rows by y.columns, x.columns = y.rows.
        return [((0, 0), (2, 0)), ((0, 1), (3, 1)), ((2, 1), (3, 0))]


    def product(self, x, y):
        return dot(x, y)

    def left_adjoint(self, output_grad, y):
        return dot(output_grad, y.T)

    def right_adjoint(self, x, output_grad):
        return dot(x.T, output_grad)


class Gemv(_BlasUpdate):
    """Gemv(y, alpha, a, x, beta) = alpha * dot(a, x) + beta * y, for a matrix a (m, n),
    vectors x (n,) and y (m,) and 0-d alpha and beta, all float32 or all float64."""

    __props__ = ()

    c_operands = (0, 2, 3, 1, 4)
    c_lengths = (("the columns of a and x", (2, 1), (3, 0)),
                 ("y and the rows of a", (0, 0), (2, 0)))

    def make_node(self, y, alpha, a, x, beta):
        y, alpha, a, x, beta = (as_tensor_variable(value, op=self, argument=name)
                                for name, value in (("y", y), ("alpha", alpha), ("a", a),
                                                    ("x", x), ("beta", beta)))
        dtype = _check_inputs(self, [("y", y, 1), ("alpha", alpha, 0), ("a", a, 2),
                                     ("x", x, 1), ("beta", beta, 0)])
        _merge_length(self, "the columns of a and x", [a.type.shape[1], x.type.shape[0]])
        rows = _merge_length(self, "y and the rows of a", [y.type.shape[0], a.type.shape[0]])
        return Apply(self, [y, alpha, a, x, beta], [tensor_type(dtype, (rows,))()])

    def perform(self, node, inputs, output_storage):
        y, alpha, a, x, beta = inputs
        check_runtime_lengths(self, "the columns of a and x", [a.shape[1], x.shape[0]])
        check_runtime_lengths(self, "y and the rows of a", [y.shape[0], a.shape[0]])
        result = np.dot(a, x)
        result *= alpha
        result += beta * y
        _store(output_storage, node, result)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def length_constraints(self, node):
        # y, alpha, a, x, beta: y has a's rows, x a's columns.
        return [((0, 0), (2, 0)), ((2, 1), (3, 0))]


    def product(self, a, x):
        return dot(a, x)

    def left_adjoint(self, output_grad, x):
        return outer(output_grad, x)

    def right_adjoint(self, a, output_grad):
        return dot(a.T, output_grad)


class Ger(_BlasUpdate):
    """Ger(a, alpha, x, y) = a + alpha * outer(x, y), for a matrix a (m, n), vectors x (m,)
    and y (n,) and a 0-d alpha, all float32 or all float64."""

    __props__ = ()

    c_operands = (0, 2, 3, 1, None)
    c_y_row = True
    c_lengths = (("the rows of a and x", (0, 0), (2, 0)),
                 ("the columns of a and y", (0, 1), (3, 0)))

    def make_node(self, a, alpha, x, y):
        a, alpha, x, y = (as_tensor_variable(value, op=self, argument=name)
                          for name, value in (("a", a), ("alpha", alpha), ("x", x), ("y", y)))
        dtype = _check_inputs(self, [("a", a, 2), ("alpha", alpha, 0), ("x", x, 1),
                                     ("y", y, 1)])
        rows = _merge_length(self, "the rows of a and x", [a.type.shape[0], x.type.shape[0]])
        columns = _merge_length(self, "the columns of a and y",
                                [a.type.shape[1], y.type.shape[0]])
        return Apply(self, [a, alpha, x, y], [tensor_type(dtype, (rows, columns))()])

    def perform(self, node, inputs, output_storage):
        a, alpha, x, y = inputs
        check_runtime_lengths(self, "the rows of a and x", [a.shape[0], x.shape[0]])
        check_runtime_lengths(self, "the columns of a and y", [a.shape[1], y.shape[0]])
        result = np.outer(x, y)
        result *= alpha
        result += a
        _store(output_storage, node, result)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def length_constraints(self, node):
        # a, alpha, x, y: a is x's length by y's.
        return [((0, 0), (2, 0)), ((0, 1), (3, 0))]


    def product(self, x, y):
        return outer(x, y)

    def left_adjoint(self, output_grad, y):
        return dot(output_grad, y)

    def right_adjoint(self, x, output_grad):
        return dot(output_grad.T, x)


_gemm, _gemv, _ger = Gemm(), Gemv(), Ger()


def gemm(z: Any, alpha: Any, x: Any, y: Any, beta: Any) -> Variable:
    """alpha * dot(x, y) + beta * z for matrices, by one BLAS gemm call."""
    return _gemm(z, alpha, x, y, beta)


def gemv(y: Any, alpha: Any, a: Any, x: Any, beta: Any) -> Variable:
    """alpha * dot(a, x) + beta * y for a matrix a and vectors x and y, by one BLAS gemv."""
    return _gemv(y, alpha, a, x, beta)


def ger(a: Any, alpha: Any, x: Any, y: Any) -> Variable:
    """a + alpha * outer(x, y) for a matrix a and vectors x and y, by one BLAS ger call."""
    return _ger(a, alpha, x, y)
