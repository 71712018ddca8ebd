"""The derivatives that need ops of other families (Elemwise, DimShuffle, Alloc, ARange),
bound onto their ops by sympile/tensor/__init__.py once every op module is imported.

Elemwise's rule lifts the scalar op's gradient graph onto tensors, then sums each gradient
back over the axes its input was broadcast along: that takes sum (tensor.reduction), fill and
zeros_like (tensor.basic), cast (tensor.math) and declared_like (tensor.shape), all built on
Elemwise. Alloc's and ARange's gradients are sums, and a sum's gradient is an Alloc. So these
rules live here, above all of those modules, and imports run one way.
"""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import io_toposort
from sympile.graph.gradient_types import (
    disconnected_type,
    grad_not_implemented,
    grad_undefined,
    is_disconnected,
)
from sympile.graph.utils import MethodNotDefined, bind_methods
from sympile.scalar.basic import COMPLEX_DTYPES, get_scalar_type
from sympile.tensor import math
from sympile.tensor.basic.ops import Alloc, ARange, ones_like, second, zero_gradient, zeros_like
from sympile.tensor.elemwise.ops import DimShuffle, Elemwise
from sympile.tensor.math import cast, elemwise_of
from sympile.tensor.reduction.ops import sum as reduce_sum
from sympile.tensor.shape.ops import declared_like, shape_i
from sympile.tensor.type import is_discrete
from sympile.tensor.variable import constant

__all__ = ["sum_to_type"]


class _ElemwiseDerivatives:
    """What bind_methods copies onto Elemwise."""

    def L_op(self, inputs, outputs, output_grads):
        """The scalar op's rule, lifted: its scalar gradient graph becomes an Elemwise graph on
        the tensors, then each gradient is summed back over the axes its input was broadcast
        along."""
        if all(is_disconnected(g) for g in output_grads):
            return [disconnected_type() for _ in inputs]
        if all(is_discrete(o) for o in outputs):
            # Piecewise constant (a comparison, an integer result): zero, as in Theano.
            return [zero_gradient(x) for x in inputs]
        if any(v.type.dtype in COMPLEX_DTYPES for v in [*inputs, *outputs]):
            return [grad_not_implemented(self, i, x, "complex gradients are not implemented")
                    for i, x in enumerate(inputs)]
        grads = [zeros_like(o) if is_disconnected(g) else g
                 for o, g in zip(outputs, output_grads)]
        scalar_grads = self._scalar_rule(inputs, outputs, grads)
        if scalar_grads is None:
            return [grad_not_implemented(self, i, x, f"{self.scalar_op} has no derivative rule")
                    for i, x in enumerate(inputs)]
        results = []
        for index, (x, gradient) in enumerate(zip(inputs, scalar_grads)):
            if is_discrete(x):
                results.append(zero_gradient(x))
            elif gradient is None:
                results.append(grad_undefined(self, index, x, f"{self.scalar_op} has no "
                                              f"derivative with respect to this input"))
            else:
                results.append(sum_to_type(gradient, x, outputs[0]))
        return results

    def R_op(self, inputs, eval_points):
        """Forward mode from the same rule: sum_i (d out / d x_i) * tangent_i, the partial
        derivatives being the rule's gradients for an output gradient of ones."""
        # The output, recomputed by the op without its inplace pattern (the tangent graph must
        # not overwrite the inputs it reads).
        forward = Elemwise(self.scalar_op) if self.inplace_pattern else self
        outputs = forward.make_node(*inputs).outputs
        if len(outputs) != 1:
            raise MethodNotDefined(f"{self}.R_op: multi-output elementwise ops")
        output = outputs[0]
        if is_discrete(output):
            return [None]
        if any(v.type.dtype in COMPLEX_DTYPES for v in [*inputs, output]):
            raise MethodNotDefined(f"{self}.R_op: complex tangents are not implemented")
        partials = self._scalar_rule(inputs, outputs, [ones_like(output)])
        if partials is None:
            raise MethodNotDefined(f"{self.scalar_op} has no derivative rule")
        tangent = None
        for index, (partial, point, x) in enumerate(zip(partials, eval_points, inputs)):
            if point is None or is_discrete(x):
                continue
            if partial is None:
                raise MethodNotDefined(f"{self.scalar_op} has no derivative with respect to "
                                       f"its input {index}")
            # A tangent typed (None, None) for a row must still broadcast like the row.
            term = partial * declared_like(point, x)
            tangent = term if tangent is None else tangent + term
        if tangent is not None and any(t == 1 and o != 1 for t, o in zip(tangent.type.shape,
                                                                           output.type.shape)):
            # A constant partial (int_div's 0) times the tangent of a broadcast input has that
            # input's shape: broadcast it to the output's.
            tangent = second(output, tangent)
        return [tangent]

    def _scalar_rule(self, inputs, outputs, output_grads):
        """The tensor gradients (one per input, before summing over broadcast axes) given by
        the scalar op's L_op, or None if it has none."""
        placeholders = {}
        scalar_inputs = [_scalar_placeholder(v, placeholders) for v in inputs]
        scalar_outputs = [_scalar_placeholder(v, placeholders) for v in outputs]
        scalar_grads = [_scalar_placeholder(v, placeholders) for v in output_grads]
        try:
            # The rule's graph is over placeholders, which have no test values.
            with config.change_flags(compute_test_value="off"):
                rule = self.scalar_op.L_op(scalar_inputs, scalar_outputs, scalar_grads)
        except MethodNotDefined:
            return None
        # None: a derivative that does not exist (the order of a Bessel function).
        return [None if g is None else _lift_scalar_graph(g, placeholders, like=x)
                for g, x in zip(rule, inputs)]


class _DimShuffleDerivatives:
    """What bind_methods copies onto DimShuffle."""

    def L_op(self, inputs, outputs, output_grads):
        """Sum away the inserted axes (length 1, so a no-op on values), undo the permutation,
        and put back the dropped length-1 axes."""
        (x,), (gradient,) = inputs, output_grads
        if is_disconnected(gradient):
            return [disconnected_type()]
        if is_discrete(x):
            return [zero_gradient(x)]
        if self.augment:
            gradient = reduce_sum(gradient, axis=self.augment)
        pattern = [self.shuffle.index(axis) if axis in self.shuffle else "x"
                   for axis in range(self.input_ndim)]
        if pattern != list(range(gradient.type.ndim)):
            gradient = DimShuffle(gradient.type.ndim, pattern)(gradient)
        return [gradient]

    def R_op(self, inputs, eval_points):
        """The same rearrangement of the tangent (declared with the input's static shape, so
        that the length-1 axes to drop are known to be length 1)."""
        if eval_points[0] is None:
            return [None]
        return [self(declared_like(eval_points[0], inputs[0]))]


def _scalar_placeholder(variable, placeholders: dict):
    placeholder = get_scalar_type(variable.type.dtype)()
    placeholders[placeholder] = variable
    return placeholder


def _lift_scalar_graph(scalar_output, placeholders: dict, like):
    """Rebuild the scalar graph of `scalar_output` on tensors: placeholders become the tensors
    they stand for, constants 0-d tensor constants, each scalar op its Elemwise."""
    lifted = dict(placeholders)
    for node in io_toposort(list(placeholders), [scalar_output]):
        arguments = [lifted[v] if v in lifted else constant(v.data, dtype=v.type.dtype)
                     for v in node.inputs]
        for output, value in zip(node.outputs, elemwise_of(node.op).make_node(*arguments).outputs):
            lifted[output] = value
    if scalar_output in lifted:
        return lifted[scalar_output]
    return constant(scalar_output.data, dtype=scalar_output.type.dtype)


def sum_to_type(gradient, x, output):
    """`gradient` (broadcast like `output`) summed back to the shape and dtype of input x."""
    if gradient.type.ndim < output.type.ndim:
        # A constant rule result (e.g. the zero derivative of floor): give it the output's shape.
        gradient = second(output, gradient)
    axes = tuple(axis for axis, (size, out_size) in enumerate(zip(x.type.shape,
                                                                 gradient.type.shape))
                 if size == 1 and out_size != 1)
    if axes:
        gradient = reduce_sum(gradient, axis=axes, keepdims=True)
    if gradient.type.dtype != x.type.dtype:
        gradient = cast(gradient, x.type.dtype)
    return gradient


class _AllocGradient:
    """What bind_methods copies onto Alloc."""

    def L_op(self, inputs, outputs, output_grads):
        """The value's gradient: the output gradient summed over the new leading axes and over
        the value's broadcast axes (those its type says have length 1), which are kept with
        length 1. The lengths are disconnected."""
        value, *lengths = inputs
        (output_grad,) = output_grads
        unconnected = [disconnected_type() for _ in lengths]
        if is_disconnected(output_grad) or is_discrete(value):
            return [disconnected_type()] + unconnected
        offset = len(lengths) - value.type.ndim
        broadcast = [axis for axis, length in enumerate(value.type.shape) if length == 1]
        summed = list(range(offset)) + [offset + axis for axis in broadcast]
        gradient = output_grad
        if summed:
            gradient = reduce_sum(output_grad, axis=summed)
            remaining = iter(range(gradient.type.ndim))
            gradient = DimShuffle(gradient.type.ndim,
                                  ["x" if axis in broadcast else next(remaining)
                                   for axis in range(value.type.ndim)])(gradient)
        return [declared_like(math.cast(gradient, value.type.dtype), value)] + unconnected


class _ARangeGradient:
    """What bind_methods copies onto ARange."""

    def L_op(self, inputs, outputs, output_grads):
        """With element i = start + i * step (at a point where the length is locally
        constant): d/dstart = sum(g), d/dstep = sum(i * g); stop is disconnected."""
        start, _, step = inputs
        (output,), (output_grad,) = outputs, output_grads
        if is_disconnected(output_grad) or is_discrete(output):
            return [disconnected_type() for _ in inputs]
        positions = ARange(self.dtype)(0, shape_i(output, 0), 1)
        start_grad = reduce_sum(output_grad)
        step_grad = reduce_sum(math.mul(output_grad, positions))
        return [disconnected_type() if is_discrete(start) else
                math.cast(start_grad, start.type.dtype),
                disconnected_type(),
                disconnected_type() if is_discrete(step) else
                math.cast(step_grad, step.type.dtype)]



bind_methods(Elemwise, _ElemwiseDerivatives)
bind_methods(DimShuffle, _DimShuffleDerivatives)
bind_methods(Alloc, _AllocGradient)
bind_methods(ARange, _ARangeGradient)
