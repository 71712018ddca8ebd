"""Linear-algebra rewrites, in stabilize_db (tags stabilize, fast_run): each replaces a
formula that loses accuracy or overflows by one that computes the same thing directly.

  local_inverse_product_to_solve  dot(matrix_inverse(A), b), matmul(matrix_inverse(A), b)
                                  -> solve(A, b)
  local_log_det_to_slogdet        log(det(A)) -> switch(sign < 0, nan, log|det A|) from
                                  slogdet (det of a 100 x 100 matrix over/underflows long
                                  before its logarithm does)
  local_inverse_of_inverse        matrix_inverse(matrix_inverse(A)) -> A
"""

from __future__ import annotations

import numpy as np

from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.scalar import basic as scalar
from sympile.tensor.blas.basic import Dot, MatMul
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.math import lt, switch
from sympile.tensor.nlinalg import Det, MatrixInverse, slogdet
from sympile.tensor.rewriting.stabilize import _as_type_of, stabilize_db
from sympile.tensor.slinalg import solve

__all__ = ["local_inverse_of_inverse", "local_inverse_product_to_solve",
           "local_log_det_to_slogdet"]


def _inverse_input(variable):
    owner = variable.owner
    return owner.inputs[0] if owner is not None and isinstance(owner.op, MatrixInverse) \
        else None


@node_rewriter([Dot, MatMul])
def local_inverse_product_to_solve(fgraph: FunctionGraph, node):
    """dot(matrix_inverse(A), b) -> solve(A, b) (b a vector or matrix of A's batch rank)."""
    a = _inverse_input(node.inputs[0])
    b = node.inputs[1]
    if a is None or b.type.ndim not in (a.type.ndim - 1, a.type.ndim) \
            or (isinstance(node.op, Dot) and a.type.ndim != 2):
        return None
    return _as_type_of(solve(a, b), node.outputs[0])


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
    return _as_type_of(switch(lt(sign, 0), nan, log_abs), node.outputs[0])


@node_rewriter([MatrixInverse])
def local_inverse_of_inverse(fgraph: FunctionGraph, node):
    """matrix_inverse(matrix_inverse(A)) -> A."""
    a = _inverse_input(node.inputs[0])
    return None if a is None else _as_type_of(a, node.outputs[0])


for _rule in (local_inverse_product_to_solve, local_log_det_to_slogdet,
              local_inverse_of_inverse):
    stabilize_db.register(_rule.name, _rule, "stabilize", "fast_run")
del _rule
