"""numpy-style array helpers that Theano's theano.tensor.basic offered, built from other
ops (so their gradients, C code and rewrites are those ops'): roll, tri (the Tri op, as eye
is Eye), mgrid and ogrid, stacklists, vertical_stack and horizontal_stack, smallest and
largest, inverse_permutation and permute_row_elements, cov. Above sort, subtensor, math,
reduction and blas, which they use.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sympile.tensor.basic import Tri, arange, concatenate, stack, zeros_like
from sympile.tensor.blas.basic import dot
from sympile.tensor.math import cast, conj, maximum, minimum, mod
from sympile.tensor.reduction import mean
from sympile.tensor.shape import reshape
from sympile.tensor.sort.ops import PermuteAlongAxis
from sympile.tensor.variable import as_tensor_variable

__all__ = ["cov", "roll", "tri", "mgrid", "ogrid", "stacklists", "vertical_stack",
           "horizontal_stack", "smallest", "largest", "inverse_permutation",
           "permute_row_elements"]


def roll(x: Any, shift: Any, axis: Any = None):
    """x with its elements shifted by `shift` along `axis` (numpy.roll): those pushed past
    the end come back at the start. axis None rolls the flattened x (and keeps x's shape);
    a tuple of axes takes one shift each (or one for all). shift may be symbolic and
    negative or larger than the length."""
    x = as_tensor_variable(x, op="roll", argument="x")
    if axis is None:
        return reshape(roll(x.flatten(), shift, 0), x.shape)
    if isinstance(axis, (tuple, list)):
        shifts = shift if isinstance(shift, (tuple, list)) else [shift] * len(axis)
        if len(shifts) != len(axis):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(axis)} axes")
        for one_shift, one_axis in zip(shifts, axis):
            x = roll(x, one_shift, one_axis)
        return x
    if not -x.type.ndim <= axis < x.type.ndim:
        raise ValueError(f"roll: axis {axis} is out of bounds for {x.type}")
    axis %= x.type.ndim
    length = x.shape[axis]
    # An empty axis rolls to itself; mod by at least 1 keeps the index defined.
    cut = length - mod(as_tensor_variable(shift, op="roll", argument="shift"),
                       maximum(length, 1))
    before = (slice(None),) * axis
    return concatenate([x[(*before, slice(cut, None))], x[(*before, slice(None, cut))]],
                       axis=axis)


def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = None):
    """An N x M matrix (M defaults to N) with ones at and below the k-th diagonal and zeros
    above (numpy.tri; dtype floatX by default, as Theano's); N, M and k may be integer
    scalars."""
    return Tri(dtype)(N, N if M is None else M, k)


class _Grid:
    """mgrid and ogrid: indexed with slices, the coordinates of a grid (numpy's, as
    Theano's: a list of tensors, one per slice, rather than one stacked array)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, slices):
        name = "ogrid" if self.sparse else "mgrid"
        single = isinstance(slices, slice)
        slices = (slices,) if single else tuple(slices)
        for item in slices:
            if not isinstance(item, slice) or item.stop is None:
                raise TypeError(f"{name}: index with slices start:stop[:step], got {item!r}")
            if isinstance(item.step, complex):
                raise NotImplementedError(f"{name}: a complex step (numpy's number of "
                                          f"points) is not supported; use linspace")
        ranges = [arange(0 if s.start is None else s.start, s.stop,
                         1 if s.step is None else s.step) for s in slices]
        axes = [[0 if axis == index else "x" for axis in range(len(ranges))]
                for index in range(len(ranges))]
        grids = [r.dimshuffle(*pattern) for r, pattern in zip(ranges, axes)]
        if not self.sparse:
            # Each coordinate broadcast against the others: the dense grid.
            total = functools.reduce(lambda a, b: a + b, [zeros_like(g) for g in grids])
            grids = [g + cast(total, g.type.dtype) for g in grids]
        return grids[0] if single else grids


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def stacklists(arg: Any):
    """Nested lists of tensors or numbers stacked into one tensor of the same nesting
    (Theano's stacklists): stacklists([[a, b], [c, d]]) for 0-d a, b, c, d is a matrix."""
    if isinstance(arg, (tuple, list)):
        return stack([stacklists(item) for item in arg])
    return as_tensor_variable(arg, op="stacklists", argument="arg")


def _stack_matrices(tensors: Sequence[Any], axis: int, name: str):
    variables = [as_tensor_variable(t, op=name, argument="tensors") for t in tensors]
    for variable in variables:
        if variable.type.ndim != 2:
            raise TypeError(f"{name}: every argument must be a matrix, got {variable.type}")
    return concatenate(variables, axis=axis)


def vertical_stack(*tensors: Any):
    """Matrices one above the other (Theano's vertical_stack, numpy.vstack of matrices)."""
    return _stack_matrices(tensors, 0, "vertical_stack")


def horizontal_stack(*tensors: Any):
    """Matrices side by side (Theano's horizontal_stack, numpy.hstack of matrices)."""
    return _stack_matrices(tensors, 1, "horizontal_stack")


def smallest(*tensors: Any):
    """The elementwise smallest of the arguments, broadcast together (numpy.minimum of
    all of them: a NaN in any is NaN)."""
    if not tensors:
        raise TypeError("smallest: expected at least one argument")
    return functools.reduce(minimum, tensors)


def largest(*tensors: Any):
    """The elementwise largest of the arguments, broadcast together (numpy.maximum of all
    of them: a NaN in any is NaN)."""
    if not tensors:
        raise TypeError("largest: expected at least one argument")
    return functools.reduce(maximum, tensors)


def inverse_permutation(perm: Any):
    """The inverse of each permutation along the last axis of the integer tensor perm:
    out[..., perm[..., i]] = i (Theano's inverse_permutation), in perm's dtype. Each row
    must be a permutation of range(n) (checked when the function runs)."""
    perm = as_tensor_variable(perm, op="inverse_permutation", argument="perm")
    if perm.type.ndim < 1 or perm.type.dtype[0] not in "iu":
        raise TypeError(f"inverse_permutation: perm must be an integer tensor of at least one "
                        f"dimension, got {perm.type}")
    positions = arange(perm.shape[-1], dtype=perm.type.dtype) + zeros_like(perm)
    return PermuteAlongAxis(perm.type.ndim - 1, inverse=True)(positions, perm)


def permute_row_elements(x: Any, y: Any, inverse: bool = False):
    """The elements of each row (along the last axis) of x permuted by the integer tensor y:
    out[..., j] = x[..., y[..., j]], or with inverse=True out[..., y[..., j]] = x[..., j]
    (Theano's permute_row_elements). x and y broadcast against each other, so one
    permutation may serve every row, or one row every permutation."""
    x = as_tensor_variable(x, op="permute_row_elements", argument="x")
    y = as_tensor_variable(y, op="permute_row_elements", argument="y")
    if y.type.dtype[0] not in "iu" or y.type.ndim < 1 or x.type.ndim < 1:
        raise TypeError(f"permute_row_elements: x ({x.type}) and y ({y.type}) must have at "
                        f"least one dimension, y of an integer dtype")
    x_full = x + zeros_like(y, dtype=x.type.dtype)
    y_full = y + zeros_like(x, dtype=y.type.dtype)
    return PermuteAlongAxis(x_full.type.ndim - 1, inverse=bool(inverse))(x_full, y_full)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None):
    """The covariance matrix of the variables in the rows of m (numpy.cov; Theano's cov):
    columns instead with rowvar=False; y adds variables; the sums are divided by N - ddof
    (ddof 1 by default, 0 with bias=True). A single variable gives a 0-d result, as numpy's
    squeeze does. Weights (fweights, aweights) are not supported."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")

    def observations(value: Any, argument: str):
        value = as_tensor_variable(value, op="cov", argument=argument)
        if value.type.ndim not in (1, 2):
            raise ValueError(f"cov: {argument} must be 1-d or 2-d, got {value.type}")
        if value.type.ndim == 1:
            return value.dimshuffle("x", 0)
        return value if rowvar else value.T

    x = observations(m, "m")
    if y is not None:
        x = concatenate([x, observations(y, "y")], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centered = x - mean(x, axis=1, keepdims=True)
    product = dot(centered, conj(centered.T))
    result = product / (x.shape[1] - ddof)
    kept = [axis for axis in range(2) if result.type.shape[axis] != 1]
    return result.dimshuffle(*kept) if len(kept) < 2 else result
