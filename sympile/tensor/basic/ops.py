"""Building and joining tensors: transpose, alloc (zeros, ones, full, the *_like functions,
fill), eye, arange, join/concatenate/stack, split and tile, with numpy's semantics.

Derivatives: alloc's gradient sums the output gradient over the axes the value was broadcast
along; join's splits it into the inputs' pieces and split's joins the pieces' gradients back
(zeros for unused pieces); arange's output is start + i * step, so its gradient with respect
to start is sum(g) and with respect to step sum(i * g). Lengths, axes, split sizes, eye's
arguments and arange's stop only set shapes: disconnected. alloc, join and split are linear
in their differentiable inputs, so their forward rules apply the op to the tangents; arange's
tangent is dstart + i * dstep. Alloc's and ARange's gradients are sums, and tensor.reduction
builds on this module, so they live in sympile/tensor/derivatives.py, which binds them.
"""

from __future__ import annotations

import math as python_math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.scalar.basic import (
    DISCRETE_DTYPES,
    ScalarType,
    get_scalar_type,
    normalize_dtype,
    upcast,
)
from sympile.tensor import math
from sympile.tensor.basic.alloc_c import alloc_c_code
from sympile.tensor.basic.arange_c import arange_c_code
from sympile.tensor.basic.join_c import join_c_code
from sympile.tensor.basic.split_c import split_c_code
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.raise_op import Assert
from sympile.tensor.shape.ops import (
    Length,
    MakeVector,
    as_length_variable,
    axis_length,
    check_nonnegative,
    declared_like,
    expand_dims,
    flatten,
    is_integer_type,
    length_argument,
    length_vector,
    normalize_one_axis,
    product_of_lengths,
    reshape,
    shape,
    shape_argument,
    shape_i,
    specify_shape,
    static_int,
    sum_of_lengths,
    vector_entries,
    vector_static_entries,
)
from sympile.tensor.type import is_discrete, tensor_type
from sympile.tensor.variable import (
    as_tensor_variable,
    bind_builders,
    constant,
    is_python_scalar,
)

__all__ = [
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "ARange",
    "Alloc",
    "ScalarFromTensor",
    "TensorFromScalar",
    "AllocEmpty",
    "Eye",
    "Tile",
    "Tri",
    "Join",
    "Split",
    "alloc",
    "arange",
    "concatenate",
    "eye",
    "fill",
    "full",
    "full_like",
    "identity_like",
    "join",
    "ones",
    "ones_like",
    "scalar_from_tensor",
    "second",
    "split",
    "stack",
    "swapaxes",
    "tensor_from_scalar",
    "tile",
    "transfer",
    "transpose",
    "zeros",
    "zeros_like",
]


def _axis_input(axis: Any, op: Any) -> Variable:
    """An axis argument as an integer 0-d tensor (a constant or computed)."""
    variable = as_tensor_variable(axis, op=op, argument="axis")
    if not is_integer_type(variable, 0):
        raise TypeError(f"{op}: the axis must be an integer scalar, got {variable} of type "
                        f"{variable.type}")
    return variable


def runtime_axis(axis: np.ndarray, ndim: int, op: Any) -> int:
    value = int(axis)
    if not -ndim <= value < ndim:
        raise ValueError(f"{op}: axis {value} is out of bounds for {ndim} dimensions")
    return value % ndim


def _axis_dependent(axis: Variable, ndim: int, dimension: int, on_axis: Length,
                    off_axis: Length) -> Length:
    """`on_axis` if the (computed) axis is `dimension`, else `off_axis`."""
    normalized = math.switch(math.lt(axis, 0), math.add(axis, ndim), axis)
    return math.switch(math.eq(normalized, dimension), as_length_variable(on_axis),
                       as_length_variable(off_axis))


# ---------------------------------------------------------------------------------------------
# transpose

def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """x with its axes permuted (numpy.transpose): reversed by default (x.T), else axis i of
    the result is axis axes[i] of x (negative counts from the end). A view."""
    x = as_tensor_variable(x, op="transpose")
    if axes is None:
        order = tuple(reversed(range(x.type.ndim)))
    else:
        if not isinstance(axes, (list, tuple)):
            raise TypeError(f"transpose: axes must be a list or tuple of ints, got {axes!r}")
        order = tuple(normalize_one_axis(a, x.type.ndim, "transpose") for a in axes)
        if sorted(order) != list(range(x.type.ndim)):
            raise ValueError(f"transpose: axes {tuple(axes)} are not a permutation of the "
                             f"{x.type.ndim} axes of {x}")
    result = DimShuffle(x.type.ndim, order)(x)
    if axes is None and x.name is not None:
        result.name = x.name + ".T"
    return result


def swapaxes(x: Any, axis1: int, axis2: int) -> Variable:
    """x with axes axis1 and axis2 exchanged (numpy.swapaxes; negative counts from the end).
    A view."""
    x = as_tensor_variable(x, op="swapaxes")
    one = normalize_one_axis(axis1, x.type.ndim, "swapaxes")
    other = normalize_one_axis(axis2, x.type.ndim, "swapaxes")
    order = list(range(x.type.ndim))
    order[one], order[other] = other, one
    return DimShuffle(x.type.ndim, order)(x)


def transfer(x: Any, target: str) -> Variable:
    """x on device `target` (Theano's transfer). Tensors live in host memory, so 'cpu'
    gives x itself; sympile has no other device yet."""
    x = as_tensor_variable(x, op="transfer")
    if target != "cpu":
        raise ValueError(f"transfer: unknown target {target!r}; sympile runs on the CPU only, "
                         f"so the one target is 'cpu'")
    return x


# ---------------------------------------------------------------------------------------------
# Alloc and the functions built on it

def checked_alloc_shape(op: Op, node: Apply, value_shape: tuple[int, ...],
                        shape: Sequence[Any]) -> tuple[int, ...]:
    """The shape an Alloc node (`op`) makes of the lengths `shape`, checked: no negative
    length, and the value broadcasts to it (an axis of length 1 only where its type says
    so)."""
    requested = tuple(int(length) for length in shape)
    if any(length < 0 for length in requested):
        raise ValueError(f"{op}: negative length in shape {requested}")
    offset = len(requested) - len(value_shape)
    for axis, static in enumerate(node.inputs[0].type.shape):
        if static != 1 and value_shape[axis] != requested[offset + axis]:
            if value_shape[axis] == 1:
                raise ValueError(
                    f"{op}: axis {axis} of the value (shape {value_shape}) has length 1 "
                    f"at run time but its type does not say it is broadcastable, so it is "
                    f"not broadcast to shape {requested}; declare it (row/col, "
                    f"dimshuffle('x', ...), specify_shape or a static shape)")
            raise ValueError(f"{op}: a value of shape {value_shape} cannot be broadcast "
                             f"to shape {requested}")
    return requested


class Alloc(Op):
    """`alloc(value, *shape)`: a new array of `shape` holding `value` broadcast to it (numpy's
    rules, value's axes aligned with the last ones). As in Elemwise, an axis of value is
    broadcast only if its type says it has length 1; an axis of unknown length must match."""

    def make_node(self, value, *shape):
        value = as_tensor_variable(value, op=self, argument="value")
        lengths = [as_length_variable(length_argument(length, self, position))
                   for position, length in enumerate(shape)]
        if value.type.ndim > len(lengths):
            raise ValueError(f"{self}: the value {value} has {value.type.ndim} dimensions, more "
                             f"than the {len(lengths)} of the shape")
        offset = len(lengths) - value.type.ndim
        static = []
        for axis, length in enumerate(lengths):
            requested = static_int(length)
            if requested is not None and requested < 0:
                raise ValueError(f"{self}: negative length {requested} at shape entry {axis}")
            value_length = value.type.shape[axis - offset] if axis >= offset else 1
            if value_length in (None, 1):
                static.append(requested)
                continue
            if requested is not None and requested != value_length:
                raise ValueError(f"{self}: a value of type {value.type} cannot be broadcast to "
                                 f"length {requested} at axis {axis}")
            static.append(value_length)
        return Apply(self, [value, *lengths], [tensor_type(value.type.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        value, *shape = inputs
        requested = checked_alloc_shape(self, node, value.shape, shape)
        result = np.empty(requested, dtype=node.outputs[0].type.dtype)
        result[...] = value
        output_storage[0][0] = result

    def c_code(self, node, names):
        """Checks the lengths and the value's shape as perform does (with its messages), then
        one broadcasting copy into the output buffer (sympile.tensor.basic.alloc_c)."""
        return alloc_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(length if static is None else static
                      for static, length in zip(node.outputs[0].type.shape, node.inputs[1:]))]

    def connection_pattern(self, node):
        # Only the value's elements reach the output; the lengths set its shape.
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def R_op(self, inputs, eval_points):
        """The value's tangent allocated the same way (declared to broadcast as the value
        does)."""
        value, *lengths = inputs
        tangent = eval_points[0]
        if tangent is None or is_discrete(value):
            return [None]
        return [self(declared_like(tangent, value), *lengths)]


_alloc = Alloc()


class AllocEmpty(NonDifferentiable, Op):
    """`AllocEmpty(dtype)(*shape)`: a new array of `shape` whose values are whatever the memory
    held (numpy.empty; Theano's AllocEmpty), for code that writes every element itself."""

    __props__ = ("dtype",)

    def __init__(self, dtype: Any):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, *shape):
        lengths = [length_argument(length, self, position)
                   for position, length in enumerate(shape)]
        check_nonnegative(lengths, self)
        return Apply(self, [as_length_variable(length) for length in lengths],
                     [tensor_type(self.dtype, [static_int(length) for length in lengths])()])

    def perform(self, node, inputs, output_storage):
        shape = tuple(int(length) for length in inputs)
        if any(length < 0 for length in shape):
            raise ValueError(f"{self}: negative shape {shape}")
        output_storage[0][0] = np.empty(shape, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(length if static is None else static
                      for static, length in zip(node.outputs[0].type.shape, node.inputs))]


def alloc(value: Any, *shape: Any) -> Variable:
    """A new array of `shape` (ints and integer scalars) filled with `value` broadcast to it."""
    return _alloc(value, *shape)


def _dtype_or_floatx(dtype: Any) -> str:
    return normalize_dtype(config.floatX if dtype is None else dtype)


def _fill_value(value: Any, dtype: str | None, function: str) -> Variable:
    """`value` as a tensor of `dtype` (numpy's unsafe conversion, as numpy.full does)."""
    if not isinstance(value, Variable):
        try:
            data = np.asarray(value)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{function}: cannot use {value!r} as a fill value: {error}") \
                from None
        if data.dtype.kind not in "biufc":
            raise TypeError(f"{function}: the fill value must be numbers, got {value!r}")
        if dtype is None:
            return as_tensor_variable(value, op=function, argument="fill_value")
        return constant(data.astype(dtype))
    variable = as_tensor_variable(value, op=function, argument="fill_value")
    return variable if dtype is None else math.cast(variable, dtype)


def _filled(shape: Any, value: Variable, function: str) -> Variable:
    lengths = shape_argument(shape, function)
    check_nonnegative(lengths, function)
    return _alloc(value, *lengths)


def zeros(shape: Any, dtype: Any = None) -> Variable:
    """An array of zeros of `shape` (an int, a sequence of ints and integer scalars, or an
    integer vector of static length such as x.shape); dtype defaults to config.floatX."""
    return _filled(shape, constant(np.zeros((), dtype=_dtype_or_floatx(dtype))), "zeros")


def ones(shape: Any, dtype: Any = None) -> Variable:
    """An array of ones of `shape` (as in zeros); dtype defaults to config.floatX."""
    return _filled(shape, constant(np.ones((), dtype=_dtype_or_floatx(dtype))), "ones")


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Variable:
    """An array of `shape` filled with `fill_value` (broadcast to it). dtype defaults to the
    fill value's (as numpy and PyTensor: a Python float gives config.floatX, an int int64)."""
    dtype = None if dtype is None else normalize_dtype(dtype)
    return _filled(shape, _fill_value(fill_value, dtype, "full"), "full")


def _like(x: Any, value: Variable, function: str) -> Variable:
    x = as_tensor_variable(x, op=function, argument="x")
    return _alloc(value, *[axis_length(x, axis) for axis in range(x.type.ndim)])


def _like_dtype(x: Any, dtype: Any, function: str) -> str:
    if dtype is not None:
        return normalize_dtype(dtype)
    return as_tensor_variable(x, op=function, argument="x").type.dtype


def zeros_like(x: Any, dtype: Any = None) -> Variable:
    """An array of zeros of x's shape and (by default) dtype."""
    dtype = _like_dtype(x, dtype, "zeros_like")
    return _like(x, constant(np.zeros((), dtype=dtype)), "zeros_like")


def zero_gradient(x: Variable) -> Variable:
    """The gradient through a piecewise-constant step (Theano's rule for integer inputs and
    results, comparisons, rounding): zeros of x's shape, of x's dtype when it is a float,
    else of config.floatX."""
    return zeros_like(x, dtype=x.type.dtype if x.type.dtype.startswith(("float", "complex"))
                      else config.floatX)


def ones_like(x: Any, dtype: Any = None) -> Variable:
    """An array of ones of x's shape and (by default) dtype."""
    dtype = _like_dtype(x, dtype, "ones_like")
    return _like(x, constant(np.ones((), dtype=dtype)), "ones_like")


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Variable:
    """An array of x's shape filled with `fill_value` converted to `dtype` (default: x's)."""
    dtype = _like_dtype(x, dtype, "full_like")
    return _like(x, _fill_value(fill_value, dtype, "full_like"), "full_like")


def _weak_scalar_constant(value: Any, dtype: str) -> Variable:
    """A Python scalar as a constant of the dtype numpy 2 gives it next to an array of `dtype`
    (NEP 50: int8 array and 1 -> int8), or of its own default dtype if that cannot hold it."""
    weak = np.result_type(dtype, value)
    if weak.kind in "iu":
        info = np.iinfo(weak)
        if not info.min <= value <= info.max:
            return as_tensor_variable(value)
    with np.errstate(all="ignore"):
        return constant(np.asarray(value).astype(weak))


def second(a: Any, b: Any) -> Variable:
    """b broadcast to a's shape (Theano's fill): an array of a's shape holding b, of b's dtype;
    a Python scalar b takes a's dtype when it fits, as in arithmetic (fill(x, 0) has x's
    dtype)."""
    a = as_tensor_variable(a, op="second", argument="a")
    if is_python_scalar(b):
        b = _weak_scalar_constant(b, a.type.dtype)
    else:
        b = as_tensor_variable(b, op="second", argument="b")
    if b.type.ndim > a.type.ndim:
        raise ValueError(f"second: b ({b.type}) has more dimensions than a ({a.type}); it "
                         f"cannot be broadcast to a's shape")
    return _like(a, b, "second")


fill = second


# ---------------------------------------------------------------------------------------------
# Eye

class Eye(NonDifferentiable, Op):
    """eye(n, m, k): the n x m array of `dtype` with ones on diagonal k (0: the main one,
    positive: above, negative: below) and zeros elsewhere (numpy.eye)."""

    __props__ = ("dtype",)
    numpy_function = staticmethod(np.eye)

    def __init__(self, dtype: Any):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, n, m, k):
        lengths = [length_argument(n, self, "n"), length_argument(m, self, "m")]
        check_nonnegative(lengths, self)
        offset = length_argument(k, self, "k")
        inputs = [as_length_variable(v) for v in (*lengths, offset)]
        static = [static_int(length) for length in lengths]
        return Apply(self, inputs, [tensor_type(self.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        n, m, k = (int(value) for value in inputs)
        if n < 0 or m < 0:
            raise ValueError(f"{self}: negative shape ({n}, {m})")
        output_storage[0][0] = self.numpy_function(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        n, m, _ = node.inputs
        return [tuple(length if static is None else static
                      for static, length in zip(node.outputs[0].type.shape, (n, m)))]


class Tri(Eye):
    """tri(N, M, k): the N x M array of `dtype` with ones at and below diagonal k and zeros
    above (numpy.tri; Theano's Tri op)."""

    numpy_function = staticmethod(np.tri)

    def __init__(self, dtype: Any = None):
        super().__init__(_dtype_or_floatx(dtype))


def eye(n: Any, m: Any = None, k: Any = 0, dtype: Any = None) -> Variable:
    """The n x m (m defaults to n) array with ones on diagonal k; n, m and k may be integer
    scalars. dtype defaults to config.floatX."""
    return Eye(_dtype_or_floatx(dtype))(n, n if m is None else m, k)


def identity_like(x: Any, dtype: Any = None) -> Variable:
    """An identity-like matrix of x's shape (ones on the main diagonal) and, by default, its
    dtype. x must be 2-d."""
    x = as_tensor_variable(x, op="identity_like")
    if x.type.ndim != 2:
        raise TypeError(f"identity_like: expected a matrix, got {x} of type {x.type}")
    return eye(axis_length(x, 0), axis_length(x, 1), 0,
               dtype=x.type.dtype if dtype is None else dtype)


# ---------------------------------------------------------------------------------------------
# ARange

def _arange_bound(value: Any, op: Any, name: str) -> Variable:
    variable = as_tensor_variable(value, op=op, argument=name)
    if variable.type.ndim != 0 or variable.type.dtype[0] == "c":
        raise TypeError(f"{op}: {name} must be a real scalar, got {variable} of type "
                        f"{variable.type}")
    return variable


def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """numpy's length of arange(start, stop, step): ceil((stop - start) / step), at least 0;
    exact for integers."""
    if all(isinstance(v, (bool, int)) for v in (start, stop, step)):
        return max(0, -((start - stop) // step))
    return max(0, python_math.ceil((stop - start) / step))


class ARange(Op):
    """arange(start, stop, step): the `dtype` vector start, start + step, ... up to and not
    including stop (numpy.arange); its length is ceil((stop - start) / step), or 0."""

    __props__ = ("dtype",)

    def __init__(self, dtype: Any):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, start, stop, step):
        bounds = [_arange_bound(value, self, name)
                  for value, name in ((start, "start"), (stop, "stop"), (step, "step"))]
        length = None
        if all(isinstance(v, Variable) and _is_constant(v) for v in bounds):
            values = [v.data.item() if v.type.dtype != "bool" else int(v.data) for v in bounds]
            if values[2] == 0:
                raise ValueError(f"{self}: step must not be zero")
            if not all(np.isfinite(values)):
                raise ValueError(f"{self}: the bounds must be finite, got {values}")
            length = _arange_length(*values)
        return Apply(self, bounds, [tensor_type(self.dtype, (length,))()])

    def perform(self, node, inputs, output_storage):
        # Python scalars (booleans as ints): the length is then computed as in infer_shape.
        start, stop, step = (value.item() if value.dtype.kind != "b" else int(value)
                             for value in inputs)
        if step == 0:
            raise ValueError(f"{self}: step must not be zero")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def c_code(self, node, names):
        """numpy.arange's length, first two values and fill (sympile.tensor.basic.arange_c)."""
        return arange_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        static = node.outputs[0].type.shape[0]
        if static is not None:
            return [(static,)]
        start, stop, step = node.inputs
        if all(v.type.dtype[0] in "biu" for v in node.inputs):
            start, stop, step = (math.cast(v, "int64") for v in node.inputs)
            # ceil(a / b) == -((-a) // b) in exact integer arithmetic.
            length = math.neg(math.int_div(math.sub(start, stop), step))
        else:
            start, stop, step = (math.cast(v, "float64") for v in node.inputs)
            span = math.sub(stop, start)
            quotient = math.true_div(span, step)
            # numpy's underflow check: a nonzero span whose quotient rounds to +0 (0 to
            # 5e-324 by 2) holds one element.
            underflow = math.and_(math.and_(math.eq(quotient, 0), math.neq(span, 0)),
                                  math.eq(math.gt(span, 0), math.gt(step, 0)))
            length = math.maximum(math.cast(math.ceil(quotient), "int64"),
                                  math.cast(underflow, "int64"))
        return [(math.maximum(length, 0),)]

    def connection_pattern(self, node):
        # Element i is start + i * step; stop only sets the length. A bool or integer result
        # is piecewise constant in the bounds.
        continuous = not is_discrete(node.outputs[0])
        return [[continuous], [False], [continuous]]

    def R_op(self, inputs, eval_points):
        """The tangent of element i is dstart + i * dstep (stop's tangent changes nothing)."""
        start_tangent, _, step_tangent = eval_points
        if self.dtype in DISCRETE_DTYPES or (start_tangent is None and step_tangent is None):
            return [None]
        length = shape_i(self(*inputs), 0)
        if step_tangent is None:
            tangent = _alloc(start_tangent, length)
        else:
            tangent = math.mul(ARange(self.dtype)(0, length, 1), step_tangent)
            if start_tangent is not None:
                tangent = math.add(tangent, start_tangent)
        return [math.cast(tangent, self.dtype)]


def _is_constant(variable: Variable) -> bool:
    return variable.owner is None and hasattr(variable, "data")


def _arange_dtype(bounds: Sequence[Variable]) -> str:
    """numpy's dtype for arange on these bounds (int64 for integers, float64 for floats),
    except that float bounds none of which is float64 give config.floatX when that is
    narrower (Theano's numpy+floatX rule: arange(0., 1., .1) is float32 under floatX=float32).
    """
    dtypes = [v.type.dtype for v in bounds]
    # numpy cannot subtract booleans (arange(True, True) fails); they count as integers.
    probes = [np.ones((), dtype="int64" if d == "bool" else d)[()] for d in dtypes]
    dtype = np.arange(probes[0] - probes[0], probes[1], probes[2]).dtype.name
    if dtype == "float64" and config.floatX != "float64" and "float64" not in dtypes:
        dtype = upcast(config.floatX, *[d for d in dtypes if d[0] == "f"])
    return dtype


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Variable:
    """numpy.arange with bounds that may be symbolic scalars: arange(stop) or
    arange(start, stop, step). dtype: numpy's by default (see _arange_dtype)."""
    if stop is None:
        start, stop = 0, start
    bounds = [_arange_bound(value, "arange", name)
              for value, name in ((start, "start"), (stop, "stop"), (step, "step"))]
    dtype = _arange_dtype(bounds) if dtype is None else normalize_dtype(dtype)
    return ARange(dtype)(*bounds)


# ---------------------------------------------------------------------------------------------
# Join, concatenate, stack

class Join(Op):
    """`join(axis, *tensors)`: the tensors concatenated along `axis` (numpy.concatenate). axis is
    an integer scalar, constant or computed, negative counting from the end. The tensors have
    the same number of dimensions (at least 1) and equal lengths on the other axes; the dtype
    is numpy's promotion of theirs."""

    def make_node(self, axis, *tensors):
        axis = _axis_input(axis, self)
        if not tensors:
            raise ValueError(f"{self}: need at least one tensor to join")
        variables = [as_tensor_variable(t, op=self, argument=index + 1)
                     for index, t in enumerate(tensors)]
        ndim = variables[0].type.ndim
        for _index, variable in enumerate(variables):
            if variable.type.ndim != ndim or ndim == 0:
                raise ValueError(f"{self}: all tensors must have the same number of dimensions "
                                 f"(at least 1); got {', '.join(str(v.type) for v in variables)}")
        dtype = upcast(*[v.type.dtype for v in variables])
        static_axis = static_int(axis)
        if static_axis is None:
            static = variables[0].type.shape if len(variables) == 1 else (None,) * ndim
        else:
            static_axis = normalize_one_axis(static_axis, ndim, str(self))
            static = _join_static_shape(self, [v.type.shape for v in variables], static_axis)
        return Apply(self, [axis, *variables], [tensor_type(dtype, static)()])

    def perform(self, node, inputs, output_storage):
        axis, *arrays = inputs
        axis = runtime_axis(axis, arrays[0].ndim, self)
        try:
            result = np.concatenate(arrays, axis=axis)
        except ValueError:
            shapes = ", ".join(str(a.shape) for a in arrays)
            raise ValueError(f"{self}: cannot join arrays of shapes {shapes} along axis {axis}: "
                             f"their other lengths differ") from None
        output_storage[0][0] = result.astype(node.outputs[0].type.dtype, copy=False)

    def c_code(self, node, names):
        """perform's checks, then each tensor copied into its slab of the output
        (sympile.tensor.basic.join_c)."""
        return join_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        axis = node.inputs[0]
        shapes = input_shapes[1:]
        static = node.outputs[0].type.shape
        ndim = len(static)
        static_axis = static_int(axis)
        if static_axis is not None:
            static_axis %= ndim
        result: list[Length] = []
        for dimension in range(ndim):
            if static[dimension] is not None:
                result.append(static[dimension])
                continue
            total = sum_of_lengths([s[dimension] for s in shapes])
            known = [s[dimension] for s in shapes if static_int(s[dimension]) is not None]
            other = known[0] if known else shapes[0][dimension]
            if static_axis is not None:
                result.append(total if dimension == static_axis else other)
            else:
                result.append(_axis_dependent(axis, ndim, dimension, total, other))
        return [tuple(result)]

    def connection_pattern(self, node):
        # The axis only says where the tensors go.
        return [[False]] + [[True]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        """Each tensor's gradient is its piece of the output gradient: the output gradient
        split along the axis by the tensors' lengths on it. The axis is disconnected."""
        axis, *tensors = inputs
        (output_grad,) = output_grads
        if is_disconnected(output_grad) or is_discrete(outputs[0]):
            return [disconnected_type() for _ in inputs]
        static_axis = static_int(axis)
        if static_axis is None:
            sizes = [shape(tensor)[axis] for tensor in tensors]
        else:
            static_axis %= tensors[0].type.ndim
            sizes = [axis_length(tensor, static_axis) for tensor in tensors]
        pieces = Split(len(tensors)).make_node(output_grad, axis, length_vector(sizes)).outputs
        return [disconnected_type()] + [
            disconnected_type() if is_discrete(tensor) else
            declared_like(math.cast(piece, tensor.type.dtype), tensor)
            for tensor, piece in zip(tensors, pieces)]

    def R_op(self, inputs, eval_points):
        """The tensors' tangents joined the same way (zeros for a tensor without one)."""
        axis, *tensors = inputs
        dtype = upcast(*[tensor.type.dtype for tensor in tensors])
        points = eval_points[1:]
        if dtype in DISCRETE_DTYPES or all(point is None for point in points):
            return [None]
        return [self(axis, *[zeros_like(tensor, dtype=dtype) if point is None
                             else math.cast(point, dtype)
                             for tensor, point in zip(tensors, points)])]


def _join_static_shape(op: Op, shapes: Sequence[tuple], axis: int) -> tuple:
    result = []
    for dimension in range(len(shapes[0])):
        lengths = [s[dimension] for s in shapes]
        if dimension == axis:
            result.append(sum(lengths) if None not in lengths else None)
            continue
        known = {length for length in lengths if length is not None}
        if len(known) > 1:
            raise ValueError(f"{op}: cannot join tensors of shapes "
                             f"{', '.join(map(str, shapes))} along axis {axis}: axis "
                             f"{dimension} has lengths {sorted(known)}")
        result.append(known.pop() if known else None)
    return tuple(result)


_join = Join()


def join(axis: Any, *tensors: Any) -> Variable:
    """The tensors concatenated along `axis` (an int or an integer scalar variable)."""
    return _join(axis, *tensors)


def concatenate(tensors: Sequence[Any], axis: int | None = 0) -> Variable:
    """numpy.concatenate: the tensors joined along `axis`; axis=None flattens them first."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"concatenate: expected a list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    if axis is None:
        return join(0, *[flatten(as_tensor_variable(t, op="concatenate")) for t in tensors])
    return join(axis, *tensors)


def stack(tensors: Any, *more: Any, axis: int = 0) -> Variable:
    """numpy.stack: the tensors (of one shape; Python scalars and arrays allowed) joined along
    a new axis `axis` of the result. Scalars are stacked with MakeVector. Theano's varargs
    form stack(a, b, c) is accepted too."""
    if more or isinstance(tensors, Variable):
        tensors = [tensors, *more]
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"stack: expected a list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise ValueError("stack: need at least one tensor to stack")
    variables = [as_tensor_variable(t, op="stack", argument=index)
                 for index, t in enumerate(tensors)]
    ndim = variables[0].type.ndim
    if any(v.type.ndim != ndim for v in variables):
        raise ValueError(f"stack: all tensors must have the same shape; got "
                         f"{', '.join(str(v.type) for v in variables)}")
    axis = normalize_one_axis(axis, ndim + 1, "stack")
    if ndim == 0:
        return MakeVector(upcast(*[v.type.dtype for v in variables]))(*variables)
    return join(axis, *[expand_dims(v, axis) for v in variables])


# ---------------------------------------------------------------------------------------------
# Split

class Split(Op):
    """split(x, axis, splits): x cut along `axis` into n_splits consecutive pieces whose
    lengths are the entries of the integer vector `splits` (they add up to x's length on that
    axis). Each piece is a view of x."""

    __props__ = ("n_splits",)

    def __init__(self, n_splits: int):
        if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) \
                or n_splits < 1:
            raise ValueError(f"Split: n_splits must be an int >= 1, got {n_splits!r}")
        self.n_splits = int(n_splits)
        self.view_map = {index: [0] for index in range(self.n_splits)}

    def make_node(self, x, axis, splits):
        x = as_tensor_variable(x, op=self, argument="x")
        if x.type.ndim == 0:
            raise TypeError(f"{self}: cannot split a 0-d tensor ({x})")
        axis = _axis_input(axis, self)
        splits = as_tensor_variable(splits, op=self, argument="splits")
        if not is_integer_type(splits, 1):
            raise TypeError(f"{self}: splits must be an integer vector, got {splits} of type "
                            f"{splits.type}")
        if splits.type.shape[0] not in (None, self.n_splits):
            raise ValueError(f"{self}: splits has {splits.type.shape[0]} entries, expected "
                             f"{self.n_splits}")
        sizes = vector_static_entries(splits) or [None] * self.n_splits
        if any(size is not None and size < 0 for size in sizes):
            raise ValueError(f"{self}: split sizes must be >= 0, got {sizes}")
        static_axis = static_int(axis)
        outputs = []
        if static_axis is None:
            outputs = [tensor_type(x.type.dtype, (None,) * x.type.ndim)()
                       for _ in range(self.n_splits)]
        else:
            static_axis = normalize_one_axis(static_axis, x.type.ndim, str(self))
            length = x.type.shape[static_axis]
            if length is not None and None not in sizes and sum(sizes) != length:
                raise ValueError(f"{self}: split sizes {sizes} add up to {sum(sizes)}, but axis "
                                 f"{static_axis} of {x} has length {length}")
            for size in sizes:
                shape = list(x.type.shape)
                shape[static_axis] = size
                outputs.append(tensor_type(x.type.dtype, shape)())
        return Apply(self, [x, axis, splits], outputs)

    def perform(self, node, inputs, output_storage):
        x, axis, splits = inputs
        axis = runtime_axis(axis, x.ndim, self)
        if splits.shape != (self.n_splits,):
            raise ValueError(f"{self}: splits has {splits.size} entries, expected "
                             f"{self.n_splits}")
        sizes = [int(size) for size in splits]
        if any(size < 0 for size in sizes):
            raise ValueError(f"{self}: split sizes must be >= 0, got {sizes}")
        if sum(sizes) != x.shape[axis]:
            raise ValueError(f"{self}: split sizes {sizes} add up to {sum(sizes)}, but axis "
                             f"{axis} of the input (shape {x.shape}) has length "
                             f"{x.shape[axis]}")
        # Slicing rather than np.split: device arrays (sympile.gpu) take the same perform.
        start = 0
        for storage, size in zip(output_storage, sizes):
            storage[0] = x[(slice(None),) * axis + (slice(start, start + size),)]
            start += size

    def c_code(self, node, names):
        """perform's checks, then one view of x per piece (sympile.tensor.basic.split_c)."""
        return split_c_code(self, node, names)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        axis = node.inputs[1]
        static_axis = static_int(axis)
        if static_axis is not None:
            static_axis %= len(x_shape)
        sizes = vector_entries(node.inputs[2], self.n_splits)
        shapes = []
        for output, size in zip(node.outputs, sizes):
            shape: list[Length] = []
            for dimension, static in enumerate(output.type.shape):
                if static is not None:
                    shape.append(static)
                elif static_axis is not None:
                    shape.append(size if dimension == static_axis else x_shape[dimension])
                else:
                    shape.append(_axis_dependent(axis, len(x_shape), dimension, size,
                                                 x_shape[dimension]))
            shapes.append(tuple(shape))
        return shapes

    def connection_pattern(self, node):
        # The axis and the sizes only say where x is cut.
        outputs = len(node.outputs)
        return [[True] * outputs, [False] * outputs, [False] * outputs]

    def L_op(self, inputs, outputs, output_grads):
        """x's gradient is the pieces' gradients joined back along the axis, a piece that
        does not lead to the cost counting as zeros. The axis and sizes are disconnected."""
        x, axis, _ = inputs
        if is_discrete(x) or all(is_disconnected(g) for g in output_grads):
            return [disconnected_type() for _ in inputs]
        pieces = [zeros_like(output, dtype=x.type.dtype) if is_disconnected(g)
                  else math.cast(g, x.type.dtype) for output, g in zip(outputs, output_grads)]
        gradient = join(axis, *pieces)
        return [declared_like(gradient, x), disconnected_type(), disconnected_type()]

    def R_op(self, inputs, eval_points):
        """x's tangent split the same way."""
        x, axis, splits = inputs
        tangent = eval_points[0]
        if tangent is None or is_discrete(x):
            return [None] * self.n_splits
        return self.make_node(tangent, axis, splits).outputs


def split(x: Any, splits_size: Any, n_splits: int, axis: Any = 0) -> list[Variable]:
    """x cut along `axis` into `n_splits` pieces of lengths `splits_size` (a sequence of ints
    and integer scalars, or an integer vector), as Theano's split. Returns the list of pieces
    (views of x), also when n_splits is 1."""
    if isinstance(splits_size, Variable):
        splits = splits_size
    else:
        splits = length_vector(shape_argument(splits_size, "split"))
    return Split(n_splits).make_node(x, axis, splits).outputs


# ---------------------------------------------------------------------------------------------
# tile

def tile(x: Any, reps: Any, ndim: int | None = None) -> Variable:
    """numpy.tile: x repeated reps[i] times along axis i. reps is an int, a sequence of ints
    and integer scalars, or an integer vector of static length, or of any length up to
    `ndim` (Theano's argument: the output's rank, at least x's); when reps is longer than
    x.ndim, x gets new leading axes, when shorter (than x.ndim or ndim) it is padded with
    leading 1s."""
    x = as_tensor_variable(x, op="tile")
    if ndim is not None:
        if ndim < x.type.ndim:
            raise ValueError(f"tile: ndim={ndim} is less than x's {x.type.ndim} dimensions")
        if isinstance(reps, Variable) and reps.type.ndim == 1:
            if reps.type.shape[0] is not None and reps.type.shape[0] > ndim:
                raise ValueError(f"tile: reps has {reps.type.shape[0]} entries, more than "
                                 f"ndim={ndim}")
            if reps.type.shape[0] != ndim:
                # Padded with leading 1s when the function runs.
                padding = Assert(f"tile: reps has more than ndim={ndim} entries")(
                    ndim - reps.shape[0], math.ge(ndim - reps.shape[0], 0))
                reps = concatenate([ones([padding], dtype=reps.type.dtype), reps])
                reps = specify_shape(reps, (ndim,))
        else:
            entries = list(reps) if isinstance(reps, (list, tuple)) else [reps]
            if len(entries) > ndim:
                raise ValueError(f"tile: reps {reps!r} has more than ndim={ndim} entries")
            reps = [1] * (ndim - len(entries)) + entries
    repeats = shape_argument(reps, "tile")
    check_nonnegative(repeats, "tile")
    ndim = max(x.type.ndim, len(repeats))
    repeats = [1] * (ndim - len(repeats)) + repeats
    if x.type.ndim < ndim:
        x = DimShuffle(x.type.ndim, ("x",) * (ndim - x.type.ndim) + tuple(range(x.type.ndim)))(x)
    lengths = [axis_length(x, axis) for axis in range(ndim)]
    # Broadcast x of shape (s0, s1, ...) to (r0, s0, r1, s1, ...), then merge each pair.
    spread = DimShuffle(ndim, [entry for axis in range(ndim) for entry in ("x", axis)])(x)
    tiled = _alloc(spread, *[entry for pair in zip(repeats, lengths) for entry in pair])
    return reshape(tiled, [product_of_lengths([r, n]) for r, n in zip(repeats, lengths)])


class Tile(Op):
    """Theano's deprecated Tile(ndim)(x, reps): numpy.tile with `reps` an integer vector of
    `ndim` entries (x.ndim <= ndim). tile() builds the same result from alloc and reshape,
    which the C backend compiles; this op runs numpy's."""

    __props__ = ("ndim",)

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def make_node(self, x, reps):
        x = as_tensor_variable(x, op=self, argument="x")
        reps = as_tensor_variable(reps, op=self, argument="reps")
        if x.type.ndim > self.ndim:
            raise ValueError(f"{self}: x has {x.type.ndim} dimensions, more than ndim="
                             f"{self.ndim}")
        if not is_integer_type(reps, 1) or reps.type.shape[0] not in (None, self.ndim):
            raise TypeError(f"{self}: reps must be an integer vector of {self.ndim} entries, "
                            f"got {reps} of type {reps.type}")
        return Apply(self, [x, reps], [tensor_type(x.type.dtype, (None,) * self.ndim)()])

    def perform(self, node, inputs, output_storage):
        x, reps = inputs
        if len(reps) != self.ndim or np.any(reps < 0):
            raise ValueError(f"{self}: reps must hold {self.ndim} lengths >= 0, got "
                             f"{reps.tolist()}")
        output_storage[0][0] = np.tile(x, reps)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, _ = input_shapes
        reps = node.inputs[1]
        padded = [1] * (self.ndim - len(x_shape)) + list(x_shape)
        return [tuple(product_of_lengths([reps[axis], padded[axis]])
                      for axis in range(self.ndim))]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        """Each element of x appears once per tile: its gradient sums gz over the tiles
        (gz reshaped to (r0, s0, r1, s1, ...), summed over the r axes)."""
        x, reps = inputs
        lengths = [1] * (self.ndim - x.type.ndim) + [axis_length(x, axis)
                                                     for axis in range(x.type.ndim)]
        pairs = [entry for axis in range(self.ndim) for entry in (reps[axis], lengths[axis])]
        summed = reshape(output_grads[0], pairs).sum(axis=tuple(range(0, 2 * self.ndim, 2)))
        return [reshape(summed, shape(x)) if x.type.ndim < self.ndim else summed,
                disconnected_type()]


# ---------------------------------------------------------------------------------------------
# Theano's shape padding

def shape_padleft(t: Any, n_ones: int = 1) -> Variable:
    """t with n_ones new broadcastable axes in front (Theano's shape_padleft)."""
    t = as_tensor_variable(t, op="shape_padleft")
    return t.dimshuffle(*(["x"] * n_ones), *range(t.type.ndim))


def shape_padright(t: Any, n_ones: int = 1) -> Variable:
    """t with n_ones new broadcastable axes at the end (Theano's shape_padright)."""
    t = as_tensor_variable(t, op="shape_padright")
    return t.dimshuffle(*range(t.type.ndim), *(["x"] * n_ones))


def shape_padaxis(t: Any, axis: int) -> Variable:
    """t with a new broadcastable axis at position `axis` (negative counts from the end of
    the result), Theano's shape_padaxis."""
    t = as_tensor_variable(t, op="shape_padaxis")
    return expand_dims(t, normalize_one_axis(axis, t.type.ndim + 1, "shape_padaxis"))




class TensorFromScalar(Op):
    """A 0-d tensor of the value of a scalar-typed variable (sympile.scalar; Theano's
    tensor_from_scalar)."""

    __props__ = ()

    def make_node(self, s):
        if not isinstance(getattr(s, "type", None), ScalarType):
            raise TypeError(f"tensor_from_scalar: expected a scalar-typed variable "
                            f"(sympile.scalar), got {s!r}")
        return Apply(self, [s], [tensor_type(s.type.dtype, ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        (gradient,) = output_grads
        if is_disconnected(gradient):
            return [disconnected_type()]
        return [ScalarFromTensor()(gradient)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


class ScalarFromTensor(Op):
    """The scalar-typed value (sympile.scalar) of a 0-d tensor (Theano's
    scalar_from_tensor)."""

    __props__ = ()

    def make_node(self, t):
        t = as_tensor_variable(t, op="scalar_from_tensor", argument="t")
        if t.type.ndim != 0:
            raise TypeError(f"scalar_from_tensor: expected a 0-d tensor, got {t.type}")
        return Apply(self, [t], [get_scalar_type(t.type.dtype)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0])[()]

    def L_op(self, inputs, outputs, output_grads):
        (gradient,) = output_grads
        if is_disconnected(gradient):
            return [disconnected_type()]
        return [TensorFromScalar()(gradient)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def tensor_from_scalar(s: Any) -> Variable:
    """A 0-d tensor of the scalar-typed variable s (Theano's tensor_from_scalar)."""
    return TensorFromScalar()(s)


def scalar_from_tensor(t: Any) -> Variable:
    """The scalar-typed variable (sympile.scalar) of the 0-d tensor t (Theano's
    scalar_from_tensor)."""
    return ScalarFromTensor()(t)


bind_builders(stack, tensor_from_scalar)
