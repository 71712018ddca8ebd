"""Indexing: x[index] with numpy's semantics, set_subtensor / inc_subtensor, and take.

Basic indexing (integers, slices, numpy.newaxis, Ellipsis) is the Subtensor op and returns a
view of x. Advanced indexing (integer arrays, boolean masks, mixed with the basic kinds as numpy
allows) is the AdvancedSubtensor op and returns a copy. IncSubtensor and AdvancedIncSubtensor
return a copy of x in which the region such an index selects is set to, or incremented by, a
value broadcast to the region's shape.

Every indexing op has an `idx_list` prop that describes the index: one entry per item of the
index, each of

    None                 numpy.newaxis
    Ellipsis             (advanced ops only: basic ones expand it into full slices)
    an int               a constant integer index
    IndexSlice(a, b, c)  a slice; each part None, an int, or SCALAR
    SCALAR               a symbolic integer scalar
    ARRAY                an integer array
    MASK                 a boolean mask

The symbolic parts (the SCALAR, ARRAY and MASK placeholders, in order, slice parts included)
are the node's inputs after x (and, for the increment ops, after the value), so ops with the
same index structure are equal whatever the symbolic values are.

Derivatives: every op here is linear in its tensor inputs (x, and the value y of the write
ops), so a tangent is the op applied to the tangents; the index inputs are never
differentiable (disconnected). The gradient of x[index] adds the output gradient into zeros at
the region (accumulating where an integer array repeats an element); that of a write gives x
the output gradient with the region zeroed when setting, and y the output gradient read at the
region, summed over y's broadcast axes. Where a write with repeated indices lets only one
occurrence through (setting, or ignore_duplicates: numpy's last write wins), only that
occurrence gets a gradient. Theano and PyTensor give every occurrence the element's gradient
there, which is not the derivative of what they compute.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor import reduction
from sympile.tensor.basic import arange, full_like, zeros_like
from sympile.tensor.elemwise import broadcast_static_shape
from sympile.tensor.math import cast, clip, eq, switch
from sympile.tensor.math import mod as tensor_mod
from sympile.tensor.shape import shape as shape_of
from sympile.tensor.shape import size as size_of
from sympile.tensor.shape.ops import declared_like, reshape
from sympile.tensor.subtensor.advanced_c import (
    advanced_index_read_c_code,
    advanced_index_write_c_code,
)
from sympile.tensor.subtensor.basic_c import (
    advanced_pair_read_c_code,
    advanced_pair_write_c_code,
    subtensor_c_code,
)
from sympile.tensor.subtensor.inc_c import inc_subtensor_c_code, slice_length_c_code
from sympile.tensor.subtensor.index_kinds import (
    ARRAY,
    MASK,
    SCALAR,
    IndexInput,
    IndexSlice,
    SlicePart,
)
from sympile.tensor.subtensor.rows_c import advanced_rows_read_c_code, advanced_rows_write_c_code
from sympile.tensor.type import is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable, constant, is_python_scalar

__all__ = ["getitem", "take", "set_subtensor", "inc_subtensor", "Subtensor", "IncSubtensor",
           "AdvancedSubtensor", "AdvancedIncSubtensor", "AdvancedSubtensor1",
           "AdvancedIncSubtensor1", "AdvancedBooleanSubtensor", "AdvancedBooleanIncSubtensor",
           "SliceLength", "IndexSlice", "IndexInput", "advanced_inc_subtensor",
           "advanced_inc_subtensor1", "advanced_set_subtensor", "advanced_set_subtensor1"]


_FULL_SLICE = IndexSlice()


def _n_inputs(entry: Any) -> int:
    """How many node inputs an idx_list entry takes."""
    if isinstance(entry, IndexSlice):
        return sum(part == SCALAR for part in entry.parts)
    return 1 if isinstance(entry, IndexInput) else 0


def _input_kinds(idx_list: Sequence[Any]) -> list[str]:
    """The kind of each index input, in order."""
    kinds = []
    for entry in idx_list:
        if isinstance(entry, IndexSlice):
            kinds.extend("scalar" for part in entry.parts if part == SCALAR)
        elif isinstance(entry, IndexInput):
            kinds.append(entry.kind)
    return kinds


def _is_advanced(idx_list: Sequence[Any]) -> bool:
    return any(entry in (ARRAY, MASK) for entry in idx_list)


def _index_text(idx_list: Sequence[Any]) -> str:
    names = {None: "newaxis", Ellipsis: "..."}
    return ", ".join(names[e] if e is None or e is Ellipsis else repr(e) for e in idx_list)


def _check_idx_list(op_name: str, idx_list: Sequence[Any], advanced: bool) -> tuple:
    idx_list = tuple(idx_list)
    for entry in idx_list:
        valid = entry is None or isinstance(entry, (IndexSlice, IndexInput)) \
            or (isinstance(entry, int) and not isinstance(entry, bool)) \
            or (advanced and entry is Ellipsis)
        if not valid or (not advanced and entry in (ARRAY, MASK)):
            raise ValueError(f"{op_name}: {entry!r} is not a valid entry of a"
                             f"{'n advanced' if advanced else ' basic'} index")
    if sum(entry is Ellipsis for entry in idx_list) > 1:
        raise IndexError(f"{op_name}: an index can only have a single ellipsis ('...')")
    return idx_list


# ---------------------------------------------------------------------------------------------
# Where each entry applies, and the shape of the result.

@dataclass
class _Step:
    """One idx_list entry applied to x: its first axis, how many axes it covers, and the
    positions of its inputs among the index inputs."""

    entry: Any
    axis: int
    n_axes: int
    inputs: list[int]


def _walk(op: Any, idx_list: Sequence[Any], x_ndim: int, input_ndims: Sequence[int]) \
        -> list[_Step]:
    """The steps of idx_list over a tensor of x_ndim dimensions, followed, without an
    Ellipsis, by one that covers the axes the index leaves out. IndexError if the index
    covers too many axes."""
    steps = []
    position = 0
    for entry in idx_list:
        count = _n_inputs(entry)
        inputs = list(range(position, position + count))
        position += count
        if entry is None or entry is Ellipsis:
            n_axes = 0
        elif entry == MASK:
            n_axes = input_ndims[inputs[0]]
        else:
            n_axes = 1
        steps.append(_Step(entry, 0, n_axes, inputs))
    used = sum(step.n_axes for step in steps)
    if used > x_ndim:
        raise IndexError(f"{op}: too many indices for a {x_ndim}-d tensor: the index covers "
                         f"{used} axes")
    if not any(step.entry is Ellipsis for step in steps):
        steps.append(_Step(Ellipsis, 0, 0, []))
    axis = 0
    for step in steps:
        if step.entry is Ellipsis:
            step.n_axes = x_ndim - used
        step.axis = axis
        axis += step.n_axes
    return steps


def _layout(op: Any, steps: Sequence[_Step], x_lengths: Sequence[Any], args: Sequence[Any],
            lengths: _Lengths, advanced: bool) -> tuple:
    """The shape of x[index] by numpy's rules, in the domain of `lengths` (static, run-time
    or symbolic lengths): basic entries give their lengths in order; the broadcast shape of
    the advanced ones (integer arrays and masks, and then integers too) goes where the first
    advanced entry is if they are adjacent, else in front."""
    pieces: list[tuple[bool, list]] = []
    arrays: list[tuple[Any, int]] = []
    for step in steps:
        entry = step.entry
        entry_args = [args[i] for i in step.inputs]
        if entry is None:
            pieces.append((False, [1]))
        elif entry is Ellipsis:
            pieces.append((False, list(x_lengths[step.axis:step.axis + step.n_axes])))
        elif isinstance(entry, IndexSlice):
            values = iter(entry_args)
            parts = [next(values) if part == SCALAR else part for part in entry.parts]
            pieces.append((False, [lengths.slice_length(op, x_lengths[step.axis], *parts)]))
        elif entry == MASK:
            axis_lengths = list(x_lengths[step.axis:step.axis + step.n_axes])
            pieces.append((True, [lengths.mask_count(op, entry_args[0], step.axis,
                                                     axis_lengths)]))
        else:
            # An int, SCALAR or ARRAY entry.
            index = entry_args[0] if entry_args else entry
            if entry == ARRAY:
                arrays.append((index, step.axis))
            else:
                lengths.check_bounds(op, index, step.axis, x_lengths[step.axis])
            shape = lengths.array_shape(index) if entry == ARRAY else []
            pieces.append((advanced, shape))
    positions = [i for i, (is_advanced, _) in enumerate(pieces) if is_advanced]
    if not positions:
        return tuple(length for _, piece in pieces for length in piece)
    broadcast = list(lengths.broadcast(op, [piece for is_advanced, piece in pieces
                                            if is_advanced]))
    # numpy checks the entries of index arrays only when they select something: not when
    # the advanced indices broadcast to an empty shape (nor before that is known).
    if all(isinstance(n, (int, np.integer)) and n > 0 for n in broadcast):
        for index, axis in arrays:
            lengths.check_bounds(op, index, axis, x_lengths[axis])
    basic = [(i, piece) for i, (is_advanced, piece) in enumerate(pieces) if not is_advanced]
    if positions[-1] - positions[0] + 1 == len(positions):
        before = [n for i, piece in basic if i < positions[0] for n in piece]
        after = [n for i, piece in basic if i > positions[-1] for n in piece]
        return tuple(before + broadcast + after)
    return tuple(broadcast + [n for _, piece in basic for n in piece])


def _bounds_error(op: Any, index: Any, axis: int, length: int) -> IndexError:
    return IndexError(f"{op}: index {index} is out of bounds for axis {axis} with length "
                      f"{length}")


def _mask_error(op: Any, mask_shape: tuple, axis: int, axis_lengths: Sequence[Any]) \
        -> IndexError:
    axes = f"axis {axis}" if len(mask_shape) == 1 else \
        f"axes {axis}..{axis + len(mask_shape) - 1}"
    return IndexError(f"{op}: a boolean mask of shape {mask_shape} does not match the "
                      f"indexed {axes} of lengths {tuple(axis_lengths)}")


class _Lengths(Protocol):
    """How `_layout` computes lengths in one domain (static, run-time or symbolic)."""

    def slice_length(self, op: Any, length: Any, start: Any, stop: Any, step: Any) -> Any:
        """The length of slice(start, stop, step) on an axis of `length`."""

    def mask_count(self, op: Any, mask: Any, axis: int, axis_lengths: Sequence[Any]) -> Any:
        """The number of True entries of a mask that indexes axes axis, axis + 1, ..."""

    def check_bounds(self, op: Any, index: Any, axis: int, length: Any) -> None:
        """Raise IndexError if an integer index is known to be out of range."""

    def array_shape(self, index: Any) -> list:
        """The shape of an integer index array."""

    def broadcast(self, op: Any, shapes: Sequence[Sequence[Any]]) -> Sequence[Any]:
        """The broadcast of the advanced indices' shapes."""


class _StaticLengths(_Lengths):
    """Static lengths (int or None) from the types; checks what is known at build time.
    Arguments are the index input Variables."""

    def slice_length(self, op, length, start, stop, step):
        if length == 0:
            return 0
        if length is None or any(isinstance(part, Variable) for part in (start, stop, step)):
            return None
        return len(range(*slice(start, stop, step).indices(length)))

    def mask_count(self, op, mask, axis, axis_lengths):
        for mask_length, x_length in zip(mask.type.shape, axis_lengths):
            if None not in (mask_length, x_length) and mask_length != x_length:
                raise _mask_error(op, mask.type.shape, axis, axis_lengths)
        if isinstance(mask, Constant):
            return int(np.count_nonzero(mask.data))
        if 0 in mask.type.shape:
            return 0
        return None

    def check_bounds(self, op, index, axis, length):
        if length is None:
            return
        values = index.data if isinstance(index, Constant) else index
        if isinstance(values, Variable):
            return
        values = np.asarray(values)
        outside = values[(values < -length) | (values >= length)]
        if outside.size:
            raise _bounds_error(op, int(outside.flat[0]), axis, length)

    def array_shape(self, index):
        return list(index.type.shape)

    def broadcast(self, op, shapes):
        try:
            return broadcast_static_shape([tuple(s) for s in shapes], op=op)
        except ValueError:
            raise IndexError(f"{op}: shape mismatch: indexing arrays could not be broadcast "
                             f"together with shapes "
                             f"{' '.join(_shape_text(s) for s in shapes)}") from None


class _RuntimeLengths(_Lengths):
    """Run-time lengths (ints), with numpy's checks. Arguments are the index values."""

    def slice_length(self, op, length, start, stop, step):
        parts = [None if part is None else int(part) for part in (start, stop, step)]
        if parts[2] == 0:
            raise ValueError(f"{op}: slice step cannot be zero")
        return len(range(*slice(*parts).indices(length)))

    def mask_count(self, op, mask, axis, axis_lengths):
        if tuple(mask.shape) != tuple(axis_lengths):
            raise _mask_error(op, mask.shape, axis, axis_lengths)
        return int(np.count_nonzero(mask))

    def check_bounds(self, op, index, axis, length):
        values = np.asarray(index)
        outside = values[(values < -length) | (values >= length)]
        if outside.size:
            raise _bounds_error(op, int(outside.flat[0]), axis, length)

    def array_shape(self, index):
        return list(np.shape(index))

    def broadcast(self, op, shapes):
        try:
            return np.broadcast_shapes(*[tuple(s) for s in shapes])
        except ValueError:
            raise IndexError(f"{op}: shape mismatch: indexing arrays could not be broadcast "
                             f"together with shapes "
                             f"{' '.join(_shape_text(s) for s in shapes)}") from None


class _SymbolicLengths(_Lengths):
    """Symbolic int64 lengths, for infer_shape. Arguments are pairs (index input, its
    symbolic shape)."""

    def slice_length(self, op, length, start, stop, step):
        parts = (start, stop, step)
        if start is None and stop is None and step in (None, 1, -1):
            return length
        static_length = _static_int(length)
        if static_length is not None and all(isinstance(part, int) or part is None
                                             for part in parts):
            return len(range(*slice(*parts).indices(static_length)))
        given = tuple(part is not None for part in parts)
        variables = [part[0] if isinstance(part, tuple) else part
                     for part in parts if part is not None]
        return SliceLength(given)(length, *variables)

    def mask_count(self, op, mask, axis, axis_lengths):
        variable = mask[0]
        if isinstance(variable, Constant):
            return int(np.count_nonzero(variable.data))
        return reduction.sum(variable)

    def check_bounds(self, op, index, axis, length):
        pass

    def array_shape(self, index):
        return list(index[1])

    def broadcast(self, op, shapes):
        ndim = max(len(shape) for shape in shapes)
        padded = [[1] * (ndim - len(shape)) + list(shape) for shape in shapes]
        return [_broadcast_length([shape[axis] for shape in padded]) for axis in range(ndim)]


def _static_int(length: Any) -> int | None:
    """`length` as an int if it is a known value (an int or a 0-d constant), else None."""
    if isinstance(length, (int, np.integer)):
        return int(length)
    if isinstance(length, Constant) and np.ndim(length.data) == 0:
        return int(length.data)
    return None


def _broadcast_length(lengths: Sequence[Any]) -> Any:
    """The broadcast of symbolic lengths: the one that is not 1 (they are checked equal at
    run time), or 1."""
    unknown = []
    for length in lengths:
        static = _static_int(length)
        if static is None:
            unknown.append(length)
        elif static != 1:
            return static
    if not unknown:
        return 1
    result = unknown[0]
    for length in unknown[1:]:
        result = switch(eq(result, 1), length, result)
    return result


def _shape_text(shape: Sequence[Any]) -> str:
    return "(" + ",".join("?" if n is None else str(n) for n in shape) + \
        ("," if len(shape) == 1 else "") + ")"


_STATIC = _StaticLengths()
_RUNTIME = _RuntimeLengths()
_SYMBOLIC = _SymbolicLengths()


def numpy_index(idx_list: Sequence[Any], values: Sequence[Any]) -> tuple:
    """The numpy index that idx_list denotes, with the index inputs' run-time values."""
    remaining = iter(values)

    def part(value):
        return int(next(remaining)) if value == SCALAR else value

    index = []
    for entry in idx_list:
        if isinstance(entry, IndexSlice):
            index.append(slice(part(entry.start), part(entry.stop), part(entry.step)))
        elif entry == SCALAR:
            index.append(int(next(remaining)))
        elif isinstance(entry, IndexInput):
            index.append(next(remaining))
        else:
            index.append(entry)
    return tuple(index)


# ---------------------------------------------------------------------------------------------
# The ops.

class _IndexOp(Op):
    """What the indexing ops share: their idx_list, how it applies to x, the region shape."""

    idx_list: tuple
    advanced = False

    def _index_inputs(self, index_inputs: Sequence[Any], first_input: int) -> list[Variable]:
        """The index inputs as Variables of the kinds idx_list expects (TypeError if not)."""
        kinds = _input_kinds(self.idx_list)
        if len(index_inputs) != len(kinds):
            raise TypeError(f"{self}: expected {len(kinds)} index input"
                            f"{'s' * (len(kinds) != 1)}, got {len(index_inputs)}")
        variables = []
        for position, (kind, value) in enumerate(zip(kinds, index_inputs)):
            argument = first_input + position
            variable = as_tensor_variable(value, op=self, argument=argument)
            dtype = variable.type.dtype
            if kind == "mask":
                valid, expected = dtype == "bool", "a boolean tensor"
            elif kind == "array":
                valid, expected = _is_integer(dtype), "an integer tensor"
            else:
                valid = _is_integer(dtype) and variable.type.ndim == 0
                expected = "an integer scalar"
            if not valid:
                raise TypeError(f"{self}: input {argument} must be {expected}, got {variable} "
                                f"of type {variable.type}")
            variables.append(variable)
        return variables

    def _steps(self, x_ndim: int, index_inputs: Sequence[Variable]) -> list[_Step]:
        return _walk(self, self.idx_list, x_ndim, [v.type.ndim for v in index_inputs])

    def _static_region(self, x: Variable, index_inputs: Sequence[Variable]) -> tuple:
        steps = self._steps(x.type.ndim, index_inputs)
        return _layout(self, steps, x.type.shape, index_inputs, _STATIC, self.advanced)

    def _symbolic_region(self, node: Apply, x_shape: tuple, index_inputs: Sequence[Variable],
                         index_shapes: Sequence[tuple]) -> tuple:
        steps = self._steps(node.inputs[0].type.ndim, index_inputs)
        return _layout(self, steps, x_shape, list(zip(index_inputs, index_shapes)), _SYMBOLIC,
                       self.advanced)

    def _runtime_region(self, x: np.ndarray, index_values: Sequence[Any]) -> tuple:
        steps = _walk(self, self.idx_list, x.ndim, [np.ndim(v) for v in index_values])
        return _layout(self, steps, x.shape, index_values, _RUNTIME, self.advanced)

    def __str__(self):
        return f"{type(self).__name__}{{{_index_text(self.idx_list)}}}"


def _is_integer(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


class _ReadOp(_IndexOp):
    """What Subtensor and AdvancedSubtensor share: inputs (x, *index inputs), and their
    derivatives, which are linear in x: the tangent is the same index applied to x's tangent,
    the gradient the output gradient added into zeros at the region (the write op of the same
    index, `_increment`)."""

    def make_node(self, x, *index_inputs):
        x = as_tensor_variable(x, op=self, argument=0)
        index_inputs = self._index_inputs(index_inputs, first_input=1)
        shape = self._static_region(x, index_inputs)
        return Apply(self, [x, *index_inputs], [tensor_type(x.type.dtype, shape)()])

    def _increment(self) -> Op:
        """The op that adds a value into the region this op reads."""
        raise NotImplementedError

    def connection_pattern(self, node):
        # The index inputs only choose which elements are read.
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        """d x = inc_subtensor(zeros_like(x)[index], g): each element gets the sum of the
        output gradients at the places it was read (several for a repeated integer index)."""
        x, *index_inputs = inputs
        (output_grad,) = output_grads
        unconnected = [disconnected_type() for _ in index_inputs]
        if is_disconnected(output_grad) or is_discrete(x):
            return [disconnected_type()] + unconnected
        gradient = self._increment()(zeros_like(x), cast(output_grad, x.type.dtype),
                                     *index_inputs)
        return [gradient] + unconnected

    def R_op(self, inputs, eval_points):
        """The tangent of x[index] is tangent_x[index]."""
        x, *index_inputs = inputs
        tangent = eval_points[0]
        if tangent is None or is_discrete(x):
            return [None]
        return [self(declared_like(cast(tangent, x.type.dtype), x), *index_inputs)]


class Subtensor(_ReadOp):
    """x[index] for a basic index (integers, slices, newaxis): a view of x.

    idx_list: see the module docstring (no ARRAY, MASK or Ellipsis entries).
    """

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list: Sequence[Any]):
        self.idx_list = _check_idx_list("Subtensor", idx_list, advanced=False)

    def perform(self, node, inputs, output_storage):
        x, *index_values = inputs
        # A trailing Ellipsis makes numpy return a 0-d view, not a scalar, when every axis
        # is indexed by an integer.
        index = numpy_index(self.idx_list, index_values) + (Ellipsis,)
        output_storage[0][0] = apply_numpy_index(self, x, index)

    def c_code(self, node, names):
        """A view of x (sympile.tensor.subtensor.basic_c)."""
        return subtensor_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [self._symbolic_region(node, input_shapes[0], node.inputs[1:], input_shapes[1:])]

    def _increment(self) -> Op:
        return IncSubtensor(self.idx_list)


class AdvancedSubtensor(_ReadOp):
    """x[index] for an advanced index (integer arrays, boolean masks, mixed with integers,
    slices, newaxis and Ellipsis as numpy allows): a new array.

    idx_list: see the module docstring.
    """

    __props__ = ("idx_list",)
    advanced = True

    def __init__(self, idx_list: Sequence[Any]):
        self.idx_list = _check_idx_list("AdvancedSubtensor", idx_list, advanced=True)

    def perform(self, node, inputs, output_storage):
        x, *index_values = inputs
        index = numpy_index(self.idx_list, index_values)
        output_storage[0][0] = np.asarray(apply_numpy_index(self, x, index))

    def infer_shape(self, fgraph, node, input_shapes):
        return [self._symbolic_region(node, input_shapes[0], node.inputs[1:], input_shapes[1:])]

    def c_code(self, node, names):
        """C for x[rows, columns] of a matrix (sympile.tensor.subtensor.basic_c), x[rows] on axis 0
        (sympile.tensor.subtensor.rows_c) and other integer-array indices
        (sympile.tensor.subtensor.advanced_c); perform for masks."""
        return (advanced_pair_read_c_code(self, node, names)
                or advanced_rows_read_c_code(self, node, names)
                or advanced_index_read_c_code(self, node, names))

    def _increment(self) -> Op:
        # Accumulating (numpy.add.at): a repeated index collects all its gradients.
        return AdvancedIncSubtensor(self.idx_list)


class AdvancedSubtensor1(AdvancedSubtensor):
    """x[ilist] for an integer vector ilist on the first axis (rows of a matrix): Theano's
    AdvancedSubtensor1()(x, ilist), which getitem builds for that index. AdvancedSubtensor's
    C (the row gather) and rules; the gradient is an AdvancedIncSubtensor1."""

    def __init__(self, sparse_grad: bool = False):
        if sparse_grad:
            raise NotImplementedError("AdvancedSubtensor1: sparse_grad=True (a sparse "
                                      "gradient); the gradient is dense")
        super().__init__((ARRAY,))

    def make_node(self, x, *index_inputs):
        node = super().make_node(x, *index_inputs)
        if node.inputs[1].type.ndim != 1:
            raise TypeError(f"{self}: the index must be an integer vector, got "
                            f"{node.inputs[1].type}")
        return node

    def _increment(self) -> Op:
        return AdvancedIncSubtensor1()


class AdvancedBooleanSubtensor(AdvancedSubtensor):
    """x[index] for an index holding a boolean mask: Theano's AdvancedBooleanSubtensor, which
    getitem builds for such an index. `AdvancedBooleanSubtensor()(x, *index)` is Theano's call
    form: the index entries as getitem takes them (masks, integer arrays, slices, ints)."""

    def __init__(self, idx_list: Sequence[Any] | None = None):
        self.idx_list = None if idx_list is None else _check_idx_list(
            "AdvancedBooleanSubtensor", idx_list, advanced=True)

    def make_node(self, x, *index_inputs):
        if self.idx_list is None:
            entries, inputs = _parse_index(tuple(index_inputs))
            return AdvancedBooleanSubtensor(entries).make_node(x, *inputs)
        return super().make_node(x, *index_inputs)

    def _increment(self) -> Op:
        return AdvancedBooleanIncSubtensor(idx_list=self.idx_list)


def apply_numpy_index(op: Op, x: np.ndarray, index: tuple) -> np.ndarray:
    try:
        return x[index]
    except IndexError as error:
        raise IndexError(f"{op}: {error}") from None
    except ValueError as error:
        raise ValueError(f"{op}: {error}") from None


class _IncOp(_IndexOp):
    """What IncSubtensor and AdvancedIncSubtensor share: inputs (x, y, *index inputs)."""

    set_instead_of_inc: bool

    def make_node(self, x, y, *index_inputs):
        x = as_tensor_variable(x, op=self, argument=0)
        y = as_tensor_variable(y, op=self, argument=1)
        index_inputs = self._index_inputs(index_inputs, first_input=2)
        if y.type.dtype != x.type.dtype:
            raise TypeError(f"{self}: the value (input 1) must have x's dtype {x.type.dtype}, "
                            f"got {y.type}")
        region = self._static_region(x, index_inputs)
        if y.type.ndim > len(region):
            raise ValueError(f"{self}: the value has {y.type.ndim} dimensions, more than the "
                             f"{len(region)} of the indexed region {_shape_text(region)}")
        for y_length, length in zip(y.type.shape, region[len(region) - y.type.ndim:]):
            if None not in (y_length, length) and y_length not in (1, length):
                raise ValueError(f"{self}: a value of shape {_shape_text(y.type.shape)} cannot "
                                 f"be broadcast to the indexed region of shape "
                                 f"{_shape_text(region)}")
        return Apply(self, [x, y, *index_inputs], [tensor_type(x.type.dtype, x.type.shape)()])

    def check_value(self, node: Apply, y: np.ndarray, region: tuple) -> None:
        """y broadcasts to the region; as in Elemwise, only axes its type says have length 1
        are broadcast at run time."""
        y_static = node.inputs[1].type.shape
        offset = len(region) - y.ndim
        for axis, (y_length, static) in enumerate(zip(y.shape, y_static)):
            length = region[offset + axis]
            if y_length == length or static == 1:
                continue
            if y_length == 1:
                raise ValueError(
                    f"{self}: the value has shape {y.shape} and the indexed region {region}: "
                    f"axis {axis} of the value has length 1 at run time but its type does not "
                    f"say it is broadcastable; declare it (row/col, dimshuffle('x', ...), "
                    f"specify_shape or a static shape) to broadcast it")
            raise ValueError(f"{self}: a value of shape {y.shape} cannot be broadcast to the "
                             f"indexed region of shape {region}")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def _read(self) -> Op:
        """The op that reads the region this op writes."""
        raise NotImplementedError

    def _setter(self) -> Op:
        """The op that sets the region this op writes."""
        raise NotImplementedError

    def _only_last_write_counts(self, x: Variable, index_inputs: Sequence[Variable]) -> bool:
        """Whether, where the index selects an element several times, only one of the
        region's values reaches the output (numpy's last write), so the others get no
        gradient."""
        return False

    def connection_pattern(self, node):
        # The index inputs only choose where the value goes.
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def L_op(self, inputs, outputs, output_grads):
        """For the output gradient g: d x = g with the region zeroed when setting (those
        elements of x are overwritten), g itself when incrementing; d y = g[index] summed
        over the axes along which y was broadcast to the region (its missing leading axes
        and its length-1 ones), keeping only the occurrence written last of an element the
        index repeats, where only that write reaches the output (setting, or
        ignore_duplicates)."""
        x, y, *index_inputs = inputs
        (output_grad,) = output_grads
        unconnected = [disconnected_type() for _ in index_inputs]
        if is_disconnected(output_grad) or is_discrete(x):
            return [disconnected_type(), disconnected_type()] + unconnected
        output_grad = cast(output_grad, x.type.dtype)
        zero = constant(np.zeros((), dtype=x.type.dtype))
        x_grad = output_grad
        if self.set_instead_of_inc:
            x_grad = self._setter()(output_grad, zero, *index_inputs)
        region_grad = self._read()(output_grad, *index_inputs)
        if self._only_last_write_counts(x, index_inputs):
            written = _last_writes(self, x, region_grad, index_inputs)
            region_grad = switch(written, region_grad, zero)
        return [declared_like(x_grad, x), _sum_to_value(region_grad, y)] + unconnected

    def R_op(self, inputs, eval_points):
        """The op is linear in (x, y) together, so the tangent is the op applied to the
        tangents of x and y (zeros for the one that has none)."""
        x, y, *index_inputs = inputs
        x_tangent, y_tangent = eval_points[:2]
        if (x_tangent is None and y_tangent is None) or is_discrete(x):
            return [None]
        tangents = [zeros_like(value) if tangent is None
                    else declared_like(cast(tangent, x.type.dtype), value)
                    for value, tangent in ((x, x_tangent), (y, y_tangent))]
        return [self(*tangents, *index_inputs)]

    def __str__(self):
        name = type(self).__name__
        if self.set_instead_of_inc:
            name = name.replace("Inc", "Set")
        return f"{name}{{{_index_text(self.idx_list)}}}"


class IncSubtensor(_IncOp):
    """A copy of x with x[index] (a basic index) set to y, or incremented by y, where y
    broadcasts to the region's shape. Inputs: x, y (of x's dtype), the index inputs."""

    __props__ = ("idx_list", "set_instead_of_inc")

    def __init__(self, idx_list: Sequence[Any], set_instead_of_inc: bool = False):
        self.idx_list = _check_idx_list("IncSubtensor", idx_list, advanced=False)
        self.set_instead_of_inc = bool(set_instead_of_inc)

    def perform(self, node, inputs, output_storage):
        x, y, *index_values = inputs
        result = x.copy()
        index = numpy_index(self.idx_list, index_values) + (Ellipsis,)
        region = apply_numpy_index(self, result, index)
        self.check_value(node, y, region.shape)
        if self.set_instead_of_inc:
            region[...] = y
        else:
            region += y
        output_storage[0][0] = result

    def c_code(self, node, names):
        """A copy of x (or x itself, per destroy_map) written through a view of the region
        (sympile.tensor.subtensor.inc_c)."""
        return inc_subtensor_c_code(self, node, names)

    def _read(self) -> Op:
        return Subtensor(self.idx_list)

    def _setter(self) -> Op:
        return IncSubtensor(self.idx_list, set_instead_of_inc=True)


class AdvancedIncSubtensor(_IncOp):
    """A copy of x with x[index] (an advanced index) set to y, or incremented by y, where y
    broadcasts to the region's shape. Inputs: x, y (of x's dtype), the index inputs.

    An element that the index selects several times is incremented once per occurrence
    (numpy.add.at), unless ignore_duplicates, where it is incremented once (numpy's
    x[index] += y); when setting, the last occurrence wins, as in numpy.
    """

    __props__ = ("idx_list", "set_instead_of_inc", "ignore_duplicates")
    advanced = True

    def __init__(self, idx_list: Sequence[Any], set_instead_of_inc: bool = False,
                 ignore_duplicates: bool = False):
        self.idx_list = _check_idx_list("AdvancedIncSubtensor", idx_list, advanced=True)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.ignore_duplicates = bool(ignore_duplicates)

    def perform(self, node, inputs, output_storage):
        x, y, *index_values = inputs
        # The region's shape, from the index alone: checks the index as numpy would, without
        # gathering the region.
        region = self._runtime_region(x, index_values)
        self.check_value(node, y, region)
        result = x.copy()
        index = numpy_index(self.idx_list, index_values)
        if self.set_instead_of_inc:
            result[index] = y
        elif self.ignore_duplicates:
            result[index] += y
        else:
            np.add.at(result, index, y)
        output_storage[0][0] = result

    def c_code(self, node, names):
        """C for x[rows, columns] += y or = y on a matrix (sympile.tensor.subtensor.basic_c) and
        x[rows] += y or = y on axis 0 (sympile.tensor.subtensor.rows_c) and other integer-array
        indices (sympile.tensor.subtensor.advanced_c), also in place when destroy_map says so;
        perform for masks and ignore_duplicates."""
        return (advanced_pair_write_c_code(self, node, names)
                or advanced_rows_write_c_code(self, node, names)
                or advanced_index_write_c_code(self, node, names))

    def _read(self) -> Op:
        return AdvancedSubtensor(self.idx_list)

    def _setter(self) -> Op:
        return AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=True)

    def _only_last_write_counts(self, x: Variable, index_inputs: Sequence[Variable]) -> bool:
        # Accumulating (numpy.add.at) lets every occurrence through.
        return (self.set_instead_of_inc or self.ignore_duplicates) \
            and may_repeat(self, x, index_inputs)


def _refuse_inplace(op_name: str, inplace: bool) -> None:
    """Theano's inplace=True of its advanced increments: sympile's inplace rewrite decides."""
    if inplace:
        raise NotImplementedError(f"{op_name}(inplace=True): sympile's inplace rewrite makes "
                                  f"the update in place where the graph allows; build it with "
                                  f"inplace=False")


class AdvancedIncSubtensor1(AdvancedIncSubtensor):
    """x with x[ilist] incremented by y (every repeated row once per occurrence) or set to y,
    for an integer vector ilist on the first axis: Theano's
    AdvancedIncSubtensor1(inplace=False, set_instead_of_inc=False)(x, y, ilist), which
    inc_subtensor and set_subtensor build for the result of an AdvancedSubtensor1.
    Its update is made in place by the inplace rewrite where the graph allows, as
    AdvancedIncSubtensor's."""

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False):
        _refuse_inplace("AdvancedIncSubtensor1", inplace)
        super().__init__((ARRAY,), set_instead_of_inc)

    def make_node(self, x, y, *index_inputs):
        node = super().make_node(x, y, *index_inputs)
        if node.inputs[2].type.ndim != 1:
            raise TypeError(f"{self}: the index must be an integer vector, got "
                            f"{node.inputs[2].type}")
        return node

    def _read(self) -> Op:
        return AdvancedSubtensor1()

    def _setter(self) -> Op:
        return AdvancedIncSubtensor1(set_instead_of_inc=True)


class AdvancedBooleanIncSubtensor(AdvancedIncSubtensor):
    """x with x[index] incremented by y or set to y, for an index holding a boolean mask:
    Theano's AdvancedBooleanIncSubtensor(inplace=False, set_instead_of_inc=False,
    ignore_duplicates=False), which inc_subtensor and set_subtensor build for the result of an
    AdvancedBooleanSubtensor; without idx_list it takes Theano's call form `op(x, y, *index)`.
    The inplace rewrite makes the update in place where the graph allows."""

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False,
                 ignore_duplicates: bool = False, idx_list: Sequence[Any] | None = None):
        _refuse_inplace("AdvancedBooleanIncSubtensor", inplace)
        self.idx_list = None if idx_list is None else _check_idx_list(
            "AdvancedBooleanIncSubtensor", idx_list, advanced=True)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.ignore_duplicates = bool(ignore_duplicates)

    def make_node(self, x, y, *index_inputs):
        if self.idx_list is None:
            entries, inputs = _parse_index(tuple(index_inputs))
            op = AdvancedBooleanIncSubtensor(False, self.set_instead_of_inc,
                                             self.ignore_duplicates, entries)
            return op.make_node(x, y, *inputs)
        return super().make_node(x, y, *index_inputs)

    def _read(self) -> Op:
        return AdvancedBooleanSubtensor(self.idx_list)

    def _setter(self) -> Op:
        return AdvancedBooleanIncSubtensor(set_instead_of_inc=True, idx_list=self.idx_list)


def may_repeat(op: _IndexOp, x: Variable, index_inputs: Sequence[Variable]) -> bool:
    """Whether op's advanced index may select an element of x more than once. False only
    when that is known when the graph is built: the index has no integer array, or a single
    constant one (and no mask) with distinct entries on an axis of x."""
    steps = [step for step in op._steps(x.type.ndim, index_inputs) if step.entry == ARRAY]
    if not steps:
        return False
    if len(steps) > 1 or MASK in op.idx_list:
        return True
    (step,) = steps
    array = index_inputs[step.inputs[0]]
    if not isinstance(array, Constant):
        return True
    values = np.asarray(array.data, dtype="int64").ravel()
    length = x.type.shape[step.axis]
    if length is None and np.any(values < 0):
        # -1 and length - 1 are the same element, which the type cannot tell.
        return True
    if length is not None:
        values = values % max(length, 1)
    return np.unique(values).size != values.size


def _last_writes(op: _IncOp, x: Variable, region: Variable,
                 index_inputs: Sequence[Variable]) -> Variable:
    """A boolean tensor of the region's shape (`region` is x-like data read at the index):
    True where the region's value is the one that reaches the output when op writes the
    region into x. It writes the region's positions (0, 1, ... in C order) with op's own
    setter, so the element that several positions select keeps the one numpy writes last,
    and reads them back."""
    positions = reshape(arange(size_of(region), dtype="int64"), shape_of(region),
                        ndim=region.type.ndim)
    winners = op._setter()(full_like(x, -1, dtype="int64"), positions, *index_inputs)
    return eq(op._read()(winners, *index_inputs), positions)


def _sum_to_value(gradient: Variable, value: Variable) -> Variable:
    """`gradient`, of the shape of a region that `value` was broadcast to, summed back to
    value's type: over the leading axes value lacks, and (kept, with length 1) over those
    its type gives length 1 where the region's may differ."""
    extra = gradient.type.ndim - value.type.ndim
    if extra:
        gradient = reduction.sum(gradient, axis=tuple(range(extra)))
    broadcast = tuple(axis for axis, length in enumerate(value.type.shape)
                      if length == 1 and gradient.type.shape[axis] != 1)
    if broadcast:
        gradient = reduction.sum(gradient, axis=broadcast, keepdims=True)
    return declared_like(cast(gradient, value.type.dtype), value)


class SliceLength(NonDifferentiable, Op):
    """The number of elements slice(start, stop, step) selects on an axis of a given length
    (Python's slice.indices): an int64 scalar.

    given: which of start, stop, step are inputs (after the length); the others are None.
    """

    __props__ = ("given",)

    def __init__(self, given: Sequence[bool]):
        self.given = tuple(bool(g) for g in given)
        if len(self.given) != 3:
            raise ValueError(f"SliceLength: given must have 3 entries, got {given!r}")

    def make_node(self, length, *parts):
        if len(parts) != sum(self.given):
            raise TypeError(f"{self}: expected {sum(self.given)} slice parts, got {len(parts)}")
        inputs = [as_tensor_variable(np.int64(v) if isinstance(v, int) else v, op=self,
                                     argument=i) for i, v in enumerate((length, *parts))]
        for argument, variable in enumerate(inputs):
            if variable.type.ndim != 0 or not _is_integer(variable.type.dtype):
                raise TypeError(f"{self}: input {argument} must be an integer scalar, got "
                                f"{variable.type}")
        return Apply(self, inputs, [tensor_type("int64", ())()])

    def perform(self, node, inputs, output_storage):
        length, *values = (int(v) for v in inputs)
        remaining = iter(values)
        parts = [next(remaining) if given else None for given in self.given]
        if parts[2] == 0:
            raise ValueError(f"{self}: slice step cannot be zero")
        output_storage[0][0] = np.asarray(len(range(*slice(*parts).indices(length))),
                                          dtype="int64")

    def c_code(self, node, names):
        """perform in C (sympile.tensor.subtensor.inc_c)."""
        return slice_length_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


# ---------------------------------------------------------------------------------------------
# The user's index.

_INDEX_KINDS = ("integers, slices, None (numpy.newaxis), Ellipsis, or integer or boolean "
                "arrays")


def _parse_index(index: Any) -> tuple[list[Any], list[Variable]]:
    """The idx_list entries (Ellipsis kept) and the index inputs of a user's index."""
    items = index if isinstance(index, tuple) else (index,)
    entries: list[Any] = []
    inputs: list[Variable] = []
    for item in items:
        entries.append(_parse_item(item, inputs))
    if sum(entry is Ellipsis for entry in entries) > 1:
        raise IndexError("getitem: an index can only have a single ellipsis ('...')")
    return entries, inputs


def _parse_item(item: Any, inputs: list[Variable]) -> Any:
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        parts = [_parse_slice_part(part, name, inputs)
                 for part, name in zip((item.start, item.stop, item.step),
                                       ("start", "stop", "step"))]
        if parts[2] == 0:
            raise ValueError("getitem: slice step cannot be zero")
        return IndexSlice(*parts)
    if isinstance(item, (bool, np.bool_)):
        # numpy: a boolean scalar is a 0-d mask (it adds an axis of length 1 or 0).
        inputs.append(constant(np.bool_(item)))
        return MASK
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, (float, complex, np.floating, np.complexfloating)):
        raise TypeError(f"getitem: index {item!r} is not an integer; indices must be "
                        f"{_INDEX_KINDS}")
    if not isinstance(item, Variable):
        item = _index_data(item)
        if isinstance(item, int):
            return item
    variable = as_tensor_variable(item, op="getitem")
    dtype = variable.type.dtype
    if dtype == "bool":
        inputs.append(variable)
        return MASK
    if not _is_integer(dtype):
        raise TypeError(f"getitem: index {variable} has dtype {dtype}; indices must be "
                        f"{_INDEX_KINDS}")
    if variable.type.ndim == 0:
        if isinstance(variable, Constant):
            return int(variable.data)
        inputs.append(variable)
        return SCALAR
    inputs.append(variable)
    return ARRAY


def _index_data(item: Any) -> Any:
    """A non-symbolic index item (a list, an ndarray, ...) as an int or an integer/boolean
    array constant (or a Variable, for a list that contains variables)."""
    if isinstance(item, (list, tuple)) and _contains_variable(item):
        return as_tensor_variable(item, op="getitem")
    try:
        data = np.asarray(item)
    except (TypeError, ValueError):
        data = None
    if data is None or data.dtype.kind not in "biuf":
        raise TypeError(f"getitem: cannot use {item!r} as an index; indices must be "
                        f"{_INDEX_KINDS}")
    if data.size == 0 and data.dtype.kind == "f" and not isinstance(item, np.ndarray):
        # numpy: an empty list indexes with an empty integer array.
        data = data.astype("int64")
    if data.dtype.kind == "f":
        raise TypeError(f"getitem: index {item!r} holds floats; indices must be "
                        f"{_INDEX_KINDS}")
    if data.ndim == 0 and data.dtype.kind in "iu":
        return int(data)
    return constant(data)


def _contains_variable(values: Any) -> bool:
    return any(isinstance(v, Variable) or (isinstance(v, (list, tuple)) and _contains_variable(v))
               for v in values)


def _parse_slice_part(part: Any, name: str, inputs: list[Variable]) -> SlicePart:
    if part is None:
        return None
    if isinstance(part, (bool, int, np.integer)):
        return int(part)
    if isinstance(part, np.ndarray) and part.ndim == 0 and part.dtype.kind in "iu":
        return int(part)
    if isinstance(part, Variable):
        variable = as_tensor_variable(part, op="getitem")
        if variable.type.ndim == 0 and _is_integer(variable.type.dtype):
            if isinstance(variable, Constant):
                return int(variable.data)
            inputs.append(variable)
            return SCALAR
        part = variable
    raise TypeError(f"getitem: slice {name} {part!r} must be None or an integer scalar")


def _basic_idx_list(op: str, entries: list[Any], x_ndim: int) -> tuple:
    """A basic index in canonical form: the Ellipsis expanded, trailing full slices dropped
    (x[1, :] and x[1] are the same op)."""
    used = sum(entry is not None and entry is not Ellipsis for entry in entries)
    if used > x_ndim:
        raise IndexError(f"{op}: too many indices for a {x_ndim}-d tensor: the index covers "
                         f"{used} axes")
    if Ellipsis in entries:
        position = entries.index(Ellipsis)
        entries = entries[:position] + [_FULL_SLICE] * (x_ndim - used) + entries[position + 1:]
    while entries and entries[-1] == _FULL_SLICE:
        entries.pop()
    return tuple(entries)


_warned_list_index = False


def _as_tuple_if_multidimensional(index: Any) -> Any:
    """A list holding a slice, None or Ellipsis as the tuple of its items: numpy's rule
    before 1.23, which Theano keeps (x[[slice(None), ::-1]] is x[:, ::-1]); such a list
    cannot be an integer array. Warns once per process, as numpy did, with numpy's fix."""
    global _warned_list_index
    if not (isinstance(index, list)
            and any(isinstance(item, slice) or item is None or item is Ellipsis
                    for item in index)):
        return index
    if not _warned_list_index:
        _warned_list_index = True
        # 1: here, 2: getitem, 3: TensorVariable.__getitem__, 4: the user's x[...].
        warnings.warn("getitem: a list of slices as an index is read as a tuple (Theano's "
                      "and numpy's old rule); write x[tuple(index)]", DeprecationWarning,
                      stacklevel=4)
    return tuple(index)


def getitem(x: Any, index: Any) -> Variable:
    """x[index] with numpy's semantics (TensorVariable.__getitem__).

    index: an integer (Python or a symbolic integer scalar, negative counting from the end), a
    slice (parts None, ints or symbolic integer scalars), None (numpy.newaxis), Ellipsis, an
    integer array or a boolean mask (constant data or symbolic), or a tuple of these (or a
    list of them that holds a slice, None or Ellipsis, as Theano reads it). Basic
    indices give a view (Subtensor), advanced ones a copy (AdvancedSubtensor). A float index
    is a TypeError and an index that covers more axes than x has an IndexError, when the
    graph is built; an integer out of range is an IndexError when the graph is built if x's
    type knows the length and the index is constant, else when the function runs.
    """
    x = as_tensor_variable(x, op="getitem")
    entries, inputs = _parse_index(_as_tuple_if_multidimensional(index))
    if _is_advanced(entries):
        if tuple(entries) == (ARRAY,) and inputs[0].type.ndim == 1:
            return AdvancedSubtensor1()(x, *inputs)
        if any(entry is MASK for entry in entries):
            return AdvancedBooleanSubtensor(entries)(x, *inputs)
        return AdvancedSubtensor(entries)(x, *inputs)
    return Subtensor(_basic_idx_list("getitem", entries, x.type.ndim))(x, *inputs)


# ---------------------------------------------------------------------------------------------
# Writing into a region.

def _as_value(y: Any, dtype: str, caller: str) -> Variable:
    """y as a tensor of `dtype`, converted only when no value can change.

    A symbolic y is cast if its dtype converts safely (numpy.can_cast(..., 'safe')); a Python
    scalar is converted if x's dtype holds it (numpy 2's rule for Python scalars: a float
    fits any float dtype); other data follows TensorType.filter. Anything else: TypeError
    (as in Theano), so that writing floats into an integer tensor is never silent.
    """
    if isinstance(y, Variable):
        y = as_tensor_variable(y, op=caller, argument="y")
        if y.type.dtype == dtype:
            return y
        if np.can_cast(y.type.dtype, dtype, casting="safe"):
            return cast(y, dtype)
        raise TypeError(f"{caller}: cannot write values of dtype {y.type.dtype} into a tensor "
                        f"of dtype {dtype} without losing precision; cast them first "
                        f"(y.astype('{dtype}'))")
    if is_python_scalar(y):
        fits = np.result_type(np.dtype(dtype), y) == np.dtype(dtype)
        if fits and np.dtype(dtype).kind in "iu" and not isinstance(y, bool):
            info = np.iinfo(dtype)
            fits = info.min <= y <= info.max
        if not fits:
            raise TypeError(f"{caller}: cannot write {y!r} into a tensor of dtype {dtype} "
                            f"without losing precision")
        return constant(y, dtype=dtype)
    try:
        ndim = np.ndim(y)
        data = tensor_type(dtype, (None,) * ndim).filter(y)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{caller}: cannot write {y!r} into a tensor of dtype {dtype}: "
                        f"{error}") from None
    return constant(data)


def inc_subtensor(x: Any, y: Any, set_instead_of_inc: bool = False,
                  ignore_duplicates: bool = False) -> Variable:
    """The tensor that x[index] was taken from, with that region incremented by y (Theano's
    API: call it as inc_subtensor(a[index], y)). y broadcasts to the region's shape.

    With an integer-array index, an element selected several times is incremented once per
    occurrence (numpy.add.at), unless ignore_duplicates (numpy's a[index] += y).
    set_instead_of_inc=True: set the region to y instead (set_subtensor).
    y is converted to a's dtype only if no value can change, else TypeError. A y of more
    dimensions than the region, or of a shape that does not broadcast to it: ValueError.
    """
    caller = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    x = as_tensor_variable(x, op=caller)
    owner = x.owner
    if owner is None or not isinstance(owner.op, (Subtensor, AdvancedSubtensor)):
        raise TypeError(f"{caller}: the first argument must be the result of indexing a "
                        f"tensor, as in {caller}(a[index], y); got {x}")
    source, *index_inputs = owner.inputs
    y = _as_value(y, source.type.dtype, caller)
    if isinstance(owner.op, Subtensor):
        op: Op = IncSubtensor(owner.op.idx_list, set_instead_of_inc)
    elif isinstance(owner.op, AdvancedSubtensor1) and not ignore_duplicates:
        op = AdvancedIncSubtensor1(set_instead_of_inc=set_instead_of_inc)
    elif isinstance(owner.op, AdvancedBooleanSubtensor):
        op = AdvancedBooleanIncSubtensor(False, set_instead_of_inc, ignore_duplicates,
                                         owner.op.idx_list)
    else:
        op = AdvancedIncSubtensor(owner.op.idx_list, set_instead_of_inc, ignore_duplicates)
    return op(source, y, *index_inputs)


def set_subtensor(x: Any, y: Any) -> Variable:
    """The tensor that x[index] was taken from, with that region set to y (Theano's API: call
    it as set_subtensor(a[index], y)). y broadcasts to the region's shape; where an
    integer-array index repeats an element, the last occurrence wins (numpy). See
    inc_subtensor for y's dtype and shape rules."""
    return inc_subtensor(x, y, set_instead_of_inc=True)


def advanced_inc_subtensor1(x: Any, y: Any, ilist: Any) -> Variable:
    """Theano's advanced_inc_subtensor1: inc_subtensor(x[ilist], y) for an integer vector
    ilist (a repeated row is incremented once per occurrence)."""
    return inc_subtensor(getitem(x, as_tensor_variable(ilist, op="advanced_inc_subtensor1")), y)


def advanced_set_subtensor1(x: Any, y: Any, ilist: Any) -> Variable:
    """Theano's advanced_set_subtensor1: set_subtensor(x[ilist], y) for an integer vector."""
    return set_subtensor(getitem(x, as_tensor_variable(ilist, op="advanced_set_subtensor1")), y)


def advanced_inc_subtensor(x: Any, y: Any, *indices: Any) -> Variable:
    """Theano's advanced_inc_subtensor: inc_subtensor(x[indices], y) for an advanced index
    given as separate arguments, one per axis."""
    return inc_subtensor(getitem(x, tuple(indices)), y)


def advanced_set_subtensor(x: Any, y: Any, *indices: Any) -> Variable:
    """Theano's advanced_set_subtensor: set_subtensor(x[indices], y)."""
    return set_subtensor(getitem(x, tuple(indices)), y)


def take(x: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> Variable:
    """numpy.take: the elements of x at `indices` along `axis` (axis=None: of x flattened).

    The result has the shape x.shape[:axis] + indices.shape + x.shape[axis + 1:]; indices may
    be negative. Boolean indices are taken as the integers 0 and 1, as numpy.take does.
    mode: 'raise' (an index out of range is an error), 'wrap' (taken modulo the length) or
    'clip' (clipped to [0, length - 1], negative ones to 0), numpy's.
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    x = as_tensor_variable(x, op="take")
    if axis is None:
        if x.type.ndim != 1:
            x = x.flatten()
        axis = 0
    elif isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"take: axis must be an int or None, got {axis!r}")
    elif not -x.type.ndim <= axis < x.type.ndim:
        raise ValueError(f"take: axis {axis} is out of range for a {x.type.ndim}-d tensor")
    axis = int(axis) % x.type.ndim
    if isinstance(indices, slice) or indices is None or indices is Ellipsis:
        raise TypeError(f"take: indices must be integers, got {indices!r}")
    if isinstance(indices, Variable):
        indices = as_tensor_variable(indices, op="take", argument="indices")
        if indices.type.dtype == "bool":
            indices = cast(indices, "int64")
    elif not (isinstance(indices, (list, tuple)) and _contains_variable(indices)) \
            and np.asarray(indices).dtype == bool:
        indices = np.asarray(indices, dtype="int64")
    if mode != "raise":
        indices = index_in_mode(as_tensor_variable(indices, op="take", argument="indices"),
                                x.shape[axis], mode)
    return getitem(x, (slice(None),) * axis + (indices,))


def index_in_mode(indices: Variable, length: Any, mode: str) -> Variable:
    """Integer `indices` into `length` entries as numpy's `mode` reads them (take, choose):
    'wrap' modulo length, 'clip' clipped to [0, length - 1], 'raise' as they are."""
    if mode == "wrap":
        return tensor_mod(indices, length)
    if mode == "clip":
        return clip(indices, 0, length - 1)
    return indices
