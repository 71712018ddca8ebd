"""Sorting: sort and argsort, with numpy's semantics (NaNs last, axis None flattens).

argsort always sorts stably, so equal elements keep their order and the result is
numpy.argsort(x, kind='stable') whatever kind is asked for: numpy leaves the order of ties to
its non-stable kinds unspecified, and a fixed order keeps every backend's results equal.

Derivatives: sort(x) is x gathered by the permutation p = argsort(x) along the axis, so its
gradient is the output gradient scattered back through p, and its tangent is the input tangent
gathered by p (PermuteAlongAxis does both). Where x has ties any order of the tied elements
sorts x; the rules use argsort's stable one (one of the one-sided derivatives there).
argsort's integer result is piecewise constant: its input is disconnected.

topk, argtopk and topk_and_argtopk (Theano's) pick |kth| positions of the sorted order along
an axis: the largest first for kth > 0, the smallest first for kth < 0 (kth may be
symbolic). They are built from sort, argsort and take, so they have their gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic.ops import arange, zeros_like
from sympile.tensor.elemwise import broadcast_static_shape
from sympile.tensor.extra_ops.ops import reshaped_like, static_product
from sympile.tensor.math import abs as absolute
from sympile.tensor.math import and_, eq, floor, ge, lt, switch
from sympile.tensor.raise_op import Assert
from sympile.tensor.reduction.ops import sum as reduce_sum
from sympile.tensor.shape.ops import (
    declared_like,
    expand_dims,
    flatten,
    normalize_one_axis,
    product_of_lengths,
)
from sympile.tensor.sort.permute_c import permute_along_axis_c_code
from sympile.tensor.sort.sort_c import argsort_c_code, sort_c_code, topk_c_code
from sympile.tensor.subtensor.ops import inc_subtensor
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["SortOp", "ArgSortOp", "PermuteAlongAxis", "PermuteRowElements", "TopKOp", "sort",
           "argsort", "topk", "argtopk", "topk_and_argtopk"]

SORT_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


class _SortBase(Op):
    """Shared make_node/infer_shape: the output has x's shape, or is flat when axis is None."""

    axis: int | None
    output_dtype: str | None = None

    def _check_axis(self, axis: int | None) -> int | None:
        if axis is None:
            return None
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{type(self).__name__}: axis must be an int or None, got {axis!r}")
        if axis < 0:
            raise ValueError(f"{type(self).__name__}: axis must be >= 0 (normalized), got "
                             f"{axis}")
        return int(axis)

    def make_node(self, x):
        x = as_tensor_variable(x, op=self, argument="x")
        if self.axis is None:
            shape: tuple = (static_product(x.type.shape),)
        else:
            if self.axis >= x.type.ndim:
                raise ValueError(f"{self}: axis {self.axis} is out of bounds for {x.type}")
            shape = x.type.shape
        dtype = self.output_dtype or x.type.dtype
        return Apply(self, [x], [tensor_type(dtype, shape)()])

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        if self.axis is None:
            return [(product_of_lengths(shape),)]
        return [tuple(shape)]


class SortOp(_SortBase):
    """x sorted along `axis` (numpy.sort with `kind`); axis None sorts the flattened x."""

    __props__ = ("axis", "kind")

    def __init__(self, axis: int | None, kind: str = "quicksort"):
        self.axis = self._check_axis(axis)
        self.kind = _check_kind(kind, "SortOp")

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.sort(inputs[0], axis=self.axis, kind=self.kind)

    def c_code(self, node, names):
        """numpy's C sort of the op's kind (sympile.tensor.sort.sort_c)."""
        return sort_c_code(self, node, names)

    def L_op(self, inputs, outputs, output_grads):
        """gx = g scattered back through p = argsort(x): gx[..., p[..., j], ...] = g[..., j, ...]
        along the axis (for axis None, on the flattened x, then reshaped to x's shape)."""
        (x,), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad):
            return [disconnected_type()]
        permutation = ArgSortOp(self.axis)(x)
        axis = 0 if self.axis is None else self.axis
        gradient = PermuteAlongAxis(axis, inverse=True)(output_grad, permutation)
        if self.axis is None:
            gradient = reshaped_like(gradient, x)
        return [declared_like(gradient, x)]

    def R_op(self, inputs, eval_points):
        """The tangent of sort(x) is the tangent v gathered by p = argsort(x) along the axis
        (the flattened v for axis None)."""
        (x,), (tangent,) = inputs, eval_points
        if tangent is None:
            return [None]
        permutation = ArgSortOp(self.axis)(x)
        if self.axis is None:
            return [PermuteAlongAxis(0)(flatten(tangent), permutation)]
        return [PermuteAlongAxis(self.axis)(tangent, permutation)]


class ArgSortOp(NonDifferentiable, _SortBase):
    """The int64 indices that sort x along `axis`, ties in stable order (numpy.argsort with
    kind='stable'); axis None sorts the flattened x."""

    __props__ = ("axis",)
    output_dtype = "int64"

    def __init__(self, axis: int | None):
        self.axis = self._check_axis(axis)

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.argsort(inputs[0], axis=self.axis, kind="stable") \
            .astype("int64", copy=False)

    def c_code(self, node, names):
        """numpy's C stable argsort (sympile.tensor.sort.sort_c)."""
        return argsort_c_code(self, node, names)


class PermuteAlongAxis(Op):
    """x permuted along `axis` by the integer tensor p of x's shape, each of whose lines along
    the axis is a permutation of range(n): gathered, out[..., j, ...] = x[..., p[..., j], ...]
    (numpy.take_along_axis), or with inverse=True scattered, out[..., p[..., j], ...] =
    x[..., j, ...]. The two are each other's inverse and transpose: the derivative rules of
    sort. p must be a permutation along the axis (checked at run time)."""

    __props__ = ("axis", "inverse")

    def __init__(self, axis: int, inverse: bool = False):
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)) \
                or axis < 0:
            raise TypeError(f"PermuteAlongAxis: axis must be an int >= 0, got {axis!r}")
        self.axis = int(axis)
        self.inverse = bool(inverse)

    def make_node(self, x, permutation):
        x = as_tensor_variable(x, op=self, argument="x")
        permutation = as_tensor_variable(permutation, op=self, argument="permutation")
        if self.axis >= x.type.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of bounds for {x.type}")
        if permutation.type.ndim != x.type.ndim or permutation.type.dtype[0] not in "iu":
            raise TypeError(f"{self}: permutation must be an integer tensor of x's "
                            f"{x.type.ndim} dimensions, got {permutation.type}")
        shape = []
        for axis, (own, other) in enumerate(zip(x.type.shape, permutation.type.shape)):
            if None not in (own, other) and own != other:
                raise ValueError(f"{self}: permutation ({permutation.type}) and x ({x.type}) "
                                 f"differ in length on axis {axis}")
            shape.append(own if own is not None else other)
        return Apply(self, [x, permutation], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        x, permutation = inputs
        if permutation.shape != x.shape:
            raise ValueError(f"PermuteAlongAxis: permutation has shape {permutation.shape}, "
                             f"x has {x.shape}")
        if permutation.size and (permutation.min() < 0
                                 or permutation.max() >= x.shape[self.axis]):
            raise ValueError(f"PermuteAlongAxis: permutation entries must lie in "
                             f"[0, {x.shape[self.axis]})")
        # n in-range entries per line reach all n positions exactly when they are distinct.
        reached = np.zeros(x.shape, dtype=bool)
        np.put_along_axis(reached, permutation, True, axis=self.axis)
        if not reached.all():
            raise ValueError(f"PermuteAlongAxis: permutation is not a permutation along axis "
                             f"{self.axis}")
        if self.inverse:
            result = np.empty_like(x)
            np.put_along_axis(result, permutation, x, axis=self.axis)
        else:
            result = np.take_along_axis(x, permutation, axis=self.axis)
        output_storage[0][0] = result

    def c_code(self, node, names):
        """perform's checks, then one gathering or scattering pass
        (sympile.tensor.sort.permute_c)."""
        return permute_along_axis_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """A permutation's transpose is its inverse: gx = the other direction applied to g."""
        (x, permutation), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad):
            return [disconnected_type(), disconnected_type()]
        gradient = PermuteAlongAxis(self.axis, not self.inverse)(output_grad, permutation)
        return [declared_like(gradient, x), disconnected_type()]

    def R_op(self, inputs, eval_points):
        """Linear in x: the same permutation applied to x's tangent."""
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent, inputs[1])]


class PermuteRowElements(Op):
    """Theano's PermuteRowElements()(x, y, inverse): the last axis of x permuted by the
    integer tensor y, out[..., j] = x[..., y[..., j]] (inverse nonzero: out[..., y[..., j]] =
    x[..., j]), the other axes of x and y broadcast against each other. `inverse` is an
    integer scalar (a variable or a number). permute_row_elements() builds a broadcast and
    PermuteAlongAxis instead, which the C backend compiles; this op runs numpy's."""

    __props__ = ()

    def make_node(self, x, y, inverse):
        x = as_tensor_variable(x, op=self, argument="x")
        y = as_tensor_variable(y, op=self, argument="y")
        inverse = as_tensor_variable(inverse, op=self, argument="inverse")
        if x.type.ndim < 1 or y.type.ndim < 1 or y.type.dtype[0] not in "iu":
            raise TypeError(f"{self}: x ({x.type}) and y ({y.type}) need at least one "
                            f"dimension, y an integer dtype")
        if inverse.type.ndim != 0 or inverse.type.dtype[0] not in "biu":
            raise TypeError(f"{self}: inverse must be an integer scalar, got {inverse.type}")
        leading = broadcast_static_shape([x.type.shape[:-1], y.type.shape[:-1]], op=self)
        shape = (*leading, x.type.shape[-1])
        return Apply(self, [x, y, inverse], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        x, y, inverse = inputs
        ndim = node.outputs[0].type.ndim
        try:
            leading = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        except ValueError:
            raise ValueError(f"{self}: x of shape {x.shape} and y of shape {y.shape} do not "
                             f"broadcast (the last axis aside)") from None
        if y.shape[-1] != x.shape[-1]:
            raise ValueError(f"{self}: y's rows have {y.shape[-1]} entries, x's "
                             f"{x.shape[-1]}")
        for value, variable in zip((x, y), node.inputs):
            padded = (1,) * (ndim - value.ndim) + value.shape[:-1]
            static = (1,) * (ndim - value.ndim) + variable.type.shape[:-1]
            if any(own != length and own_static != 1
                   for own, own_static, length in zip(padded, static, leading)):
                raise ValueError(f"{self}: {variable} of shape {value.shape} would be "
                                 f"broadcast on an axis its type does not declare of length 1 "
                                 f"(x: {x.shape}, y: {y.shape})")
        full = (*leading, x.shape[-1])
        permute = PermuteAlongAxis(ndim - 1, inverse=bool(inverse))
        permute.perform(node, [np.broadcast_to(x, full), np.broadcast_to(y, full)],
                        output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        x, y, _ = node.inputs
        ndim = node.outputs[0].type.ndim
        padded = [((1,) * (ndim - len(shape)) + tuple(shape), (1,) * (ndim - v.type.ndim)
                   + tuple(v.type.shape)) for shape, v in zip(input_shapes[:2], (x, y))]
        (x_lengths, x_static), (y_lengths, _) = padded
        return [tuple(y_length if static == 1 else x_length
                      for x_length, static, y_length in zip(x_lengths[:-1], x_static[:-1],
                                                             y_lengths[:-1]))
                + (x_lengths[-1],)]

    def connection_pattern(self, node):
        return [[True], [False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """The other direction applied to g, summed over the axes along which x was
        broadcast (a permutation's transpose is its inverse)."""
        (x, y, inverse), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad):
            return [disconnected_type()] * 3
        gradient = self(output_grad, y, eq(inverse, 0))
        added = output_grad.type.ndim - x.type.ndim
        spread = [added + axis for axis, length in enumerate(x.type.shape[:-1])
                  if length == 1 and outputs[0].type.shape[added + axis] != 1]
        gradient = reduce_sum(gradient, axis=tuple(range(added)) + tuple(spread))
        if spread:
            gradient = expand_dims(gradient, [axis - added for axis in spread])
        return [declared_like(gradient, x), disconnected_type(), disconnected_type()]


def _check_kind(kind: Any, function: str) -> str:
    if kind not in SORT_KINDS:
        raise ValueError(f"{function}: kind must be one of {', '.join(SORT_KINDS)}, got "
                         f"{kind!r}")
    return kind


def _symbolic_axis(axis: Any, function: str) -> Variable | None:
    """`axis` as a scalar variable when it is one whose value is not a constant (Theano's
    symbolic axis), else None."""
    if not isinstance(axis, Variable):
        return None
    if axis.type.ndim != 0 or axis.type.dtype[:3] not in ("int", "uin", "flo"):
        raise TypeError(f"{function}: axis must be an int or a numeric scalar, got {axis} of "
                        f"type {axis.type}")
    return None if isinstance(axis, Constant) else axis


def _along_symbolic_axis(build, x: Variable, axis: Variable, function: str) -> Variable:
    """build(a) for the axis a that the scalar `axis` holds when the function runs (Theano's
    sort and argsort take a symbolic one): each axis's result, the one asked for chosen by
    switch; an axis that is not an integer in [-ndim, ndim) raises then."""
    ndim = x.type.ndim
    if ndim == 0:
        raise ValueError(f"{function}: a 0-d x has no axis to choose")
    valid = and_(and_(eq(floor(axis), axis), ge(axis, -ndim)), lt(axis, ndim))
    index = Assert(f"{function}: axis must be an integer in [-{ndim}, {ndim})")(axis, valid)
    index = switch(lt(index, 0), index + ndim, index)
    result = build(ndim - 1)
    for candidate in reversed(range(ndim - 1)):
        result = switch(eq(index, candidate), build(candidate), result)
    return result


def _constant_axis(axis: Any, function: str) -> Any:
    """A constant scalar axis as its int (a float one must hold an integer, as a symbolic
    axis must when it runs); anything else unchanged."""
    if not isinstance(axis, Constant):
        return axis
    value = axis.data
    if value != np.floor(value):
        raise ValueError(f"{function}: axis must be an integer, got the constant {value}")
    return int(value)


def sort(x: Any, axis: Any = -1, kind: str = "quicksort") -> Variable:
    """A sorted copy of x along `axis` (numpy.sort): NaNs last; axis None sorts the flattened
    x, a scalar variable sorts along the axis it holds when the function runs (Theano's).
    kind: numpy's sorting algorithm (the values are the same for every kind)."""
    x = as_tensor_variable(x, op="sort", argument="x")
    kind = _check_kind(kind, "sort")
    symbolic = _symbolic_axis(axis, "sort")
    if symbolic is not None:
        return _along_symbolic_axis(lambda a: SortOp(a, kind)(x), x, symbolic, "sort")
    axis = _constant_axis(axis, "sort")
    if axis is not None:
        axis = normalize_one_axis(axis, x.type.ndim, "sort")
    return SortOp(axis, kind)(x)


def argsort(x: Any, axis: Any = -1, kind: str = "stable") -> Variable:
    """The int64 indices that sort x along `axis` (numpy.argsort): NaNs last, axis None sorts
    the flattened x, a scalar variable sorts along the axis it holds when the function runs.
    The sort is always stable (ties keep their order); `kind` is accepted for compatibility
    with numpy and Theano."""
    x = as_tensor_variable(x, op="argsort", argument="x")
    _check_kind(kind, "argsort")
    symbolic = _symbolic_axis(axis, "argsort")
    if symbolic is not None:
        return _along_symbolic_axis(lambda a: ArgSortOp(a)(x), x, symbolic, "argsort")
    axis = _constant_axis(axis, "argsort")
    if axis is not None:
        # numpy argsorts a 0-d input as a 1-element vector (axis 0 or -1).
        axis = normalize_one_axis(axis, max(x.type.ndim, 1), "argsort")
        if x.type.ndim == 0:
            axis = None
    return ArgSortOp(axis)(x)


def _topk_arguments(x: Variable, kth: Any, axis: int, function: str) -> tuple[int, Variable]:
    """(axis >= 0, kth as an integer scalar): ValueError where kth is a constant 0 or more
    than the axis's static length."""
    if x.type.ndim == 0:
        raise ValueError(f"{function}: x must have at least one axis, got a 0-d {x}")
    axis = normalize_one_axis(axis, x.type.ndim, function)
    if isinstance(kth, (int, np.integer)):
        if kth == 0 or abs(kth) > (x.type.shape[axis] or abs(kth)):
            raise ValueError(f"{function}: kth must be nonzero and at most the length of axis "
                             f"{axis} ({x.type.shape[axis]}), got {kth}")
    kth = as_tensor_variable(kth, op=function, argument="kth")
    if kth.type.ndim != 0 or kth.type.dtype not in ("int8", "int16", "int32", "int64",
                                                    "uint8", "uint16", "uint32"):
        raise TypeError(f"{function}: kth must be an integer scalar, got {kth} of type "
                        f"{kth.type}")
    return axis, kth


class TopKOp(Op):
    """Theano's TopKOp(axis, sorted, idx_dtype, return_values, return_indices)(x, kth): the
    kth largest values of x along `axis` and their indices, largest first (kth > 0), or the
    -kth smallest, smallest first (kth < 0); NaN sorts as the largest and tied values keep
    the order a stable sort gives them. topk, argtopk and topk_and_argtopk build it. The
    values' derivative scatters the output's gradient back to the chosen positions."""

    __props__ = ("axis", "sorted", "return_values", "return_indices", "idx_dtype")

    def __init__(self, axis: int = -1, sorted: bool = True, idx_dtype: str = "int64",
                 return_values: bool = True, return_indices: bool = True):
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"TopKOp: axis must be an int, got {axis!r}")
        if np.dtype(idx_dtype).kind not in "iu":
            raise TypeError(f"TopKOp: idx_dtype must be an integer dtype, got {idx_dtype!r}")
        if not (return_values or return_indices):
            raise ValueError("TopKOp: return_values and return_indices cannot both be False")
        self.axis = int(axis)
        self.sorted = bool(sorted)
        self.idx_dtype = np.dtype(idx_dtype).name
        self.return_values = bool(return_values)
        self.return_indices = bool(return_indices)

    def make_node(self, x, kth):
        x = as_tensor_variable(x, op=self, argument="x")
        axis, kth = _topk_arguments(x, kth, self.axis, str(self))
        shape = list(x.type.shape)
        shape[axis] = abs(int(kth.data)) if isinstance(kth, Constant) else None
        outputs = ([tensor_type(x.type.dtype, shape)()] if self.return_values else []) + \
            ([tensor_type(self.idx_dtype, shape)()] if self.return_indices else [])
        return Apply(self, [x, kth], outputs)

    def perform(self, node, inputs, output_storage):
        x, kth = inputs
        axis = self.axis % x.ndim
        length, count = x.shape[axis], int(kth)
        if count == 0 or abs(count) > length:
            raise ValueError(f"{self}: kth must be nonzero and at most the length of axis "
                             f"{axis} ({length}), got {count}")
        positions = np.arange(length - 1, length - 1 - count, -1) if count > 0 \
            else np.arange(-count)
        indices = np.take(np.argsort(x, axis=axis, kind="stable"), positions, axis=axis)
        results = ([np.take_along_axis(x, indices, axis)] if self.return_values else []) + \
            ([indices.astype(self.idx_dtype)] if self.return_indices else [])
        for storage, result in zip(output_storage, results):
            storage[0] = result

    def c_code(self, node, names):
        """numpy's stable sorts and takes, as perform (sympile.tensor.sort.sort_c)."""
        return topk_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        x, kth = node.inputs
        shape = list(input_shapes[0])
        shape[self.axis % x.type.ndim] = absolute(kth).astype("int64")
        return [tuple(shape)] * len(node.outputs)

    def connection_pattern(self, node):
        return [[self.return_values and index == 0 for index in range(len(node.outputs))],
                [False] * len(node.outputs)]

    def _positions(self, x: Variable, kth: Variable) -> tuple:
        """The index of x that picks the top values: the indices along the axis, aranges
        broadcast along the others."""
        indices = TopKOp(self.axis, self.sorted, self.idx_dtype, False, True)(x, kth)
        axis = self.axis % x.type.ndim
        return tuple(indices if dimension == axis else arange(x.shape[dimension]).dimshuffle(
            *["x" if other != dimension else 0 for other in range(x.type.ndim)])
            for dimension in range(x.type.ndim))

    def L_op(self, inputs, outputs, output_grads):
        """The values' gradient added at the positions they were taken from (the indices
        are piecewise constant)."""
        x, kth = inputs
        if not self.return_values or is_disconnected(output_grads[0]):
            return [disconnected_type(), disconnected_type()]
        return [inc_subtensor(zeros_like(x)[self._positions(x, kth)], output_grads[0]),
                disconnected_type()]

    def R_op(self, inputs, eval_points):
        """The tangent's entries at the chosen positions; none for the indices."""
        x, kth = inputs
        tangent = eval_points[0]
        values = None if tangent is None or not self.return_values \
            else tangent[self._positions(x, kth)]
        return ([values] if self.return_values else []) + \
            ([None] if self.return_indices else [])


def _topk(function: str, x: Any, kth: Any, axis: int | None, sorted: bool,
          idx_dtype: str) -> list[Variable]:
    x = as_tensor_variable(x, op=function, argument="x")
    if axis is None:
        # Theano's: the flattened x.
        x, axis = flatten(x), 0
    axis, kth = _topk_arguments(x, kth, axis, function)
    return TopKOp(axis, sorted, idx_dtype)(x, kth)


def topk(x: Any, kth: Any, axis: int | None = -1, sorted: bool = True,
         idx_dtype: str = "int64") -> Variable:
    """Theano's topk: the kth largest values of x along `axis` (None: of x flattened),
    largest first (kth > 0), or the -kth smallest, smallest first (kth < 0). NaN sorts as
    the largest, as in numpy.sort. sorted and idx_dtype are Theano's; the values always come
    in that order."""
    return _topk("topk", x, kth, axis, sorted, idx_dtype)[0]


def argtopk(x: Any, kth: Any, axis: int | None = -1, sorted: bool = True,
            idx_dtype: str = "int64") -> Variable:
    """Theano's argtopk: the indices along `axis` of topk's values, in idx_dtype (ties keep
    the order of their indices, as a stable sort gives them)."""
    return _topk("argtopk", x, kth, axis, sorted, idx_dtype)[1]


def topk_and_argtopk(x: Any, kth: Any, axis: int | None = -1, sorted: bool = True,
                     idx_dtype: str = "int64") -> tuple[Variable, Variable]:
    """Theano's topk_and_argtopk: (topk(...), argtopk(...)) of the same arguments, from one
    TopKOp."""
    values, indices = _topk("topk_and_argtopk", x, kth, axis, sorted, idx_dtype)
    return values, indices
