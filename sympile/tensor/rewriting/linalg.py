"""Linear-algebra rewrites, in stabilize_db (tags stabilize, fast_run): each replaces a
formula that loses accuracy, overflows or does needless work by one that computes the same
thing directly.

  local_inverse_product_to_solve  dot(matrix_inverse(A), b), matmul(matrix_inverse(A), b)
                                  -> solve(A, b)
  local_transpose_of_inverse      transpose(matrix_inverse(A)) -> matrix_inverse(transpose(A))
                                  where it is the left factor of a product (so that the rule
                                  above applies: Aᵀ⁻¹ b is one solve)
  local_solve_of_inverse          solve(matrix_inverse(A), b) -> A b (assume_a='gen')
  local_log_det_to_slogdet        log(det(A)) -> switch(sign < 0, nan, log|det A|) from
                                  slogdet (det of a 100 x 100 matrix over/underflows long
                                  before its logarithm does)
  local_inverse_of_inverse        matrix_inverse(matrix_inverse(A)) -> A
  local_det_of_triangular         det(T) -> prod(diag T), det(T Tᵀ) and det(Tᵀ T)
                                  -> prod(diag T)² for T triangular (a Cholesky factor, tril,
                                  triu, or their transposes)
  local_slogdet_of_triangular     slogdet(T) -> (prod(sign(diag T)), sum(log|diag T|)),
                                  slogdet(T Tᵀ) -> (prod(sign(diag T))², 2 sum(log|diag T|))
  local_solve_of_triangular       solve(T, b) -> solve_triangular(T, b) (assume_a='gen'),
                                  solve(L Lᵀ, b) -> cho_solve((L, True), b) for L lower,
                                  solve(Uᵀ U, b) -> cho_solve((U, False), b) for U upper
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.scalar import basic as scalar
from sympile.tensor.blas.basic import Dot, MatMul, matmul
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.extra_ops import Tril, Triu, diagonal
from sympile.tensor.linalg.common import matrix_transpose
from sympile.tensor.math import abs as absolute
from sympile.tensor.math import log, lt, sgn, switch
from sympile.tensor.nlinalg import Det, MatrixInverse, SLogDet, matrix_inverse, slogdet
from sympile.tensor.reduction import prod
from sympile.tensor.rewriting.matching import as_type_of
from sympile.tensor.rewriting.stabilize import stabilize_db
from sympile.tensor.slinalg import Cholesky, Solve, cho_solve, solve, solve_triangular

__all__ = ["local_det_of_triangular", "local_inverse_of_inverse",
           "local_inverse_product_to_solve", "local_log_det_to_slogdet",
           "local_slogdet_of_triangular", "local_solve_of_inverse",
           "local_solve_of_triangular", "local_transpose_of_inverse"]


def _inverse_input(variable):
    owner = variable.owner
    return owner.inputs[0] if owner is not None and isinstance(owner.op, MatrixInverse) \
        else None


def _transposed(variable: Variable) -> Variable | None:
    """x where variable is matrix_transpose(x) (its last two axes swapped), else None."""
    owner = variable.owner
    if owner is None or not isinstance(owner.op, DimShuffle):
        return None
    ndim = owner.op.input_ndim
    if ndim < 2 or owner.op.new_order != (*range(ndim - 2), ndim - 1, ndim - 2):
        return None
    return owner.inputs[0]


def _triangle_of(variable: Variable) -> bool | None:
    """True (lower) or False (upper) where variable is a triangular matrix (stack) by
    construction, else None."""
    owner = variable.owner
    if owner is None:
        return None
    if isinstance(owner.op, Cholesky):
        return owner.op.lower
    if isinstance(owner.op, (Tril, Triu)):
        k = owner.inputs[1]
        if isinstance(k, Constant) and (int(k.data) <= 0 if owner.op.lower
                                        else int(k.data) >= 0):
            return owner.op.lower
        return None
    inner = _transposed(variable)
    if inner is not None:
        lower = _triangle_of(inner)
        return None if lower is None else not lower
    return None


def _gram_factor(variable: Variable) -> tuple[Variable, bool] | None:
    """(T, left) where variable is T Tᵀ (left: True) or Tᵀ T (False) for triangular T."""
    owner = variable.owner
    if owner is None or not isinstance(owner.op, (Dot, MatMul)) \
            or variable.type.ndim < 2:
        return None
    first, second = owner.inputs
    if _transposed(second) is first and _triangle_of(first) is not None:
        return first, True
    if _transposed(first) is second and _triangle_of(second) is not None:
        return second, False
    return None


def _diagonal(x: Variable) -> Variable:
    return diagonal(x, axis1=-2, axis2=-1)


@node_rewriter([Dot, MatMul])
def local_inverse_product_to_solve(fgraph: FunctionGraph, node):
    """dot(matrix_inverse(A), b) -> solve(A, b) (b a vector or matrix of A's batch rank)."""
    a = _inverse_input(node.inputs[0])
    b = node.inputs[1]
    if a is None or b.type.ndim not in (a.type.ndim - 1, a.type.ndim) \
            or (isinstance(node.op, Dot) and a.type.ndim != 2):
        return None
    return as_type_of(solve(a, b), node.outputs[0])


@node_rewriter([DimShuffle])
def local_transpose_of_inverse(fgraph: FunctionGraph, node):
    """transpose(matrix_inverse(A)) -> matrix_inverse(transpose(A)), where the transpose is
    the left factor of a product (a solve then takes its place)."""
    inner = _transposed(node.outputs[0])
    a = None if inner is None else _inverse_input(inner)
    if a is None:
        return None
    clients = fgraph.clients.get(node.outputs[0], [])
    if not any(isinstance(getattr(client, "op", None), (Dot, MatMul)) and index == 0
               for client, index in clients):
        return None
    return as_type_of(matrix_inverse(matrix_transpose(a)), node.outputs[0])


@node_rewriter([Solve])
def local_solve_of_inverse(fgraph: FunctionGraph, node):
    """solve(matrix_inverse(A), b) -> A b."""
    a = _inverse_input(node.inputs[0])
    if a is None or node.op.assume_a != "gen":
        return None
    b = node.inputs[1]
    vector = b.type.ndim == a.type.ndim - 1
    product = matmul(a, b[..., None])[..., 0] if vector else matmul(a, b)
    return as_type_of(product, node.outputs[0])


@node_rewriter([Elemwise])
def local_log_det_to_slogdet(fgraph: FunctionGraph, node):
    """log(det(A)) -> log|det A| where det A > 0, NaN where it is negative (as log is)."""
    if node.op.scalar_op != scalar.log:
        return None
    owner = node.inputs[0].owner
    if owner is None or not isinstance(owner.op, Det):
        return None
    sign, log_abs = slogdet(owner.inputs[0])
    nan = np.asarray(np.nan, dtype=log_abs.type.dtype)
    return as_type_of(switch(lt(sign, 0), nan, log_abs), node.outputs[0])


@node_rewriter([MatrixInverse])
def local_inverse_of_inverse(fgraph: FunctionGraph, node):
    """matrix_inverse(matrix_inverse(A)) -> A."""
    a = _inverse_input(node.inputs[0])
    return None if a is None else as_type_of(a, node.outputs[0])


@node_rewriter([Det])
def local_det_of_triangular(fgraph: FunctionGraph, node):
    """det(T) -> prod(diag T); det(T Tᵀ), det(Tᵀ T) -> prod(diag T)² (T triangular). Not
    under a log: local_log_det_to_slogdet keeps that from overflowing."""
    a = node.inputs[0]
    if any(isinstance(getattr(client, "op", None), Elemwise)
           and client.op.scalar_op == scalar.log
           for client, _ in fgraph.clients.get(node.outputs[0], [])):
        return None
    if _triangle_of(a) is not None:
        return as_type_of(prod(_diagonal(a), axis=-1), node.outputs[0])
    gram = _gram_factor(a)
    if gram is None:
        return None
    return as_type_of(prod(_diagonal(gram[0]), axis=-1) ** 2, node.outputs[0])


@node_rewriter([SLogDet])
def local_slogdet_of_triangular(fgraph: FunctionGraph, node):
    """slogdet(T) -> (prod(sign(diag T)), sum(log|diag T|)); slogdet(T Tᵀ), slogdet(Tᵀ T)
    -> (prod(sign(diag T))², 2 sum(log|diag T|)) (T triangular)."""
    a = node.inputs[0]
    square = False
    if _triangle_of(a) is None:
        gram = _gram_factor(a)
        if gram is None:
            return None
        a, square = gram[0], True
    values = _diagonal(a)
    sign = prod(sgn(values), axis=-1)
    log_abs = log(absolute(values)).sum(axis=-1)
    if square:
        sign, log_abs = sign * sign, 2 * log_abs
    sign = as_type_of(sign, node.outputs[0])
    log_abs = as_type_of(log_abs, node.outputs[1])
    return None if sign is None or log_abs is None else [*sign, *log_abs]


@node_rewriter([Solve])
def local_solve_of_triangular(fgraph: FunctionGraph, node):
    """solve(T, b) -> solve_triangular(T, b) (assume_a='gen', T triangular);
    solve(L Lᵀ, b) -> cho_solve((L, True), b) (L lower), solve(Uᵀ U, b)
    -> cho_solve((U, False), b) (U upper), whatever assume_a."""
    a, b = node.inputs
    lower = _triangle_of(a)
    if lower is not None and node.op.assume_a == "gen":
        return as_type_of(solve_triangular(a, b, lower=lower), node.outputs[0])
    gram = _gram_factor(a)
    if gram is None:
        return None
    factor, left = gram
    if _triangle_of(factor) != left:  # L Lᵀ needs L lower; Uᵀ U needs U upper
        return None
    return as_type_of(cho_solve((factor, left), b), node.outputs[0])


for _rule in (local_inverse_product_to_solve, local_transpose_of_inverse,
              local_solve_of_inverse, local_log_det_to_slogdet, local_inverse_of_inverse,
              local_det_of_triangular, local_slogdet_of_triangular, local_solve_of_triangular):
    stabilize_db.register(_rule.name, _rule, "stabilize", "fast_run")
del _rule
