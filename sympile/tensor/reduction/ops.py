"""Reductions: sum, prod, max, min, all, any, mean, var, std, argmax, argmin, logsumexp.

Every function follows numpy: the same axis conventions (an int, a negative int, a tuple, None
for all axes, keepdims), the same result dtypes (a sum of int8 is int64, a mean of ints is
float64, the variance of complex numbers is real) and the same values.

Two Ops do the work: CAReduce (a commutative, associative binary scalar op folded over some
axes: add for sum, maximum for max, ...) and Argmax/Argmin. mean, var, std and logsumexp are
graphs of those and of elementwise ops. keepdims=True is a DimShuffle that puts the reduced axes
back with length 1.

Derivatives (CAReduce.L_op / R_op): a sum's gradient is the output gradient broadcast back over
the reduced axes; a product's uses the count of zeros in each slice (below); max and min send the
gradient to every element equal to the extremum (Theano's rule). Bool and integer results (all,
any, argmax, a sum cast to an integer dtype) are piecewise constant: nothing flows through them.
"""

from __future__ import annotations

import builtins
import copy
import functools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import (
    DisconnectedType,
    NonDifferentiable,
    disconnected_type,
    grad_not_implemented,
)
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from sympile.scalar import basic as scalar
from sympile.scalar.basic import normalize_dtype
from sympile.tensor import math
from sympile.tensor.basic.ops import second, zero_gradient
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.reduction.careduce_c import argreduce_c_code, careduce_c_code
from sympile.tensor.reduction.centered_c import centered_square_sum_c_code
from sympile.tensor.reduction.fused_c import fused_careduce_c_code
from sympile.tensor.shape.ops import declared_like, shape_i
from sympile.tensor.type import is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = ["CAReduce", "CenteredSquareSum", "FusedCAReduce", "Prod", "ProdWithoutZeros",
           "Argmax", "Argmin", "MaxAndArgmax", "Mean", "sum", "prod",
           "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "ptp", "argmax",
           "argmin", "max_and_argmax", "logsumexp"]


def normalize_axis(axis: Any, ndim: int, function: Any) -> tuple[int, ...]:
    """`axis` (None: every axis; an int or a sequence of ints, negative ones counting from the
    end) as a sorted tuple of non-negative axes of an `ndim`-d tensor.

    TypeError if an entry is not an int; ValueError if one is out of range or repeated.
    `function` names the caller in the messages.
    """
    if isinstance(axis, Constant):
        # A constant is known when the graph is built (Theano's NoneConst, constant(1)).
        axis = axis.data
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Variable):
        raise TypeError(f"{function}: axis must be known when the graph is built (an int, a "
                        f"tuple of ints or None), got the symbolic {axis}")
    if isinstance(axis, np.ndarray) and axis.dtype.kind in "iu" and axis.ndim <= 1:
        # Theano accepts a numpy integer array (0-d or a vector) as the axes.
        axis = axis.tolist()
    entries = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    normalized = []
    for entry in entries:
        if isinstance(entry, np.ndarray) and entry.ndim == 0 and entry.dtype.kind in "iu":
            entry = entry.item()  # Theano's tests write [numpy.array(0), numpy.array(1)]
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (int, np.integer)):
            raise TypeError(f"{function}: axis must be an int, a tuple of ints or None, got "
                            f"{axis!r}")
        if not -ndim <= entry < ndim:
            raise ValueError(f"{function}: axis {int(entry)} is out of range for a {ndim}-d "
                             f"input (valid axes: {-ndim} to {ndim - 1})")
        normalized.append(int(entry) % ndim)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{function}: axis {axis!r} names the same axis more than once")
    return tuple(sorted(normalized))


def _checked_axes(op: Op, axis: tuple[int, ...] | None, x: Variable) -> tuple[int, ...]:
    """The axes an Op with prop `axis` (None: all) reduces on `x`; ValueError if one is not an
    axis of x."""
    ndim = x.type.ndim
    if axis is None:
        return tuple(range(ndim))
    for entry in axis:
        if entry >= ndim:
            raise ValueError(f"{op}: cannot reduce axis {entry} of {x}, which has {ndim} "
                             f"dimensions ({x.type})")
    return axis


def _op_axis(axis: Sequence[int] | None, op_name: str,
             negative: bool = False) -> tuple[int, ...] | None:
    """The `axis` prop of a reduction Op: None, or a sorted tuple of distinct axes >= 0 (or
    counted from the end too, where `negative`: the op resolves them in make_node)."""
    if axis is None:
        return None
    axis = tuple(sorted(int(a) for a in ((axis,) if isinstance(axis, (int, np.integer))
                                         else axis)))
    if (not negative and builtins.any(a < 0 for a in axis)) or len(set(axis)) != len(axis):
        kind = "distinct ints" if negative else "distinct non-negative ints"
        raise ValueError(f"{op_name}: axis must be {kind}, got {axis}")
    return axis


def _reduced_shape(shape: Sequence[Any], axes: tuple[int, ...]) -> tuple:
    return tuple(length for index, length in enumerate(shape) if index not in axes)


def _check_static_nonempty(op: Op, x: Variable, axes: tuple[int, ...]) -> None:
    for axis in axes:
        if x.type.shape[axis] == 0:
            raise ValueError(f"{op}: axis {axis} of {x} ({x.type}) is empty, and this "
                             f"reduction of an empty axis has no value")


def check_runtime_nonempty(op: Op, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    """ValueError naming `op` if an input of `shape` is empty along one of `axes`."""
    for axis in axes:
        if shape[axis] == 0:
            raise ValueError(f"{op}: cannot reduce axis {axis} of an input of shape "
                             f"{tuple(shape)}: the axis is empty, and this reduction of an "
                             f"empty axis has no value")


_REDUCTION_NAMES = {scalar.add: "Sum", scalar.mul: "Prod", scalar.maximum: "Max",
                    scalar.minimum: "Min", scalar.logical_and: "All", scalar.logical_or: "Any"}


@functools.cache
def _default_dtype(scalar_op: scalar.ScalarOp, input_dtype: str) -> str:
    """numpy's result dtype of reducing an `input_dtype` array with `scalar_op` (int8 -> int64
    for add and mul, bool for logical_and, the input dtype for maximum)."""
    return normalize_dtype(scalar_op.nfunc.reduce(np.zeros((1,), dtype=input_dtype)).dtype)


@functools.cache
def _can_reduce(scalar_op: scalar.ScalarOp, input_dtype: str, acc_dtype: str) -> bool:
    try:
        scalar_op.nfunc.reduce(np.zeros((1,), dtype=input_dtype), dtype=acc_dtype)
    except (TypeError, ValueError):
        return False
    return True


class CAReduce(Op):
    """Folds the commutative, associative binary `scalar_op` over `axis` of its input: add
    gives the sum, mul the product, maximum/minimum the max/min, logical_and/or all/any.

    axis: a tuple of distinct axes >= 0 (None: every axis); they are removed from the output.
    dtype: the output dtype (None: numpy's, e.g. int64 for a sum of int8, bool for all).
    acc_dtype: the dtype the fold is computed in (None: the output dtype).
    Reducing an empty axis gives the op's identity (0 for a sum); for maximum and minimum,
    which have none, it is a ValueError (at build time when the static shape shows it).
    """

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype")

    def __init__(self, scalar_op: scalar.ScalarOp, axis: Sequence[int] | None = None,
                 dtype: Any = None, acc_dtype: Any = None):
        if not (isinstance(scalar_op, scalar.ScalarOp) and scalar_op.nin == 2
                and scalar_op.nout == 1 and scalar_op.associative and scalar_op.commutative
                and isinstance(scalar_op.nfunc, np.ufunc)):
            raise TypeError(f"CAReduce: expected a commutative, associative binary scalar op "
                            f"(add, mul, maximum, minimum, logical_and, ...), got {scalar_op}")
        self.scalar_op = scalar_op
        self.axis = _op_axis(axis, "CAReduce", negative=True)
        self.dtype = None if dtype is None else normalize_dtype(dtype)
        self.acc_dtype = None if acc_dtype is None else normalize_dtype(acc_dtype)

    def __str__(self):
        name = _REDUCTION_NAMES.get(self.scalar_op, f"CAReduce{{{self.scalar_op}}}")
        details = ["axis=all" if self.axis is None else f"axis={self.axis}"]
        if self.dtype is not None:
            details.append(f"dtype={self.dtype}")
        if self.acc_dtype is not None:
            details.append(f"acc_dtype={self.acc_dtype}")
        return f"{name}{{{', '.join(details)}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        if self.axis is not None and builtins.any(a < 0 for a in self.axis):
            # Axes counted from the end (Theano's CAReduce(op, axis=(-1,))) are resolved
            # here, where the rank is known: the node's op has them non-negative.
            op = copy.copy(self)
            op.axis = normalize_axis(self.axis, x.type.ndim, self)
            return op.make_node(x)
        axes = _checked_axes(self, self.axis, x)
        if self.scalar_op.identity is None:
            _check_static_nonempty(self, x, axes)
        dtype = self.dtype or _default_dtype(self.scalar_op, x.type.dtype)
        acc_dtype = self.acc_dtype or dtype
        if not _can_reduce(self.scalar_op, x.type.dtype, acc_dtype):
            raise TypeError(f"{self}: cannot reduce {x} of dtype {x.type.dtype} with "
                            f"{self.scalar_op} in {acc_dtype}")
        output = tensor_type(dtype, _reduced_shape(x.type.shape, axes))()
        return Apply(self, [x], [output])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = tuple(range(x.ndim)) if self.axis is None else self.axis
        if self.scalar_op.identity is None:
            check_runtime_nonempty(self, x.shape, axes)
        acc_dtype = self.acc_dtype or node.outputs[0].type.dtype
        # Overflow to inf is the result numpy gives too; its warning would only be noise.
        with np.errstate(all="ignore"):
            result = self.scalar_op.nfunc.reduce(x, axis=axes, dtype=acc_dtype)
        output_storage[0][0] = np.asarray(result).astype(node.outputs[0].type.dtype,
                                                         copy=False)

    def infer_shape(self, fgraph, node, input_shapes):
        axes = _checked_axes(self, self.axis, node.inputs[0])
        return [_reduced_shape(input_shapes[0], axes)]

    def c_code(self, node, names):
        """The fold as one strided loop nest (see sympile.tensor.reduction.careduce_c)."""
        return careduce_c_code(self, node, names)

    def L_op(self, inputs, outputs, output_grads):
        """The gradient of x from the output's gradient g, with g_kept = g with the reduced
        axes put back with length 1:

        sum:      g_kept broadcast to x's shape;
        prod:     g_kept * (the product of the other elements of x's slice), see
                  _product_partials for slices holding zeros;
        max, min: g_kept where x equals its slice's extremum, else 0. With ties every tied
                  element receives all of g_kept (Theano's `eq(x, max)` rule), so the
                  gradient summed over a slice can exceed g there; where the slice holds a
                  NaN (the result is NaN) no element equals it and the gradient is 0.

        The gradient has x's dtype (the dtype and acc_dtype props only set the result's).
        """
        (x,), (output,), (output_grad,) = inputs, outputs, output_grads
        if isinstance(output_grad.type, DisconnectedType):
            return [disconnected_type()]
        if is_discrete(output) or is_discrete(x):
            # Piecewise constant: zero, as in Theano.
            return [zero_gradient(x)]
        axes = _checked_axes(self, self.axis, x)
        kept_grad = _keep_reduced_axes(output_grad, x.type.ndim, axes)
        if self.scalar_op == scalar.add:
            gradient = second(x, kept_grad)
        elif self.scalar_op == scalar.mul:
            gradient = math.mul(kept_grad, self._product_partials(x, axes))
        elif self.scalar_op in (scalar.maximum, scalar.minimum):
            gradient = math.mul(kept_grad, _extremum_mask(x, output, axes))
        else:
            return [grad_not_implemented(self, 0, x, f"there is no derivative rule for a "
                                                     f"reduction by {self.scalar_op}")]
        return [declared_like(math.cast(gradient, x.type.dtype), x)]

    def R_op(self, inputs, eval_points):
        """The tangent of the result for the tangent v of x:

        sum:      sum(v) over the axes;
        prod:     sum(v * the product of the other elements of the slice);
        max, min: the tangent of the extreme element of each slice; with ties, the sum of
                  the tied elements' tangents, which is the transpose of L_op's rule (so
                  <R_op(v), u> = <v, L_op(u)> holds at ties too).
        """
        (x,), (tangent,) = inputs, eval_points
        if tangent is None or is_discrete(x) \
                or self._output_dtype(x) in scalar.DISCRETE_DTYPES:
            return [None]
        axes = _checked_axes(self, self.axis, x)
        tangent = declared_like(math.cast(tangent, x.type.dtype), x)
        if self.scalar_op == scalar.add:
            return [self(tangent)]
        if self.scalar_op == scalar.mul:
            partials = self._product_partials(x, axes)
        elif self.scalar_op in (scalar.maximum, scalar.minimum):
            partials = _extremum_mask(x, self(x), axes)
        else:
            raise MethodNotDefined(f"{self}.R_op: there is no derivative rule for a reduction "
                                   f"by {self.scalar_op}")
        result = CAReduce(scalar.add, axes)(math.mul(tangent, partials))
        return [math.cast(result, self._output_dtype(x))]

    def _output_dtype(self, x: Variable) -> str:
        return self.dtype or _default_dtype(self.scalar_op, x.type.dtype)

    def _product_partials(self, x: Variable, axes: tuple[int, ...]) -> Variable:
        """d prod(x) / d x_i for every element i, broadcast against x: the product of the
        other elements of i's slice.

        Dividing the product by x_i would give 0/0 where x_i = 0, so each slice's zeros are
        counted (the zero-count trick): with none, the partial is p / x_i for p the product;
        with exactly one, it is the product of the nonzero elements at the zero and 0
        elsewhere; with two or more, every partial is 0. The product is computed in the
        reduction's dtype, as the result is.
        """
        ndim = x.type.ndim
        is_zero = math.eq(x, 0)
        zero_count = _keep_reduced_axes(CAReduce(scalar.add, axes)(is_zero), ndim, axes)
        nonzero = math.switch(is_zero, 1, x)
        nonzero_product = _keep_reduced_axes(
            CAReduce(scalar.mul, axes, self.dtype, self.acc_dtype)(nonzero), ndim, axes)
        # Dividing by `nonzero` (1 at the zeros) keeps the unselected branch finite.
        at_nonzero = math.switch(math.eq(zero_count, 0),
                                 math.true_div(nonzero_product, nonzero), 0)
        at_zero = math.switch(math.eq(zero_count, 1), nonzero_product, 0)
        return math.switch(is_zero, at_zero, at_nonzero)


def _theano_axis(axis: Any) -> Any:
    """Theano's reduction ops take one int axis as well as a sequence."""
    return (axis,) if isinstance(axis, (int, np.integer)) else axis


class Prod(CAReduce):
    """Theano's Prod op: CAReduce(mul) with Theano's constructor. no_zeros_in_input=True
    promises that x holds no zero: the derivative is then prod / x, one division instead
    of the graph that counts each slice's zeros (a zero then gives inf or NaN, as in
    Theano)."""

    __props__ = (*CAReduce.__props__, "no_zeros_in_input")

    def __init__(self, axis: Any = None, dtype: Any = None, acc_dtype: Any = None,
                 no_zeros_in_input: bool = False):
        super().__init__(scalar.mul, _theano_axis(axis), dtype, acc_dtype)
        self.no_zeros_in_input = bool(no_zeros_in_input)

    def _product_partials(self, x: Variable, axes: tuple[int, ...]) -> Variable:
        if not self.no_zeros_in_input:
            return super()._product_partials(x, axes)
        product = CAReduce(scalar.mul, axes, self.dtype, self.acc_dtype)(x)
        return math.true_div(_keep_reduced_axes(product, x.type.ndim, axes), x)


class ProdWithoutZeros(Op):
    """The product of the nonzero elements of x over `axis` (Theano's ProdWithoutZeros; an
    all-zero slice gives 1). Dtypes as CAReduce(mul)'s. It has no derivative (Theano's
    neither): use prod, or prod(no_zeros_in_input=True)."""

    __props__ = ("axis", "dtype", "acc_dtype")

    def __init__(self, axis: Any = None, dtype: Any = None, acc_dtype: Any = None):
        self.reduction = CAReduce(scalar.mul, _theano_axis(axis), dtype, acc_dtype)
        self.axis, self.dtype, self.acc_dtype = (self.reduction.axis, self.reduction.dtype,
                                                 self.reduction.acc_dtype)

    def make_node(self, x):
        node = self.reduction.make_node(x)
        return Apply(self, node.inputs, [node.outputs[0].type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        self.reduction.perform(node, [np.where(x == 0, np.ones((), x.dtype), x)],
                               output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        return self.reduction.infer_shape(fgraph, node, input_shapes)

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, 0, inputs[0], "the product without zeros has no "
                                     "derivative; use prod(x, no_zeros_in_input=True)")]


class FusedCAReduce(Op):
    """CAReduce(scalar_op, axis, dtype, acc_dtype) of `Elemwise(pre_op)(*inputs)`, each
    elementwise value computed where it is folded and never stored: sum((x - m)**2) reads x
    once and writes no temporary. The fusion rewrite local_careduce_fusion forms it.

    pre_op: a single-output scalar op (a Composite, or one op such as exp) of as many inputs
    as the node has; they broadcast as Elemwise's do, and `axis` counts the broadcast result's
    axes. Values, dtypes, errors and derivatives are those of the two nodes: each value is
    computed in pre_op's output dtype, cast to acc_dtype and folded (see CAReduce).
    """

    __props__ = ("scalar_op", "pre_op", "axis", "dtype", "acc_dtype")

    def __init__(self, scalar_op: scalar.ScalarOp, pre_op: scalar.ScalarOp,
                 axis: Sequence[int] | None = None, dtype: Any = None, acc_dtype: Any = None):
        self.reduction = CAReduce(scalar_op, axis, dtype, acc_dtype)
        if not (isinstance(pre_op, scalar.ScalarOp) and pre_op.nout == 1):
            raise TypeError(f"FusedCAReduce: pre_op must be a scalar op with one output, got "
                            f"{pre_op!r}")
        self.elemwise = Elemwise(pre_op)
        self.scalar_op, self.pre_op = scalar_op, pre_op
        self.axis, self.dtype, self.acc_dtype = (self.reduction.axis, self.reduction.dtype,
                                                 self.reduction.acc_dtype)

    def __str__(self):
        return f"{self.reduction}({self.pre_op})"

    def _parts(self, inputs: Sequence[Any]) -> tuple[Apply, Apply]:
        """The Elemwise node of `inputs` and the CAReduce node of its output."""
        elemwise_node = self.elemwise.make_node(*inputs)
        return elemwise_node, self.reduction.make_node(elemwise_node.outputs[0])

    def make_node(self, *inputs):
        elemwise_node, reduction_node = self._parts(inputs)
        return Apply(self, elemwise_node.inputs, [reduction_node.outputs[0].type()])

    def perform(self, node, inputs, output_storage):
        elemwise_node, reduction_node = self._parts(node.inputs)
        values = [[None]]
        self.elemwise.perform(elemwise_node, inputs, values)
        self.reduction.perform(reduction_node, [values[0][0]], output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        elemwise_node, reduction_node = self._parts(node.inputs)
        elemwise_shapes = self.elemwise.infer_shape(fgraph, elemwise_node, input_shapes)
        return self.reduction.infer_shape(fgraph, reduction_node, elemwise_shapes)

    def c_code(self, node, names):
        """The fold with the scalar op's C computing each value (see
        sympile.tensor.reduction.fused_c)."""
        return fused_careduce_c_code(self, node, names)

    def L_op(self, inputs, outputs, output_grads):
        """The chain rule through the two parts: CAReduce.L_op gives the gradient of the
        elementwise values (recomputed as a graph), Elemwise.L_op those of the inputs. A
        bool or integer result is piecewise constant: zero, as in Theano."""
        if isinstance(output_grads[0].type, DisconnectedType):
            return [disconnected_type() for _ in inputs]
        if is_discrete(outputs[0]):
            return [zero_gradient(x) for x in inputs]
        if self.scalar_op not in (scalar.add, scalar.mul, scalar.maximum, scalar.minimum):
            return [grad_not_implemented(self, index, x, f"there is no derivative rule for a "
                                                         f"reduction by {self.scalar_op}")
                    for index, x in enumerate(inputs)]
        values = self.elemwise(*inputs)
        (values_grad,) = self.reduction.L_op([values], outputs, output_grads)
        return self.elemwise.L_op(inputs, [values], [values_grad])

    def R_op(self, inputs, eval_points):
        """The tangent of the elementwise values (Elemwise.R_op), reduced by CAReduce.R_op."""
        values = self.elemwise(*inputs)
        (tangent,) = self.elemwise.R_op(inputs, eval_points)
        if tangent is None:
            return [None]
        return self.reduction.R_op([values], [tangent])


class CenteredSquareSum(Op):
    """sum((x - mean(x))**2) over every axis of a float32 or float64 x, a 0-d result of x's
    dtype: numpy's two passes (perform), or one read of x in C (centered.c: block sums
    combined by Chan, Golub and LeVeque's update, in double). The rewrite
    local_centered_square_sum forms it from the fused reduction of (x - x.mean())**2."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        if x.type.dtype not in ("float32", "float64"):
            raise TypeError(f"{self}: expected a float32 or float64 tensor, got {x.type}")
        return Apply(self, [x], [tensor_type(x.type.dtype, ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of no value
            deviations = x - np.mean(x, dtype=x.dtype)
        output_storage[0][0] = np.asarray(np.sum(deviations * deviations), dtype=x.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def c_code(self, node, names):
        return centered_square_sum_c_code(self, node, names)

    def L_op(self, inputs, outputs, output_grads):
        """2 (x - mean(x)) g: the mean's own derivative term is sum(x - mean(x)) = 0."""
        (x,), (gradient,) = inputs, output_grads
        if isinstance(gradient.type, DisconnectedType):
            return [disconnected_type()]
        deviations = math.sub(x, CAReduce(scalar.add)(x) / math.cast(x.size, x.type.dtype))
        return [math.mul(math.mul(deviations, 2), gradient)]

    def R_op(self, inputs, eval_points):
        """2 sum((x - mean(x)) v)."""
        (x,), (tangent,) = inputs, eval_points
        if tangent is None:
            return [None]
        deviations = math.sub(x, CAReduce(scalar.add)(x) / math.cast(x.size, x.type.dtype))
        return [math.mul(CAReduce(scalar.add)(math.mul(deviations, tangent)), 2)]


def _extremum_mask(x: Variable, extremum: Variable, axes: tuple[int, ...]) -> Variable:
    """Where x equals `extremum`, its reduction over `axes` (bool, x's shape)."""
    return math.eq(x, _keep_reduced_axes(extremum, x.type.ndim, axes))


class _ArgReduce(NonDifferentiable, Op):
    """Index of the extreme element over `axis` (a tuple of axes >= 0, None: every axis),
    counted in the C-order flattening of the reduced axes (numpy's argmax with axis=None
    counts in the flattened array). The reduced axes are removed; the output is int64."""

    __props__ = ("axis",)
    numpy_function: Any = None

    def __init__(self, axis: Sequence[int] | None = None):
        self.axis = _op_axis(axis, type(self).__name__)

    def __str__(self):
        axis = "all" if self.axis is None else self.axis
        return f"{type(self).__name__}{{axis={axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        axes = _checked_axes(self, self.axis, x)
        _check_static_nonempty(self, x, axes)
        return Apply(self, [x], [tensor_type("int64", _reduced_shape(x.type.shape, axes))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = tuple(range(x.ndim)) if self.axis is None else self.axis
        check_runtime_nonempty(self, x.shape, axes)
        kept = [axis for axis in range(x.ndim) if axis not in axes]
        block = int(np.prod([x.shape[axis] for axis in axes], dtype="int64"))
        # Move the reduced axes last and merge them, so one call covers any set of axes.
        merged = np.transpose(x, kept + list(axes)).reshape([x.shape[a] for a in kept] + [block])
        result = type(self).numpy_function(merged, axis=-1)
        output_storage[0][0] = np.asarray(result, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        axes = _checked_axes(self, self.axis, node.inputs[0])
        return [_reduced_shape(input_shapes[0], axes)]


class Argmax(_ArgReduce):
    """argmax over `axis` (see _ArgReduce)."""

    numpy_function = staticmethod(np.argmax)

    def c_code(self, node, names):
        return argreduce_c_code(self, node, names, maximum=True)


class Argmin(_ArgReduce):
    """argmin over `axis` (see _ArgReduce)."""

    numpy_function = staticmethod(np.argmin)

    def c_code(self, node, names):
        return argreduce_c_code(self, node, names, maximum=False)


class MaxAndArgmax(Op):
    """Theano's MaxAndArgmax(axis)(x): [max over `axis`, argmax over it] from one node (axis
    a tuple of axes, an int or None: every axis). max_and_argmax() builds a Max and an
    Argmax node instead, which the C backend compiles; this op runs numpy's."""

    __props__ = ("axis",)

    def __init__(self, axis: Any = None):
        self.axis = _op_axis(_theano_axis(axis), "MaxAndArgmax")

    def _parts(self) -> tuple[CAReduce, Argmax]:
        return CAReduce(scalar.maximum, self.axis), Argmax(self.axis)

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        maximum, argmax = self._parts()
        return Apply(self, [x], [maximum.make_node(x).outputs[0].type(),
                                 argmax.make_node(x).outputs[0].type()])

    def perform(self, node, inputs, output_storage):
        for part, storage in zip(self._parts(), output_storage):
            part.perform(node, inputs, [storage])

    def infer_shape(self, fgraph, node, input_shapes):
        return self._parts()[1].infer_shape(fgraph, node, input_shapes) * 2

    def connection_pattern(self, node):
        return [[True, False]]

    def L_op(self, inputs, outputs, output_grads):
        """The max's gradient (see CAReduce.L_op); the index is piecewise constant."""
        maximum, _ = self._parts()
        return maximum.L_op(inputs, outputs[:1], output_grads[:1])


class Mean(Op):
    """Theano's Mean(axis)(x): numpy.mean over `axis` (a tuple, an int or None: every axis)
    as one node, with mean()'s dtypes (float64 for integers). mean() builds a sum and a
    division instead, which the C backend compiles and fuses; this op runs numpy's."""

    __props__ = ("axis",)

    def __init__(self, axis: Any = None):
        self.axis = _op_axis(_theano_axis(axis), "Mean")

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        axes = _checked_axes(self, self.axis, x)
        dtype = _mean_dtypes(x.type.dtype, None)[1]
        return Apply(self, [x], [tensor_type(dtype, _reduced_shape(x.type.shape, axes))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = tuple(range(x.ndim)) if self.axis is None else self.axis
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an empty axis: NaN, as numpy
            result = np.mean(x, axis=axes, dtype=_mean_dtypes(x.dtype.name, None)[0])
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        axes = _checked_axes(self, self.axis, node.inputs[0])
        return [_reduced_shape(input_shapes[0], axes)]

    def L_op(self, inputs, outputs, output_grads):
        """g / n at every element of the slice (n: the slice's size)."""
        (x,), (output_grad,) = inputs, output_grads
        if is_discrete(x):
            return [zero_gradient(x)]
        axes = _checked_axes(self, self.axis, x)
        kept = _keep_reduced_axes(math.true_div(output_grad, _reduced_size(x, axes)),
                                  x.type.ndim, axes)
        return [declared_like(math.cast(second(x, kept), x.type.dtype), x)]


def _keep_reduced_axes(reduced: Variable, ndim: int, axes: tuple[int, ...]) -> Variable:
    """`reduced`, a reduction over `axes` of an `ndim`-d tensor, with those axes put back with
    length 1 (numpy's keepdims=True)."""
    if not axes:
        return reduced
    remaining = iter(range(reduced.type.ndim))
    order = ["x" if axis in axes else next(remaining) for axis in range(ndim)]
    return DimShuffle(reduced.type.ndim, order)(reduced)


def _drop_reduced_axes(kept: Variable, axes: tuple[int, ...]) -> Variable:
    """The inverse of _keep_reduced_axes: drop the length-1 `axes` of `kept`."""
    if not axes:
        return kept
    order = [axis for axis in range(kept.type.ndim) if axis not in axes]
    return DimShuffle(kept.type.ndim, order)(kept)


def _reduce(scalar_op: scalar.ScalarOp, function: str, x: Any, axis: Any, keepdims: bool,
            dtype: Any = None, acc_dtype: Any = None) -> Variable:
    x = as_tensor_variable(x, op=function)
    axes = normalize_axis(axis, x.type.ndim, function)
    reduced = CAReduce(scalar_op, axes, dtype, acc_dtype)(x)
    return _keep_reduced_axes(reduced, x.type.ndim, axes) if keepdims else reduced


def sum(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
        acc_dtype: Any = None) -> Variable:
    """Sum of x over `axis` (numpy.sum). dtype: of the result (numpy's default: int64 for
    signed ints and bool, uint64 for unsigned, the input's for floats); acc_dtype: the dtype
    the sum is computed in (default: the result's). An empty sum is 0."""
    return _reduce(scalar.add, "sum", x, axis, keepdims, dtype, acc_dtype)


def prod(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
         acc_dtype: Any = None, no_zeros_in_input: bool = False) -> Variable:
    """Product of x over `axis` (numpy.prod); dtypes as in sum. An empty product is 1.
    no_zeros_in_input=True (Theano's) promises x has no zero, for a cheaper derivative
    (see Prod)."""
    if not no_zeros_in_input:
        return _reduce(scalar.mul, "prod", x, axis, keepdims, dtype, acc_dtype)
    x = as_tensor_variable(x, op="prod")
    axes = normalize_axis(axis, x.type.ndim, "prod")
    reduced = Prod(axes, dtype, acc_dtype, no_zeros_in_input=True)(x)
    return _keep_reduced_axes(reduced, x.type.ndim, axes) if keepdims else reduced


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Largest element of x over `axis` (numpy.max; NaN if there is one). The result has x's
    dtype; an empty axis is a ValueError. The gradient goes to every element equal to the max
    (Theano's rule: tied elements each get the whole gradient; see CAReduce.L_op)."""
    return _reduce(scalar.maximum, "max", x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Smallest element of x over `axis` (numpy.min); see max."""
    return _reduce(scalar.minimum, "min", x, axis, keepdims)


amax = max
amin = min


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Whether every element of x over `axis` is nonzero (numpy.all), as bool. Empty: True."""
    return _reduce(scalar.logical_and, "all", x, axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Whether some element of x over `axis` is nonzero (numpy.any), as bool. Empty: False."""
    return _reduce(scalar.logical_or, "any", x, axis, keepdims)


def _arg_reduce(op_class: type[_ArgReduce], function: str, x: Any, axis: Any,
                keepdims: bool) -> Variable:
    x = as_tensor_variable(x, op=function)
    axes = normalize_axis(axis, x.type.ndim, function)
    result = op_class(axes)(x)
    return _keep_reduced_axes(result, x.type.ndim, axes) if keepdims else result


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Index (int64) of the first largest element of x over `axis` (numpy.argmax: axis=None
    indexes the flattened x). Several axes are allowed, as in Theano: the index is into their
    C-order flattening. An empty axis is a ValueError."""
    return _arg_reduce(Argmax, "argmax", x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Index (int64) of the first smallest element of x over `axis`; see argmax."""
    return _arg_reduce(Argmin, "argmin", x, axis, keepdims)


def max_and_argmax(x: Any, axis: Any = None, keepdims: bool = False) -> list[Variable]:
    """[max(x, axis), argmax(x, axis)] (Theano's max_and_argmax)."""
    return [max(x, axis, keepdims), argmax(x, axis, keepdims)]


def _reduced_size(x: Variable, axes: tuple[int, ...]) -> Variable:
    """The number of elements in the `axes` of x, an int64 scalar (a constant when the static
    shape knows it)."""
    known = int(np.prod([x.type.shape[a] for a in axes if x.type.shape[a] is not None],
                        dtype="int64"))
    unknown = [shape_i(x, a) for a in axes if x.type.shape[a] is None]
    if not unknown:
        return constant(np.int64(known))
    size = unknown[0]
    for length in unknown[1:]:
        size = math.mul(size, length)
    return size if known == 1 else math.mul(size, constant(np.int64(known)))


def _divide(total: Variable, count: Variable, dtype: str) -> Variable:
    """total / count as `dtype`. The division is done in numpy's promotion of total's dtype
    with int64 (float64 for float16 and float32 totals), then rounded, as numpy's mean does."""
    return math.cast(math.true_div(total, count), dtype)


def _mean_dtypes(input_dtype: str, dtype: Any) -> tuple[str, str]:
    """(accumulation dtype, result dtype) of numpy.mean of `input_dtype` values."""
    if dtype is not None:
        dtype = normalize_dtype(dtype)
        return dtype, dtype
    if input_dtype in scalar.DISCRETE_DTYPES:
        return "float64", "float64"
    if input_dtype == "float16":
        # numpy sums float16 in float32 and rounds the mean back to float16.
        return "float32", "float16"
    return input_dtype, input_dtype


def mean(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
         acc_dtype: Any = None) -> Variable:
    """Arithmetic mean of x over `axis` (numpy.mean): float64 for integer and bool inputs,
    the input's dtype for floats and complex (float16 is accumulated in float32), or `dtype`.
    acc_dtype: the dtype the sum is computed in (Theano's; default as numpy). The mean of an
    empty axis is NaN."""
    x = as_tensor_variable(x, op="mean")
    axes = normalize_axis(axis, x.type.ndim, "mean")
    default_acc_dtype, result_dtype = _mean_dtypes(x.type.dtype, dtype)
    total = CAReduce(scalar.add, axes, acc_dtype or default_acc_dtype)(x)
    result = _divide(total, _reduced_size(x, axes), result_dtype)
    return _keep_reduced_axes(result, x.type.ndim, axes) if keepdims else result


def ptp(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The range max - min of x over `axis` (numpy.ptp), in x's dtype (integers wrap as
    numpy's do)."""
    x = as_tensor_variable(x, op="ptp")
    return math.sub(max(x, axis=axis, keepdims=keepdims), min(x, axis=axis, keepdims=keepdims))


def _check_ddof(ddof: Any, function: str) -> None:
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer,
                                                                    np.floating)):
        raise TypeError(f"{function}: ddof must be a number, got {ddof!r}")


def _variance(x: Any, axis: Any, ddof: Any, keepdims: bool, function: str) -> Variable:
    x = as_tensor_variable(x, op=function)
    axes = normalize_axis(axis, x.type.ndim, function)
    _check_ddof(ddof, function)
    # numpy computes every step in float64 for discrete inputs and in the input dtype
    # otherwise (float16 included, unlike mean).
    acc_dtype = "float64" if x.type.dtype in scalar.DISCRETE_DTYPES else x.type.dtype
    count = _reduced_size(x, axes)
    centre = _divide(CAReduce(scalar.add, axes, acc_dtype)(x), count, acc_dtype)
    deviation = math.sub(x, _keep_reduced_axes(centre, x.type.ndim, axes))
    if deviation.type.dtype in scalar.COMPLEX_DTYPES:
        squares = math.add(math.sqr(math.real(deviation)), math.sqr(math.imag(deviation)))
    else:
        squares = math.sqr(deviation)
    degrees = math.maximum(math.sub(count, ddof), 0)
    result = _divide(CAReduce(scalar.add, axes)(squares), degrees, squares.type.dtype)
    return _keep_reduced_axes(result, x.type.ndim, axes) if keepdims else result


def var(x: Any, axis: Any = None, ddof: Any = 0, keepdims: bool = False,
        corrected: bool = False) -> Variable:
    """Variance of x over `axis` (numpy.var): the mean of `|x - mean(x)|**2`, with the sum
    divided by N - ddof (clipped at 0). float64 for integer and bool inputs, the real dtype
    for complex ones (complex64 -> float32), else the input's dtype. corrected=True
    (Theano's name) is ddof=1, the unbiased estimate."""
    if corrected:
        if ddof not in (0, 1):
            raise ValueError(f"var: corrected=True means ddof=1; got ddof={ddof!r} as well")
        ddof = 1
    return _variance(x, axis, ddof, keepdims, "var")


def std(x: Any, axis: Any = None, ddof: Any = 0, keepdims: bool = False) -> Variable:
    """Standard deviation of x over `axis`: sqrt(var(x, axis, ddof)) (numpy.std)."""
    return math.sqrt(_variance(x, axis, ddof, keepdims, "std"))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """log(sum(exp(x), axis)) computed without overflow (scipy.special.logsumexp): the max
    m of each slice is subtracted before exp and added back after log. Integer and bool
    inputs give float64 (as scipy). An empty axis is a ValueError, as for max."""
    x = as_tensor_variable(x, op="logsumexp")
    axes = normalize_axis(axis, x.type.ndim, "logsumexp")
    if x.type.dtype in scalar.DISCRETE_DTYPES:
        x = math.cast(x, "float64")
    peak = max(x, axes, keepdims=True)
    # exp(x - m) <= 1 for finite m, so the sum cannot overflow. An infinite m (a slice of
    # -infs, or one holding +inf) is replaced by 0 so that x - m is not inf - inf = NaN:
    # the formula then gives -inf, resp. +inf, directly.
    shift = math.switch(math.isfinite(peak), peak, 0)
    total = sum(math.exp(math.sub(x, shift)), axes, keepdims=True)
    result = math.add(math.log(total), shift)
    return result if keepdims else _drop_reduced_axes(result, axes)

