"""Canonicalization: rewrites that remove computations which do nothing (x * 1, x + 0,
--x, an identity DimShuffle, a cast to x's own dtype, ...) and put what remains in one
standard form (x ** 2 -> sqr(x), one DimShuffle instead of two, one reduction instead of two,
dot(a, b) for a matmul of matrices and vectors).

Every rule keeps the output's Type: a replacement has the output's dtype (x is cast when the
operation would have changed it, as x * 1.0 does for an integer x) and a static shape at
least as precise (x is allocated to the output's shape when a constant broadcast it, as in
x * ones((3, 1))). They run together, with the merge pass and constant folding, until none
changes the graph: canonicalize_db, an EquilibriumDatabase registered in rewrite_db as
'canonicalize' (tags canonicalize, fast_run) in the canonicalize phase, after the first
merge. The rules of arithmetic with zeros and the sparse updates are in zeros.py (which also
runs them again after the scan rewrites), those of ifelse in sympile/ifelse/rewriting.py,
both in canonicalize_db.

No rule changes a value numpy gives: x - x folds to 0 for integers only (a float x - x is nan
where x is inf or nan), and x / x does not fold (0 / 0 is nan). Two known differences remain:
x + 0 gives x where x is -0.0 (IEEE gives +0.0, which compares equal), and merged reshapes
and reductions skip the run-time checks of the inner one (a reshape whose size does not
match) and sum in another order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile import scalar
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.tensor.basic import Alloc
from sympile.tensor.blas.basic import Dot, MatMul
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.math import cast, elemwise_of
from sympile.tensor.reduction import CAReduce
from sympile.tensor.rewriting.basic import MergeRewriter, local_constant_folding, rewrite_db
from sympile.tensor.rewriting.matching import is_constant, is_elemwise, is_zeros, like_output
from sympile.tensor.shape import Reshape, SpecifyShape
from sympile.tensor.subtensor import IndexSlice, Subtensor
from sympile.tensor.type import TensorType

__all__ = ["canonicalize_db"]


# -- helpers ------------------------------------------------------------------------------------

def _is_inexact(dtype: str) -> bool:
    return np.dtype(dtype).kind in "fc"


# -- arithmetic ---------------------------------------------------------------------------------

@node_rewriter([Elemwise])
def local_mul_by_one(fgraph: FunctionGraph, node: Apply):
    """x * 1 -> x and 1 * x -> x (cast to the product's dtype, allocated to its shape when
    the constant broadcasts x)."""
    if not is_elemwise(node, scalar.mul):
        return None
    for position, other in ((0, 1), (1, 0)):
        if is_constant(node.inputs[other], 1):
            replacement = like_output(node, node.inputs[position])
            if replacement is not None:
                return [replacement]
    return None


@node_rewriter([Elemwise])
def local_mul_self(fgraph: FunctionGraph, node: Apply):
    """x * x -> sqr(x)."""
    if not is_elemwise(node, scalar.mul) or node.inputs[0] is not node.inputs[1]:
        return None
    replacement = elemwise_of(scalar.sqr)(node.inputs[0])
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


@node_rewriter([Elemwise])
def local_add_zero(fgraph: FunctionGraph, node: Apply):
    """x + 0 -> x and 0 + x -> x, the zeros a constant or an Alloc of one (zeros, zeros_like,
    fill(y, 0)); x cast and allocated like the sum. For x = -0.0 the sum is +0.0, which
    compares equal."""
    if not is_elemwise(node, scalar.add):
        return None
    for position, other in ((0, 1), (1, 0)):
        if is_zeros(node.inputs[other]):
            replacement = like_output(node, node.inputs[position])
            if replacement is not None:
                return [replacement]
    return None


@node_rewriter([Elemwise])
def local_sub_zero(fgraph: FunctionGraph, node: Apply):
    """x - 0 -> x, the zeros a constant or an Alloc of one (cast and allocated like the
    difference)."""
    if not (is_elemwise(node, scalar.sub) and is_zeros(node.inputs[1])):
        return None
    replacement = like_output(node, node.inputs[0])
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_sub_self(fgraph: FunctionGraph, node: Apply):
    """x - x -> zeros of x's shape and the difference's dtype, for an integer x only: a float
    x - x is nan where x is inf or nan, which zeros would hide (x / x has no exact fold at
    all: 0 / 0 is nan whatever the dtype, so it is left to run)."""
    if not is_elemwise(node, scalar.sub) or node.inputs[0] is not node.inputs[1] \
            or node.inputs[0].type.dtype not in scalar.INT_DTYPES + scalar.UINT_DTYPES:
        return None
    zero = np.zeros((1,) * node.outputs[0].type.ndim, dtype=node.outputs[0].type.dtype)
    replacement = like_output(node, TensorType(zero.dtype.name, zero.shape).make_constant(zero))
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_neg_neg(fgraph: FunctionGraph, node: Apply):
    """--x -> x."""
    if not is_elemwise(node, scalar.neg):
        return None
    (inner,) = node.inputs
    if inner.owner is None or not is_elemwise(inner.owner, scalar.neg):
        return None
    x = inner.owner.inputs[0]
    return [x] if node.outputs[0].type.is_super(x.type) else None


@node_rewriter([Elemwise])
def local_div_by_one(fgraph: FunctionGraph, node: Apply):
    """x / 1 -> x (cast to the quotient's dtype: float64 for an integer x; allocated to its
    shape when the constant broadcasts x)."""
    if not (is_elemwise(node, scalar.true_div) and is_constant(node.inputs[1], 1)):
        return None
    replacement = like_output(node, node.inputs[0])
    return None if replacement is None else [replacement]


def _constant_operand(node: Apply) -> tuple[Variable, Constant] | None:
    """(x, c) if node is a binary Elemwise with one constant input c (either side)."""
    left, right = node.inputs
    if isinstance(right, Constant) and not isinstance(left, Constant):
        return left, right
    if isinstance(left, Constant) and not isinstance(right, Constant):
        return right, left
    return None


def _combinable_dtype(dtype: str) -> bool:
    """Integers wrap around modulo 2**bits and floats round: both keep + and * associative
    enough to regroup (within rounding for floats); booleans do not (True + True)."""
    return np.dtype(dtype).kind in "iufc"


@node_rewriter([Elemwise])
def local_combine_constants(fgraph: FunctionGraph, node: Apply):
    """(x * c1) * c2 -> x * (c1 * c2) and (x + c1) + c2 -> x + (c1 + c2), constants on
    either side (x * 2 * 3 -> x * 6 once folded). Only when the inner result already has the
    outer's dtype (so both products are computed in that dtype) and it is not boolean."""
    for scalar_op in (scalar.mul, scalar.add):
        if is_elemwise(node, scalar_op):
            break
    else:
        return None
    dtype = node.outputs[0].type.dtype
    outer = _constant_operand(node)
    if outer is None or not _combinable_dtype(dtype):
        return None
    inner, outer_constant = outer
    if inner.owner is None or not is_elemwise(inner.owner, scalar_op) \
            or inner.type.dtype != dtype:
        return None
    matched = _constant_operand(inner.owner)
    if matched is None:
        return None
    x, inner_constant = matched
    op = elemwise_of(scalar_op)
    combined = op(cast(inner_constant, dtype), cast(outer_constant, dtype))
    replacement = like_output(node, op(x, combined))
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_div_to_mul(fgraph: FunctionGraph, node: Apply):
    """x / c -> x * (1 / c) for a constant c and a real or complex floating-point x (the
    reciprocal computed once, in the quotient's dtype). Integer x is left alone (true
    division of integers is exact there, and int // stays as it is)."""
    if not is_elemwise(node, scalar.true_div):
        return None
    x, divisor = node.inputs
    dtype = node.outputs[0].type.dtype
    if not isinstance(divisor, Constant) or isinstance(x, Constant) \
            or not _is_inexact(x.type.dtype) or not _is_inexact(dtype):
        return None
    with np.errstate(divide="ignore"):
        reciprocal = np.reciprocal(np.asarray(divisor.data).astype(dtype))
    factor = TensorType(dtype, reciprocal.shape).make_constant(reciprocal)
    replacement = like_output(node, elemwise_of(scalar.mul)(x, factor))
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_div_div(fgraph: FunctionGraph, node: Apply):
    """(a / b) / c -> a / (b * c), floating-point only: one division instead of two."""
    if not is_elemwise(node, scalar.true_div):
        return None
    quotient, c = node.inputs
    dtype = node.outputs[0].type.dtype
    if quotient.owner is None or not is_elemwise(quotient.owner, scalar.true_div) \
            or quotient.type.dtype != dtype or not _is_inexact(dtype):
        return None
    a, b = quotient.owner.inputs
    if not (_is_inexact(b.type.dtype) or _is_inexact(c.type.dtype)):
        # b * c of integers could wrap around where b / c in floats would not.
        return None
    divisor = elemwise_of(scalar.mul)(cast(b, dtype), cast(c, dtype))
    replacement = like_output(node, elemwise_of(scalar.true_div)(a, divisor))
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_switch_constant_condition(fgraph: FunctionGraph, node: Apply):
    """switch(c, a, b) -> a when the constant c is true everywhere, b when false everywhere
    (cast to the switch's dtype, allocated to its shape)."""
    if not is_elemwise(node, scalar.switch):
        return None
    condition, if_true, if_false = node.inputs
    if not isinstance(condition, Constant):
        return None
    data = np.asarray(condition.data)
    if data.size == 0:
        return None
    if np.all(data):
        chosen = if_true
    elif not np.any(data):
        chosen = if_false
    else:
        return None
    replacement = like_output(node, chosen)
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_int_div_by_one(fgraph: FunctionGraph, node: Apply):
    """x // 1 -> x for integer x (for a float x it is floor(x), left alone)."""
    if not (is_elemwise(node, scalar.int_div) and is_constant(node.inputs[1], 1)) \
            or np.dtype(node.inputs[0].type.dtype).kind not in "iu":
        return None
    replacement = like_output(node, node.inputs[0])
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_neg_of_sub(fgraph: FunctionGraph, node: Apply):
    """-(a - b) -> b - a (exact: IEEE rounding and integer wraparound are symmetric)."""
    if not is_elemwise(node, scalar.neg):
        return None
    (difference,) = node.inputs
    if difference.owner is None or not is_elemwise(difference.owner, scalar.sub):
        return None
    a, b = difference.owner.inputs
    if np.dtype(node.outputs[0].type.dtype).kind == "u":
        return None
    replacement = like_output(node, elemwise_of(scalar.sub)(b, a))
    return None if replacement is None else [replacement]


@node_rewriter([Elemwise])
def local_switch_same_branches(fgraph: FunctionGraph, node: Apply):
    """switch(c, x, x) -> x (allocated to the switch's shape when c broadcasts x)."""
    if not is_elemwise(node, scalar.switch) or node.inputs[1] is not node.inputs[2]:
        return None
    replacement = like_output(node, node.inputs[1])
    return None if replacement is None else [replacement]


# x ** c -> f(x) for these exponents c: (c, f, whether the power's dtype must be inexact).
# x ** -1 of an integer x is an error in numpy, while reciprocal would give a value.
_POWERS = ((1, None, False), (2, scalar.sqr, False), (0.5, scalar.sqrt, True),
           (-1, scalar.reciprocal, True))


@node_rewriter([Elemwise])
def local_pow_specialize(fgraph: FunctionGraph, node: Apply):
    """x ** 1 -> x, x ** 0 -> ones, x ** 2 -> sqr(x), x ** 0.5 -> sqrt(x),
    x ** -1 -> reciprocal(x) (floats and complex only); x is first cast to the power's dtype
    (so that int ** 0.5 is the float64 sqrt) and the result allocated to its shape."""
    if not is_elemwise(node, scalar.pow):
        return None
    x, exponent = node.inputs
    dtype = node.outputs[0].type.dtype
    if is_constant(exponent, 0):
        one = np.ones((1,) * node.outputs[0].type.ndim, dtype=dtype)
        replacement = like_output(node, TensorType(dtype, one.shape).make_constant(one))
        return None if replacement is None else [replacement]
    for value, scalar_op, inexact_only in _POWERS:
        if not is_constant(exponent, value) or (inexact_only and not _is_inexact(dtype)):
            continue
        result = cast(x, dtype)
        if scalar_op is not None:
            result = elemwise_of(scalar_op)(result)
        if result.type.dtype != dtype:
            return None
        replacement = like_output(node, result)
        return None if replacement is None else [replacement]
    return None


@node_rewriter([Elemwise])
def local_useless_cast(fgraph: FunctionGraph, node: Apply):
    """cast(x, x.dtype) -> x."""
    if not (isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, scalar.Cast)):
        return None
    (x,) = node.inputs
    return [x] if node.outputs[0].type.is_super(x.type) else None


# -- shapes -------------------------------------------------------------------------------------

@node_rewriter([DimShuffle])
def local_dimshuffle_dimshuffle(fgraph: FunctionGraph, node: Apply):
    """DimShuffle{outer}(DimShuffle{inner}(x)) -> DimShuffle{inner then outer}(x), or x when
    the composition is the identity."""
    (inner,) = node.inputs
    if inner.owner is None or not isinstance(inner.owner.op, DimShuffle):
        return None
    x = inner.owner.inputs[0]
    inner_order = inner.owner.op.new_order
    order = tuple("x" if axis == "x" else inner_order[axis] for axis in node.op.new_order)
    if order == tuple(range(x.type.ndim)):
        replacement = x
    else:
        replacement = DimShuffle(x.type.ndim, order)(x)
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


@node_rewriter([DimShuffle])
def local_useless_dimshuffle(fgraph: FunctionGraph, node: Apply):
    """DimShuffle{0, 1, ..., n-1}(x) -> x."""
    if node.op.new_order != tuple(range(node.op.input_ndim)):
        return None
    return [node.inputs[0]]


@node_rewriter([Reshape])
def local_reshape_reshape(fgraph: FunctionGraph, node: Apply):
    """reshape(reshape(x, s1), s2) -> reshape(x, s2) (C order depends only on the size);
    skipped when the inner reshape's type knows lengths the new one would not."""
    inner, shape = node.inputs
    if inner.owner is None or not isinstance(inner.owner.op, Reshape):
        return None
    replacement = node.op(inner.owner.inputs[0], shape)
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


def _is_full_slice(entry: Any) -> bool:
    return isinstance(entry, IndexSlice) and entry.start in (None, 0) and entry.stop is None \
        and entry.step in (None, 1)


@node_rewriter([Subtensor])
def local_useless_subtensor(fgraph: FunctionGraph, node: Apply):
    """x[:], x[:, 0:], x[::1] (every entry a slice of the whole axis) -> x, and with newaxis
    entries (x[:, :, None], x[None]) -> the DimShuffle inserting those broadcast axes."""
    x = node.inputs[0]
    order: list[Any] = []
    for entry in node.op.idx_list:
        if entry is None:
            order.append("x")
        elif _is_full_slice(entry):
            order.append(len(order) - order.count("x"))
        else:
            return None
    order.extend(range(len(order) - order.count("x"), x.type.ndim))
    replacement = x if "x" not in order else DimShuffle(x.type.ndim, order)(x)
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None

@node_rewriter([SpecifyShape])
def local_useless_specify_shape(fgraph: FunctionGraph, node: Apply):
    """specify_shape(x, shape) -> x when x's type already knows every given length (entries
    that are None, or constants equal to x's static lengths)."""
    x, *lengths = node.inputs
    for static, length in zip(x.type.shape, lengths):
        if not isinstance(length, Constant):
            return None
        given = int(length.data)
        if given != -1 and given != static:
            return None
    return [x]


@node_rewriter([Elemwise])
def local_elemwise_alloc(fgraph: FunctionGraph, node: Apply):
    """op(..., alloc(v, *lengths), ...) -> op(..., v, ...) (v padded to the rank with
    DimShuffle) when Elemwise's own broadcasting gives the same result: on every axis along
    which the alloc broadcasts v, another input is not broadcast (its type does not say
    length 1), so the output has that input's length, which Elemwise checks equals the
    alloc's. The gradient of a broadcast produces these (ones allocated to x's shape, then
    multiplied by the output gradient). As with the shape rules (rewriting/shape.py), the
    rewritten graph skips a check: where that input's length differs from the alloc's, the
    original raises and the rewritten one broadcasts v to the input's length."""
    if len(node.inputs) < 2 or node.op.inplace_pattern:
        return None
    for position, allocated in enumerate(node.inputs):
        if allocated.owner is None or not isinstance(allocated.owner.op, Alloc):
            continue
        value, *lengths = allocated.owner.inputs
        padding = len(lengths) - value.type.ndim
        broadcast_axes = [axis for axis in range(len(lengths))
                          if axis < padding or value.type.shape[axis - padding] == 1]
        others = [v for index, v in enumerate(node.inputs) if index != position]
        if not all(any(other.type.shape[axis] != 1 for other in others)
                   for axis in broadcast_axes):
            continue
        if padding:
            value = DimShuffle(value.type.ndim, ["x"] * padding + list(range(value.type.ndim)))(
                value)
        inputs = list(node.inputs)
        inputs[position] = value
        replacement = node.op(*inputs)
        if node.outputs[0].type.is_super(replacement.type):
            return [replacement]
    return None


# -- reductions ---------------------------------------------------------------------------------

def _changes_dtype(node: Apply) -> bool:
    dtype = node.outputs[0].type.dtype
    return node.inputs[0].type.dtype != dtype or node.op.acc_dtype not in (None, dtype)


@node_rewriter([CAReduce])
def local_reduce_reduce(fgraph: FunctionGraph, node: Apply):
    """reduce(reduce(x, axes1), axes2) -> reduce(x, axes1 and axes2), for the same scalar op
    (sum of a sum, max of a max, ...) when the outer reduction changes no dtype (the inner's
    dtype and accumulator dtype are kept)."""
    (inner,) = node.inputs
    if inner.owner is None or not isinstance(inner.owner.op, CAReduce):
        return None
    inner_op = inner.owner.op
    if inner_op.scalar_op != node.op.scalar_op or _changes_dtype(node):
        return None
    x = inner.owner.inputs[0]
    inner_axes = range(x.type.ndim) if inner_op.axis is None else inner_op.axis
    kept = [axis for axis in range(x.type.ndim) if axis not in inner_axes]
    outer_axes = range(len(kept)) if node.op.axis is None else node.op.axis
    axes = tuple(sorted(set(inner_axes) | {kept[axis] for axis in outer_axes}))
    op = CAReduce(inner_op.scalar_op, None if len(axes) == x.type.ndim else axes,
                  inner_op.dtype, inner_op.acc_dtype)
    replacement = op(x)
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


@node_rewriter([CAReduce])
def local_reduce_length_one(fgraph: FunctionGraph, node: Apply):
    """reduce(x, axes) -> x without those axes (a DimShuffle) when x's type says every
    reduced axis has length 1 and the reduction changes no dtype: the fold of one element is
    that element. (The sum of a gradient over an axis that dimshuffle('x', ...) inserted.)"""
    (x,) = node.inputs
    axes = range(x.type.ndim) if node.op.axis is None else node.op.axis
    if _changes_dtype(node) or any(x.type.shape[axis] != 1 for axis in axes):
        return None
    replacement = DimShuffle(x.type.ndim, [a for a in range(x.type.ndim) if a not in axes])(x)
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


@node_rewriter([CAReduce])
def local_reduce_dimshuffle(fgraph: FunctionGraph, node: Apply):
    """reduce(DimShuffle{order}(x), axes) -> DimShuffle{kept}(reduce(x, axes of x)): the
    reduction moved through a transpose or an expansion (sum(x.T, 0) -> sum(x, 1), and a sum
    over an inserted broadcast axis vanishes). Only DimShuffles that drop no axis."""
    (shuffled,) = node.inputs
    if shuffled.owner is None or not isinstance(shuffled.owner.op, DimShuffle):
        return None
    order = shuffled.owner.op.new_order
    x = shuffled.owner.inputs[0]
    if sorted(axis for axis in order if axis != "x") != list(range(x.type.ndim)):
        return None
    reduced = set(range(len(order)) if node.op.axis is None else node.op.axis)
    x_axes = tuple(sorted(order[axis] for axis in reduced if order[axis] != "x"))
    if not x_axes:
        return None
    kept_x_axes = [axis for axis in range(x.type.ndim) if axis not in x_axes]
    new_order = tuple("x" if order[axis] == "x" else kept_x_axes.index(order[axis])
                      for axis in range(len(order)) if axis not in reduced)
    op = CAReduce(node.op.scalar_op, None if len(x_axes) == x.type.ndim else x_axes,
                  node.op.dtype, node.op.acc_dtype)
    result = op(x)
    if new_order != tuple(range(result.type.ndim)):
        result = DimShuffle(result.type.ndim, new_order)(result)
    return [result] if node.outputs[0].type.is_super(result.type) else None


@node_rewriter([MatMul])
def local_matmul_to_dot(fgraph, node):
    """matmul(a, b) -> dot(a, b) where neither has more than 2 axes (the same product, as
    numpy defines both): the BLAS rules match dot, so W - lr * (x.T @ g) becomes one Gemm."""
    a, b = node.inputs
    if a.type.ndim > 2 or b.type.ndim > 2:
        return None
    result = Dot()(a, b)
    return [result] if node.outputs[0].type.is_super(result.type) else None


# -- the database -------------------------------------------------------------------------------

CANONICALIZE_RULES = (
    local_mul_by_one, local_mul_self, local_add_zero, local_sub_zero, local_sub_self,
    local_neg_neg,
    local_div_by_one, local_pow_specialize, local_useless_cast, local_dimshuffle_dimshuffle,
    local_useless_dimshuffle, local_reshape_reshape, local_useless_specify_shape,
    local_reduce_reduce, local_reduce_length_one, local_combine_constants, local_div_to_mul,
    local_div_div, local_switch_constant_condition, local_useless_subtensor,
    local_reduce_dimshuffle, local_elemwise_alloc, local_int_div_by_one, local_neg_of_sub,
    local_switch_same_branches, local_matmul_to_dot,
)

canonicalize_db = EquilibriumDatabase("canonicalize")
# Merging and folding inside the equilibrium expose more patterns (x - x once both x are one
# variable, x * 1 once 1 is a folded constant).
canonicalize_db.register("merge", MergeRewriter("merge"), "canonicalize", "merge", "fast_run")
canonicalize_db.register("local_constant_folding", local_constant_folding, "canonicalize",
                         "constant_folding", "fast_run")
for _rule in CANONICALIZE_RULES:
    canonicalize_db.register(_rule.name, _rule, "canonicalize", "fast_run")

rewrite_db.register("canonicalize", canonicalize_db, "canonicalize", "fast_run",
                    phase="canonicalize")
