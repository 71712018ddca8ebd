"""Specialization: general operations replaced by cheaper special ones once the graph is in
canonical form and stabilized.

specialize_db, an EquilibriumDatabase registered in rewrite_db as 'specialize' (tags
specialize, fast_run) in the specialize phase, after stabilize and before BLAS and fusion:

  local_mul_by_minus_one  x * -1, -1 * x                      -> neg(x)
  local_sum_of_product_to_dot
                          sum(x[:, :, None] * y[None, :, :], 1) -> dot(x, y)
                          (any placement of the broadcast axes and of the summed axis, the
                          matrices possibly transposed)
  local_useless_topk      TopKOp's values and indices, one of them unused
                                                              -> a TopKOp of the other only
                          (Theano's rule: the values need only the sort, the indices only
                          the argsort)

(x ** 2 -> sqr, x ** 0.5 -> sqrt and x ** -1 -> reciprocal are in canonicalize, as
local_pow_specialize.)
"""

from __future__ import annotations

from sympile import scalar
from sympile.graph.basic import Apply, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.tensor.blas.basic import dot
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.math import cast, elemwise_of
from sympile.tensor.reduction import CAReduce
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.rewriting.canonicalize import (
    local_dimshuffle_dimshuffle,
    local_useless_dimshuffle,
)
from sympile.tensor.rewriting.matching import is_constant, is_elemwise, like_output
from sympile.tensor.sort import TopKOp

__all__ = ["local_mul_by_minus_one", "local_sum_of_product_to_dot", "local_useless_topk",
           "specialize_db"]

# After stabilize, whose patterns look for the general forms, and before BLAS,
# which turns the dots made here into gemm/gemv.


@node_rewriter([Elemwise])
def local_mul_by_minus_one(fgraph: FunctionGraph, node: Apply):
    """x * -1 -> neg(x) and -1 * x -> neg(x), x first cast to the product's dtype (a bool or
    unsigned x times -1.0 is the negation of its float value; neg of the bool itself does
    not exist), then allocated to its shape when the constant broadcasts x. Not for unsigned
    or boolean products, where -1 is not what neg computes."""
    output_dtype = node.outputs[0].type.dtype
    if not is_elemwise(node, scalar.mul) or output_dtype[0] in "ub":
        return None
    for position, other in ((0, 1), (1, 0)):
        if is_constant(node.inputs[other], -1):
            negated = elemwise_of(scalar.neg)(cast(node.inputs[position], output_dtype))
            replacement = like_output(node, negated)
            if replacement is not None:
                return [replacement]
    return None


def _expanded_matrix(variable: Variable) -> tuple[Variable, tuple] | None:
    """(m, order) if `variable` is DimShuffle{order}(m) of a matrix m with exactly one
    inserted broadcast axis ('x') among three."""
    owner = variable.owner
    if owner is None or not isinstance(owner.op, DimShuffle) or owner.inputs[0].type.ndim != 2:
        return None
    order = owner.op.new_order
    if len(order) != 3 or order.count("x") != 1:
        return None
    return owner.inputs[0], order


@node_rewriter([CAReduce])
def local_sum_of_product_to_dot(fgraph: FunctionGraph, node: Apply):
    """sum(a * b, axis=r) -> dot, where a and b are matrices expanded to three axes, a
    broadcast along axis p and b along axis q (p, q, r all different): the product is then an
    outer product along p and q and the sum over r a matrix product. It always pays: the
    n*k*m product is never stored. Real floating point of one dtype throughout."""
    if node.op.scalar_op != scalar.add or node.op.axis is None or len(node.op.axis) != 1:
        return None
    (product,) = node.inputs
    if product.owner is None or not is_elemwise(product.owner, scalar.mul) \
            or product.type.ndim != 3:
        return None
    dtype = node.outputs[0].type.dtype
    expanded = [_expanded_matrix(v) for v in product.owner.inputs]
    if None in expanded or dtype not in ("float32", "float64") or product.type.dtype != dtype:
        return None
    # The output's axes are the two not summed, in order; the first comes from the factor
    # broadcast along the second, which is therefore the left factor of the dot.
    (left, left_order), (right, right_order) = sorted(
        expanded, key=lambda factor: factor[1].index("x"), reverse=True)
    if left.type.dtype != dtype or right.type.dtype != dtype:
        return None
    (summed,) = node.op.axis
    left_broadcast, right_broadcast = left_order.index("x"), right_order.index("x")
    if len({left_broadcast, right_broadcast, summed}) != 3:
        return None
    left_matrix = DimShuffle(2, (left_order[right_broadcast], left_order[summed]))(left)
    right_matrix = DimShuffle(2, (right_order[summed], right_order[left_broadcast]))(right)
    result = dot(left_matrix, right_matrix)
    return [result] if node.outputs[0].type.is_super(result.type) else None


@node_rewriter([TopKOp])
def local_useless_topk(fgraph: FunctionGraph, node: Apply):
    """TopKOp computing values and indices of which only one is used -> a TopKOp computing
    that one (see the module docstring)."""
    op = node.op
    if not (op.return_values and op.return_indices):
        return None
    used = [bool(fgraph.clients.get(output)) for output in node.outputs]
    if used[0] == used[1]:
        return None
    only = TopKOp(op.axis, op.sorted, op.idx_dtype, return_values=used[0],
                  return_indices=used[1])(*node.inputs)
    return {node.outputs[used.index(True)]: only}


specialize_db = EquilibriumDatabase("specialize")
# The two DimShuffle rules of canonicalize run here too, to tidy the transposes that
# local_sum_of_product_to_dot puts around its dot.
for _rule in (local_mul_by_minus_one, local_sum_of_product_to_dot, local_useless_topk,
              local_dimshuffle_dimshuffle, local_useless_dimshuffle):
    specialize_db.register(_rule.name, _rule, "specialize", "fast_run")
del _rule

rewrite_db.register("specialize", specialize_db, "specialize", "fast_run",
                    phase="specialize")
