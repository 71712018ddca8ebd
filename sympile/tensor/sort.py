"""Sorting: sort and argsort, with numpy's semantics (NaNs last, axis None flattens).

argsort always sorts stably, so equal elements keep their order and the result is
numpy.argsort(x, kind='stable') whatever kind is asked for: numpy leaves the order of ties to
its non-stable kinds unspecified, and a fixed order keeps every backend's results equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.op import Op
from sympile.tensor.extra_ops import normalize_axis, product_of_lengths, static_product
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["SortOp", "ArgSortOp", "sort", "argsort"]

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


class ArgSortOp(_SortBase):
    """The int64 indices that sort x along `axis`, ties in stable order (numpy.argsort with
    kind='stable'); axis None sorts the flattened x."""

    __props__ = ("axis",)
    output_dtype = "int64"

    def __init__(self, axis: int | None):
        self.axis = self._check_axis(axis)

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.argsort(inputs[0], axis=self.axis, kind="stable") \
            .astype("int64", copy=False)


def _check_kind(kind: Any, function: str) -> str:
    if kind not in SORT_KINDS:
        raise ValueError(f"{function}: kind must be one of {', '.join(SORT_KINDS)}, got "
                         f"{kind!r}")
    return kind


def sort(x: Any, axis: int | None = -1, kind: str = "quicksort") -> Variable:
    """A sorted copy of x along `axis` (numpy.sort): NaNs last; axis None sorts the flattened
    x. kind: numpy's sorting algorithm (the values are the same for every kind)."""
    x = as_tensor_variable(x, op="sort", argument="x")
    if axis is not None:
        axis = normalize_axis(axis, x.type.ndim, "sort")
    return SortOp(axis, _check_kind(kind, "sort"))(x)


def argsort(x: Any, axis: int | None = -1, kind: str = "stable") -> Variable:
    """The int64 indices that sort x along `axis` (numpy.argsort): NaNs last, axis None sorts
    the flattened x. The sort is always stable (ties keep their order); `kind` is accepted
    for compatibility with numpy and Theano."""
    x = as_tensor_variable(x, op="argsort", argument="x")
    _check_kind(kind, "argsort")
    if axis is not None:
        # numpy argsorts a 0-d input as a 1-element vector (axis 0 or -1).
        axis = normalize_axis(axis, max(x.type.ndim, 1), "argsort")
        if x.type.ndim == 0:
            axis = None
    return ArgSortOp(axis)(x)
