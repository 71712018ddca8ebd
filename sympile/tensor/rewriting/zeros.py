"""Rewrites of arithmetic with zeros, in canonicalize_db (tags canonicalize, zeros, fast_run)
and again after the scan rewrites, in zeros_after_scan_db (registered in rewrite_db as
'zeros_after_scan', tags canonicalize, zeros, fast_run, in the after_scan phase).

The zeros are a constant array of zeros or an Alloc of one (zeros, zeros_like, fill(x, 0),
the zero gradients and accumulators that grad and scan build):

  local_mul_zero              x * zeros, zeros * x            -> zeros of the product's shape
                              (x of an integer or boolean dtype, or a constant of finite values)
  local_zero_div              zeros / c, zeros // c           -> zeros (c a constant with no
                                                                 zero and no nan)
  local_zeros_sub             zeros - x                       -> -x
  local_dimshuffle_of_alloc   DimShuffle(alloc(v, *lengths))  -> alloc(v, *permuted lengths)
  local_subtensor_of_alloc    alloc(v, *lengths)[index]       -> alloc(v, *region lengths)
                              (both for a scalar v, every element the same)
  local_add_inc_subtensor_of_zeros
                              x + c * inc_subtensor(zeros[index], y)
                                                              -> inc_subtensor(x[index], c * y)
  local_sub_inc_subtensor_of_zeros
                              x - c * inc_subtensor(zeros[index], y)
                                                              -> inc_subtensor(x[index], -c * y)
                              (c absent, one value for every element, or, for an index of
                              the first axis only, one row for every row, c[0] below: the
                              update of a parameter by the gradient of some of its rows,
                              which writes those rows instead of the whole array)

x + zeros -> x and x - zeros -> x are local_add_zero and local_sub_zero (canonicalize.py).

Changes of value: x * 0 is 0 only where x is finite, so a float x is multiplied out only
when it is a constant of finite values (Theano's local_mul_zero gives 0 for any x, nan and
inf included; here a variable float x is left alone); signs of zero are not kept (-x * 0 is
-0.0, the rewritten graph gives +0.0, which compares equal). The rewritten graphs skip the
run-time checks that the lengths of the operands match (as local_elemwise_alloc does) and
that an index of an Alloc is in bounds: where those fail, the original raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile import scalar
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.tensor.basic import Alloc, alloc
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.math import cast, elemwise_of
from sympile.tensor.rewriting.basic import MergeRewriter, local_constant_folding, rewrite_db
from sympile.tensor.rewriting.canonicalize import canonicalize_db, local_add_zero, local_sub_zero
from sympile.tensor.rewriting.matching import is_elemwise, is_zeros, like_output
from sympile.tensor.shape import ShapeI
from sympile.tensor.subtensor import (
    ARRAY,
    SCALAR,
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    IncSubtensor,
    IndexSlice,
    Subtensor,
)
from sympile.tensor.subtensor.ops import may_repeat
from sympile.tensor.type import TensorType

__all__ = [
    "local_add_inc_subtensor_of_zeros",
    "local_dimshuffle_of_alloc",
    "local_mul_zero",
    "local_sub_inc_subtensor_of_zeros",
    "local_subtensor_of_alloc",
    "local_zero_div",
    "local_zeros_sub",
    "zeros_after_scan_db",
]


# -- helpers ------------------------------------------------------------------------------------

def _zeros_like_output(node: Apply) -> list[Variable] | None:
    """Zeros of the Type of node's only output: one of node's inputs when it is zeros of that
    Type already, else a constant zero allocated to the output's shape."""
    (output,) = node.outputs
    for variable in node.inputs:
        if is_zeros(variable) and variable.type.dtype == output.type.dtype \
                and output.type.is_super(variable.type) \
                and variable.type.shape == output.type.shape:
            return [variable]
    zero = np.zeros((1,) * output.type.ndim, dtype=output.type.dtype)
    replacement = like_output(node, TensorType(zero.dtype.name, zero.shape).make_constant(zero))
    return None if replacement is None else [replacement]


def _times_zero_is_zero(variable: Variable) -> bool:
    """True if variable * 0 is 0 for every value variable can take: integers and booleans, and
    constants of finite values (inf * 0 and nan * 0 are nan)."""
    if np.dtype(variable.type.dtype).kind in "biu":
        return True
    if not isinstance(variable, Constant):
        return False
    return bool(np.all(np.isfinite(np.asarray(variable.data))))


def _as_scalar(variable: Variable) -> Variable | None:
    """`variable` as a 0-d tensor when its type says every axis has length 1 (one element),
    else None."""
    if any(length != 1 for length in variable.type.shape):
        return None
    if variable.type.ndim == 0:
        return variable
    return DimShuffle(variable.type.ndim, ())(variable)


def _alloc_scalar(variable: Variable) -> Variable | None:
    """v as a 0-d tensor if `variable` is alloc(v, ...) of a v of one element, else None."""
    if variable.owner is None or not isinstance(variable.owner.op, Alloc):
        return None
    return _as_scalar(variable.owner.inputs[0])


def _symbolic_shape(variable: Variable) -> tuple:
    """variable's lengths: ints where its type knows them, ShapeI otherwise."""
    return tuple(ShapeI(axis)(variable) if length is None else length
                 for axis, length in enumerate(variable.type.shape))


def _same_lengths(x: Variable, y: Variable) -> bool:
    """True when adding x and y (Elemwise) gives x's shape whenever it runs: on every axis the
    static lengths are equal, or neither is 1 (an axis is broadcast only where its type says
    length 1, so lengths that are not known must be equal at run time)."""
    if x.type.ndim != y.type.ndim:
        return False
    return all(x_length == y_length or (None in (x_length, y_length)
                                        and 1 not in (x_length, y_length))
               for x_length, y_length in zip(x.type.shape, y.type.shape))


# -- arithmetic ---------------------------------------------------------------------------------

@node_rewriter([Elemwise])
def local_mul_zero(fgraph: FunctionGraph, node: Apply):
    """x * zeros -> zeros and zeros * x -> zeros, of the product's dtype and shape (allocated
    when x is larger than the zeros), when x * 0 is 0 for every value of x: x of an integer
    or boolean dtype, or a constant of finite values (0.01 * zeros, the learning rate times
    a zero gradient)."""
    if not is_elemwise(node, scalar.mul) or len(node.inputs) != 2:
        return None
    for position in (0, 1):
        zeros, other = node.inputs[position], node.inputs[1 - position]
        if is_zeros(zeros) and _times_zero_is_zero(other):
            return _zeros_like_output(node)
    return None


def _safe_divisor(variable: Variable) -> bool:
    """True if 0 / variable is 0 for every element: a constant with no zero and no nan."""
    if not isinstance(variable, Constant):
        return False
    data = np.asarray(variable.data)
    return data.size > 0 and not np.any(data == 0) and not np.any(np.isnan(data))


@node_rewriter([Elemwise])
def local_zero_div(fgraph: FunctionGraph, node: Apply):
    """zeros / c -> zeros and zeros // c -> zeros (of the quotient's dtype and shape) for a
    constant c with no zero and no nan (0 / 0 and 0 / nan are nan, integer 0 // 0 is 0 only
    by numpy's convention)."""
    if not (is_elemwise(node, scalar.true_div) or is_elemwise(node, scalar.int_div)):
        return None
    zeros, divisor = node.inputs
    if not is_zeros(zeros) or not _safe_divisor(divisor):
        return None
    return _zeros_like_output(node)


@node_rewriter([Elemwise])
def local_zeros_sub(fgraph: FunctionGraph, node: Apply):
    """zeros - x -> -x (cast to the difference's dtype, allocated to its shape when the zeros
    are larger than x). Not for unsigned or boolean differences."""
    if not is_elemwise(node, scalar.sub) or node.outputs[0].type.dtype[0] in "ub":
        return None
    zeros, x = node.inputs
    if not is_zeros(zeros):
        return None
    replacement = like_output(node, elemwise_of(scalar.neg)(cast(x, node.outputs[0].type.dtype)))
    return None if replacement is None else [replacement]


# -- indexing and broadcasting of an Alloc -----------------------------------------------------

@node_rewriter([DimShuffle])
def local_dimshuffle_of_alloc(fgraph: FunctionGraph, node: Apply):
    """DimShuffle{order}(alloc(v, *lengths)) -> alloc(v, *lengths in order, 1 for each
    inserted axis) for a v of one element (the dropped axes have length 1)."""
    (allocated,) = node.inputs
    value = _alloc_scalar(allocated)
    if value is None:
        return None
    lengths = allocated.owner.inputs[1:]
    replacement = alloc(value, *[1 if axis == "x" else lengths[axis]
                                 for axis in node.op.new_order])
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


@node_rewriter([Subtensor, AdvancedSubtensor])
def local_subtensor_of_alloc(fgraph: FunctionGraph, node: Apply):
    """alloc(v, *lengths)[index] -> alloc(v, *the region's lengths) for a v of one element,
    basic and advanced indices (every element of the region is v). The region's lengths are
    the index op's infer_shape on the Alloc's lengths; the index is no longer checked
    against them."""
    allocated, *index_inputs = node.inputs
    value = _alloc_scalar(allocated)
    if value is None:
        return None
    input_shapes = [tuple(allocated.owner.inputs[1:])] + [_symbolic_shape(v)
                                                          for v in index_inputs]
    (region,) = node.op.infer_shape(fgraph, node, input_shapes)
    replacement = alloc(value, *region)
    return [replacement] if node.outputs[0].type.is_super(replacement.type) else None


# -- sparse updates -----------------------------------------------------------------------------

_INCREMENTS = (IncSubtensor, AdvancedIncSubtensor)


def _indexes_first_axis_only(op: Any) -> bool:
    """True if op's index is one entry on x's first axis (an integer, a slice, an integer
    scalar or array): the region's last axes are then x's other axes, in order."""
    return len(op.idx_list) == 1 and (op.idx_list[0] in (SCALAR, ARRAY)
                                      or isinstance(op.idx_list[0], (int, IndexSlice)))


def _region_factor(factor: Variable, op: Any) -> Variable | None:
    """The factor that scales the region the same way as `factor` scales x, or None: a 0-d
    one for a factor of one value, and for an index of x's first axis only, a factor of
    length 1 there without that axis (the same value for every row: it broadcasts against
    the region's last axes, x's other axes)."""
    scale = _as_scalar(factor)
    if scale is not None:
        return scale
    if factor.type.shape[0] == 1 and _indexes_first_axis_only(op):
        return DimShuffle(factor.type.ndim, tuple(range(1, factor.type.ndim)))(factor)
    return None


def _scaled_increment(variable: Variable) -> tuple[Variable | None, Apply] | None:
    """(factor, node) where node is the inc_subtensor or set_subtensor that `variable` is
    (factor None) or that `variable` multiplies (either side) by a factor that scales the
    region's elements alike (_region_factor; returned as that region factor); None
    otherwise."""
    owner = variable.owner
    if owner is None:
        return None
    if isinstance(owner.op, _INCREMENTS):
        return None, owner
    if not is_elemwise(owner, scalar.mul) or len(owner.inputs) != 2:
        return None
    for position in (0, 1):
        factor, written = owner.inputs[position], owner.inputs[1 - position]
        if written.owner is None or not isinstance(written.owner.op, _INCREMENTS) \
                or written.type.dtype != variable.type.dtype \
                or not _same_lengths(written, variable):
            continue
        region_factor = _region_factor(factor, written.owner.op)
        if region_factor is not None:
            return region_factor, written.owner
    return None


def _sparse_update(node: Apply, x: Variable, term: Variable, negate: bool):
    """The replacement of node, x + term (x - term if negate), for a term that is
    [factor *] inc_subtensor(zeros[index], y): inc_subtensor(x[index], [-][factor *] y);
    None when term is not of that form or the rewrite would change a value."""
    matched = _scaled_increment(term)
    if matched is None:
        return None
    factor, written = matched
    (output,) = node.outputs
    dtype = output.type.dtype
    op = written.op
    zeros, y, *index_inputs = written.inputs
    if not is_zeros(zeros) or not _same_lengths(x, zeros) \
            or not x.type.dtype == zeros.type.dtype == term.type.dtype == dtype:
        return None
    if negate and dtype[0] in "ub":
        return None
    if isinstance(op, IncSubtensor):
        increment: Any = IncSubtensor(op.idx_list)
    else:
        # Setting where an index repeats keeps one value, adding keeps their sum; without
        # repeats the two agree.
        if (op.set_instead_of_inc or op.ignore_duplicates) \
                and may_repeat(op, zeros, index_inputs):
            return None
        increment = AdvancedIncSubtensor(op.idx_list)
    value = y
    if factor is not None:
        scale = cast(factor, dtype)
        if negate:
            scale = elemwise_of(scalar.neg)(scale)
        value = elemwise_of(scalar.mul)(scale, y)
    elif negate:
        value = elemwise_of(scalar.neg)(y)
    replacement = increment(x, value, *index_inputs)
    return [replacement] if output.type.is_super(replacement.type) else None


@node_rewriter([Elemwise])
def local_add_inc_subtensor_of_zeros(fgraph: FunctionGraph, node: Apply):
    """x + c * inc_subtensor(zeros[index], y) -> inc_subtensor(x[index], c * y), and
    x + inc_subtensor(zeros[index], y) -> inc_subtensor(x[index], y), with the sum's (and the
    product's) arguments either way round, for basic and advanced indices (a gradient of
    x[index] added to an accumulator, or to a parameter as its update); c one value for
    every element (a scalar, broadcast), or of length 1 on the first axis when the index is
    one entry on that axis (an integer, a slice, integer rows: the region's last axes are
    x's other axes), where c * y is c[0] * y. An advanced index that repeats an element adds
    every occurrence in both graphs. set_subtensor on zeros counts as inc_subtensor where
    the index selects no element twice: always for a basic index, and for an advanced one
    when that is known at graph build time (ignore_duplicates too). Only when x, the zeros,
    the product and the sum have one dtype and the zeros x's lengths (the rewritten graph
    skips the check that unknown lengths match: where they differ, the original raises)."""
    if not is_elemwise(node, scalar.add) or len(node.inputs) != 2:
        return None
    for position in (0, 1):
        replacement = _sparse_update(node, node.inputs[position], node.inputs[1 - position],
                                     negate=False)
        if replacement is not None:
            return replacement
    return None


@node_rewriter([Elemwise])
def local_sub_inc_subtensor_of_zeros(fgraph: FunctionGraph, node: Apply):
    """x - c * inc_subtensor(zeros[index], y) -> inc_subtensor(x[index], -c * y) and
    x - inc_subtensor(zeros[index], y) -> inc_subtensor(x[index], -y): a gradient step on
    the rows of a parameter that the gradient touches (as local_add_inc_subtensor_of_zeros,
    which gives the conditions; not for unsigned or boolean dtypes). x - c * g and
    x + (-c) * g round alike."""
    if not is_elemwise(node, scalar.sub):
        return None
    x, term = node.inputs
    return _sparse_update(node, x, term, negate=True)


ZERO_RULES = (
    local_mul_zero, local_zero_div, local_zeros_sub, local_dimshuffle_of_alloc,
    local_subtensor_of_alloc, local_add_inc_subtensor_of_zeros, local_sub_inc_subtensor_of_zeros,
)

for _rule in ZERO_RULES:
    canonicalize_db.register(_rule.name, _rule, "canonicalize", "zeros", "fast_run")

# The scan rewrites (sympile.scan.rewriting, the scan phase) leave what these rules remove: pushed
# out of the loop, a gradient's accumulator is s0[-1] + scatter(zeros), s0 allocated zeros,
# and a parameter's update x - c * that. So they run again right after, with the merge pass,
# constant folding and x + 0 and x - 0, before stabilize: fewer rules than the whole of
# canonicalize, whose second walk would cost the graphs without a scan as much time.
zeros_after_scan_db = EquilibriumDatabase("zeros_after_scan")
zeros_after_scan_db.register("merge", MergeRewriter("merge"), "canonicalize", "merge",
                             "fast_run")
zeros_after_scan_db.register("local_constant_folding", local_constant_folding, "canonicalize",
                             "constant_folding", "fast_run")
for _rule in (local_add_zero, local_sub_zero, *ZERO_RULES):
    zeros_after_scan_db.register(_rule.name, _rule, "canonicalize", "zeros", "fast_run")
del _rule
rewrite_db.register("zeros_after_scan", zeros_after_scan_db, "canonicalize", "zeros",
                    "fast_run", phase="after_scan")
