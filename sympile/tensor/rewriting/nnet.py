"""Softmax rewrites, in stabilize_db (tags stabilize, fast_run):

  local_softmax                  exp(x - max(x, a)) / sum(exp(x - max(x, a)), a),
                                 exp(x) / sum(exp(x), a)            -> softmax(x, a)
  local_log_softmax              log(softmax(x))                    -> log_softmax(x)
  local_crossentropy_1hot        log(softmax(x)[arange(n), y])      -> -crossentropy(x, y)
                                 log_softmax(x)[arange(n), y]       -> -crossentropy(x, y)
  local_crossentropy_1hot_grad   SoftmaxGrad(inc(zeros[arange(n), y], a / sm[arange(n), y]), sm)
                                 SoftmaxGrad(inc(zeros[arange(n), y], a) / sm, sm)
                                                                    -> Dx(-a, sm, y)
  local_softmax_grad             sm * (dy - sum(dy * sm, a, keepdims)) -> SoftmaxGrad(a)(dy, sm)

and one in specialize_db (tags specialize, fast_run), after those had their chance (the
log of the fused op's softmax would not be stabilized):

  local_softmax_of_crossentropy  softmax(x) next to crossentropy(x, y) -> its second output

crossentropy is CrossentropySoftmax1Hot (x a matrix, the softmax along its rows, y integer
targets), Dx its backward op. n must be the number of targets or of rows (y.shape[0] or
x.shape[0]), or a constant that every known static length of theirs equals; the fused op
requires one target per row, and raises where the original graph indexed fewer rows than x
has, or broadcast one target over n rows.
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Apply, Constant
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.scalar import basic as scalar
from sympile.tensor import math
from sympile.tensor.basic import Alloc, ARange
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.nnet.basic import (
    CrossentropySoftmax1Hot,
    CrossentropySoftmax1HotDx,
    LogSoftmax,
    Softmax,
    SoftmaxGrad,
)
from sympile.tensor.reduction import CAReduce
from sympile.tensor.rewriting.matching import as_type_of, inputs_of, is_constant
from sympile.tensor.rewriting.specialize import specialize_db
from sympile.tensor.rewriting.stabilize import stabilize_db
from sympile.tensor.shape import Shape, ShapeI
from sympile.tensor.subtensor import ARRAY, AdvancedIncSubtensor, AdvancedSubtensor, Subtensor

__all__ = ["local_crossentropy_1hot", "local_crossentropy_1hot_grad", "local_log_softmax",
           "local_softmax", "local_softmax_grad", "local_softmax_of_crossentropy"]

_log = Elemwise(scalar.log)
_true_div = Elemwise(scalar.true_div)
_mul = Elemwise(scalar.mul)


def _row_softmax_input(variable):
    """x if `variable` is Softmax(x) along the rows of the matrix x, else None."""
    owner = variable.owner
    if owner is None or not isinstance(owner.op, (Softmax, LogSoftmax)) \
            or variable.type.ndim != 2 or owner.op.axis not in (1, -1):
        return None
    return owner.inputs[0]


def _is_row_arange(variable, x, targets) -> bool:
    """Whether `variable` is arange(0, n, 1) with n the length of targets or rows of x, or
    the constant range(n) (arange of a constant, folded) with n every static length of
    theirs that is known (none may be: arange(L) over the L steps of a scan's sequence)."""
    if isinstance(variable, Constant):
        data = np.asarray(variable.data)
        lengths = {x.type.shape[0], targets.type.shape[0]}
        return (data.ndim == 1 and data.dtype.kind in "iu" and lengths - {None} <= {len(data)}
                and np.array_equal(data, np.arange(len(data))))
    owner = variable.owner
    if owner is None or not isinstance(owner.op, ARange):
        return False
    start, stop, step = owner.inputs
    if not (is_constant(start, 0) and is_constant(step, 1)):
        return False
    return _first_length_of(stop) in (x, targets)


def _first_length_of(length):
    """v if `length` is v's length along axis 0: Shape_i{0}(v), or shape(v)[0] as written
    (grad stabilizes costs before the canonicalize rewrites turn one into the other)."""
    owner = length.owner
    if owner is None:
        return None
    if isinstance(owner.op, ShapeI):
        return owner.inputs[0] if owner.op.axis == 0 else None
    if isinstance(owner.op, Subtensor) and owner.op.idx_list == (0,) \
            and owner.inputs[0].owner is not None and isinstance(owner.inputs[0].owner.op, Shape):
        return owner.inputs[0].owner.inputs[0]
    return None


def _picked_targets(variable):
    """(source, x, y) if `variable` is source[arange(n), y] for source a row softmax (or
    log_softmax) of x and y an integer vector, else None."""
    owner = variable.owner
    if owner is None or not isinstance(owner.op, AdvancedSubtensor) \
            or owner.op.idx_list != (ARRAY, ARRAY):
        return None
    source, rows, targets = owner.inputs
    x = _row_softmax_input(source)
    if x is None or targets.type.ndim != 1 or not _is_row_arange(rows, x, targets):
        return None
    return source, x, targets


def _reduced_with_kept_axis(variable, scalar_op):
    """(input, axis) if `variable` is reduce(scalar_op, input, axis, keepdims=True) over one
    axis, else None."""
    shuffle = variable.owner
    if shuffle is None or not isinstance(shuffle.op, DimShuffle):
        return None
    reduction = shuffle.inputs[0].owner
    if reduction is None or not isinstance(reduction.op, CAReduce) \
            or reduction.op.scalar_op != scalar_op:
        return None
    (source,) = reduction.inputs
    axes = reduction.op.axis if reduction.op.axis is not None else tuple(
        range(source.type.ndim))
    if len(axes) != 1:
        return None
    (axis,) = axes
    remaining = iter(range(source.type.ndim - 1))
    kept = tuple("x" if index == axis else next(remaining)
                 for index in range(source.type.ndim))
    return (source, axis) if shuffle.op.new_order == kept else None


@node_rewriter([_true_div])
def local_softmax(fgraph: FunctionGraph, node: Apply):
    """exp(x - max(x, a, keepdims)) / sum(exp(...), a, keepdims) and
    exp(x) / sum(exp(x), a, keepdims) -> softmax(x, a)."""
    # exp(x) alone overflows to inf for x > 709 (float64), and inf / inf is NaN; softmax
    # subtracts the maximum. The shifted form is already stable: one node instead of five.
    numerator, denominator = node.inputs
    exponent = inputs_of(numerator, scalar.exp)
    total = _reduced_with_kept_axis(denominator, scalar.add)
    if exponent is None or total is None or total[0] is not numerator \
            or numerator.type.dtype not in scalar.FLOAT_DTYPES:
        return None
    axis = total[1]
    (x,) = exponent
    difference = inputs_of(x, scalar.sub)
    if difference is not None:
        peak = _reduced_with_kept_axis(difference[1], scalar.maximum)
        if peak is not None and peak == (difference[0], axis):
            x = difference[0]
    if x.type.dtype != numerator.type.dtype:
        return None
    return as_type_of(Softmax(axis)(x), node.outputs[0])


@node_rewriter([_log])
def local_log_softmax(fgraph: FunctionGraph, node: Apply):
    """log(softmax(x, axis)) -> log_softmax(x, axis)."""
    # softmax(x) underflows to 0 where x is far below its slice's maximum (x ~ 1000 apart),
    # and log(0) = -inf; log_softmax is x - max - log(sum(exp(x - max))), always finite.
    owner = node.inputs[0].owner
    if owner is None or not isinstance(owner.op, Softmax):
        return None
    return as_type_of(LogSoftmax(owner.op.axis)(owner.inputs[0]), node.outputs[0])


@node_rewriter([_log, AdvancedSubtensor])
def local_crossentropy_1hot(fgraph: FunctionGraph, node: Apply):
    """log(softmax(x)[arange(n), y]), log_softmax(x)[arange(n), y] -> -crossentropy(x, y)."""
    # The picked probability of a wrong class rounds to 0 for logits 1e4 apart, giving
    # -log(0) = inf; the fused op computes logsumexp(x_i) - x_i[y_i] from the logits.
    if node.op == _log:
        picked = _picked_targets(node.inputs[0])
        if picked is None or not isinstance(picked[0].owner.op, Softmax):
            return None
    else:
        picked = _picked_targets(node.outputs[0])
        if picked is None or not isinstance(picked[0].owner.op, LogSoftmax):
            return None
    _, x, targets = picked
    loss = CrossentropySoftmax1Hot()(x, targets)[0]
    return as_type_of(math.neg(loss), node.outputs[0])


def _zeros_source(variable) -> bool:
    owner = variable.owner
    return owner is not None and isinstance(owner.op, Alloc) and is_constant(owner.inputs[0], 0)


@node_rewriter([SoftmaxGrad])
def local_crossentropy_1hot_grad(fgraph: FunctionGraph, node: Apply):
    """SoftmaxGrad(inc_subtensor(zeros[arange(n), y], w), sm) -> Dx(-w * sm[arange(n), y],
    sm, y), and for w = a / sm[arange(n), y] (the gradient of -log) -> Dx(-a, sm, y)."""
    # sm * (dy - sum(dy * sm)) with dy one-hot in row i at y_i is -(w_i p_i) (sm - onehot)
    # for p_i = sm[i, y_i]; cancelling the division by p_i keeps it finite when p_i is 0.
    scattered, probabilities = node.inputs
    # log(sm)[arange(n), y] differentiates to inc_subtensor(zeros[...], w) / sm: the
    # one-hot's entries are then w / p, so the scale is -w itself.
    divided = inputs_of(scattered, scalar.true_div)
    over_probabilities = divided is not None and divided[1] is probabilities
    if over_probabilities:
        scattered = divided[0]
    owner = scattered.owner
    if node.op.axis not in (1, -1) or probabilities.type.ndim != 2 or owner is None \
            or not isinstance(owner.op, AdvancedIncSubtensor) \
            or owner.op.idx_list != (ARRAY, ARRAY) or owner.op.set_instead_of_inc \
            or owner.op.ignore_duplicates or not _zeros_source(owner.inputs[0]):
        return None
    _, weights, rows, targets = owner.inputs
    x = _row_softmax_input(probabilities)
    if x is None or targets.type.ndim != 1 or not _is_row_arange(rows, x, targets):
        return None
    quotient = inputs_of(weights, scalar.true_div)
    if over_probabilities:
        quotient = [weights, None]
    picked = quotient[1] if quotient is not None else None
    if over_probabilities or picked is not None and _picked_targets(picked) is not None \
            and _picked_targets(picked)[0] is probabilities:
        scale = math.neg(quotient[0])
    else:
        picked_probabilities = probabilities[rows, targets]
        scale = math.neg(math.mul(weights, picked_probabilities))
    if scale.type.ndim == 0 or scale.type.shape == (1,):
        # Dx takes one scale per row (a broadcast one, as local_elemwise_alloc leaves, too).
        scale = math.add(scale, math.cast(math.mul(0, targets), scale.type.dtype))
    scale = math.cast(scale, probabilities.type.dtype)
    return as_type_of(CrossentropySoftmax1HotDx()(scale, probabilities, targets),
                       node.outputs[0])


def _softmax_of(variable, axis: int) -> bool:
    """True if `variable` is Softmax(x) along `axis` (of its rank)."""
    owner = variable.owner
    if owner is None or not isinstance(owner.op, Softmax):
        return False
    ndim = variable.type.ndim
    return owner.op.axis % ndim == axis % ndim


@node_rewriter([_mul])
def local_softmax_grad(fgraph: FunctionGraph, node: Apply):
    """sm * (dy - sum(dy * sm, a, keepdims)) -> SoftmaxGrad(a)(dy, sm), for sm = softmax(x, a),
    either factor order in both products: the gradient of softmax written out (or left by the
    naive graph once its forward part is a Softmax) as one pass over each slice."""
    for sm, difference in (node.inputs, node.inputs[::-1]):
        terms = inputs_of(difference, scalar.sub)
        if terms is None:
            continue
        output_grad, total = terms
        reduced = _reduced_with_kept_axis(total, scalar.add)
        if reduced is None:
            continue
        product, axis = reduced
        factors = inputs_of(product, scalar.mul)
        if factors is None or not _softmax_of(sm, axis) \
                or not (factors == [output_grad, sm] or factors == [sm, output_grad]) \
                or output_grad.type.ndim != sm.type.ndim \
                or any((own == 1) != (other == 1)
                       for own, other in zip(output_grad.type.shape, sm.type.shape)):
            # SoftmaxGrad broadcasts nothing: dy must have sm's shape.
            continue
        return as_type_of(SoftmaxGrad(axis)(output_grad, sm), node.outputs[0])
    return None


@node_rewriter([Softmax])
def local_softmax_of_crossentropy(fgraph: FunctionGraph, node: Apply):
    """softmax(x) -> crossentropy(x, y)[1] when the graph already computes crossentropy(x, y):
    one pass over x instead of two."""
    x = node.inputs[0]
    if node.op.axis not in (1, -1) or x.type.ndim != 2:
        return None
    for client, _ in fgraph.clients.get(x, []):
        if isinstance(getattr(client, "op", None), CrossentropySoftmax1Hot) \
                and client.inputs[0] is x:
            return as_type_of(client.outputs[1], node.outputs[0])
    return None


for _rule in (local_softmax, local_log_softmax, local_crossentropy_1hot,
              local_crossentropy_1hot_grad, local_softmax_grad):
    stabilize_db.register(_rule.name, _rule, "stabilize", "fast_run")
del _rule
# After the stabilize pass: a softmax that log(softmax(x)) or a cross-entropy pattern still
# reads must have been rewritten first (log of the fused op's softmax is not stabilized).
specialize_db.register(local_softmax_of_crossentropy.name, local_softmax_of_crossentropy,
                       "specialize", "fast_run")
