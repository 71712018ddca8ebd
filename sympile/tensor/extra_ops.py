"""Array ops with numpy's names: cumsum/cumprod, repeat, diag/diagonal/trace, triu/tril,
fill_diagonal and searchsorted.

Lengths that decide an output's shape (the offset of a diagonal) must be known when the graph
is built: they are Python ints (or integer constants) stored on the Op, so that the output's
static shape can be computed. The k of triu/tril does not change the shape and may be
symbolic.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.op import Op
from sympile.tensor import math as tensor_math
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.reduction import sum as tensor_sum
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable, is_python_scalar

__all__ = ["CumOp", "Repeat", "AllocDiag", "ExtractDiag", "Tril", "Triu", "FillDiagonal",
           "cumsum", "cumprod", "repeat", "diag", "diagonal", "trace", "triu", "tril",
           "fill_diagonal", "SearchsortedOp", "searchsorted"]

_INTEGER_KINDS = "iu"


# ---------------------------------------------------------------------------------------------
# Helpers shared with sort.py

def normalize_axis(axis: Any, ndim: int, function: str, argument: str = "axis") -> int:
    """`axis` as an int in [0, ndim), numpy's negative axes counted from the end; TypeError if
    it is not an int, ValueError if it is out of bounds."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{function}: {argument} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{function}: {argument} {axis} is out of bounds for a {ndim}-d input "
                         f"(expected an int in [{-ndim}, {ndim}))")
    return int(axis) % ndim


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


def product_of_lengths(lengths: Sequence[Any]) -> Any:
    """The product of axis lengths, each an int or a symbolic int64 scalar: an int when all
    are ints, else a symbolic int64 scalar."""
    known = 1
    symbolic = None
    for length in lengths:
        if isinstance(length, (int, np.integer)):
            known *= int(length)
        else:
            symbolic = length if symbolic is None else tensor_math.mul(symbolic, length)
    if symbolic is None:
        return known
    return symbolic if known == 1 else tensor_math.mul(symbolic, known)


def static_product(shape: Sequence[int | None]) -> int | None:
    """The number of elements of a static shape, None if unknown (0 if any length is 0)."""
    if 0 in shape:
        return 0
    if None in shape:
        return None
    return int(np.prod(shape, dtype="int64"))


def _sum_of_vector(vector: Variable) -> Variable:
    """sum(vector) as an int64 scalar (for shapes)."""
    return tensor_math.cast(tensor_sum(vector), "int64")


# ---------------------------------------------------------------------------------------------
# cumsum, cumprod

@functools.lru_cache(maxsize=None)
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

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        if self.axis is None:
            return [(product_of_lengths(shape),)]
        return [tuple(shape)]


def _cumulative(x: Any, axis: int | None, mode: str, function: str) -> Variable:
    x = as_tensor_variable(x, op=function, argument="x")
    if axis is not None:
        # numpy accumulates over a 0-d input as over a 1-element vector (axis 0 or -1).
        axis = normalize_axis(axis, max(x.type.ndim, 1), function)
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

    def perform(self, node, inputs, output_storage):
        x, repeats = inputs
        if np.any(repeats < 0):
            raise ValueError(f"repeat: repeats must be >= 0, got {repeats}")
        if repeats.ndim == 1 and node.inputs[1].type.shape[0] != 1:
            length = x.size if self.axis is None else x.shape[self.axis]
            if repeats.shape[0] != length:
                raise ValueError(
                    f"repeat: repeats has {repeats.shape[0]} entries but the repeated axis has "
                    f"length {length}; a repeats vector is broadcast only when its type has "
                    f"static length 1")
        output_storage[0][0] = np.repeat(x, repeats.astype("int64"), axis=self.axis)

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


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Variable:
    """x with each element repeated `repeats` times along `axis` (numpy.repeat); axis None
    repeats the elements of the flattened x. repeats: an int, an integer scalar or an integer
    vector with a count per element."""
    x = as_tensor_variable(x, op="repeat", argument="x")
    if axis is not None:
        axis = normalize_axis(axis, x.type.ndim, "repeat")
    return Repeat(axis)(x, repeats)


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
    """The square matrix with the vector v on its diagonal `offset` and zeros elsewhere
    (numpy.diag of a vector)."""

    __props__ = ("offset",)

    def __init__(self, offset: int = 0):
        self.offset = constant_int(offset, "AllocDiag", "offset")

    def make_node(self, v):
        v = as_tensor_variable(v, op=self, argument="v")
        if v.type.ndim != 1:
            raise TypeError(f"{self}: expected a vector, got {v.type}")
        length = v.type.shape[0]
        size = None if length is None else length + abs(self.offset)
        return Apply(self, [v], [tensor_type(v.type.dtype, (size, size))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.diag(inputs[0], self.offset)

    def infer_shape(self, fgraph, node, input_shapes):
        ((length,),) = input_shapes
        size = _plus(length, abs(self.offset))
        return [(size, size)]


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

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        kept = tuple(size for axis, size in enumerate(shape)
                     if axis not in (self.axis1, self.axis2))
        return [kept + (_diagonal_length(shape[self.axis1], shape[self.axis2], self.offset),)]


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal `offset` of x over axes (axis1, axis2) (numpy.diagonal, as a copy): those
    axes are removed and the diagonal is the last axis. offset must be a constant int."""
    x = as_tensor_variable(x, op="diagonal", argument="x")
    if x.type.ndim < 2:
        raise ValueError(f"diagonal: expected an input with at least 2 dimensions, got "
                         f"{x.type}")
    first = normalize_axis(axis1, x.type.ndim, "diagonal", "axis1")
    second = normalize_axis(axis2, x.type.ndim, "diagonal", "axis2")
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

    def infer_shape(self, fgraph, node, input_shapes):
        shape = tuple(input_shapes[0])
        return [shape if len(shape) > 1 else shape * 2]


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
        val = _scalar_of_dtype(val, a.type.dtype, self)
        return Apply(self, [a, val], [a.type()])

    def perform(self, node, inputs, output_storage):
        a, val = inputs
        if a.ndim > 2 and len(set(a.shape)) > 1:
            raise ValueError(f"fill_diagonal: a {a.ndim}-d input must have all its lengths "
                             f"equal, got shape {a.shape}")
        result = a.copy()
        np.fill_diagonal(result, val)
        output_storage[0][0] = result

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]


def _scalar_of_dtype(val: Any, dtype: str, op: Op) -> Variable:
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

class SearchsortedOp(Op):
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
