"""Array ops with numpy's names: cumsum/cumprod, repeat, diag/diagonal/trace, triu/tril,
fill_diagonal, searchsorted, nonzero, choose and compress.

Lengths that decide an output's shape (the offset of a diagonal) must be known when the graph
is built: they are Python ints (or integer constants) stored on the Op, so that the output's
static shape can be computed. The k of triu/tril does not change the shape and may be
symbolic.

Derivatives: every op here but cumprod is linear in its float input, so its forward rule
applies the op to the tangent and its reverse rule is the op's transpose: a reversed cumsum,
a sum per group of repeats (GroupSum), the diagonal put back in place (EmbedDiag), the same
triangle mask, the diagonal zeroed. Integer arguments (repeats, k, sorter) and integer results
(searchsorted) are disconnected. cumprod's rules stay exact where x has zeros (CumOp.L_op).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor import math as tensor_math
from sympile.tensor.basic import arange, concatenate, zeros, zeros_like
from sympile.tensor.derivatives import sum_to_type
from sympile.tensor.elemwise.ops import (
    DimShuffle,
    broadcast_infer_shape,
    broadcast_static_shape,
    check_runtime_broadcast,
    pad_left,
)
from sympile.tensor.extra_ops.cumulative_c import cumulative_c_code
from sympile.tensor.extra_ops.diag_c import (
    alloc_diag_c_code,
    embed_diag_c_code,
    extract_diag_c_code,
    fill_diagonal_c_code,
)
from sympile.tensor.extra_ops.group_sum_c import group_sum_c_code
from sympile.tensor.extra_ops.repeat_c import repeat_c_code
from sympile.tensor.extra_ops.triangle_c import triangle_c_code
from sympile.tensor.reduction import all as tensor_all
from sympile.tensor.reduction import sum as tensor_sum
from sympile.tensor.shape.ops import (
    declared_like,
    flatten,
    normalize_one_axis,
    product_of_lengths,
    reshape,
    shape_i,
)
from sympile.tensor.subtensor import take
from sympile.tensor.subtensor.ops import index_in_mode
from sympile.tensor.type import is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable, is_python_scalar

__all__ = ["CumOp", "Repeat", "RepeatOp", "DiffOp", "diff", "GroupSum", "AllocDiag",
           "ExtractDiag", "EmbedDiag", "Tril", "Triu", "FillDiagonal", "cumsum", "cumprod",
           "repeat", "diag", "diagonal", "trace",
           "triu", "tril", "fill_diagonal", "SearchsortedOp", "searchsorted", "to_one_hot",
           "NonZero", "nonzero", "flatnonzero", "nonzero_values", "xlogx", "xlogy0", "isclose",
           "allclose", "Choose", "ChooseFromTensor", "choose", "compress"]

_INTEGER_KINDS = "iu"


# ---------------------------------------------------------------------------------------------
# Helpers shared with sort

def constant_int(value: Any, function: str, argument: str) -> int:
    """`value` (a Python or numpy int, or a 0-d integer constant) as an int; TypeError for
    anything else, symbolic values included."""
    if isinstance(value, Constant) and value.type.ndim == 0 \
            and value.type.dtype[0] in _INTEGER_KINDS:
        return int(value.data)
    if isinstance(value, Variable):
        raise TypeError(f"{function}: {argument} must be a constant int (the output's shape "
                        f"depends on it), got the symbolic {value} of type {value.type}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{function}: {argument} must be an int, got {value!r}")
    return int(value)


def static_product(shape: Sequence[int | None]) -> int | None:
    """The number of elements of a static shape, None if unknown (0 if any length is 0)."""
    if 0 in shape:
        return 0
    if None in shape:
        return None
    return int(np.prod(shape, dtype="int64"))


def reshaped_like(variable: Variable, like: Variable) -> Variable:
    """`variable` (with like's number of elements) reshaped to like's shape."""
    lengths = [shape_i(like, axis) for axis in range(like.type.ndim)]
    return declared_like(reshape(variable, lengths, ndim=like.type.ndim), like)


def _disconnected(count: int) -> list[Variable]:
    return [disconnected_type() for _ in range(count)]


def _sum_of_vector(vector: Variable) -> Variable:
    """sum(vector) as an int64 scalar (for shapes)."""
    return tensor_math.cast(tensor_sum(vector), "int64")


# ---------------------------------------------------------------------------------------------
# cumsum, cumprod

@functools.cache
def _accumulate_dtype(mode: str, dtype: str) -> str:
    """numpy's result dtype of cumsum/cumprod (int8 -> int64, uint8 -> uint64, ...)."""
    function = np.cumsum if mode == "add" else np.cumprod
    return function(np.zeros((1,), dtype=dtype)).dtype.name


class CumOp(Op):
    """Cumulative sum (mode 'add') or product (mode 'mul') along `axis`; axis None works on
    the flattened input. Dtypes are numpy's (small integers accumulate in int64/uint64)."""

    __props__ = ("axis", "mode")

    def __init__(self, axis: int | None = None, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', got {mode!r}")
        if axis is not None:
            axis = constant_int(axis, "CumOp", "axis")
        self.axis = axis
        self.mode = mode

    def __str__(self):
        name = "Cumsum" if self.mode == "add" else "Cumprod"
        return f"{name}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self, argument="x")
        if self.axis is None:
            shape: tuple = (static_product(x.type.shape),)
        else:
            if not 0 <= self.axis < x.type.ndim:
                raise ValueError(f"{self}: axis {self.axis} is out of bounds for {x.type}")
            shape = x.type.shape
        dtype = _accumulate_dtype(self.mode, x.type.dtype)
        return Apply(self, [x], [tensor_type(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        function = np.cumsum if self.mode == "add" else np.cumprod
        # Overflow gives inf (floats) or wraps (ints) as in numpy; like Elemwise, no warning.
        with np.errstate(all="ignore"):
            result = function(x, axis=self.axis)
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def c_code(self, node, names):
        """numpy's sequential accumulate in one pass (sympile.tensor.extra_ops.cumulative_c)."""
        return cumulative_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        if self.axis is None:
            return [(product_of_lengths(shape),)]
        return [tuple(shape)]

    def L_op(self, inputs, outputs, output_grads):
        """Along each line (the flattened x for axis None), with g the output's gradient:

        cumsum:  gx_j = sum_{i >= j} g_i, the reversed cumulative sum of g.
        cumprod: d out_i / d x_j = prod_{k <= i, k != j} x_k for j <= i (0 for j > i). Where
                 x_j != 0 that is out_i / x_j, so gx_j = rcumsum(g * out)_j / x_j (Theano's
                 rule, which gives 0/0 at zeros). At the first zero z of a line the product
                 without x_z is the cumprod of x with x_z replaced by 1 (call it out_z), so
                 gx_z = rcumsum(g * out_z)_z. After z every out_i is 0, so the first formula
                 gives the exact 0 for the later zeros and nonzeros (there it divides by 1
                 instead of by 0, which keeps the unselected branch finite).
        """
        (x,), (output,), (output_grad,) = inputs, outputs, output_grads
        if is_disconnected(output_grad) or is_discrete(x):
            return _disconnected(1)
        axis = 0 if self.axis is None else self.axis
        if self.mode == "add":
            gradient = _reverse_cumsum(output_grad, axis)
        else:
            line = flatten(x) if self.axis is None else x
            zeros = _ZerosOfLines(line, axis)
            at_nonzero = tensor_math.true_div(
                _reverse_cumsum(tensor_math.mul(output_grad, output), axis), zeros.nonzero)
            at_first_zero = _reverse_cumsum(
                tensor_math.mul(output_grad, zeros.product_without_first_zero()), axis)
            gradient = tensor_math.switch(zeros.first_zero, at_first_zero, at_nonzero)
        if self.axis is None:
            gradient = reshaped_like(gradient, x)
        return [declared_like(gradient, x)]

    def R_op(self, inputs, eval_points):
        """cumsum is linear: cumsum(v). cumprod: d out_i = sum_{j <= i} v_j prod_{k <= i, k != j}
        x_k. Before a line's first zero z that is out_i * cumsum(v / x)_i; from z on every term
        but j = z holds the factor x_z = 0, so it is v_z * out_z,i (out_z: the cumprod of x with
        x_z replaced by 1), exactly, without dividing by 0."""
        (x,), (tangent,) = inputs, eval_points
        if tangent is None or is_discrete(x):
            return [None]
        if self.mode == "add":
            return [self(tangent)]
        axis = 0 if self.axis is None else self.axis
        line, tangent = (flatten(x), flatten(tangent)) if self.axis is None else (x, tangent)
        zeros = _ZerosOfLines(line, axis)
        before_zero = tensor_math.mul(
            self(x), CumOp(axis, "add")(tensor_math.true_div(tangent, zeros.nonzero)))
        first_zero_tangent = tensor_sum(tensor_math.switch(zeros.first_zero, tangent, 0),
                                        axis=axis, keepdims=True)
        from_zero = tensor_math.mul(first_zero_tangent, zeros.product_without_first_zero())
        return [tensor_math.switch(tensor_math.eq(zeros.count, 0), before_zero, from_zero)]


class _ZerosOfLines:
    """Where the lines of x along `axis` hold zeros, for cumprod's derivatives: `count` (the
    zeros up to and including each position), `first_zero` (bool: each line's first zero),
    `nonzero` (x with its zeros replaced by 1, a safe divisor)."""

    def __init__(self, x: Variable, axis: int):
        self.x, self.axis = x, axis
        is_zero = tensor_math.eq(x, 0)
        self.count = CumOp(axis, "add")(is_zero)
        self.first_zero = tensor_math.bitwise_and(is_zero, tensor_math.eq(self.count, 1))
        self.nonzero = tensor_math.switch(is_zero, 1, x)

    def product_without_first_zero(self) -> Variable:
        """The cumulative product of x with each line's first zero replaced by 1."""
        return CumOp(self.axis, "mul")(tensor_math.switch(self.first_zero, 1, self.x))


def _reverse_cumsum(x: Variable, axis: int) -> Variable:
    """out_j = sum_{i >= j} x_i along `axis`: the cumsum of x reversed, reversed back (exact,
    unlike total - cumsum, which cancels)."""
    reverse = (slice(None),) * axis + (slice(None, None, -1),)
    return CumOp(axis, "add")(x[reverse])[reverse]


def _cumulative(x: Any, axis: int | None, mode: str, function: str) -> Variable:
    x = as_tensor_variable(x, op=function, argument="x")
    if axis is not None:
        # numpy accumulates over a 0-d input as over a 1-element vector (axis 0 or -1).
        axis = normalize_one_axis(axis, max(x.type.ndim, 1), function)
        if x.type.ndim == 0:
            axis = None
    return CumOp(axis, mode)(x)


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """Cumulative sum of x along `axis` (numpy.cumsum); axis None: of the flattened x."""
    return _cumulative(x, axis, "add", "cumsum")


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """Cumulative product of x along `axis` (numpy.cumprod); axis None: of the flattened x."""
    return _cumulative(x, axis, "mul", "cumprod")


# ---------------------------------------------------------------------------------------------
# repeat

class Repeat(Op):
    """repeat(x, repeats): each element of x along `axis` repeated (numpy.repeat); axis None
    works on the flattened x.

    repeats is an integer scalar (the same count for every element) or an integer vector with
    one count per element. As in Elemwise, a vector is broadcast only when its type says it
    has length 1: a vector of unknown length must have one entry per element at run time.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int | None = None):
        self.axis = None if axis is None else constant_int(axis, "Repeat", "axis")

    def make_node(self, x, repeats):
        x = as_tensor_variable(x, op=self, argument="x")
        repeats = as_tensor_variable(repeats, op=self, argument="repeats")
        if repeats.type.ndim > 1:
            raise TypeError(f"{self}: repeats must be an integer scalar or vector, got "
                            f"{repeats.type}")
        if repeats.type.dtype[0] not in _INTEGER_KINDS:
            raise TypeError(f"{self}: repeats must have an integer dtype, got {repeats.type}")
        if self.axis is None:
            length = static_product(x.type.shape)
        else:
            if not 0 <= self.axis < x.type.ndim:
                raise ValueError(f"{self}: axis {self.axis} is out of bounds for {x.type}")
            length = x.type.shape[self.axis]
        repeated = self._static_length(length, repeats)
        if self.axis is None:
            shape: tuple = (repeated,)
        else:
            shape = x.type.shape[:self.axis] + (repeated,) + x.type.shape[self.axis + 1:]
        return Apply(self, [x, repeats], [tensor_type(x.type.dtype, shape)()])

    def _static_length(self, length: int | None, repeats: Variable) -> int | None:
        """The output's length along the repeated axis, if known; checks constant repeats."""
        per_element = repeats.type.ndim == 0 or repeats.type.shape[0] == 1
        if not per_element and None not in (length, repeats.type.shape[0]) \
                and length != repeats.type.shape[0]:
            raise ValueError(f"{self}: repeats has {repeats.type.shape[0]} entries but the "
                             f"repeated axis has length {length}")
        if isinstance(repeats, Constant):
            counts = np.asarray(repeats.data)
            if np.any(counts < 0):
                raise ValueError(f"{self}: repeats must be >= 0, got {counts}")
            if per_element:
                count = int(counts.reshape(()))
                if count == 0:
                    return 0
                return None if length is None else length * count
            return int(counts.sum())
        return 0 if length == 0 else None

    def check_repeats(self, node: Apply, length: int, repeats: np.ndarray) -> None:
        """The run-time checks of `repeats` for a repeated axis of `length`."""
        if np.any(repeats < 0):
            raise ValueError(f"repeat: repeats must be >= 0, got {repeats}")
        if repeats.ndim == 1 and node.inputs[1].type.shape[0] != 1 \
                and repeats.shape[0] != length:
            raise ValueError(
                f"repeat: repeats has {repeats.shape[0]} entries but the repeated axis has "
                f"length {length}; a repeats vector is broadcast only when its type has "
                f"static length 1")

    def perform(self, node, inputs, output_storage):
        x, repeats = inputs
        self.check_repeats(node, x.size if self.axis is None else x.shape[self.axis], repeats)
        output_storage[0][0] = np.repeat(x, repeats.astype("int64"), axis=self.axis)

    def c_code(self, node, names):
        """perform's checks, then numpy's C repeat (sympile.tensor.extra_ops.repeat_c)."""
        return repeat_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        repeats = node.inputs[1]
        if self.axis is None:
            length = product_of_lengths(x_shape)
        else:
            length = x_shape[self.axis]
        if repeats.type.ndim == 0:
            repeated = tensor_math.mul(length, tensor_math.cast(repeats, "int64"))
        elif repeats.type.shape[0] == 1:
            count = DimShuffle(1, ())(repeats)
            repeated = tensor_math.mul(length, tensor_math.cast(count, "int64"))
        else:
            repeated = _sum_of_vector(repeats)
        if self.axis is None:
            return [(repeated,)]
        return [tuple(x_shape[:self.axis]) + (repeated,) + tuple(x_shape[self.axis + 1:])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """Each element's gradient is the sum of the gradients of its copies (GroupSum)."""
        (x, repeats), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(x):
            return _disconnected(2)
        if self.axis is None:
            gradient = reshaped_like(GroupSum(0)(output_grad, repeats, flatten(x)), x)
        else:
            gradient = GroupSum(self.axis)(output_grad, repeats, x)
        return [declared_like(gradient, x)] + _disconnected(1)

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent, inputs[1])]


class GroupSum(Op):
    """The transpose of repeat along `axis`: y's entries along the axis summed in consecutive
    groups, group j holding repeats[j] entries (or `repeats` entries each, for an integer scalar
    or a vector of static length 1, as in Repeat). `like` only gives the number of groups, its
    length on the axis; the other axes are y's."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = constant_int(axis, "GroupSum", "axis")

    def make_node(self, y, repeats, like):
        y = as_tensor_variable(y, op=self, argument="y")
        repeats = as_tensor_variable(repeats, op=self, argument="repeats")
        like = as_tensor_variable(like, op=self, argument="like")
        if not 0 <= self.axis < y.type.ndim or like.type.ndim != y.type.ndim:
            raise ValueError(f"{self}: expected y and like with the same number of dimensions "
                             f"and axis {self.axis} among them, got {y.type} and {like.type}")
        if repeats.type.ndim > 1 or repeats.type.dtype[0] not in _INTEGER_KINDS:
            raise TypeError(f"{self}: repeats must be an integer scalar or vector, got "
                            f"{repeats.type}")
        shape = list(y.type.shape)
        shape[self.axis] = like.type.shape[self.axis]
        return Apply(self, [y, repeats, like], [tensor_type(y.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        y, repeats, like = inputs
        groups = like.shape[self.axis]
        if repeats.ndim == 0 or node.inputs[1].type.shape[0] == 1:
            counts = np.full(groups, int(repeats.reshape(-1)[0]), dtype="int64")
        else:
            counts = repeats.astype("int64")
        if counts.shape != (groups,) or np.any(counts < 0) \
                or counts.sum() != y.shape[self.axis]:
            raise ValueError(f"GroupSum: {groups} groups of repeats {repeats} do not split the "
                             f"{y.shape[self.axis]} entries of y along axis {self.axis}")
        shape = y.shape[:self.axis] + (groups,) + y.shape[self.axis + 1:]
        result = np.zeros(shape, dtype=y.dtype)
        filled = counts > 0
        if filled.any():
            # reduceat sums from each start to the next; empty groups have no start of their own.
            starts = (np.cumsum(counts) - counts)[filled]
            where = (slice(None),) * self.axis + (filled,)
            result[where] = np.add.reduceat(y, starts, axis=self.axis)
        output_storage[0][0] = result

    def c_code(self, node, names):
        """perform's check, then each group summed in order (group_sum_c.py)."""
        return group_sum_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        y_shape, _, like_shape = input_shapes
        return [tuple(y_shape[:self.axis]) + (like_shape[self.axis],)
                + tuple(y_shape[self.axis + 1:])]

    def connection_pattern(self, node):
        return [[True], [False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """The transpose of a sum per group is the repeat of each group's gradient."""
        (y, repeats, _), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(y):
            return _disconnected(3)
        gradient = Repeat(self.axis)(output_grad, repeats)
        return [declared_like(gradient, y)] + _disconnected(2)

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent, inputs[1], inputs[2])]


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Variable:
    """x with each element repeated `repeats` times along `axis` (numpy.repeat); axis None
    repeats the elements of the flattened x. repeats: an int, an integer scalar or an integer
    vector with a count per element."""
    x = as_tensor_variable(x, op="repeat", argument="x")
    if axis is not None:
        axis = normalize_one_axis(axis, x.type.ndim, "repeat")
    return Repeat(axis)(x, repeats)


# Theano's name for Repeat.
RepeatOp = Repeat


# ---------------------------------------------------------------------------------------------
# Differences

class DiffOp(Op):
    """numpy.diff(x, n, axis): the n-th discrete differences along `axis` (Theano's DiffOp;
    its derivative here for any number of dimensions)."""

    __props__ = ("n", "axis")

    def __init__(self, n: int = 1, axis: int = -1):
        self.n = constant_int(n, "DiffOp", "n")
        if self.n < 0:
            raise ValueError(f"DiffOp: n must be non-negative, got {self.n}")
        self.axis = constant_int(axis, "DiffOp", "axis")

    def make_node(self, x):
        x = as_tensor_variable(x, op=self, argument="x")
        if x.type.ndim == 0:
            raise ValueError(f"{self}: x must have at least one dimension, got {x.type}")
        axis = normalize_one_axis(self.axis, x.type.ndim, self)
        shape = list(x.type.shape)
        if shape[axis] is not None:
            shape[axis] = max(shape[axis] - self.n, 0)
        return Apply(self, [x], [tensor_type(x.type.dtype, tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        result = np.diff(inputs[0], n=self.n, axis=self.axis)
        # n = 0 gives x itself, which the output must not be.
        output_storage[0][0] = result.copy() if result is inputs[0] else result

    def infer_shape(self, fgraph, node, input_shapes):
        shape = list(input_shapes[0])
        axis = self.axis % len(shape)
        shape[axis] = tensor_math.maximum(shape[axis] - self.n, 0)
        return [tuple(shape)]

    def L_op(self, inputs, outputs, output_grads):
        """Each difference's transpose, n times: r[1:] += g and r[:-1] -= g along the axis
        (cut to x's length, which is shorter when it is under n)."""
        (x,), (gradient,) = inputs, output_grads
        if is_disconnected(gradient) or is_discrete(x):
            return _disconnected(1)
        axis = self.axis % x.type.ndim
        for _ in range(self.n):
            edge = zeros([1 if a == axis else shape_i(gradient, a) for a in range(x.type.ndim)],
                         gradient.type.dtype)
            gradient = (concatenate([edge, gradient], axis)
                        - concatenate([gradient, edge], axis))
        cut = tuple(slice(None, shape_i(x, axis)) if a == axis else slice(None)
                    for a in range(x.type.ndim))
        return [declared_like(gradient[cut], x)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def diff(x: Any, n: int = 1, axis: int = -1) -> Variable:
    """The n-th discrete differences of x along `axis` (numpy.diff): out[i] = x[i + 1] - x[i],
    n times."""
    x = as_tensor_variable(x, op="diff", argument="x")
    if x.type.ndim == 0:
        raise ValueError(f"diff: x must have at least one dimension, got {x.type}")
    return DiffOp(n, normalize_one_axis(axis, x.type.ndim, "diff"))(x)


# ---------------------------------------------------------------------------------------------
# Diagonals

def _plus(length: Any, amount: int) -> Any:
    """length + amount, for an int or a symbolic int64 length."""
    if isinstance(length, (int, np.integer)):
        return int(length) + amount
    return length if amount == 0 else tensor_math.add(length, amount)


def _diagonal_length(rows: Any, columns: Any, offset: int) -> Any:
    """Length of the diagonal `offset` of a rows x columns matrix (ints or int64 scalars):
    max(0, min(rows + min(offset, 0), columns - max(offset, 0)))."""
    first = _plus(rows, min(offset, 0))
    second = _plus(columns, -max(offset, 0))
    if isinstance(first, int) and isinstance(second, int):
        return max(0, min(first, second))
    return tensor_math.maximum(0, tensor_math.minimum(first, second))


def _static_diagonal_length(rows: int | None, columns: int | None, offset: int) -> int | None:
    """The diagonal's length for static lengths (None: unknown); 0 when one bound is <= 0."""
    bounds = [None if rows is None else rows + min(offset, 0),
              None if columns is None else columns - max(offset, 0)]
    known = [bound for bound in bounds if bound is not None]
    if known and min(known) <= 0:
        return 0
    if len(known) == 2:
        return min(known)
    return None


class AllocDiag(Op):
    """AllocDiag(offset, axis1, axis2)(v): zeros with the last axis of v on the diagonal
    `offset` of the output's axes (axis1, axis2), v's other axes in the output's other axes
    (Theano's; the inverse of diagonal(x, offset, axis1, axis2)). For a vector and the
    default axes: the square matrix numpy.diag(v, offset)."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        self.offset = constant_int(offset, "AllocDiag", "offset")
        self.axis1 = constant_int(axis1, "AllocDiag", "axis1")
        self.axis2 = constant_int(axis2, "AllocDiag", "axis2")
        if self.axis1 == self.axis2 or min(self.axis1, self.axis2) < 0:
            raise ValueError(f"AllocDiag: axis1 and axis2 must be two different axes >= 0, "
                             f"got {self.axis1} and {self.axis2}")

    def make_node(self, v):
        v = as_tensor_variable(v, op=self, argument="v")
        if v.type.ndim < 1 or max(self.axis1, self.axis2) > v.type.ndim:
            raise TypeError(f"{self}: expected a tensor of at least "
                            f"{max(self.axis1, self.axis2, 1)} axes, got {v.type}")
        length = v.type.shape[-1]
        size = None if length is None else length + abs(self.offset)
        return Apply(self, [v], [tensor_type(v.type.dtype,
                                             self._placed(v.type.shape[:-1], size))()])

    def _placed(self, others: Sequence, size: Any) -> tuple:
        """The output's shape: `others` (v's axes but the last) with the two diagonal axes
        of length `size` inserted at axis1 and axis2."""
        shape = list(others)
        low, high = sorted((self.axis1, self.axis2))
        shape.insert(low, size)
        shape.insert(high, size)
        return tuple(shape)

    def perform(self, node, inputs, output_storage):
        (v,) = inputs
        length = v.shape[-1]
        size = length + abs(self.offset)
        # The diagonal axes last, filled, then moved to axis1 and axis2.
        result = np.zeros(v.shape[:-1] + (size, size), dtype=v.dtype)
        index = np.arange(length)
        result[..., index + max(0, -self.offset), index + max(0, self.offset)] = v
        output_storage[0][0] = np.moveaxis(result, (-2, -1), (self.axis1, self.axis2))

    def c_code(self, node, names):
        """Through a strided view of the diagonal (sympile.tensor.extra_ops.diag_c); a vector
        on the default axes only (the other shapes run perform)."""
        if node.inputs[0].type.ndim != 1 or (self.axis1, self.axis2) != (0, 1):
            return None
        return alloc_diag_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        return [self._placed(shape[:-1], _plus(shape[-1], abs(self.offset)))]

    def L_op(self, inputs, outputs, output_grads):
        """The transpose of putting v on a diagonal is reading that diagonal back."""
        (v,), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(v):
            return _disconnected(1)
        return [declared_like(ExtractDiag(self.offset, self.axis1, self.axis2)(output_grad),
                              v)]

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent)]


class ExtractDiag(Op):
    """The diagonal `offset` of the 2-d slices of x over axes (axis1, axis2), as a copy
    (numpy.diagonal, which returns a read-only view): those axes are removed and the diagonal
    becomes the last axis."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        self.offset = constant_int(offset, "ExtractDiag", "offset")
        self.axis1 = constant_int(axis1, "ExtractDiag", "axis1")
        self.axis2 = constant_int(axis2, "ExtractDiag", "axis2")
        if self.axis1 < 0 or self.axis2 < 0 or self.axis1 == self.axis2:
            raise ValueError(f"ExtractDiag: axis1 and axis2 must be distinct axes >= 0, got "
                             f"{self.axis1} and {self.axis2}")

    def make_node(self, x):
        x = as_tensor_variable(x, op=self, argument="x")
        if x.type.ndim < 2 or max(self.axis1, self.axis2) >= x.type.ndim:
            raise ValueError(f"{self}: axes {self.axis1} and {self.axis2} are not both axes of "
                             f"{x.type}")
        shape = x.type.shape
        kept = tuple(size for axis, size in enumerate(shape)
                     if axis not in (self.axis1, self.axis2))
        length = _static_diagonal_length(shape[self.axis1], shape[self.axis2], self.offset)
        return Apply(self, [x], [tensor_type(x.type.dtype, kept + (length,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.diagonal(inputs[0], self.offset, self.axis1,
                                           self.axis2).copy()

    def c_code(self, node, names):
        """Through a strided view of the diagonal (sympile.tensor.extra_ops.diag_c)."""
        return extract_diag_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        kept = tuple(size for axis, size in enumerate(shape)
                     if axis not in (self.axis1, self.axis2))
        return [kept + (_diagonal_length(shape[self.axis1], shape[self.axis2], self.offset),)]

    def L_op(self, inputs, outputs, output_grads):
        """The transpose of reading a diagonal is writing it into zeros of x's shape."""
        (x,), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(x):
            return _disconnected(1)
        return [EmbedDiag(self.offset, self.axis1, self.axis2)(output_grad, x)]

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent)]


class EmbedDiag(Op):
    """The transpose of ExtractDiag(offset, axis1, axis2): zeros of like's shape, with the
    diagonal `offset` over axes (axis1, axis2) set to `diagonal` (whose last axis runs along the
    diagonal, its other axes being like's other axes). `like` only gives the shape."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        self.offset = constant_int(offset, "EmbedDiag", "offset")
        self.axis1 = constant_int(axis1, "EmbedDiag", "axis1")
        self.axis2 = constant_int(axis2, "EmbedDiag", "axis2")
        if self.axis1 < 0 or self.axis2 < 0 or self.axis1 == self.axis2:
            raise ValueError(f"EmbedDiag: axis1 and axis2 must be distinct axes >= 0, got "
                             f"{self.axis1} and {self.axis2}")

    def make_node(self, diagonal, like):
        diagonal = as_tensor_variable(diagonal, op=self, argument="diagonal")
        like = as_tensor_variable(like, op=self, argument="like")
        if max(self.axis1, self.axis2) >= like.type.ndim \
                or diagonal.type.ndim != like.type.ndim - 1:
            raise ValueError(f"{self}: expected like with axes {self.axis1} and {self.axis2} "
                             f"and a diagonal of one dimension less, got {diagonal.type} and "
                             f"{like.type}")
        return Apply(self, [diagonal, like], [tensor_type(diagonal.type.dtype,
                                                          like.type.shape)()])

    def perform(self, node, inputs, output_storage):
        diagonal, like = inputs
        expected = np.diagonal(like, self.offset, self.axis1, self.axis2).shape
        if diagonal.shape != expected:
            raise ValueError(f"EmbedDiag: the diagonal has shape {diagonal.shape}, expected "
                             f"{expected} for an input of shape {like.shape}")
        result = np.zeros(like.shape, dtype=node.outputs[0].type.dtype)
        # A writable view with the two axes last, so the diagonal is [..., rows, columns].
        moved = np.moveaxis(result, (self.axis1, self.axis2), (-2, -1))
        positions = np.arange(diagonal.shape[-1])
        moved[..., positions + max(-self.offset, 0), positions + max(self.offset, 0)] = diagonal
        output_storage[0][0] = result

    def c_code(self, node, names):
        """Through a strided view of the diagonal (sympile.tensor.extra_ops.diag_c)."""
        return embed_diag_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[1])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        (diagonal, _), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(diagonal):
            return _disconnected(2)
        gradient = ExtractDiag(self.offset, self.axis1, self.axis2)(output_grad)
        return [declared_like(gradient, diagonal)] + _disconnected(1)

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent, inputs[1])]


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal `offset` of x over axes (axis1, axis2) (numpy.diagonal, as a copy): those
    axes are removed and the diagonal is the last axis. offset must be a constant int."""
    x = as_tensor_variable(x, op="diagonal", argument="x")
    if x.type.ndim < 2:
        raise ValueError(f"diagonal: expected an input with at least 2 dimensions, got "
                         f"{x.type}")
    first = normalize_one_axis(axis1, x.type.ndim, "diagonal", "axis1")
    second = normalize_one_axis(axis2, x.type.ndim, "diagonal", "axis2")
    if first == second:
        raise ValueError(f"diagonal: axis1 and axis2 must be different axes, got {axis1} and "
                         f"{axis2}")
    return ExtractDiag(constant_int(offset, "diagonal", "offset"), first, second)(x)


def diag(v: Any, k: int = 0) -> Variable:
    """numpy.diag: a vector v gives the square matrix with v on its diagonal k; a matrix gives
    its diagonal k (a copy). k must be a constant int."""
    v = as_tensor_variable(v, op="diag", argument="v")
    offset = constant_int(k, "diag", "k")
    if v.type.ndim == 1:
        return AllocDiag(offset)(v)
    if v.type.ndim == 2:
        return ExtractDiag(offset, 0, 1)(v)
    raise ValueError(f"diag: expected a 1-d or 2-d input, got {v.type}")


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """Sum along the diagonal `offset` over axes (axis1, axis2) (numpy.trace, numpy's dtypes:
    the trace of an int8 matrix is int64). offset must be a constant int."""
    return tensor_sum(diagonal(x, offset, axis1, axis2), axis=-1)


# ---------------------------------------------------------------------------------------------
# triu, tril

class _Triangle(Op):
    """The lower (Tril) or upper (Triu) triangle of the matrices in the last two axes of x,
    relative to diagonal k, the other entries zeroed; a vector is taken as the rows of a square
    matrix (numpy.tril / numpy.triu)."""

    lower: bool

    def make_node(self, x, k):
        name = type(self).__name__.lower()
        x = as_tensor_variable(x, op=self, argument="x")
        k = as_tensor_variable(k, op=self, argument="k")
        if x.type.ndim == 0:
            raise ValueError(f"{name}: expected an input with at least 1 dimension, got "
                             f"{x.type}")
        if k.type.ndim != 0 or k.type.dtype[0] not in _INTEGER_KINDS:
            raise TypeError(f"{name}: k must be an integer scalar, got {k.type}")
        shape = x.type.shape if x.type.ndim > 1 else x.type.shape * 2
        return Apply(self, [x, k], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        x, k = inputs
        triangle = np.tril if self.lower else np.triu
        output_storage[0][0] = triangle(x, int(k))

    def c_code(self, node, names):
        """One copying pass that zeroes the other side (sympile.tensor.extra_ops.triangle_c)."""
        return triangle_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        shape = tuple(input_shapes[0])
        return [shape if len(shape) > 1 else shape * 2]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """The mask is its own transpose; a vector x was copied into every row, so its
        gradient sums the masked rows."""
        (x, k), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(x):
            return _disconnected(2)
        gradient = self(output_grad, k)
        if x.type.ndim == 1:
            gradient = tensor_sum(gradient, axis=0)
        return [declared_like(gradient, x)] + _disconnected(1)

    def R_op(self, inputs, eval_points):
        tangent = eval_points[0]
        return [None if tangent is None else self(tangent, inputs[1])]


class Tril(_Triangle):
    """numpy.tril(x, k): the entries above diagonal k zeroed."""

    lower = True


class Triu(_Triangle):
    """numpy.triu(x, k): the entries below diagonal k zeroed."""

    lower = False


_tril = Tril()
_triu = Triu()


def tril(x: Any, k: Any = 0) -> Variable:
    """x with the entries above diagonal k of its last two axes zeroed (numpy.tril); k may be
    symbolic."""
    return _tril(x, k)


def triu(x: Any, k: Any = 0) -> Variable:
    """x with the entries below diagonal k of its last two axes zeroed (numpy.triu); k may be
    symbolic."""
    return _triu(x, k)


# ---------------------------------------------------------------------------------------------
# fill_diagonal

class FillDiagonal(Op):
    """A copy of a with its main diagonal set to the scalar val (Theano's fill_diagonal; numpy's
    fill_diagonal without wrap, which works in place). An input of more than 2 dimensions must
    have all its lengths equal."""

    def make_node(self, a, val):
        a = as_tensor_variable(a, op=self, argument="a")
        if a.type.ndim < 2:
            raise TypeError(f"{self}: expected an input with at least 2 dimensions, got "
                            f"{a.type}")
        if a.type.ndim > 2:
            known = {size for size in a.type.shape if size is not None}
            if len(known) > 1:
                raise ValueError(f"{self}: a {a.type.ndim}-d input must have all its lengths "
                                 f"equal, got {a.type}")
        val = scalar_of_dtype(val, a.type.dtype, self)
        return Apply(self, [a, val], [a.type()])

    def perform(self, node, inputs, output_storage):
        a, val = inputs
        if a.ndim > 2 and len(set(a.shape)) > 1:
            raise ValueError(f"fill_diagonal: a {a.ndim}-d input must have all its lengths "
                             f"equal, got shape {a.shape}")
        result = a.copy()
        np.fill_diagonal(result, val)
        output_storage[0][0] = result

    def c_code(self, node, names):
        """Through a strided view of the diagonal (sympile.tensor.extra_ops.diag_c)."""
        return fill_diagonal_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        """a's gradient is g with the overwritten diagonal zeroed; val's is the sum of g over
        that diagonal."""
        (a, val), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad) or is_discrete(a):
            return _disconnected(2)
        gradient_a = declared_like(self(output_grad, 0), a)
        gradient_val = tensor_math.cast(tensor_sum(_main_diagonal(output_grad)), val.type.dtype)
        return [gradient_a, gradient_val]

    def R_op(self, inputs, eval_points):
        """Linear in (a, val): the tangent of a with its diagonal set to val's tangent."""
        (a, _), (tangent_a, tangent_val) = inputs, eval_points
        if (tangent_a is None and tangent_val is None) or is_discrete(a):
            return [None]
        dtype = a.type.dtype
        base = zeros_like(a) if tangent_a is None else tensor_math.cast(tangent_a, dtype)
        value = 0 if tangent_val is None else tensor_math.cast(tangent_val, dtype)
        return [self(base, value)]


def _main_diagonal(x: Variable) -> Variable:
    """The vector of x[i, i, ..., i]: the entries fill_diagonal sets. Each ExtractDiag over
    the first and the last axis keeps the common index last."""
    while x.type.ndim > 1:
        x = ExtractDiag(0, 0, x.type.ndim - 1)(x)
    return x


def scalar_of_dtype(val: Any, dtype: str, op: Op | str) -> Variable:
    """val as a 0-d tensor that converts to `dtype` without loss: a Python scalar takes dtype
    (numpy 2's rule for Python scalars) if its value fits; anything else must cast safely."""
    if is_python_scalar(val):
        if np.result_type(dtype, val).name == dtype:
            try:
                converted = np.asarray(val).astype(dtype)
            except OverflowError:
                converted = None
            if converted is not None and (dtype[0] not in _INTEGER_KINDS or converted == val):
                return as_tensor_variable(converted, op=op, argument="val")
        raise TypeError(f"{op}: val {val!r} does not fit the dtype {dtype} of a")
    val = as_tensor_variable(val, op=op, argument="val")
    if val.type.ndim != 0:
        raise TypeError(f"{op}: val must be a scalar, got {val.type}")
    if not np.can_cast(val.type.dtype, dtype, casting="safe"):
        raise TypeError(f"{op}: val of dtype {val.type.dtype} cannot be stored in a of dtype "
                        f"{dtype} without losing precision; cast it first")
    return tensor_math.cast(val, dtype)


_fill_diagonal = FillDiagonal()


def fill_diagonal(a: Any, val: Any) -> Variable:
    """A copy of a with its main diagonal set to val (Theano's fill_diagonal; a is at least
    2-d, with equal lengths if more than 2-d; val a scalar of a dtype that fits a's)."""
    return _fill_diagonal(a, val)


# ---------------------------------------------------------------------------------------------
# searchsorted

class SearchsortedOp(NonDifferentiable, Op):
    """The int64 indices where the elements of v would be inserted into the sorted vector a to
    keep it sorted (numpy.searchsorted); side 'left' gives the first such index, 'right' the
    last. An optional int vector `sorter` holds the indices that sort a. The output has v's
    shape."""

    __props__ = ("side",)

    def __init__(self, side: str = "left"):
        if side not in ("left", "right"):
            raise ValueError(f"SearchsortedOp: side must be 'left' or 'right', got {side!r}")
        self.side = side

    def make_node(self, a, v, sorter=None):
        a = as_tensor_variable(a, op=self, argument="a")
        v = as_tensor_variable(v, op=self, argument="v")
        if a.type.ndim != 1:
            raise TypeError(f"{self}: a must be a vector, got {a.type}")
        inputs = [a, v]
        if sorter is not None:
            sorter = as_tensor_variable(sorter, op=self, argument="sorter")
            if sorter.type.ndim != 1 or sorter.type.dtype[0] not in _INTEGER_KINDS:
                raise TypeError(f"{self}: sorter must be an integer vector, got {sorter.type}")
            if None not in (a.type.shape[0], sorter.type.shape[0]) \
                    and a.type.shape[0] != sorter.type.shape[0]:
                raise ValueError(f"{self}: sorter has {sorter.type.shape[0]} entries but a has "
                                 f"{a.type.shape[0]}")
            inputs.append(sorter)
        return Apply(self, inputs, [tensor_type("int64", v.type.shape)()])

    def perform(self, node, inputs, output_storage):
        a, v, *sorter = inputs
        if sorter and sorter[0].shape != a.shape:
            raise ValueError(f"searchsorted: sorter has {sorter[0].shape[0]} entries but a has "
                             f"{a.shape[0]}")
        result = np.searchsorted(a, v, side=self.side, sorter=sorter[0] if sorter else None)
        output_storage[0][0] = np.asarray(result, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[1])]


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Variable:
    """Indices where the elements of v would be inserted into the sorted vector a to keep it
    sorted (numpy.searchsorted): int64, of v's shape. side: 'left' or 'right'; sorter: the
    indices that sort a, if a is not sorted itself."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return SearchsortedOp(side)(a, v, sorter)


def to_one_hot(y: Any, nb_class: Any, dtype: Any = None) -> Variable:
    """The one-hot rows (len(y), nb_class) of the integer vector y: row i is 1 at y[i],
    0 elsewhere (Theano's to_one_hot; dtype floatX by default). A y outside
    [0, nb_class) gives a row of zeros."""
    y = as_tensor_variable(y, op="to_one_hot", argument="y")
    if y.type.ndim != 1 or y.type.dtype[0] not in "iu":
        raise TypeError(f"to_one_hot: y must be an integer vector, got {y.type}")
    nb_class = as_tensor_variable(nb_class, op="to_one_hot", argument="nb_class")
    classes = arange(nb_class).dimshuffle("x", 0)
    one_hot = tensor_math.eq(y.dimshuffle(0, "x"), classes)
    return one_hot.astype(config.floatX if dtype is None else dtype)


class NonZero(NonDifferentiable, Op):
    """The indices of a's nonzero elements, as numpy.nonzero: an int64 matrix (a.ndim, k),
    one row per axis (k, the count, known at run time only)."""

    __props__ = ()

    def make_node(self, a):
        a = as_tensor_variable(a, op="nonzero", argument="a")
        if a.type.ndim == 0:
            raise ValueError("nonzero: a must have at least one dimension (numpy no longer "
                             "takes 0-d arrays)")
        return Apply(self, [a], [tensor_type("int64", (a.type.ndim, None))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.array(np.nonzero(inputs[0]), dtype=np.int64).reshape(
            inputs[0].ndim, -1)


def nonzero(a: Any, return_matrix: bool = False):
    """numpy.nonzero: a tuple of index vectors, one per axis (or, return_matrix=True, the
    (ndim, k) matrix of them), Theano's nonzero."""
    indices = NonZero()(a)
    if return_matrix:
        return indices
    return tuple(indices[axis] for axis in range(indices.type.shape[0]))


def flatnonzero(a: Any) -> Variable:
    """numpy.flatnonzero: the indices of the nonzero elements of a flattened."""
    return NonZero()(flatten(as_tensor_variable(a, op="flatnonzero"), 1))[0]


def nonzero_values(a: Any) -> Variable:
    """The nonzero elements of a, in C order (Theano's nonzero_values)."""
    a = as_tensor_variable(a, op="nonzero_values")
    flat = flatten(a, 1)
    return flat[flatnonzero(a)]


class Choose(Op):
    """numpy.choose(a, choices, mode): at each position of the broadcast shape, the element
    of choices[a]. a, an integer tensor, and the choices broadcast together (an axis only
    where its type says length 1, as in elementwise ops). mode: 'raise' (an index outside
    [0, n) is an error), 'wrap' (taken modulo n) or 'clip' (clipped to [0, n - 1]).

    The gradient goes to the choice each position took; a is disconnected."""

    __props__ = ("mode",)

    def __init__(self, mode: str = "raise"):
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
        self.mode = mode

    def make_node(self, a, *choices):
        a = as_tensor_variable(a, op="choose", argument="a")
        if a.type.dtype[0] not in _INTEGER_KINDS:
            raise TypeError(f"choose: a must hold integers, got {a.type}")
        if not choices:
            raise ValueError("choose: choices must not be empty")
        choices = [as_tensor_variable(c, op="choose", argument=f"choices[{k}]")
                   for k, c in enumerate(choices)]
        ndim = max(v.type.ndim for v in [a, *choices])
        aligned = [pad_left(v, ndim) for v in [a, *choices]]
        shape = broadcast_static_shape([v.type.shape for v in aligned], op="choose")
        dtype = np.result_type(*[c.type.dtype for c in choices]).name
        return Apply(self, aligned, [tensor_type(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        check_runtime_broadcast(self, node.inputs, inputs)
        a, *choices = inputs
        output_storage[0][0] = self._chosen(node, a, choices)

    def _chosen(self, node, a, choices):
        try:
            result = np.choose(a, choices, mode=self.mode)
        except ValueError as error:
            raise ValueError(f"choose: {error} (a has values from {a.min(initial=0)} to "
                             f"{a.max(initial=0)}; there are {len(choices)} choices)") from None
        return np.asarray(result, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [broadcast_infer_shape(node, input_shapes)]

    def L_op(self, inputs, outputs, output_grads):
        a, *choices = inputs
        (gradient,) = output_grads
        (output,) = outputs
        if is_disconnected(gradient) or is_discrete(output):
            return [disconnected_type() for _ in inputs]
        index = index_in_mode(a, len(choices), self.mode)
        grads = [disconnected_type()]
        for k, choice in enumerate(choices):
            if is_discrete(choice):
                grads.append(disconnected_type())
                continue
            taken = tensor_math.switch(tensor_math.eq(index, k), gradient, 0)
            grads.append(sum_to_type(taken, choice, output))
        return grads

    def R_op(self, inputs, eval_points):
        a, *choices = inputs
        if all(point is None for point in eval_points[1:]):
            return [None]
        tangents = [zeros_like(c) if point is None else point
                    for c, point in zip(choices, eval_points[1:])]
        return [self(a, *tangents)]


class ChooseFromTensor(Choose):
    """Choose with the choices stacked along the first axis of one tensor, of any length
    (numpy.choose(a, array)): op(a, choices), a broadcast against choices[0]."""

    def make_node(self, a, choices):
        a = as_tensor_variable(a, op="choose", argument="a")
        if a.type.dtype[0] not in _INTEGER_KINDS:
            raise TypeError(f"choose: a must hold integers, got {a.type}")
        choices = as_tensor_variable(choices, op="choose", argument="choices")
        if choices.type.ndim == 0:
            raise ValueError("choose: choices must be a sequence or a tensor of at least one "
                             "axis, got a 0-d tensor")
        ndim = max(a.type.ndim, choices.type.ndim - 1)
        missing = ndim - (choices.type.ndim - 1)
        if missing:
            choices = DimShuffle(choices.type.ndim, (0,) + ("x",) * missing + tuple(
                range(1, choices.type.ndim)))(choices)
        a = pad_left(a, ndim)
        shape = broadcast_static_shape([a.type.shape, choices.type.shape[1:]], op="choose")
        return Apply(self, [a, choices], [tensor_type(choices.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        a, choices = inputs
        for axis, (length, item) in enumerate(zip(a.shape, choices.shape[1:])):
            declared = (node.inputs[0].type.shape[axis], node.inputs[1].type.shape[axis + 1])
            if length != item and 1 not in declared:
                raise ValueError(f"choose: a of shape {a.shape} and choices of shape "
                                 f"{choices.shape[1:]} cannot be broadcast together (axis "
                                 f"{axis})")
        output_storage[0][0] = self._chosen(node, a, choices)

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, choices_shape = input_shapes
        a_static = node.inputs[0].type.shape
        return [tuple(static if static is not None else
                      a_shape[axis] if a_static[axis] != 1 else choices_shape[axis + 1]
                      for axis, static in enumerate(node.outputs[0].type.shape))]

    def L_op(self, inputs, outputs, output_grads):
        a, choices = inputs
        (gradient,) = output_grads
        (output,) = outputs
        if is_disconnected(gradient) or is_discrete(output) or is_discrete(choices):
            return [disconnected_type(), disconnected_type()]
        count = choices.shape[0]
        index = index_in_mode(a, count, self.mode)
        ndim = output.type.ndim
        position = arange(count).dimshuffle(0, *("x",) * ndim)
        taken = tensor_math.switch(tensor_math.eq(pad_left(index, ndim + 1), position),
                                   pad_left(gradient, ndim + 1), 0)
        return [disconnected_type(), sum_to_type(taken, choices, taken)]

    def R_op(self, inputs, eval_points):
        if eval_points[1] is None:
            return [None]
        return [self(inputs[0], eval_points[1])]


def choose(a: Any, choices: Any, mode: str = "raise") -> Variable:
    """numpy.choose: choices[a[i]][i] at each position i of the broadcast shape (see Choose).
    choices: a sequence of tensors, or a tensor whose first axis lists them."""
    if isinstance(choices, Variable):
        count = choices.type.shape[0] if choices.type.ndim else None
        if count is None:
            return ChooseFromTensor(mode)(a, choices)
        choices = [choices[k] for k in range(count)]
    elif not isinstance(choices, (list, tuple)):
        choices = list(np.asarray(choices))
    return Choose(mode)(a, *choices)


def compress(condition: Any, x: Any, axis: int | None = None) -> Variable:
    """numpy.compress: the slices of x along `axis` (x flattened if None) where the 1-d
    `condition` is true; a condition shorter than the axis leaves the rest out."""
    condition = as_tensor_variable(condition, op="compress", argument="condition")
    if condition.type.ndim != 1:
        raise ValueError(f"compress: condition must be 1-d, got {condition.type}")
    return take(x, flatnonzero(condition), axis=axis)


def xlogx(x: Any) -> Variable:
    """x log(x), 0 where x is 0 (its limit), as Theano's xlogx."""
    x = as_tensor_variable(x, op="xlogx")
    return tensor_math.switch(tensor_math.eq(x, 0), 0, tensor_math.mul(x, tensor_math.log(x)))


def xlogy0(x: Any, y: Any) -> Variable:
    """x log(y), 0 where x is 0 (whatever y), as Theano's xlogy0."""
    x = as_tensor_variable(x, op="xlogy0")
    return tensor_math.switch(tensor_math.eq(x, 0), 0, tensor_math.mul(x, tensor_math.log(y)))


def isclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
            equal_nan: bool = False) -> Variable:
    """numpy.isclose: `|a - b| <= atol + rtol |b|` elementwise, equal infinities close, NaNs
    close to each other only with equal_nan."""
    a = as_tensor_variable(a, op="isclose", argument="a")
    b = as_tensor_variable(b, op="isclose", argument="b")
    near = tensor_math.le(tensor_math.abs(tensor_math.sub(a, b)),
                          tensor_math.add(atol, tensor_math.mul(rtol, tensor_math.abs(b))))
    close = tensor_math.or_(near, tensor_math.eq(a, b))
    if equal_nan:
        close = tensor_math.or_(close, tensor_math.and_(tensor_math.isnan(a),
                                                        tensor_math.isnan(b)))
    return close


def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> Variable:
    """numpy.allclose: isclose everywhere (a bool scalar)."""
    return tensor_all(isclose(a, b, rtol, atol, equal_nan))
