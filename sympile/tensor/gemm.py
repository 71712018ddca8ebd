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
does (sympile.tensor.blas_c).

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
from sympile.tensor.blas import dot, outer
from sympile.tensor.blas_c import BLAS_C_DTYPES, update_c_code
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


def _check_runtime(op: Op, what: str, lengths: Sequence[int]) -> None:
    if len(set(lengths)) > 1:
        raise ValueError(f"{op}: {what} have different lengths {list(lengths)}")


def _store(output_storage: list[list[Any]], node: Apply, result: Any) -> None:
    output_storage[0][0] = np.asarray(result).astype(node.outputs[0].type.dtype, copy=False)


class _BlasUpdate(Op):
    """What Gemm, Gemv and Ger share: derivatives through `expand`, the formula written with
    dot, mul and add."""

    def expand(self, *inputs: Variable) -> Variable:
        raise NotImplementedError

    def L_op(self, inputs, outputs, output_grads):
        """The reverse sweep of `expand`: for Gemm, alpha * g · yᵀ for x, alpha * xᵀ · g for y,
        beta * g for z, sum(g * dot(x, y)) for alpha and sum(g * z) for beta."""
        from sympile.gradient import Lop
        (output_grad,) = output_grads
        if isinstance(output_grad.type, DisconnectedType):
            return [disconnected_type() for _ in inputs]
        return Lop(self.expand(*inputs), list(inputs), output_grad)

    def R_op(self, inputs, eval_points):
        """The forward sweep of `expand` along the given tangents (None: a constant input)."""
        from sympile.gradient import Rop
        pairs = [(variable, point) for variable, point in zip(inputs, eval_points)
                 if point is not None]
        if not pairs:
            return [None]
        return [Rop(self.expand(*inputs), [v for v, _ in pairs], [p for _, p in pairs])]

    # For the C code: the input indices of z, x, y, alpha and beta (None: 1) in
    # alpha * x @ y + beta * z (1-d operands are columns, y a row when c_y_row), and the
    # lengths perform checks, as (what, (input, axis), (input, axis)).
    c_operands: tuple[int, int, int, int, int | None]
    c_y_row = False
    c_lengths: tuple[tuple[str, tuple[int, int], tuple[int, int]], ...]

    def c_code(self, node, names):
        """One BLAS call (gemm, gemv or ger) into a new array, or over the destroyed input
        when the op has a destroy_map; see sympile.tensor.blas_c."""
        dtype = node.outputs[0].type.dtype
        if dtype not in BLAS_C_DTYPES:
            return None
        return update_c_code(str(self), dtype, names.inputs, names.outputs[0], names.fail,
                             self.c_operands, self.c_y_row, self.c_lengths,
                             inplace=bool(self.destroy_map))


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
        _check_runtime(self, "the columns of x and the rows of y", [x.shape[1], y.shape[0]])
        _check_runtime(self, "the rows of z and of x", [z.shape[0], x.shape[0]])
        _check_runtime(self, "the columns of z and of y", [z.shape[1], y.shape[1]])
        result = np.dot(x, y)
        result *= alpha
        result += beta * z
        _store(output_storage, node, result)

    def infer_shape(self, fgraph, node, input_shapes):
        z_shape = input_shapes[0]
        return [tuple(z_shape)]

    def expand(self, z, alpha, x, y, beta):
        return math.add(math.mul(alpha, dot(x, y)), math.mul(beta, z))


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
        _check_runtime(self, "the columns of a and x", [a.shape[1], x.shape[0]])
        _check_runtime(self, "y and the rows of a", [y.shape[0], a.shape[0]])
        result = np.dot(a, x)
        result *= alpha
        result += beta * y
        _store(output_storage, node, result)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def expand(self, y, alpha, a, x, beta):
        return math.add(math.mul(alpha, dot(a, x)), math.mul(beta, y))


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
        _check_runtime(self, "the rows of a and x", [a.shape[0], x.shape[0]])
        _check_runtime(self, "the columns of a and y", [a.shape[1], y.shape[0]])
        result = np.outer(x, y)
        result *= alpha
        result += a
        _store(output_storage, node, result)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def expand(self, a, alpha, x, y):
        return math.add(a, math.mul(alpha, outer(x, y)))


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
