"""Ops that run numpy's function of the same name, for Theano's theano.tensor.extra_ops:
bincount, bartlett, unique (Unique), ravel_multi_index (RavelMultiIndex), unravel_index
(UnravelIndex), fill_diagonal_offset and cpu_contiguous; squeeze is sympile.tensor.shape's,
named here as Theano did.

The lengths of bincount's, bartlett's and unique's outputs depend on the values: their C
backend calls perform(). Derivatives: bincount is linear in its weights (the gradient of a
weight is the output gradient at its bin); cpu_contiguous passes gradients through; the
integer inputs and results are disconnected; unique, ravel_multi_index and unravel_index
have none (its outputs are piecewise
constant or integers).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.scalar.basic import INTEGER_DTYPES
from sympile.tensor import math as tensor_math
from sympile.tensor.basic import arange
from sympile.tensor.constant_value import get_vector_length
from sympile.tensor.extra_ops.ops import scalar_of_dtype
from sympile.tensor.shape.ops import PassThroughOp, squeeze
from sympile.tensor.subtensor import set_subtensor
from sympile.tensor.type import is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["BinCount", "Bartlett", "CpuContiguous", "RavelMultiIndex", "Unique", "UnravelIndex",
           "bartlett", "bincount", "cpu_contiguous", "fill_diagonal_offset",
           "ravel_multi_index", "squeeze", "unique", "unravel_index"]

def _integer(value: Any, function: str, argument: str, ndim: int | None) -> Variable:
    """`value` as an integer tensor of `ndim` dimensions (None: any)."""
    variable = as_tensor_variable(value, op=function, argument=argument)
    if variable.type.dtype not in INTEGER_DTYPES or ndim not in (None, variable.type.ndim):
        kind = ("an integer tensor" if ndim is None else "an integer scalar" if ndim == 0
                else f"an integer tensor of {ndim} dimension(s)")
        raise TypeError(f"{function}: {argument} must be {kind}, got {variable} of type "
                        f"{variable.type}")
    return variable


class BinCount(Op):
    """numpy.bincount(x, weights, minlength): how often each value 0 .. max(x) occurs in the
    integer vector x (int64), or the sum of the weights at those positions (float64, as
    numpy gives); a negative value is a ValueError."""

    __props__ = ("minlength",)

    def __init__(self, minlength: int = 0):
        self.minlength = int(minlength)

    def make_node(self, x, weights=None):
        x = _integer(x, "bincount", "x", 1)
        inputs = [x]
        dtype = "int64"
        if weights is not None:
            weights = as_tensor_variable(weights, op=self, argument="weights")
            if weights.type.ndim != 1:
                raise TypeError(f"bincount: weights must be a vector, got {weights.type}")
            inputs.append(weights)
            dtype = "float64"
        return Apply(self, inputs, [tensor_type(dtype, (None,))()])

    def perform(self, node, inputs, output_storage):
        x, *weights = inputs
        if x.size and x.min() < 0:
            raise ValueError(f"bincount: x has the negative value {x.min()}; its values must "
                             f"be >= 0")
        if weights and weights[0].shape != x.shape:
            raise ValueError(f"bincount: weights has shape {weights[0].shape}, x {x.shape}; "
                             f"they must match")
        result = np.bincount(x, weights[0] if weights else None, self.minlength)
        output_storage[0][0] = result.astype(node.outputs[0].type.dtype, copy=False)

    def L_op(self, inputs, outputs, output_grads):
        (gradient,) = output_grads
        if len(inputs) == 1 or is_disconnected(gradient) or is_discrete(inputs[1]):
            return [disconnected_type() for _ in inputs]
        x, weights = inputs
        return [disconnected_type(), tensor_math.cast(gradient[x], weights.type.dtype)]

    def R_op(self, inputs, eval_points):
        if len(inputs) == 1 or eval_points[1] is None:
            return [None]
        return [self(inputs[0], eval_points[1])]


def bincount(x: Any, weights: Any = None, minlength: Any = None,
             assert_nonneg: bool = False) -> Variable:
    """Theano's bincount (numpy.bincount): counts of each value of the integer vector x, or
    sums of `weights`. Negative values are always a ValueError, as in numpy (Theano checked
    only with assert_nonneg=True and otherwise miscounted them)."""
    if minlength is not None and (not isinstance(minlength, (int, np.integer))
                                  or minlength < 0):
        raise TypeError(f"bincount: minlength must be a non-negative int, got {minlength!r}")
    return BinCount(minlength or 0)(x, weights)


class Bartlett(NonDifferentiable, Op):
    """numpy.bartlett(M): the triangular window of M points (float64)."""

    def make_node(self, M):
        M = _integer(M, "bartlett", "M", 0)
        return Apply(self, [M], [tensor_type("float64", (None,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.bartlett(int(inputs[0]))

    def infer_shape(self, fgraph, node, input_shapes):
        (M,) = node.inputs
        return [(tensor_math.maximum(M, 0),)]


def bartlett(M: Any) -> Variable:
    """Theano's bartlett (numpy.bartlett): the triangular window of M points."""
    return Bartlett()(M)


class Unique(NonDifferentiable, Op):
    """numpy.unique(x, return_index, return_inverse, return_counts, axis): the sorted
    distinct values of x (flattened when axis is None), then the int64 index, inverse and
    count outputs asked for, in that order."""

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(self, return_index: bool = False, return_inverse: bool = False,
                 return_counts: bool = False, axis: int | None = None):
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        self.axis = None if axis is None else int(axis)

    def make_node(self, x):
        x = as_tensor_variable(x, op=self, argument="x")
        if self.axis is None:
            values = tensor_type(x.type.dtype, (None,))()
        else:
            if not -x.type.ndim <= self.axis < x.type.ndim:
                raise ValueError(f"Unique: axis {self.axis} is out of range for {x.type}")
            axis = self.axis % x.type.ndim
            values = tensor_type(x.type.dtype, tuple(
                None if index == axis else length
                for index, length in enumerate(x.type.shape)))()
        extras = [tensor_type("int64", (None,))()
                  for wanted in (self.return_index, self.return_inverse, self.return_counts)
                  if wanted]
        return Apply(self, [x], [values, *extras])

    def perform(self, node, inputs, output_storage):
        results = np.unique(inputs[0], return_index=self.return_index,
                            return_inverse=self.return_inverse,
                            return_counts=self.return_counts, axis=self.axis)
        if not isinstance(results, tuple):
            results = (results,)
        for cell, value, variable in zip(output_storage, results, node.outputs):
            # numpy 2 shapes the inverse like x; Theano's (numpy 1's) was flat.
            cell[0] = np.asarray(value, dtype=variable.type.dtype).reshape(
                -1 if variable.type.ndim == 1 else value.shape)


def unique(x: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None) -> Any:
    """numpy.unique as an op: the values, or a list with the outputs asked for."""
    return Unique(return_index, return_inverse, return_counts, axis)(x)


class RavelMultiIndex(NonDifferentiable, Op):
    """numpy.ravel_multi_index(multi_index, dims, mode, order): the flat int64 indices of
    the positions multi_index (one integer tensor per axis of dims, broadcast together)
    gives in an array of shape dims. mode: 'raise' (an index out of range is a ValueError),
    'wrap' or 'clip'; order 'C' or 'F'."""

    __props__ = ("mode", "order")

    def __init__(self, mode: str = "raise", order: str = "C"):
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError(f"RavelMultiIndex: mode must be 'raise', 'wrap' or 'clip', got "
                             f"{mode!r}")
        if order not in ("C", "F"):
            raise ValueError(f"RavelMultiIndex: order must be 'C' or 'F', got {order!r}")
        self.mode, self.order = mode, order

    def make_node(self, *inputs):
        if len(inputs) < 2:
            raise TypeError("RavelMultiIndex: expected the index of each axis, then dims")
        indices = [_integer(value, "ravel_multi_index", f"multi_index[{axis}]", None)
                   for axis, value in enumerate(inputs[:-1])]
        dims = _integer(inputs[-1], "ravel_multi_index", "dims", 1)
        if dims.type.shape[0] not in (None, len(indices)):
            raise ValueError(f"ravel_multi_index: dims has {dims.type.shape[0]} lengths for "
                             f"{len(indices)} indices")
        ndim = max(index.type.ndim for index in indices)
        return Apply(self, [*indices, dims], [tensor_type("int64", (None,) * ndim)()])

    def perform(self, node, inputs, output_storage):
        *indices, dims = inputs
        output_storage[0][0] = np.asarray(np.ravel_multi_index(
            tuple(indices), tuple(int(n) for n in dims), mode=self.mode, order=self.order),
            dtype="int64")


def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise",
                      order: str = "C") -> Variable:
    """Theano's (numpy's) ravel_multi_index: see RavelMultiIndex; multi_index a tuple or
    list of index tensors, one per axis of dims."""
    if not isinstance(multi_index, (tuple, list)):
        raise TypeError(f"ravel_multi_index: multi_index must be a tuple or a list of index "
                        f"tensors, got {type(multi_index).__name__}")
    return RavelMultiIndex(mode, order)(*multi_index, dims)


class UnravelIndex(NonDifferentiable, Op):
    """numpy.unravel_index(indices, dims, order): for flat indices into an array of shape
    dims (ndim lengths), the int64 index along each axis, each of the indices' shape; an
    index out of range is a ValueError."""

    __props__ = ("ndim", "order")

    def __init__(self, ndim: int, order: str = "C"):
        if not isinstance(ndim, (int, np.integer)) or isinstance(ndim, bool) or ndim < 1:
            raise ValueError(f"UnravelIndex: ndim must be an integer > 0, got {ndim!r}")
        if order not in ("C", "F"):
            raise ValueError(f"UnravelIndex: order must be 'C' or 'F', got {order!r}")
        self.ndim, self.order = int(ndim), order

    def make_node(self, indices, dims):
        indices = _integer(indices, "unravel_index", "indices", None)
        dims = _integer(dims, "unravel_index", "dims", 1)
        if dims.type.shape[0] not in (None, self.ndim):
            raise ValueError(f"unravel_index: dims has {dims.type.shape[0]} lengths, ndim is "
                             f"{self.ndim}")
        return Apply(self, [indices, dims],
                     [tensor_type("int64", indices.type.shape)() for _ in range(self.ndim)])

    def perform(self, node, inputs, output_storage):
        indices, dims = inputs
        if dims.shape[0] != self.ndim:
            raise ValueError(f"unravel_index: dims has {dims.shape[0]} lengths, ndim is "
                             f"{self.ndim}")
        results = np.unravel_index(indices, tuple(int(n) for n in dims), order=self.order)
        for storage, result in zip(output_storage, results):
            storage[0] = np.asarray(result, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])] * self.ndim


def unravel_index(indices: Any, dims: Any, order: str = "C", ndim: int | None = None):
    """Theano's (numpy's) unravel_index: a tuple of the index along each axis of dims (see
    UnravelIndex). ndim, the number of axes, is needed when dims' length is not known when
    the graph is built."""
    if ndim is None:
        try:
            ndim = get_vector_length(dims)
        except (TypeError, ValueError):
            raise ValueError(f"unravel_index: the length of dims ({dims}) is not known when "
                             f"the graph is built; give ndim, the number of axes") from None
    return tuple(UnravelIndex(ndim, order)(indices, dims, return_list=True))


class CpuContiguous(PassThroughOp):
    """Theano's CpuContiguous: x itself when it is C-contiguous, else a C-contiguous copy."""

    view_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.ascontiguousarray(inputs[0])

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)


def cpu_contiguous(x: Any) -> Variable:
    """Theano's cpu_contiguous: x with C-contiguous memory (x itself when it has it)."""
    return CpuContiguous()(x)


def fill_diagonal_offset(a: Any, val: Any, offset: Any) -> Variable:
    """Theano's fill_diagonal_offset: a copy of the matrix a whose diagonal `offset` (above
    the main one when positive, below when negative; may be symbolic) is the scalar val,
    which must fit a's dtype.
    Built from set_subtensor, so it has its derivatives."""
    a = as_tensor_variable(a, op="fill_diagonal_offset", argument="a")
    if a.type.ndim != 2:
        raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a.type}")
    val = scalar_of_dtype(val, a.type.dtype, "fill_diagonal_offset")
    offset = _integer(offset, "fill_diagonal_offset", "offset", 0)
    rows, columns = a.shape[0], a.shape[1]
    below, above = tensor_math.maximum(-offset, 0), tensor_math.maximum(offset, 0)
    length = tensor_math.maximum(tensor_math.minimum(rows - below, columns - above), 0)
    steps = arange(length, dtype="int64")
    return set_subtensor(a[steps + below, steps + above], val)
