"""TensorVariable, TensorConstant and as_tensor_variable.

The op modules build on this one, so the operators and methods that call them (x + y, x[i],
x.sum(), ...) live above them, in sympile/tensor/methods.py, which binds them onto
TensorMethods; compile binds eval().
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Apply, Constant, Variable
from sympile.scalar.basic import ScalarType
from sympile.tensor.type import TensorType, tensor_type


def is_python_scalar(value: Any) -> bool:
    """A Python bool/int/float/complex (not a numpy scalar): numpy 2 treats these as 'weak'."""
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


class TensorMethods:
    """Operators and methods shared by TensorVariable, TensorConstant and
    TensorSharedVariable: the type's attributes here, the rest bound by tensor/methods.py."""

    type: Any

    # numpy defers to our reflected operators (np.float64(1) + x calls x.__radd__) instead of
    # looping over the variable as if it were a sequence.
    __array_ufunc__ = None
    # Theano's value, which code written for it reads.
    __array_priority__ = 1000

    # -- attributes -------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable


class TensorVariable(TensorMethods, Variable):
    """A symbolic tensor."""


class TensorConstant(TensorMethods, Constant):
    """A tensor with a fixed value (its static shape is the value's shape). It holds a
    read-only copy of the value, so changing the array it was made from changes nothing."""

    def __init__(self, type, data, name=None):
        super().__init__(type, data, name)
        if isinstance(data, np.ndarray) and np.may_share_memory(self.data, data):
            self.data = self.data.copy()
        # Constants are shared by every function compiled from the graph: never written.
        self.data.setflags(write=False)

    def clone(self, name=None):
        # The read-only data is shared, not copied again.
        copy = Constant.__new__(type(self))
        Variable.__init__(copy, self.type, None, None, name if name is not None else self.name)
        copy.data = self.data
        copy.tag.__dict__.update(self.tag.__dict__)
        return copy

    def __str__(self):
        if self.name is not None:
            return self.name
        return np.array2string(self.data, threshold=6, edgeitems=2, separator=", ") \
            .replace("\n", "")


TensorType.variable_type = TensorVariable
TensorType.constant_type = TensorConstant


# A list holding variables becomes stack(list), a scalar-typed variable (sympile.scalar)
# tensor_from_scalar(it): tensor/basic/ops.py, built on this module, binds both here when it
# is imported (importing any sympile module imports it).
_stack = None
_from_scalar = None


def bind_builders(stack, from_scalar) -> None:
    """Make as_tensor_variable stack a list that holds variables with `stack` and make a
    0-d tensor of a scalar-typed variable with `from_scalar`."""
    global _stack, _from_scalar
    _stack, _from_scalar = stack, from_scalar


def _default_dtype(value: Any) -> str:
    """The dtype Python data becomes: floats take config.floatX, everything else numpy's."""
    dtype = np.asarray(value).dtype
    if dtype.kind == "f" and not isinstance(value, (np.ndarray, np.generic)):
        return config.floatX
    return dtype.name


def constant(value: Any, name: str | None = None, dtype: Any = None, ndim: int | None = None):
    """A TensorConstant holding `value` (a copy), of `dtype` if given."""
    if isinstance(value, Variable):
        raise TypeError(f"constant: {value} is already symbolic")
    if dtype is None:
        dtype = _default_dtype(value)
    try:
        data = np.array(value, dtype=dtype)
    except OverflowError as error:
        raise ValueError(f"constant: {value!r} does not fit in dtype {np.dtype(dtype).name} "
                         f"({error})") from None
    if ndim is not None and data.ndim != ndim:
        if data.ndim > ndim or data.size != 1:
            raise ValueError(f"constant: value of shape {data.shape} cannot have ndim {ndim}")
        data = data.reshape((1,) * ndim)
    if data.dtype.kind == "O":
        raise TypeError(f"constant: cannot make a tensor constant of {value!r}")
    return tensor_type(data.dtype, data.shape).make_constant(data, name=name)


def as_tensor_variable(value: Any, name: str | None = None, ndim: int | None = None,
                       dtype: Any = None, op: Any = None, argument: Any = None) -> Variable:
    """`value` as a tensor Variable: variables pass through, data becomes a constant, a list
    containing variables is stacked, a scalar-typed variable becomes a 0-d tensor, an Apply
    node gives its output (the op's default_output where it has several). `op`/`argument`
    name the caller in error messages."""
    if isinstance(value, Variable) and not isinstance(value.type, TensorType) \
            and hasattr(value, "_as_TensorVariable"):
        # Theano's hook: a device array becomes its copy on the host (sympile.gpu).
        value = value._as_TensorVariable()
    if isinstance(value, Variable) and isinstance(value.type, ScalarType):
        value = _from_scalar(value)  # Theano's: a scalar becomes a 0-d tensor
    if isinstance(value, Variable):
        if not isinstance(value.type, TensorType):
            raise TypeError(f"{_caller(op, argument)}expected a tensor, got {value} of type "
                            f"{value.type}")
        if ndim is not None and value.type.ndim != ndim:
            raise TypeError(f"{_caller(op, argument)}expected a {ndim}-d tensor, got {value} of "
                            f"type {value.type}")
        return value
    if isinstance(value, (list, tuple)) and _contains_variable(value):
        return _stack([as_tensor_variable(v, op=op, argument=argument) for v in value])
    if isinstance(value, numbers.Number) or isinstance(value, (np.ndarray, np.generic, list,
                                                               tuple, bool)):
        try:
            return constant(value, name=name, dtype=dtype, ndim=ndim)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{_caller(op, argument)}cannot convert {value!r} to a tensor: "
                            f"{error}") from None
    if isinstance(value, Apply):
        # Theano's: a node stands for its one output (or its op's default_output).
        try:
            output = value.out
        except AttributeError as error:
            raise TypeError(f"{_caller(op, argument)}cannot convert {value}: {error}") from None
        return as_tensor_variable(output, name, ndim, dtype, op, argument)
    raise TypeError(f"{_caller(op, argument)}cannot convert {type(value).__name__} {value!r} to "
                    f"a tensor variable")


def _contains_variable(values: Any) -> bool:
    return any(isinstance(v, Variable) or (isinstance(v, (list, tuple)) and _contains_variable(v))
               for v in values)


def _caller(op: Any, argument: Any) -> str:
    if op is None:
        return ""
    if argument is None:
        return f"{op}: "
    return f"{op}, input {argument}: "
