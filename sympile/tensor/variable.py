"""TensorVariable (operators, indexing, methods), TensorConstant and as_tensor_variable.

The methods delegate to the functions of the op modules. Those modules import this one, so
the methods import them when called.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Constant, Variable


def is_python_scalar(value: Any) -> bool:
    """A Python bool/int/float/complex (not a numpy scalar): numpy 2 treats these as 'weak'."""
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def _comparison(variable):
    """`variable`, marked as the result of a comparison operator (see __bool__)."""
    variable._is_comparison = True
    return variable


class TensorMethods:
    """Operators and methods shared by TensorVariable and TensorConstant."""

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

    @property
    def shape(self):
        from sympile.tensor.shape import shape
        return shape(self)

    @property
    def size(self):
        from sympile.tensor.shape import size
        return size(self)

    @property
    def T(self):
        from sympile.tensor.basic import transpose
        return transpose(self)

    # -- arithmetic -------------------------------------------------------------------------
    def __add__(self, other):
        from sympile.tensor import math
        return math.add(self, other)

    def __radd__(self, other):
        from sympile.tensor import math
        return math.add(other, self)

    def __sub__(self, other):
        from sympile.tensor import math
        return math.sub(self, other)

    def __rsub__(self, other):
        from sympile.tensor import math
        return math.sub(other, self)

    def __mul__(self, other):
        from sympile.tensor import math
        return math.mul(self, other)

    def __rmul__(self, other):
        from sympile.tensor import math
        return math.mul(other, self)

    def __truediv__(self, other):
        from sympile.tensor import math
        return math.true_div(self, other)

    def __rtruediv__(self, other):
        from sympile.tensor import math
        return math.true_div(other, self)

    def __floordiv__(self, other):
        from sympile.tensor import math
        return math.int_div(self, other)

    def __rfloordiv__(self, other):
        from sympile.tensor import math
        return math.int_div(other, self)

    def __mod__(self, other):
        from sympile.tensor import math
        return math.mod(self, other)

    def __rmod__(self, other):
        from sympile.tensor import math
        return math.mod(other, self)

    def __pow__(self, other):
        from sympile.tensor import math
        return math.pow(self, other)

    def __rpow__(self, other):
        from sympile.tensor import math
        return math.pow(other, self)

    def __neg__(self):
        from sympile.tensor import math
        return math.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        from sympile.tensor import math
        return math.abs(self)

    def __invert__(self):
        from sympile.tensor import math
        return math.invert(self)

    def __and__(self, other):
        from sympile.tensor import math
        return math.and_(self, other)

    def __rand__(self, other):
        from sympile.tensor import math
        return math.and_(other, self)

    def __or__(self, other):
        from sympile.tensor import math
        return math.or_(self, other)

    def __ror__(self, other):
        from sympile.tensor import math
        return math.or_(other, self)

    def __xor__(self, other):
        from sympile.tensor import math
        return math.xor(self, other)

    def __rxor__(self, other):
        from sympile.tensor import math
        return math.xor(other, self)

    def __lshift__(self, other):
        from sympile.tensor import math
        return math.left_shift(self, other)

    def __rlshift__(self, other):
        from sympile.tensor import math
        return math.left_shift(other, self)

    def __rshift__(self, other):
        from sympile.tensor import math
        return math.right_shift(self, other)

    def __rrshift__(self, other):
        from sympile.tensor import math
        return math.right_shift(other, self)

    def __divmod__(self, other):
        from sympile.tensor import math
        return math.int_div(self, other), math.mod(self, other)

    def __rdivmod__(self, other):
        from sympile.tensor import math
        return math.int_div(other, self), math.mod(other, self)

    def __round__(self, ndigits=None):
        if ndigits is not None:
            raise TypeError("round(): only ndigits=None is supported for symbolic tensors")
        from sympile.tensor import math
        return math.round(self)

    def __matmul__(self, other):
        from sympile.tensor import blas
        return blas.matmul(self, other)

    def __rmatmul__(self, other):
        from sympile.tensor import blas
        return blas.matmul(other, self)

    # Comparisons build graphs; == and != stay identity tests (as in Theano) because
    # variables are dictionary keys everywhere. Use eq()/neq() for elementwise equality.
    def __lt__(self, other):
        from sympile.tensor import math
        return _comparison(math.lt(self, other))

    def __le__(self, other):
        from sympile.tensor import math
        return _comparison(math.le(self, other))

    def __gt__(self, other):
        from sympile.tensor import math
        return _comparison(math.gt(self, other))

    def __ge__(self, other):
        from sympile.tensor import math
        return _comparison(math.ge(self, other))

    def __bool__(self):
        """True, as in Theano (`if not W:` tests a constructor argument for None), except
        for the result of <, <=, > or >=: `if x > 0:` and `a < b < c` would silently test
        the variable, not its value."""
        if getattr(self, "_is_comparison", False):
            raise TypeError(
                f"the truth value of symbolic comparison {self} is unknown until the function "
                f"runs; use sympile.tensor.switch/where or ifelse for conditions")
        return True

    def __iter__(self):
        length = self.type.shape[0] if self.type.ndim else None
        if length is None:
            raise TypeError(f"cannot iterate over {self} ({self.type}): its length is not known "
                            f"statically; index it or use scan")
        return (self[index] for index in range(length))

    def __len__(self):
        length = self.type.shape[0] if self.type.ndim else None
        if length is None:
            raise TypeError(f"len() of {self} ({self.type}) is not known statically; "
                            f"use .shape[0]")
        return length

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, index):
        from sympile.tensor.subtensor import getitem
        return getitem(self, index)

    def __setitem__(self, index, value):
        raise TypeError("symbolic variables are immutable: use "
                        "sympile.tensor.set_subtensor(x[index], value) or inc_subtensor")

    # -- methods ----------------------------------------------------------------------------
    def eq(self, other):
        from sympile.tensor import math
        return math.eq(self, other)

    def neq(self, other):
        from sympile.tensor import math
        return math.neq(self, other)

    def astype(self, dtype):
        from sympile.tensor.math import cast
        return cast(self, dtype)

    def reshape(self, *shape, ndim=None):
        from sympile.tensor.shape import reshape
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return reshape(self, shape, ndim=ndim)

    def dimshuffle(self, *pattern):
        from sympile.tensor.elemwise import DimShuffle
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return DimShuffle(self.type.ndim, pattern)(self)

    def flatten(self, ndim=1):
        from sympile.tensor.shape import flatten
        return flatten(self, ndim)

    def ravel(self):
        return self.flatten()

    def transpose(self, *axes):
        from sympile.tensor.basic import transpose
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return transpose(self, axes or None)

    def squeeze(self, axis=None):
        from sympile.tensor.shape import squeeze
        return squeeze(self, axis)

    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        from sympile.tensor.reduction import sum
        return sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        from sympile.tensor.reduction import prod
        return prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        from sympile.tensor.reduction import mean
        return mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(self, axis=None, ddof=0, keepdims=False):
        from sympile.tensor.reduction import var
        return var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        from sympile.tensor.reduction import std
        return std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import max
        return max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import min
        return min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import argmax
        return argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import argmin
        return argmin(self, axis=axis, keepdims=keepdims)

    def ptp(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import ptp
        return ptp(self, axis=axis, keepdims=keepdims)

    def norm(self, L, axis=None, keepdims=False):
        """The L-norm of the elements over `axis` (all of them if None), Theano's
        x.norm(L): numpy's vector norms (sympile.tensor.linalg's norm), also L = 0 and
        +-inf."""
        from sympile.tensor.linalg.summaries import norm
        if isinstance(L, (bool, np.bool_)) or not isinstance(L, (int, float, np.integer,
                                                                 np.floating)):
            raise TypeError(f"norm: L must be a number, got {L!r}")
        if axis is not None:
            return norm(self, L, axis=axis, keepdims=keepdims)
        result = norm(self.flatten(), L)
        return result.reshape((1,) * self.type.ndim) if keepdims else result

    def all(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import all
        return all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        from sympile.tensor.reduction import any
        return any(self, axis=axis, keepdims=keepdims)

    def dot(self, other):
        from sympile.tensor.blas.basic import dot
        return dot(self, other)

    __dot__ = dot

    def __rdot__(self, other):
        from sympile.tensor.blas.basic import dot
        return dot(other, self)

    def cumsum(self, axis=None):
        from sympile.tensor.extra_ops import cumsum
        return cumsum(self, axis=axis)

    def cumprod(self, axis=None):
        from sympile.tensor.extra_ops import cumprod
        return cumprod(self, axis=axis)

    def repeat(self, repeats, axis=None):
        from sympile.tensor.extra_ops import repeat
        return repeat(self, repeats, axis=axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        from sympile.tensor.extra_ops import diagonal
        return diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def trace(self, offset=0, axis1=0, axis2=1):
        from sympile.tensor.extra_ops import trace
        return trace(self, offset=offset, axis1=axis1, axis2=axis2)

    def sort(self, axis=-1, kind="quicksort", order=None):
        from sympile.tensor.sort import sort
        _no_order(order, "sort")
        return sort(self, axis=axis, kind=kind)

    def argsort(self, axis=-1, kind="stable", order=None):
        from sympile.tensor.sort import argsort
        _no_order(order, "argsort")
        return argsort(self, axis=axis, kind=kind)

    def take(self, indices, axis=None):
        from sympile.tensor.subtensor import take
        return take(self, indices, axis=axis)

    def clip(self, a_min, a_max):
        from sympile.tensor import math
        return math.clip(self, a_min, a_max)

    def round(self, mode="half_to_even"):
        from sympile.tensor import math
        return math.round(self, mode=mode)

    def conj(self):
        from sympile.tensor import math
        return math.conj(self)

    conjugate = conj

    def nonzero(self, return_matrix=False):
        from sympile.tensor.extra_ops import nonzero
        return nonzero(self, return_matrix=return_matrix)

    def nonzero_values(self):
        from sympile.tensor.extra_ops import nonzero_values
        return nonzero_values(self)

    def choose(self, choices, mode="raise"):
        """numpy's ndarray.choose: self holds the indices into `choices`."""
        from sympile.tensor.extra_ops import choose
        return choose(self, choices, mode=mode)

    def compress(self, condition, axis=None):
        """numpy's ndarray.compress: the slices of self where `condition` is true."""
        from sympile.tensor.extra_ops import compress
        return compress(condition, self, axis=axis)

    def swapaxes(self, axis1, axis2):
        from sympile.tensor.basic import swapaxes
        return swapaxes(self, axis1, axis2)

    def fill(self, value):
        """value broadcast to self's shape (Theano's x.fill(value))."""
        from sympile.tensor.basic import fill
        return fill(self, value)

    def zeros_like(self, dtype=None):
        from sympile.tensor.basic import zeros_like
        return zeros_like(self, dtype=dtype)

    def transfer(self, target):
        from sympile.tensor.basic import transfer
        return transfer(self, target)

    def get_scalar_constant_value(self):
        from sympile.tensor.constant_value import get_scalar_constant_value
        return get_scalar_constant_value(self)

    @property
    def real(self):
        from sympile.tensor import math
        return math.real(self)

    @property
    def imag(self):
        from sympile.tensor import math
        return math.imag(self)

    def copy(self, name=None):
        from sympile.tensor import math
        return math.identity(self, name=name)

    def eval(self, inputs_to_values: dict | None = None):
        """Compile and run this variable on the given {input variable: value} (a test aid;
        compiled functions are cached per set of inputs)."""
        from sympile.compile.function import function
        inputs_to_values = dict(inputs_to_values or {})
        inputs = list(inputs_to_values)
        cache = self.__dict__.setdefault("_eval_cache", {})
        key = tuple(id(v) for v in inputs)
        if key not in cache:
            cache[key] = function(inputs, self, on_unused_input="ignore")
        return cache[key](*[inputs_to_values[v] for v in inputs])


def _no_order(order, method: str) -> None:
    if order is not None:
        raise ValueError(f"{method}: order applies to numpy's structured arrays; a tensor has "
                         f"no fields, so order must be None")


def _elementwise_method(name: str):
    def method(self):
        from sympile.tensor import math
        return getattr(math, name)(self)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"sympile.tensor.{name}(self), elementwise."
    return method


# Theano's elementwise methods (x.exp(), x.tanh(), ...).
for _name in ("arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "cos",
              "cosh", "deg2rad", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p",
              "log2", "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"):
    setattr(TensorMethods, _name, _elementwise_method(_name))
del _name


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


def _default_dtype(value: Any) -> str:
    """The dtype Python data becomes: floats take config.floatX, everything else numpy's."""
    dtype = np.asarray(value).dtype
    if dtype.kind == "f" and not isinstance(value, (np.ndarray, np.generic)):
        return config.floatX
    return dtype.name


def constant(value: Any, name: str | None = None, dtype: Any = None, ndim: int | None = None):
    """A TensorConstant holding `value` (a copy), of `dtype` if given."""
    from sympile.tensor.type import tensor_type
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
    containing variables is stacked. `op`/`argument` name the caller in error messages."""
    from sympile.tensor.type import TensorType
    if isinstance(value, Variable):
        if not isinstance(value.type, TensorType):
            raise TypeError(f"{_caller(op, argument)}expected a tensor, got {value} of type "
                            f"{value.type}")
        if ndim is not None and value.type.ndim != ndim:
            raise TypeError(f"{_caller(op, argument)}expected a {ndim}-d tensor, got {value} of "
                            f"type {value.type}")
        return value
    if isinstance(value, (list, tuple)) and _contains_variable(value):
        from sympile.tensor.basic import stack
        return stack([as_tensor_variable(v, op=op, argument=argument) for v in value])
    if isinstance(value, numbers.Number) or isinstance(value, (np.ndarray, np.generic, list,
                                                               tuple, bool)):
        try:
            return constant(value, name=name, dtype=dtype, ndim=ndim)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{_caller(op, argument)}cannot convert {value!r} to a tensor: "
                            f"{error}") from None
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
