"""Shape ops: shape, shape_i, specify_shape, reshape, flatten, squeeze, expand_dims, size.

Lengths in shape graphs are int64 scalars. Where a length is known when the graph is built it
is kept as a Python int (see `axis_length`), so that static shapes stay exact through reshapes.

Derivatives: shapes are integers, so shape inputs and the shape ops' outputs carry no gradient
(disconnected; no tangent). The other ops only move elements: specify_shape passes gradients
and tangents through, reshape reshapes them (back to the input's shape in reverse mode), and
make_vector's gradient with respect to its i-th scalar is entry i of the output gradient.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.scalar.basic import DISCRETE_DTYPES, INTEGER_DTYPES, normalize_dtype
from sympile.tensor import math
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.shape.shape_c import (
    lengths_agree_c_code,
    make_vector_c_code,
    reshape_c_code,
    shape_c_code,
    shape_i_c_code,
    specify_shape_c_code,
    view_c_code,
)
from sympile.tensor.type import is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = [
    "is_flat",
    "PassThroughOp",
    "LengthsAgree",
    "Rebroadcast",
    "Unbroadcast",
    "addbroadcast",
    "patternbroadcast",
    "unbroadcast",
    "MakeVector",
    "Reshape",
    "Shape",
    "ShapeI",
    "SpecifyShape",
    "expand_dims",
    "flatten",
    "reshape",
    "shape",
    "shape_i",
    "size",
    "specify_shape",
    "squeeze",
]

# A length: known when the graph is built (an int) or computed (an int64 0-d tensor).
Length = int | Variable


class Shape(NonDifferentiable, Op):
    """shape(x): the int64 vector of x's dimensions."""

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        return Apply(self, [x], [tensor_type("int64", (x.type.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [(node.inputs[0].type.ndim,)]

    def c_code(self, node, names):
        return shape_c_code()


class ShapeI(NonDifferentiable, Op):
    """shape_i(x, i): the length of axis i of x, an int64 scalar."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def __str__(self):
        return f"Shape_i{{{self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        if not 0 <= self.axis < x.type.ndim:
            raise ValueError(f"{self}: {x} has {x.type.ndim} dimensions, no axis {self.axis}")
        return Apply(self, [x], [tensor_type("int64", ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.axis], dtype="int64")

    def c_code(self, node, names):
        return shape_i_c_code(self.axis)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


_shape = Shape()


def shape(x: Any) -> Variable:
    """The shape of x, as a symbolic int64 vector (x.shape)."""
    return _shape(as_tensor_variable(x, op="shape"))


def shape_i(x: Any, axis: int) -> Variable:
    """The length of axis `axis` of x: a constant if x's type knows it, else a symbolic int64
    scalar."""
    x = as_tensor_variable(x, op="shape_i")
    if -x.type.ndim <= axis < 0:
        axis += x.type.ndim
    static = x.type.shape[axis] if 0 <= axis < x.type.ndim else None
    if static is not None:
        return as_tensor_variable(np.int64(static))
    return ShapeI(axis)(x)


class PassThroughOp(Op):
    """One input, one output of the input's type and shape, whose tangent is the input's
    (make_node, infer_shape, R_op): the base of the identities that differ only in how
    they compute (a copy, a view, a contiguous array) or in their gradient. A non-tensor
    Variable is taken as it is."""

    def make_node(self, x):
        if not isinstance(x, Variable):
            x = as_tensor_variable(x, op=self, argument="x")
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]


class SpecifyShape(Op):
    """specify_shape(x, shape): x, checked at run time to have `shape` (None entries: any
    length); its type then knows the given lengths."""

    view_map = {0: [0]}
    is_identity_view = True

    def make_node(self, x, *lengths):
        x = as_tensor_variable(x, op=self)
        if len(lengths) != x.type.ndim:
            raise ValueError(f"{self}: {x} has {x.type.ndim} dimensions, but a shape of "
                             f"{len(lengths)} entries was given")
        inputs = [x]
        static = []
        for axis, length in enumerate(lengths):
            # A constant -1 (what a node holds for an unknown length) reads as None, as perform
            # reads it, so that rebuilding a node from its inputs gives the same node.
            if length is None or (isinstance(length, Constant) and np.ndim(length.data) == 0
                                  and int(length.data) == -1):
                inputs.append(_NONE_LENGTH)
                static.append(None)
                continue
            length = as_tensor_variable(length, op=self, argument=f"shape[{axis}]")
            if length.type.ndim != 0 or length.type.dtype[:3] not in ("int", "uin"):
                raise TypeError(f"{self}: shape entry {axis} must be an integer scalar, got "
                                f"{length.type}")
            inputs.append(length)
            static.append(int(length.data) if isinstance(length, Constant) else None)
        merged = []
        for axis, (known, given) in enumerate(zip(x.type.shape, static)):
            if known is not None and given is not None and known != given:
                raise ValueError(f"{self}: axis {axis} of {x} has length {known}, not {given}")
            merged.append(known if given is None else given)
        return Apply(self, inputs, [tensor_type(x.type.dtype, merged)()])

    def perform(self, node, inputs, output_storage):
        x, *lengths = inputs
        for axis, length in enumerate(lengths):
            if length.ndim == 0 and int(length) >= 0 and x.shape[axis] != int(length):
                expected = ", ".join("?" if int(n) < 0 else str(int(n)) for n in lengths)
                expected += "," if len(lengths) == 1 else ""
                raise ValueError(f"specify_shape: expected shape ({expected}), got {x.shape}")
        output_storage[0][0] = x

    def c_code(self, node, names):
        return specify_shape_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        return [tuple(x_shape[axis] if _is_none_length(length) else length
                      for axis, length in enumerate(node.inputs[1:]))]

    def connection_pattern(self, node):
        # Only x's values reach the output; the lengths are only checked.
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        """The identity: x's gradient is the output's (its type declared like x's); the
        lengths are disconnected."""
        x, *lengths = inputs
        (output_grad,) = output_grads
        unconnected = [disconnected_type() for _ in lengths]
        if is_disconnected(output_grad) or is_discrete(x):
            return [disconnected_type()] + unconnected
        return [declared_like(math.cast(output_grad, x.type.dtype), x)] + unconnected

    def R_op(self, inputs, eval_points):
        """The tangent of x, with the same shape specified."""
        tangent = eval_points[0]
        if tangent is None or is_discrete(inputs[0]):
            return [None]
        lengths = [None if _is_none_length(length) else length for length in inputs[1:]]
        return [self(tangent, *lengths)]


class LengthsAgree(Op):
    """`LengthsAgree(pairs, what)(target, *sources)`: target itself (a view), after checking
    that the lengths each pair names are equal: a pair ((i, a), (j, b)) compares axis a of
    input i with axis b of input j (0 is target). Raises the ValueError `what` would raise.

    function() puts one before each node that will overwrite a shared variable, reading
    lengths that are known before any such node runs, so that a call that would fail in
    one of them fails before any of them has written (sympile.compile.updates)."""

    __props__ = ("pairs", "what")
    view_map = {0: [0]}
    is_identity_view = True

    def __init__(self, pairs: Sequence[tuple[tuple[int, int], tuple[int, int]]], what: str):
        self.pairs = tuple((tuple(first), tuple(second)) for first, second in pairs)
        self.what = str(what)

    def make_node(self, target, *sources):
        inputs = [as_tensor_variable(v, op=self) for v in (target, *sources)]
        for (i, a), (j, b) in self.pairs:
            if max(i, j) >= len(inputs) or a >= inputs[i].type.ndim \
                    or b >= inputs[j].type.ndim:
                raise ValueError(f"LengthsAgree: pair {((i, a), (j, b))} names no axis of "
                                 f"the inputs")
        return Apply(self, inputs, [inputs[0].type()])

    def perform(self, node, inputs, output_storage):
        for (i, a), (j, b) in self.pairs:
            if inputs[i].shape[a] != inputs[j].shape[b]:
                raise ValueError(f"{self.what}: input shapes {inputs[i].shape} and "
                                 f"{inputs[j].shape} disagree (axis {a} has length "
                                 f"{inputs[i].shape[a]}, axis {b} has length "
                                 f"{inputs[j].shape[b]})")
        output_storage[0][0] = inputs[0]

    def c_code(self, node, names):
        return lengths_agree_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def do_constant_folding(self, fgraph, node) -> bool:
        return False


class Unbroadcast(Op):
    """x itself, its type forgetting the static lengths of `axes` (Theano's unbroadcast):
    those axes no longer broadcast."""

    __props__ = ("axes",)
    view_map = {0: [0]}
    is_identity_view = True

    def __init__(self, axes: Sequence[int]):
        self.axes = tuple(sorted(set(int(a) for a in axes)))

    def make_node(self, x):
        x = as_tensor_variable(x, op="unbroadcast")
        _check_axes("unbroadcast", x, self.axes)
        shape = tuple(None if axis in self.axes else length
                      for axis, length in enumerate(x.type.shape))
        return Apply(self, [x], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def c_code(self, node, names):
        return view_c_code()

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad):
            return [disconnected_type()]
        return [declared_like(output_grad, x)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


class Rebroadcast(Op):
    """Theano's Rebroadcast((axis, flag), ...)(x): x itself, its type saying axis has length
    1 (broadcastable, checked when the function runs) where flag is True and forgetting the
    axis's static length where it is False. addbroadcast and unbroadcast build SpecifyShape
    and Unbroadcast instead, which the C backend compiles; this op runs in Python."""

    __props__ = ("axis",)
    view_map = {0: [0]}
    is_identity_view = True

    def __init__(self, *axis: tuple[int, bool]):
        self.axis = tuple(sorted((int(entry), bool(flag)) for entry, flag in dict(axis).items()))

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        _check_axes(str(self), x, [entry for entry, _ in self.axis])
        flags = dict(self.axis)
        for entry, flag in flags.items():
            if flag and x.type.shape[entry] not in (None, 1):
                raise ValueError(f"{self}: axis {entry} of {x} ({x.type}) has length "
                                 f"{x.type.shape[entry]}, not 1")
        shape = tuple(length if axis not in flags else 1 if flags[axis] else None
                      for axis, length in enumerate(x.type.shape))
        return Apply(self, [x], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        for entry, flag in self.axis:
            if flag and x.shape[entry] != 1:
                raise ValueError(f"{self}: axis {entry} has length {x.shape[entry]}, not 1 "
                                 f"(input of shape {x.shape})")
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        flags = dict(self.axis)
        return [tuple(1 if flags.get(axis) else length
                      for axis, length in enumerate(input_shapes[0]))]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (output_grad,) = inputs, output_grads
        if is_disconnected(output_grad):
            return [disconnected_type()]
        return [declared_like(output_grad, x)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def _check_axes(caller: str, x: Variable, axes: Sequence[int]) -> None:
    if any(not 0 <= axis < x.type.ndim for axis in axes):
        raise ValueError(f"{caller}: axes {tuple(axes)} are not axes of {x.type}")


def addbroadcast(x: Any, *axes: int) -> Variable:
    """x with `axes` declared of length 1 (broadcastable), checked at run time (Theano's
    addbroadcast); x itself where its type already says so, as Theano's returns it."""
    x = as_tensor_variable(x, op="addbroadcast")
    _check_axes("addbroadcast", x, axes)
    if all(x.type.shape[axis] == 1 for axis in axes):
        return x
    return specify_shape(x, tuple(1 if axis in axes else None for axis in range(x.type.ndim)))


def unbroadcast(x: Any, *axes: int) -> Variable:
    """x with `axes` no longer broadcastable (Theano's unbroadcast); x itself where none of
    them is, as Theano's returns it (so the result of a shared variable can stay an update's
    target)."""
    x = as_tensor_variable(x, op="unbroadcast")
    _check_axes("unbroadcast", x, axes)
    if all(x.type.shape[axis] != 1 for axis in axes):
        return x
    return Unbroadcast(axes)(x)


def patternbroadcast(x: Any, broadcastable: Sequence[bool]) -> Variable:
    """x with the broadcast pattern `broadcastable` (Theano's patternbroadcast): True axes
    declared of length 1 (checked at run time), False axes no longer broadcastable; x itself
    where it has that pattern already."""
    x = as_tensor_variable(x, op="patternbroadcast")
    if len(broadcastable) != x.type.ndim:
        raise ValueError(f"patternbroadcast: {x.type} has {x.type.ndim} axes, the pattern "
                         f"{tuple(broadcastable)} {len(broadcastable)}")
    relaxed = [axis for axis, flag in enumerate(broadcastable) if not flag]
    if relaxed:
        x = unbroadcast(x, *relaxed)
    return addbroadcast(x, *[axis for axis, flag in enumerate(broadcastable) if flag])


# An unspecified length in specify_shape: the constant -1 (lengths are never negative).
_NONE_LENGTH = as_tensor_variable(np.int64(-1))


def _is_none_length(variable: Variable) -> bool:
    return isinstance(variable, Constant) and int(variable.data) == -1


_specify_shape = SpecifyShape()


def specify_shape(x: Any, shape: Sequence[Any]) -> Variable:
    """x with its shape declared (and checked at run time); entries may be None."""
    x = as_tensor_variable(x, op="specify_shape")
    if isinstance(shape, Variable):
        raise TypeError("specify_shape: give the shape as a tuple of lengths, not a symbolic "
                        "vector")
    return _specify_shape(x, *shape)


def declared_like(variable: Variable, like: Variable) -> Variable:
    """`variable` (of like's ndim) with the lengths that like's type knows and its own does not
    declared by specify_shape, so that a gradient or tangent computed for `like` has a type
    compatible with like's (a length-1 axis stays broadcastable)."""
    missing = [static if own is None else None
               for own, static in zip(variable.type.shape, like.type.shape)]
    if all(length is None for length in missing):
        return variable
    return specify_shape(variable, missing)


# ---------------------------------------------------------------------------------------------
# Lengths: helpers shared by the shape-building functions here and in tensor/basic/ops.py.

def is_integer_type(variable: Variable, ndim: int) -> bool:
    return variable.type.ndim == ndim and variable.type.dtype in INTEGER_DTYPES


def static_int(variable: Length) -> int | None:
    """The value of a length if it is known when the graph is built."""
    if isinstance(variable, (int, np.integer)):
        return int(variable)
    if isinstance(variable, Constant) and variable.type.ndim == 0:
        return int(variable.data)
    return None


def axis_length(x: Variable, axis: int) -> Length:
    """The length of axis `axis` of x: an int if x's type knows it, else a Shape_i node."""
    static = x.type.shape[axis]
    return static if static is not None else ShapeI(axis)(x)


def _fold_lengths(lengths: Sequence[Length], identity: int,
                  ints: Callable[[int, int], int], variables: Callable[[Any, Any], Variable],
                  absorbing: int | None) -> Length:
    """lengths folded: the known ones into one int (by `ints`), the symbolic ones into a graph
    (by `variables`, then the int joined unless it is the identity); the int alone where all
    are known or it is `absorbing`."""
    known = identity
    symbolic = []
    for length in lengths:
        value = static_int(length)
        if value is None:
            symbolic.append(length)
        else:
            known = ints(known, value)
    if not symbolic or known == absorbing:
        return known
    result = symbolic[0]
    for length in symbolic[1:]:
        result = variables(result, length)
    return result if known == identity else variables(result, known)


def sum_of_lengths(lengths: Sequence[Length]) -> Length:
    """The sum of lengths, folded to an int where they are all known."""
    return _fold_lengths(lengths, 0, operator.add, math.add, None)


def product_of_lengths(lengths: Sequence[Length]) -> Length:
    """The product of lengths, folded to an int where they are known (0 if any is 0)."""
    return _fold_lengths(lengths, 1, operator.mul, math.mul, 0)


def as_length_variable(length: Length) -> Variable:
    """A length as an int64 0-d tensor."""
    if isinstance(length, Variable):
        return math.cast(length, "int64")
    return constant(np.int64(length))


def length_argument(value: Any, function: str, position: int | str) -> Length:
    """One user-given length (an int or an integer 0-d tensor) checked and normalized."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{function}: shape entry {position} must be an integer, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, Variable):
        variable = as_tensor_variable(value, op=function, argument=f"shape[{position}]")
        if not is_integer_type(variable, 0):
            raise TypeError(f"{function}: shape entry {position} must be an integer scalar, "
                            f"got {variable} of type {variable.type}")
        static = static_int(variable)
        return variable if static is None else static
    raise TypeError(f"{function}: shape entry {position} must be an int or an integer scalar "
                    f"variable, got {type(value).__name__} {value!r}")


def vector_static_entries(vector: Variable) -> list[int | None] | None:
    """The values of a 1-d length vector known when the graph is built (None where unknown),
    or None if not even its length is known. Builds no graph."""
    if isinstance(vector, Constant):
        return [int(v) for v in vector.data]
    owner = vector.owner
    if owner is not None and isinstance(owner.op, Shape):
        return list(owner.inputs[0].type.shape)
    if owner is not None and isinstance(owner.op, MakeVector):
        return [static_int(v) for v in owner.inputs]
    if vector.type.shape[0] is not None:
        return [None] * vector.type.shape[0]
    return None


def vector_entries(vector: Variable, length: int | None = None) -> list[Length]:
    """The entries of a 1-d length vector of `length` entries (default: its static length),
    as lengths: taken from the graph that built it where possible (a constant, shape(x), a
    MakeVector), else indexed."""
    if isinstance(vector, Constant):
        return [int(v) for v in vector.data]
    owner = vector.owner
    if owner is not None and isinstance(owner.op, Shape):
        source = owner.inputs[0]
        return [axis_length(source, axis) for axis in range(source.type.ndim)]
    if owner is not None and isinstance(owner.op, MakeVector):
        return [v if static_int(v) is None else static_int(v) for v in owner.inputs]
    count = vector.type.shape[0] if length is None else length
    return [vector[index] for index in range(count)]


def shape_argument(shape: Any, function: str) -> list[Length]:
    """A user's shape argument (an int, a sequence of ints and integer scalars, or an integer
    vector of static length such as x.shape) as a list of lengths."""
    if isinstance(shape, (list, tuple)):
        return [length_argument(entry, function, position)
                for position, entry in enumerate(shape)]
    if isinstance(shape, np.ndarray):
        if shape.ndim > 1:
            raise TypeError(f"{function}: a shape must be 1-d, got an array of shape "
                            f"{shape.shape}")
        return [length_argument(entry, function, position)
                for position, entry in enumerate(shape.reshape(-1))]
    if isinstance(shape, Variable):
        variable = as_tensor_variable(shape, op=function, argument="shape")
        if is_integer_type(variable, 0):
            return [length_argument(variable, function, 0)]
        if not is_integer_type(variable, 1):
            raise TypeError(f"{function}: a shape must be integers, got {variable} of type "
                            f"{variable.type}")
        if variable.type.shape[0] is None:
            raise TypeError(f"{function}: the length of the shape vector {variable} is not "
                            f"known when the graph is built; give a tuple of lengths")
        return vector_entries(variable)
    return [length_argument(shape, function, 0)]


def check_nonnegative(lengths: Sequence[Length], function: Any) -> None:
    for position, length in enumerate(lengths):
        value = static_int(length)
        if value is not None and value < 0:
            raise ValueError(f"{function}: negative length {value} at shape entry {position}")


def normalize_one_axis(axis: Any, ndim: int, function: Any, argument: str = "axis") -> int:
    """`axis` as an int in [0, ndim), numpy's negative axes counted from the end; TypeError if
    it is not an int, ValueError if it is out of bounds."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{function}: {argument} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{function}: {argument} {axis} is out of bounds for {ndim} dimensions "
                         f"(expected an int in [{-ndim}, {ndim}))")
    return int(axis) % ndim


def _normalize_axes(axis: Any, ndim: int, function: str) -> tuple[int, ...]:
    """An int or a sequence of ints as distinct axes in [0, ndim)."""
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    normalized = tuple(normalize_one_axis(a, ndim, function) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{function}: repeated axis in {axis!r}")
    return normalized


# ---------------------------------------------------------------------------------------------
# MakeVector and Reshape

class MakeVector(Op):
    """`make_vector(*scalars)`: the 1-d tensor of `dtype` holding the given 0-d tensors (each of
    a dtype that converts to `dtype` without loss). Builds shape vectors and stack()s
    scalars."""

    __props__ = ("dtype",)

    def __init__(self, dtype: Any = "int64"):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, *scalars):
        variables = []
        for index, value in enumerate(scalars):
            variable = as_tensor_variable(value, op=self, argument=index)
            if variable.type.ndim != 0:
                raise TypeError(f"{self}: input {index} must be a 0-d tensor, got {variable} "
                                f"of type {variable.type}")
            if not np.can_cast(variable.type.dtype, self.dtype, casting="safe"):
                raise TypeError(f"{self}: input {index} of dtype {variable.type.dtype} cannot "
                                f"be converted to {self.dtype} without loss")
            variables.append(variable)
        return Apply(self, variables, [tensor_type(self.dtype, (len(variables),))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.array(inputs, dtype=self.dtype).reshape(len(inputs))

    def c_code(self, node, names):
        return make_vector_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(len(node.inputs),)]

    def L_op(self, inputs, outputs, output_grads):
        """The gradient of scalar i is entry i of the output gradient, in the scalar's dtype
        (bool and integer scalars: disconnected)."""
        (output_grad,) = output_grads
        if is_disconnected(output_grad) or is_discrete(outputs[0]):
            return [disconnected_type() for _ in inputs]
        return [disconnected_type() if is_discrete(scalar)
                else math.cast(output_grad[index], scalar.type.dtype)
                for index, scalar in enumerate(inputs)]

    def R_op(self, inputs, eval_points):
        """The vector of the scalars' tangents (0 for a scalar without one)."""
        if self.dtype in DISCRETE_DTYPES or all(point is None for point in eval_points):
            return [None]
        zero = constant(np.zeros((), dtype=self.dtype))
        return [self(*[zero if point is None else math.cast(point, self.dtype)
                       for point in eval_points])]


def length_vector(lengths: Sequence[Length]) -> Variable:
    """An int64 vector of lengths: a constant if all are known, else a MakeVector."""
    if all(static_int(length) is not None for length in lengths):
        return constant(np.array([static_int(length) for length in lengths], dtype="int64"))
    return MakeVector("int64")(*[as_length_variable(length) for length in lengths])


class Reshape(Op):
    """reshape(x, shape): x's elements in C order, in an array of `shape` (an integer vector
    of `ndim` entries, one of which may be -1: the length that makes the size match)."""

    __props__ = ("ndim",)
    view_map = {0: [0]}

    def __init__(self, ndim: int):
        if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)) or ndim < 0:
            raise ValueError(f"Reshape: ndim must be an int >= 0, got {ndim!r}")
        self.ndim = int(ndim)

    def make_node(self, x, shape):
        x = as_tensor_variable(x, op=self, argument="x")
        shape = as_tensor_variable(shape, op=self, argument="shape")
        if not is_integer_type(shape, 1):
            raise TypeError(f"{self}: the shape must be an integer vector, got {shape} of type "
                            f"{shape.type}")
        if shape.type.shape[0] not in (None, self.ndim):
            raise ValueError(f"{self}: the shape has {shape.type.shape[0]} entries, expected "
                             f"{self.ndim}")
        entries = vector_static_entries(shape) or [None] * self.ndim
        static = _reshape_static_shape(self, x.type.shape, entries)
        return Apply(self, [x, shape], [tensor_type(x.type.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, shape = inputs
        if shape.shape != (self.ndim,):
            raise ValueError(f"{self}: the shape has {shape.size} entries, expected {self.ndim}")
        requested = tuple(int(length) for length in shape)
        if any(length < -1 for length in requested) or requested.count(-1) > 1:
            raise ValueError(f"{self}: shape {requested} is invalid: entries must be >= 0, "
                             f"with at most one -1")
        try:
            output_storage[0][0] = x.reshape(requested)
        except ValueError:
            raise ValueError(f"{self}: cannot reshape an array of shape {x.shape} (size "
                             f"{x.size}) into shape {requested}") from None

    def c_code(self, node, names):
        return reshape_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        static = node.outputs[0].type.shape
        entries = vector_entries(node.inputs[1], self.ndim)
        if all(length is not None for length in static):
            return [static]
        # An entry that is (or may be) -1 is the size divided by the product of the others;
        # with exactly one -1 among the entries that is size // -product(entries).
        missing = math.int_div(as_length_variable(product_of_lengths(x_shape)),
                               math.neg(as_length_variable(product_of_lengths(entries))))
        result: list[Length] = []
        for length, entry in zip(static, entries):
            value = static_int(entry)
            if length is not None:
                result.append(length)
            elif value == -1:
                result.append(missing)
            elif value is not None:
                result.append(value)
            else:
                result.append(math.switch(math.eq(entry, -1), missing, entry))
        return [tuple(result)]

    def connection_pattern(self, node):
        # Only x's values reach the output; the shape only arranges them.
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """x's gradient is the output gradient reshaped back to x's shape; the shape is
        disconnected."""
        x, _ = inputs
        (output_grad,) = output_grads
        if is_disconnected(output_grad) or is_discrete(x):
            return [disconnected_type(), disconnected_type()]
        # The shape vector holds the lengths x's type knows, so the gradient's type has them.
        x_shape = length_vector([axis_length(x, axis) for axis in range(x.type.ndim)])
        gradient = Reshape(x.type.ndim)(math.cast(output_grad, x.type.dtype), x_shape)
        return [gradient, disconnected_type()]

    def R_op(self, inputs, eval_points):
        """x's tangent reshaped the same way."""
        x, requested = inputs
        tangent = eval_points[0]
        if tangent is None or is_discrete(x):
            return [None]
        return [self(tangent, requested)]


def _reshape_static_shape(op: Op, x_shape: Sequence[int | None],
                          entries: Sequence[int | None]) -> tuple[int | None, ...]:
    """The output lengths known when the graph is built; ValueError for a shape that cannot
    fit any value of x's type."""
    for entry in entries:
        if entry is not None and entry < -1:
            raise ValueError(f"{op}: shape entries must be >= 0 or -1, got {tuple(entries)}")
    if list(entries).count(-1) > 1:
        raise ValueError(f"{op}: at most one shape entry can be -1, got {tuple(entries)}")
    result = [None if entry is None or entry == -1 else entry for entry in entries]
    if 0 in x_shape:
        size = 0
    elif all(length is not None for length in x_shape):
        size = int(np.prod(x_shape, dtype="int64"))
    else:
        return tuple(result)
    open_positions = [i for i, length in enumerate(result) if length is None]
    known_product = int(np.prod([length for length in result if length is not None],
                                dtype="int64"))
    shown = tuple("?" if entry is None else entry for entry in entries)
    if not open_positions:
        if known_product != size:
            raise ValueError(f"{op}: cannot reshape an input of shape "
                             f"{tuple(x_shape)} (size {size}) into shape {shown}")
        return tuple(result)
    if len(open_positions) > 1:
        return tuple(result)
    # One open entry: -1, or a symbolic length that must be -1 or the one value that fits.
    (position,) = open_positions
    if known_product == 0:
        if size != 0 or entries[position] == -1:
            raise ValueError(f"{op}: cannot reshape an input of shape {tuple(x_shape)} "
                             f"(size {size}) into shape {shown}")
        return tuple(result)
    if size % known_product:
        raise ValueError(f"{op}: cannot reshape an input of shape {tuple(x_shape)} "
                         f"(size {size}) into shape {shown}")
    result[position] = size // known_product
    return tuple(result)


def reshape(x: Any, shape: Any, ndim: int | None = None) -> Variable:
    """x with its elements (in C order) arranged in `shape`: a sequence of ints and integer
    scalars, or an integer vector (whose length is its static length, or `ndim`). One entry
    may be -1: the length that keeps the size. Returns a view where numpy would."""
    x = as_tensor_variable(x, op="reshape")
    if isinstance(shape, Variable):
        vector = as_tensor_variable(shape, op="reshape", argument="shape")
        if is_integer_type(vector, 1):
            length = vector.type.shape[0]
            if length is None and ndim is None:
                raise ValueError(f"reshape: the length of the shape vector {vector} is not "
                                 f"known when the graph is built; pass ndim")
            if length is not None and ndim is not None and length != ndim:
                raise ValueError(f"reshape: ndim={ndim} but the shape vector has {length} "
                                 f"entries")
            return Reshape(length if length is not None else ndim)(x, vector)
    lengths = shape_argument(shape, "reshape")
    if ndim is not None and ndim != len(lengths):
        raise ValueError(f"reshape: ndim={ndim} but the shape has {len(lengths)} entries")
    return Reshape(len(lengths))(x, length_vector(lengths))


def flatten(x: Any, ndim: int | None = None, outdim: int | None = None) -> Variable:
    """x with its first ndim - 1 axes kept and the others merged into one (Theano's flatten;
    ndim=1, the default, is numpy's ravel). outdim: Theano's old name of ndim (deprecated
    there too)."""
    ndim = _flatten_ndim("flatten", ndim, outdim)
    x = as_tensor_variable(x, op="flatten")
    if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)):
        raise TypeError(f"flatten: ndim must be an int, got {ndim!r}")
    if not 1 <= ndim <= max(x.type.ndim, 1):
        raise ValueError(f"flatten: ndim must be between 1 and {max(x.type.ndim, 1)} for "
                         f"{x} of type {x.type}, got {ndim}")
    if ndim == x.type.ndim:
        return x
    kept = [axis_length(x, axis) for axis in range(ndim - 1)]
    merged = product_of_lengths([axis_length(x, axis) for axis in range(ndim - 1, x.type.ndim)])
    return Reshape(ndim)(x, length_vector(kept + [merged]))


def _flatten_ndim(function: str, ndim: int | None, outdim: int | None) -> int:
    """ndim from Theano's ndim or its deprecated synonym outdim (1 if neither)."""
    if outdim is None:
        return 1 if ndim is None else ndim
    if ndim is not None:
        raise ValueError(f"{function}: give ndim or its old name outdim, not both")
    warnings.warn(f"{function}: outdim is deprecated (as in Theano); use ndim",
                  DeprecationWarning, stacklevel=3)
    return outdim


def is_flat(var: Any, ndim: int | None = None, outdim: int | None = None) -> bool:
    """Theano's is_flat: whether `var` has ndim dimensions (default 1; outdim: its old
    name)."""
    return as_tensor_variable(var, op="is_flat").type.ndim == _flatten_ndim("is_flat", ndim,
                                                                           outdim)


def squeeze(x: Any, axis: Any = None) -> Variable:
    """x without the given length-1 axes (numpy.squeeze), a view.

    axis=None drops the axes whose type says they have length 1 (an axis of unknown length
    is kept even if it happens to have length 1). An explicit axis (int or tuple, negative
    counts from the end) must have length 1: ValueError when the graph is built if its type
    says otherwise, else at run time (PyTensor's behaviour).
    """
    x = as_tensor_variable(x, op="squeeze")
    if axis is None:
        axes = tuple(a for a, length in enumerate(x.type.shape) if length == 1)
    else:
        axes = _normalize_axes(axis, x.type.ndim, "squeeze")
    if not axes:
        return x
    for a in axes:
        if x.type.shape[a] not in (None, 1):
            raise ValueError(f"squeeze: cannot squeeze axis {a} of {x} ({x.type}): it has "
                             f"length {x.type.shape[a]}, not 1")
    unknown = [a for a in axes if x.type.shape[a] is None]
    if unknown:
        # The run-time check that makes the axes droppable.
        x = specify_shape(x, [1 if a in unknown else None for a in range(x.type.ndim)])
    return DimShuffle(x.type.ndim, [a for a in range(x.type.ndim) if a not in axes])(x)


def expand_dims(x: Any, axis: Any) -> Variable:
    """x with new length-1 axes at positions `axis` (an int or a tuple, counted in the
    result; negative from its end), as numpy.expand_dims. A view."""
    x = as_tensor_variable(x, op="expand_dims")
    count = len(axis) if isinstance(axis, (list, tuple)) else 1
    new_axes = _normalize_axes(axis, x.type.ndim + count, "expand_dims")
    source_axes = iter(range(x.type.ndim))
    pattern = ["x" if a in new_axes else next(source_axes)
               for a in range(x.type.ndim + count)]
    return DimShuffle(x.type.ndim, pattern)(x)


def size(x: Any) -> Variable:
    """The number of elements of x (the product of its shape), an int64 scalar; a constant
    where the type knows it."""
    x = as_tensor_variable(x, op="size")
    lengths = [axis_length(x, axis) for axis in range(x.type.ndim)]
    return as_length_variable(product_of_lengths(lengths))
