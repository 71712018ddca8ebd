"""Neural-network ops and functions (Theano's T.nnet): softmax, log_softmax, the fused softmax
cross-entropy with integer targets, and the usual activation and loss functions.

    import sympile.tensor as T
    p = T.nnet.softmax(scores)                       # rows sum to 1
    loss = -T.log(p)[T.arange(y.shape[0]), y].mean() # rewritten to the fused op

Ops:
  Softmax(axis)               exp(x - max) / sum(exp(x - max)) along axis
  LogSoftmax(axis)            x - logsumexp(x) along axis
  SoftmaxGrad(axis)(dy, sm)   sm * (dy - sum(dy * sm, axis)): the gradient of softmax
  CrossentropySoftmax1Hot     (x, y) -> (logsumexp(x_i) - x_i[y_i] per row, softmax(x))
  CrossentropySoftmax1HotDx   (dloss, sm, y) -> dloss[:, None] * (sm - onehot(y))

Every forward formula subtracts the row maximum before exponentiating, so no intermediate
overflows; the fused loss never takes the log of a probability that may have rounded to 0.
Softmax, LogSoftmax, SoftmaxGrad and the fused cross-entropy ops have C code (basic_c.py,
vectorised row kernels in rows_c.py) for float32/float64.

Infinities, on both backends: -inf entries get probability 0 (log-probability -inf), the
rest of the row as if they were absent. A +inf entry gets NaN, and the finite entries of its
row their limit, 0 (log_softmax: -inf), so that softmax(x) == exp(log_softmax(x)) holds for
every row; the fused loss of such a row is inf (NaN when the target is the +inf entry).
scipy.special.softmax gives NaN for the whole row instead (its log_softmax agrees with ours).
A NaN entry makes the whole row NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.scalar import basic as scalar
from sympile.tensor import math
from sympile.tensor.basic import arange, zeros_like
from sympile.tensor.nnet.basic_c import (
    crossentropy_softmax_c_code,
    crossentropy_softmax_dx_c_code,
    softmax_family_c_code,
)
from sympile.tensor.reduction import argmax
from sympile.tensor.reduction import sum as tensor_sum
from sympile.tensor.shape.ops import declared_like
from sympile.tensor.subtensor import inc_subtensor
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

sigmoid = math.sigmoid
softplus = math.softplus

__all__ = [
    "CrossentropySoftmax1Hot", "CrossentropySoftmax1HotDx", "LogSoftmax", "Softmax",
    "SoftmaxGrad", "binary_crossentropy", "categorical_crossentropy",
    "crossentropy_categorical_1hot", "elu", "selu",
    "hard_sigmoid", "ultra_fast_sigmoid",
    "crossentropy_softmax_1hot", "log_softmax", "relu", "sigmoid",
    "sigmoid_binary_crossentropy", "softmax", "softplus", "softsign",
    "softmax_op", "logsoftmax_op", "softmax_with_bias", "softmax_graph",
    "crossentropy_softmax_1hot_with_bias", "crossentropy_softmax_argmax_1hot_with_bias",
    "CrossentropySoftmax1HotWithBiasDx", "crossentropy_softmax_1hot_with_bias_dx",
]


def _float_input(op: Any, value: Any, argument: int | str = 0) -> Variable:
    variable = as_tensor_variable(value, op=op, argument=argument)
    if variable.type.dtype not in scalar.FLOAT_DTYPES:
        raise TypeError(f"{op}: input {argument} must be a real float tensor (float16, "
                        f"float32, float64), got {variable.type}")
    return variable


def _normalized_axis(op: Any, axis: int, ndim: int) -> int:
    if ndim == 0:
        raise ValueError(f"{op}: expected a tensor with at least one dimension, got a 0-d one")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: axis {axis} is out of range for a {ndim}-d input")
    return axis % ndim


def _check_axis_prop(name: str, axis: Any) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    return int(axis)


def _stable_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    # A slice of -infs (or one holding +inf) has no finite maximum: shifting by it would
    # compute inf - inf. Shifting by 0 there gives the limit numpy's formula gives.
    peak = np.where(np.isfinite(peak), peak, 0)
    exps = np.exp(x - peak)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def _stable_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    peak = np.where(np.isfinite(peak), peak, 0)
    shifted = x - peak
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


class _AxisOp(Op):
    """An op along one axis of its input (its prop `axis`, negative counting from the end)."""

    __props__ = ("axis",)

    def __init__(self, axis: int = -1):
        self.axis = _check_axis_prop(type(self).__name__, axis)

    def _axis(self, variable: Variable) -> int:
        return _normalized_axis(self, self.axis, variable.type.ndim)

    def _sum_kept(self, variable: Variable, like: Variable) -> Variable:
        return tensor_sum(variable, axis=self._axis(like), keepdims=True)


class _SliceFunctionOp(_AxisOp):
    """x -> a function of each slice along `axis`, of x's type: `_numpy_function` (stable,
    numpy) in perform, the `_c_kind` loop of nnet_c in C."""

    _numpy_function: Any
    _c_kind: str

    def make_node(self, x):
        x = _float_input(self, x)
        self._axis(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        with np.errstate(invalid="ignore", divide="ignore"):
            result = self._numpy_function(x, self._axis(node.inputs[0]))
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return softmax_family_c_code(self._c_kind, self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class Softmax(_SliceFunctionOp):
    """softmax(x) along `axis`: exp(x - max) / sum(exp(x - max)), each slice sums to 1."""

    _numpy_function = staticmethod(_stable_softmax)
    _c_kind = "softmax"

    def L_op(self, inputs, outputs, output_grads):
        """dx = sm * (g - sum(g * sm, axis)), one SoftmaxGrad node."""
        (output_grad,) = output_grads
        if is_disconnected(output_grad):
            return [disconnected_type()]
        return [SoftmaxGrad(self.axis)(output_grad, outputs[0])]

    def R_op(self, inputs, eval_points):
        """The tangent sm * (v - sum(sm * v, axis)): SoftmaxGrad applied to v."""
        (tangent,) = eval_points
        if tangent is None:
            return [None]
        (x,) = inputs
        tangent = declared_like(math.cast(tangent, x.type.dtype), x)
        return [SoftmaxGrad(self.axis)(tangent, self(x))]


class LogSoftmax(_SliceFunctionOp):
    """log(softmax(x)) along `axis`, computed as x - max - log(sum(exp(x - max))): finite
    wherever x is, however large."""

    _numpy_function = staticmethod(_stable_log_softmax)
    _c_kind = "log_softmax"

    def L_op(self, inputs, outputs, output_grads):
        """dx = g - exp(out) * sum(g, axis)."""
        (output_grad,) = output_grads
        if is_disconnected(output_grad):
            return [disconnected_type()]
        (output,) = outputs
        return [math.sub(output_grad,
                         math.mul(math.exp(output), self._sum_kept(output_grad, output)))]

    def R_op(self, inputs, eval_points):
        """The tangent v - sum(softmax(x) * v, axis)."""
        (tangent,) = eval_points
        if tangent is None:
            return [None]
        (x,) = inputs
        tangent = declared_like(math.cast(tangent, x.type.dtype), x)
        probabilities = Softmax(self.axis)(x)
        return [math.sub(tangent, self._sum_kept(math.mul(probabilities, tangent), x))]


class SoftmaxGrad(_AxisOp):
    """The gradient of softmax: SoftmaxGrad(axis)(dy, sm) = sm * (dy - sum(dy * sm, axis))
    for sm = softmax(x, axis) and dy the gradient of its output."""

    def make_node(self, output_grad, probabilities):
        output_grad = _float_input(self, output_grad, 0)
        probabilities = _float_input(self, probabilities, 1)
        if output_grad.type.ndim != probabilities.type.ndim:
            raise ValueError(f"{self}: dy and sm must have the same number of dimensions, "
                             f"got {output_grad.type} and {probabilities.type}")
        self._axis(probabilities)
        dtype = np.result_type(output_grad.type.dtype, probabilities.type.dtype).name
        shape = [a if a is not None else b
                 for a, b in zip(output_grad.type.shape, probabilities.type.shape)]
        return Apply(self, [output_grad, probabilities], [tensor_type(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        output_grad, probabilities = inputs
        if output_grad.shape != probabilities.shape:
            raise ValueError(f"{self}: dy of shape {output_grad.shape} and sm of shape "
                             f"{probabilities.shape} must have the same shape")
        axis = self._axis(node.inputs[1])
        total = np.sum(output_grad * probabilities, axis=axis, keepdims=True)
        output_storage[0][0] = np.asarray(probabilities * (output_grad - total),
                                          dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return softmax_family_c_code('softmax_grad', self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def L_op(self, inputs, outputs, output_grads):
        """With s = sum(dy * sm) and G the output gradient (the op is bilinear in dy, sm):
        d dy = SoftmaxGrad(G, sm); d sm = G * dy - G * s - dy * sum(G * sm)."""
        output_grad, probabilities = inputs
        (gradient,) = output_grads
        if is_disconnected(gradient):
            return [disconnected_type(), disconnected_type()]
        total = self._sum_kept(math.mul(output_grad, probabilities), probabilities)
        weighted = self._sum_kept(math.mul(gradient, probabilities), probabilities)
        grad_output_grad = self(gradient, probabilities)
        grad_probabilities = math.sub(math.mul(gradient, math.sub(output_grad, total)),
                                      math.mul(output_grad, weighted))
        return [math.cast(grad_output_grad, output_grad.type.dtype),
                math.cast(grad_probabilities, probabilities.type.dtype)]

    def R_op(self, inputs, eval_points):
        """Bilinear: SoftmaxGrad(v_dy, sm) + v_sm * (dy - s) - sm * sum(dy * v_sm)."""
        output_grad, probabilities = inputs
        tangent_grad, tangent_probabilities = eval_points
        terms = []
        if tangent_grad is not None:
            terms.append(self(tangent_grad, probabilities))
        if tangent_probabilities is not None:
            total = self._sum_kept(math.mul(output_grad, probabilities), probabilities)
            cross = self._sum_kept(math.mul(output_grad, tangent_probabilities), probabilities)
            terms.append(math.sub(math.mul(tangent_probabilities, math.sub(output_grad, total)),
                                  math.mul(probabilities, cross)))
        if not terms:
            return [None]
        result = terms[0] if len(terms) == 1 else math.add(*terms)
        return [math.cast(result, _output_dtype(self, inputs))]


def _output_dtype(op: Op, inputs) -> str:
    """The dtype of op's output on `inputs`."""
    return op.make_node(*inputs).outputs[0].type.dtype


def _check_targets(op: Any, targets: Any, argument: int) -> Variable:
    targets = as_tensor_variable(targets, op=op, argument=argument)
    if targets.type.ndim != 1 or targets.type.dtype not in scalar.INTEGER_DTYPES:
        raise TypeError(f"{op}: input {argument} (the targets) must be an integer vector of "
                        f"class indices, got {targets.type}")
    return targets


def _check_rows(op: Any, matrix: Variable, argument: int) -> None:
    if matrix.type.ndim != 2:
        raise ValueError(f"{op}: input {argument} must be a matrix (one row per example), "
                         f"got {matrix.type}")


def _checked_target_values(op: Any, targets: np.ndarray, rows: int, classes: int) -> None:
    if targets.shape[0] != rows:
        raise ValueError(f"{op}: {targets.shape[0]} targets for {rows} rows: expected one "
                         f"class index per row")
    if targets.size and (targets.min() < 0 or targets.max() >= classes):
        raise IndexError(f"{op}: target class indices must be in [0, {classes}), got values "
                         f"from {targets.min()} to {targets.max()}")


class CrossentropySoftmax1Hot(Op):
    """(x, y) -> (loss, sm): for each row i of the matrix x and its integer class y[i], the
    cross-entropy loss[i] = -log(softmax(x)[i, y[i]]) = logsumexp(x[i]) - x[i, y[i]], and
    sm = softmax(x). The loss is computed from the shifted logits, never from sm, so it stays
    finite and exact when sm[i, y[i]] rounds to 0."""

    def make_node(self, x, targets):
        x = _float_input(self, x, 0)
        _check_rows(self, x, 0)
        targets = _check_targets(self, targets, 1)
        rows = x.type.shape[0] if x.type.shape[0] is not None else targets.type.shape[0]
        return Apply(self, [x, targets],
                     [tensor_type(x.type.dtype, (rows,))(), tensor_type(x.type.dtype,
                                                                       (rows, x.type.shape[1]))()])

    def perform(self, node, inputs, output_storage):
        x, targets = inputs
        _checked_target_values(self, targets, x.shape[0], x.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            log_probabilities = _stable_log_softmax(x, 1)
        rows = np.arange(x.shape[0])
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(-log_probabilities[rows, targets], dtype=dtype)
        output_storage[1][0] = np.asarray(np.exp(log_probabilities), dtype=dtype)

    def c_code(self, node, names):
        return crossentropy_softmax_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        return [(x_shape[0],), x_shape]

    def connection_pattern(self, node):
        return [[True, True], [False, False]]

    def L_op(self, inputs, outputs, output_grads):
        """dx = CrossentropySoftmax1HotDx(g_loss, sm, y) + SoftmaxGrad(g_sm, sm)."""
        x, targets = inputs
        loss_grad, probabilities_grad = output_grads
        probabilities = outputs[1]
        terms = []
        if not is_disconnected(loss_grad):
            terms.append(CrossentropySoftmax1HotDx()(loss_grad, probabilities, targets))
        if not is_disconnected(probabilities_grad):
            terms.append(SoftmaxGrad(1)(probabilities_grad, probabilities))
        if not terms:
            return [disconnected_type(), disconnected_type()]
        gradient = terms[0] if len(terms) == 1 else math.add(*terms)
        return [math.cast(gradient, x.type.dtype), disconnected_type()]

    def R_op(self, inputs, eval_points):
        """Tangents: loss: sum(sm * v, 1) - v[i, y[i]]; sm: SoftmaxGrad(v, sm)."""
        x, targets = inputs
        tangent = eval_points[0]
        if tangent is None:
            return [None, None]
        tangent = declared_like(math.cast(tangent, x.type.dtype), x)
        loss, probabilities = self(x, targets)
        picked = tangent[arange(targets.shape[0]), targets]
        loss_tangent = math.sub(tensor_sum(math.mul(probabilities, tangent), axis=1), picked)
        return [loss_tangent, SoftmaxGrad(1)(tangent, probabilities)]


class CrossentropySoftmax1HotDx(Op):
    """(dloss, sm, y) -> dloss[:, None] * (sm - onehot(y)): the gradient of the fused
    cross-entropy with respect to the logits, in one pass."""

    def make_node(self, loss_grad, probabilities, targets):
        loss_grad = _float_input(self, loss_grad, 0)
        if loss_grad.type.ndim != 1:
            raise ValueError(f"{self}: input 0 (dloss) must be a vector, got {loss_grad.type}")
        probabilities = _float_input(self, probabilities, 1)
        _check_rows(self, probabilities, 1)
        targets = _check_targets(self, targets, 2)
        dtype = np.result_type(loss_grad.type.dtype, probabilities.type.dtype).name
        return Apply(self, [loss_grad, probabilities, targets],
                     [tensor_type(dtype, probabilities.type.shape)()])

    def perform(self, node, inputs, output_storage):
        loss_grad, probabilities, targets = inputs
        rows, classes = probabilities.shape
        _checked_target_values(self, targets, rows, classes)
        if loss_grad.shape[0] != rows:
            raise ValueError(f"{self}: dloss has {loss_grad.shape[0]} entries for {rows} rows")
        result = np.array(probabilities, dtype=node.outputs[0].type.dtype)
        result[np.arange(rows), targets] -= 1
        result *= loss_grad[:, None]
        output_storage[0][0] = result

    def c_code(self, node, names):
        return crossentropy_softmax_dx_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def connection_pattern(self, node):
        return [[True], [True], [False]]

    def _minus_onehot(self, probabilities: Variable, targets: Variable) -> Variable:
        """sm - onehot(y) as a graph."""
        onehot = inc_subtensor(zeros_like(probabilities)[arange(targets.shape[0]), targets],
                               1)
        return math.sub(probabilities, onehot)

    def L_op(self, inputs, outputs, output_grads):
        """d dloss = sum(G * (sm - onehot), 1); d sm = G * dloss[:, None]."""
        loss_grad, probabilities, targets = inputs
        (gradient,) = output_grads
        if is_disconnected(gradient):
            return [disconnected_type()] * 3
        difference = self._minus_onehot(probabilities, targets)
        grad_loss = tensor_sum(math.mul(gradient, difference), axis=1)
        grad_probabilities = math.mul(gradient, loss_grad.dimshuffle(0, "x"))
        return [math.cast(grad_loss, loss_grad.type.dtype),
                math.cast(grad_probabilities, probabilities.type.dtype), disconnected_type()]

    def R_op(self, inputs, eval_points):
        """Bilinear in (dloss, sm): v_dloss[:, None] * (sm - onehot) + dloss[:, None] * v_sm."""
        loss_grad, probabilities, targets = inputs
        tangent_loss, tangent_probabilities, _ = eval_points
        terms = []
        if tangent_loss is not None:
            terms.append(math.mul(tangent_loss.dimshuffle(0, "x"),
                                  self._minus_onehot(probabilities, targets)))
        if tangent_probabilities is not None:
            terms.append(math.mul(loss_grad.dimshuffle(0, "x"), tangent_probabilities))
        if not terms:
            return [None]
        result = terms[0] if len(terms) == 1 else math.add(*terms)
        return [math.cast(result, _output_dtype(self, inputs))]


# -- functions ----------------------------------------------------------------------------------

def softmax(x: Any, axis: int | None = None) -> Variable:
    """exp(x) / sum(exp(x)) along `axis`, computed stably. Without `axis` it is Theano's
    T.nnet.softmax: along the last axis, and a vector becomes a (1, n) row."""
    return Softmax(-1 if axis is None else axis)(_theano_row(x, axis))


def log_softmax(x: Any, axis: int | None = None) -> Variable:
    """log(softmax(x)) along `axis`, finite wherever x is; without `axis`, the last axis, and a
    vector becomes a (1, n) row (as softmax)."""
    return LogSoftmax(-1 if axis is None else axis)(_theano_row(x, axis))


# Theano's op instances, which libraries apply and match directly.
softmax_op = Softmax(-1)
logsoftmax_op = LogSoftmax(-1)


def softmax_with_bias(x: Any, b: Any) -> Variable:
    """softmax(x + b) along the last axis, b a bias vector broadcast over the rows (Theano's
    softmax_with_bias)."""
    return softmax_op(math.add(_float_input("softmax_with_bias", x, "x"), b))


def softmax_graph(c: Any) -> Variable:
    """exp(c) / sum(exp(c)) along the last axis as elementwise operations and a sum, not a
    Softmax op (Theano's softmax_graph; the stabilizing rewrites make it one)."""
    exponentials = math.exp(_float_input("softmax_graph", c, "c"))
    return math.true_div(exponentials, tensor_sum(exponentials, axis=-1, keepdims=True))


def _theano_row(x: Any, axis: int | None) -> Any:
    """Theano's softmax of a vector is a (1, n) row; with an explicit axis, the shape stays."""
    if axis is None:
        x = as_tensor_variable(x)
        if x.type.ndim == 1:
            return x.dimshuffle("x", 0)
    return x


def crossentropy_softmax_1hot(x: Any, targets: Any) -> list[Variable]:
    """[loss, softmax(x)] for a matrix of logits x and integer targets (one per row)."""
    return CrossentropySoftmax1Hot()(x, targets)


def _biased_logits(function: str, x: Any, b: Any) -> Variable:
    b = as_tensor_variable(b, op=function, argument="b")
    if b.type.ndim != 1:
        raise ValueError(f"{function}: b must be a vector (one bias per class), got {b.type}")
    return math.add(x, b)


def crossentropy_softmax_1hot_with_bias(x: Any, b: Any, targets: Any) -> list[Variable]:
    """Theano's: [loss, softmax(x + b)] for logits x, a bias b per class and targets."""
    return crossentropy_softmax_1hot(
        _biased_logits("crossentropy_softmax_1hot_with_bias", x, b), targets)


def crossentropy_softmax_argmax_1hot_with_bias(x: Any, b: Any,
                                               targets: Any) -> list[Variable]:
    """Theano's: [loss, softmax(x + b), argmax(x + b, axis=1)]."""
    logits = _biased_logits("crossentropy_softmax_argmax_1hot_with_bias", x, b)
    return [*crossentropy_softmax_1hot(logits, targets), argmax(logits, axis=1)]


# Theano's names of the gradient op of the fused loss (its logits' bias adds nothing to it).
CrossentropySoftmax1HotWithBiasDx = CrossentropySoftmax1HotDx
crossentropy_softmax_1hot_with_bias_dx = CrossentropySoftmax1HotDx()


def categorical_crossentropy(coding_dist: Any, true_dist: Any) -> Variable:
    """-log(coding_dist) of the true class per row: with integer targets (a vector of class
    indices) -log(coding_dist[i, true_dist[i]]), with one-hot or soft targets (coding_dist's
    shape) -sum(true_dist * log(coding_dist), last axis). coding_dist holds probabilities;
    with coding_dist = softmax(x) the rewrites compute it from x in one stable op."""
    coding_dist = _float_input("categorical_crossentropy", coding_dist, "coding_dist")
    true_dist = as_tensor_variable(true_dist, op="categorical_crossentropy",
                                   argument="true_dist")
    if true_dist.type.dtype in scalar.INTEGER_DTYPES and true_dist.type.ndim == 1:
        _check_rows("categorical_crossentropy", coding_dist, "coding_dist")
        picked = coding_dist[arange(true_dist.shape[0]), true_dist]
        return math.neg(math.log(picked))
    if true_dist.type.ndim != coding_dist.type.ndim:
        raise TypeError(f"categorical_crossentropy: true_dist must be an integer vector of "
                        f"class indices or a distribution of coding_dist's ndim "
                        f"({coding_dist.type}), got {true_dist.type}")
    return math.neg(tensor_sum(math.mul(true_dist, math.log(coding_dist)), axis=-1))


def crossentropy_categorical_1hot(coding_dist: Any, true_one_of_n: Any) -> Variable:
    """Theano's crossentropy_categorical_1hot: -log(coding_dist[i, true_one_of_n[i]]) for
    each row i, true_one_of_n an integer vector of class indices (categorical_crossentropy
    with integer targets)."""
    true_one_of_n = as_tensor_variable(true_one_of_n, op="crossentropy_categorical_1hot",
                                       argument="true_one_of_n")
    if true_one_of_n.type.dtype not in scalar.INTEGER_DTYPES or true_one_of_n.type.ndim != 1:
        raise TypeError(f"crossentropy_categorical_1hot: true_one_of_n must be an integer "
                        f"vector of class indices, got {true_one_of_n.type}")
    return categorical_crossentropy(coding_dist, true_one_of_n)


def binary_crossentropy(output: Any, target: Any) -> Variable:
    """-(target * log(output) + (1 - target) * log(1 - output)) for probabilities `output`."""
    output = _float_input("binary_crossentropy", output, "output")
    return math.neg(math.add(math.mul(target, math.log(output)),
                             math.mul(math.sub(1, target), math.log(math.sub(1, output)))))


def sigmoid_binary_crossentropy(output: Any, target: Any) -> Variable:
    """binary_crossentropy(sigmoid(output), target) from the logits `output`:
    target * softplus(-output) + (1 - target) * softplus(output), finite for every logit."""
    output = _float_input("sigmoid_binary_crossentropy", output, "output")
    return math.add(math.mul(target, math.softplus(math.neg(output))),
                    math.mul(math.sub(1, target), math.softplus(output)))


def relu(x: Any, alpha: Any = 0) -> Variable:
    """max(x, 0); with alpha != 0 the leaky form: x where x > 0, alpha * x elsewhere."""
    x = as_tensor_variable(x, op="relu")
    if isinstance(alpha, (int, float)) and alpha == 0:
        return math.maximum(x, math.cast(0, x.type.dtype))
    return math.switch(math.gt(x, 0), x, math.mul(alpha, x))


def elu(x: Any, alpha: Any = 1.0) -> Variable:
    """x where x > 0, alpha (exp(x) - 1) elsewhere (Clevert et al., 2015)."""
    x = _float_input("elu", x, "x")
    return math.switch(math.gt(x, 0), x, math.mul(alpha, math.expm1(x)))


# SELU's constants (Klambauer et al., 2017): the fixed point of mean 0, variance 1.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Variable:
    """scale * elu(x, alpha) with SELU's self-normalising constants."""
    return math.mul(SELU_SCALE, elu(x, SELU_ALPHA))


def hard_sigmoid(x: Any) -> Variable:
    """clip(0.2 x + 0.5, 0, 1): Theano's piecewise-linear sigmoid."""
    x = _float_input("hard_sigmoid", x, "x")
    return math.clip(math.add(math.mul(x, 0.2), 0.5), 0, 1)


def ultra_fast_sigmoid(x: Any) -> Variable:
    """Theano's piecewise approximation of sigmoid (error below 0.03): with `a = |x| / 2`,
    z = 1.5 a / (1 + a) below a = 1.7, 0.9354... + 0.0459 (a - 1.7) below 3, 0.99505...
    above; the result is (1 + sign(x) z) / 2."""
    x = _float_input("ultra_fast_sigmoid", x, "x")
    half = math.abs(math.mul(x, 0.5))
    magnitude = math.switch(
        math.lt(half, 1.7), math.true_div(math.mul(half, 1.5), math.add(half, 1)),
        math.switch(math.lt(half, 3), math.add(0.935409070603099,
                                               math.mul(math.sub(half, 1.7), 0.0458812946797165)),
                    0.99505475368673))
    signed = math.switch(math.ge(x, 0), magnitude, math.neg(magnitude))
    return math.mul(math.add(signed, 1), 0.5)


def softsign(x: Any) -> Variable:
    """`x / (1 + |x|)`."""
    x = as_tensor_variable(x, op="softsign")
    return math.true_div(x, math.add(1, math.abs(x)))


# ---------------------------------------------------------------------------------------------
# Theano's other nnet helpers

# Theano's name of log_softmax.
logsoftmax = log_softmax


class _PrependColumn(Op):
    """A column of one value before the columns of a matrix x."""

    def _output(self, x: Variable, dtype: str) -> Variable:
        rows, columns = x.type.shape
        return tensor_type(dtype, (rows, None if columns is None else columns + 1))()

    def _prepend(self, value, x, dtype: str) -> np.ndarray:
        result = np.empty((x.shape[0], x.shape[1] + 1), dtype=dtype)
        result[:, 0] = value
        result[:, 1:] = x
        return result

    def infer_shape(self, fgraph, node, input_shapes):
        rows, columns = input_shapes[-1]
        return [(rows, columns + 1)]


class Prepend_scalar_constant_to_each_row(_PrependColumn):
    """Theano's op: the matrix x with a first column of the constant `val`."""

    __props__ = ("val",)

    def __init__(self, val: Any = 0):
        if not isinstance(val, (int, float, np.integer, np.floating)) or isinstance(val, bool):
            raise TypeError(f"Prepend_scalar_constant_to_each_row: val must be a number, got "
                            f"{val!r}")
        self.val = val

    def make_node(self, x):
        x = as_tensor_variable(x, op="Prepend_scalar_constant_to_each_row", argument="x")
        if x.type.ndim != 2:
            raise TypeError(f"Prepend_scalar_constant_to_each_row: x must be a matrix, got "
                            f"{x.type}")
        dtype = np.result_type(x.type.dtype, np.min_scalar_type(self.val)).name \
            if x.type.dtype not in scalar.FLOAT_DTYPES else x.type.dtype
        return Apply(self, [x], [self._output(x, dtype)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self._prepend(self.val, inputs[0], node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        return [disconnected_type() if is_disconnected(g) else g[:, 1:]]

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else Prepend_scalar_constant_to_each_row(0)(tangent)]


class Prepend_scalar_to_each_row(_PrependColumn):
    """Theano's op: (val, x) -> the matrix x with a first column of the scalar val."""

    __props__ = ()

    def make_node(self, val, x):
        val = as_tensor_variable(val, op="Prepend_scalar_to_each_row", argument="val")
        x = as_tensor_variable(x, op="Prepend_scalar_to_each_row", argument="x")
        if val.type.ndim != 0 or x.type.ndim != 2:
            raise TypeError(f"Prepend_scalar_to_each_row: val must be a scalar and x a matrix, "
                            f"got {val.type} and {x.type}")
        dtype = np.result_type(val.type.dtype, x.type.dtype).name
        return Apply(self, [val, x], [self._output(x, dtype)])

    def perform(self, node, inputs, output_storage):
        val, x = inputs
        output_storage[0][0] = self._prepend(val, x, node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type(), disconnected_type()]
        val, x = inputs
        return [declared_like(tensor_sum(g[:, 0]), val), declared_like(g[:, 1:], x)]

    def R_op(self, inputs, eval_points):
        if all(point is None for point in eval_points):
            return [None]
        val, x = inputs
        return [self(*[math.zeros_like(v) if p is None else p
                       for v, p in zip(inputs, eval_points)])]


def confusion_matrix(actual: Any, pred: Any) -> list[Variable]:
    """Theano's confusion_matrix of two vectors of class labels: [the counts (row: the actual
    class, column: the predicted one, int64), the classes in that order (every label of
    either vector, sorted)]."""
    from sympile.tensor.basic import concatenate
    from sympile.tensor.blas.basic import dot
    from sympile.tensor.extra_ops import unique

    actual = as_tensor_variable(actual, op="confusion_matrix", argument="actual")
    pred = as_tensor_variable(pred, op="confusion_matrix", argument="pred")
    if actual.type.ndim != 1 or pred.type.ndim != 1:
        raise TypeError(f"confusion_matrix: actual and pred must be vectors, got "
                        f"{actual.type} and {pred.type}")
    order = unique(concatenate([actual, pred]))
    one_hot_actual = math.cast(math.eq(actual.dimshuffle(0, "x"), order.dimshuffle("x", 0)),
                               "int64")
    one_hot_pred = math.cast(math.eq(pred.dimshuffle(0, "x"), order.dimshuffle("x", 0)),
                             "int64")
    return [dot(one_hot_actual.T, one_hot_pred), order]


def h_softmax(x: Any, batch_size: Any, n_outputs: int, n_classes: int,
              n_outputs_per_class: int, W1: Any, b1: Any, W2: Any, b2: Any,
              target: Any = None) -> Variable:
    """Theano's two-level hierarchical softmax (Goodman, 2001): p(output) = p(its class) p(it
    within its class). x (batch, dim); W1 (dim, n_classes), b1 (n_classes,) give the
    classes' softmax; W2 (n_classes, dim, n_outputs_per_class), b2 (n_classes,
    n_outputs_per_class) each class's softmax over its outputs. Without `target`: every
    output's probability, (batch, n_outputs) (the first n_outputs of n_classes *
    n_outputs_per_class); with an integer `target` per example: only those outputs'
    probabilities, (batch,), computing one class's outputs per example."""
    from sympile.tensor.blas.basic import batched_dot, dot, tensordot

    x = _float_input("h_softmax", x, "x")
    class_probabilities = softmax(math.add(dot(x, W1), b1))
    if target is None:
        scores = math.add(tensordot(x, W2, [[1], [1]]), b2)
        within = softmax(scores.reshape((-1, n_outputs_per_class)))
        within = within.reshape((batch_size, n_classes, n_outputs_per_class))
        joint = math.mul(class_probabilities.dimshuffle(0, 1, "x"), within)
        return joint.reshape((batch_size, n_classes * n_outputs_per_class))[:, :n_outputs]
    target = as_tensor_variable(target, op="h_softmax", argument="target").flatten()
    classes = math.int_div(target, n_outputs_per_class)
    positions = math.mod(target, n_outputs_per_class)
    rows = arange(target.shape[0])
    weights = as_tensor_variable(W2, op="h_softmax", argument="W2")[classes]
    scores = math.add(batched_dot(x, weights),
                      as_tensor_variable(b2, op="h_softmax", argument="b2")[classes])
    return math.mul(class_probabilities[rows, classes], softmax(scores)[rows, positions])


__all__ += ["Prepend_scalar_constant_to_each_row", "Prepend_scalar_to_each_row",
            "confusion_matrix", "h_softmax", "logsoftmax"]
