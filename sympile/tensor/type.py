"""TensorType: an n-d array of one dtype with a (partly) static shape, and its constructors."""

from __future__ import annotations

import functools
import hashlib
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Variable
from sympile.graph.type import Type
from sympile.scalar.basic import (
    ALL_DTYPES,
    COMPLEX_DTYPES,
    CONTINUOUS_DTYPES,
    DISCRETE_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    INTEGER_DTYPES,
    UINT_DTYPES,
    normalize_dtype,
)

Shape = tuple[int | None, ...]


def _normalize_shape(shape: Sequence[int | None]) -> Shape:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"TensorType: a static shape must be a tuple of ints and Nones, got "
                        f"{shape!r}")
    result = []
    for size in shape:
        if size is None:
            result.append(None)
        elif isinstance(size, (bool, np.bool_)):
            # Theano's broadcastable patterns: True means a dimension of length 1.
            result.append(1 if size else None)
        elif isinstance(size, (int, np.integer)) and size >= 0:
            result.append(int(size))
        else:
            raise ValueError(f"TensorType: a static shape entry must be None or an int >= 0, "
                             f"got {size!r}")
    return tuple(result)


class TensorType(Type):
    """Arrays of `dtype` with `ndim = len(shape)`; each shape entry is an int or None. Its
    variables are TensorVariables and TensorConstants: tensor/variable.py, which defines them
    on top of this module, sets variable_type and constant_type."""

    is_ndarray = True

    def __init__(self, dtype: Any, shape: Sequence[int | None] | None = None,
                 broadcastable: Sequence[bool] | None = None, name: str | None = None):
        """`shape` (PyTensor's) or `broadcastable` (Theano's: a tuple of bools, also taken
        positionally, as Theano's TensorType(dtype, broadcastable, name)). `name` names the
        Type in messages, as Theano's."""
        if shape is None and broadcastable is None:
            raise TypeError("TensorType: give shape (or broadcastable)")
        if shape is not None and broadcastable is not None:
            raise TypeError("TensorType: give shape or broadcastable, not both")
        self.name = name
        self.dtype = normalize_dtype(dtype)
        self.shape: Shape = _normalize_shape(shape if shape is not None else broadcastable)
        self.ndim = len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return tuple(size == 1 for size in self.shape)

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    def clone(self, dtype: Any = None, shape: Sequence[int | None] | None = None) -> TensorType:
        return tensor_type(dtype or self.dtype, self.shape if shape is None else shape)

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype \
            and other.shape == self.shape

    def __hash__(self):
        return hash((type(self), self.dtype, self.shape))

    def __str__(self):
        """Theano's text: TensorType(float64, matrix), TensorType(float32, (True, False,
        False)); a static length other than 1 shows as PyTensor's shape=(3, ?); a named
        Type (Theano's name=) shows its name."""
        if getattr(self, "name", None):
            return self.name
        kind = _KIND_NAMES.get(self.shape)
        if kind is None and all(size in (None, 1) for size in self.shape):
            kind = str(self.broadcastable) if 1 in self.shape else f"{self.ndim}D"
        if kind is None:
            kind = f"shape={_shape_text(self.shape)}"
        return f"TensorType({self.dtype}, {kind})"

    def __call__(self, name: str | None = None,
                 shape: Sequence[int | None] | None = None):
        """A new input of this Type (Theano's `T.dmatrix('x')`); `shape` may fix the
        unknown static lengths: `T.dmatrix('x', shape=(None, 3))`."""
        if shape is None:
            return self.make_variable(name)
        shape = _normalize_shape(shape)
        if len(shape) != self.ndim or any(fixed is not None and given not in (None, fixed)
                                          for given, fixed in zip(shape, self.shape)):
            raise ValueError(f"{self}: shape {_shape_text(shape)} does not refine the static "
                             f"shape {_shape_text(self.shape)}")
        refined = tuple(fixed if given is None else given
                        for given, fixed in zip(shape, self.shape))
        return tensor_type(self.dtype, refined).make_variable(name)

    def __repr__(self):
        return str(self)

    def is_super(self, other: Type) -> bool:
        """True if every value of `other` fits this Type (same dtype, compatible shapes)."""
        return isinstance(other, TensorType) and other.dtype == self.dtype \
            and other.ndim == self.ndim \
            and all(s is None or s == o for s, o in zip(self.shape, other.shape))

    def convert_variable(self, variable):
        if variable.type == self:
            return variable
        if self.is_super(variable.type):
            return variable
        return None

    # -- values -----------------------------------------------------------------------------
    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        """`value` as an ndarray of this Type (Theano's rules), else TypeError.

        An ndarray of the exact dtype is taken as is (a copy only if its byte order is not
        the machine's); strict=True accepts nothing else. Otherwise: with allow_downcast=True
        anything numeric is converted (numpy's astype); an ndarray (or numpy scalar) is
        converted if numpy casts its dtype safely (int8 -> float32, not float64 -> float32);
        Python data (numbers, lists) if every value converts exactly ([1, 2] -> a float32
        vector, not [0.1] nor [2**60 + 1]) or, unless allow_downcast is False, if it is a
        Python float and the dtype is config.floatX. The number of dimensions and the static
        lengths must match.
        """
        if isinstance(value, np.ndarray) and value.dtype.name == self.dtype:
            data = value if value.dtype.isnative else value.astype(value.dtype.newbyteorder("="))
        elif strict:
            raise TypeError(f"expected an ndarray of dtype {self.dtype}, got "
                            f"{_describe(value)}")
        else:
            data = self._convert(value, allow_downcast)
        if data.ndim != self.ndim:
            raise TypeError(f"expected an array with {self.ndim} dimensions "
                            f"({self}), got one with {data.ndim} (shape {data.shape})")
        for axis, (size, static) in enumerate(zip(data.shape, self.shape)):
            if static is not None and size != static:
                raise TypeError(f"expected shape {_shape_text(self.shape)}, got {data.shape} "
                                f"(axis {axis} has length {size}, not {static})")
        return data

    def _convert(self, value: Any, allow_downcast: bool | None) -> np.ndarray:
        if isinstance(value, Variable):
            raise TypeError(f"expected a value of {self}, got the symbolic variable {value}; "
                            f"to substitute a variable, use function(..., givens=...)")
        numpy_data = isinstance(value, (np.ndarray, np.generic))
        try:
            original = np.asarray(value)
        except (TypeError, ValueError) as error:
            raise TypeError(f"cannot convert {_describe(value)} to an array: {error}") from None
        if original.dtype.kind not in "biufc":
            raise TypeError(f"expected numbers of dtype {self.dtype}, got {_describe(value)}")
        if allow_downcast or (numpy_data and np.can_cast(original.dtype, self.dtype, "safe")):
            return _astype(original, self.dtype)
        if not numpy_data:
            if isinstance(value, float) and allow_downcast is None \
                    and self.dtype == config.floatX:
                return _astype(original, self.dtype)
            converted = _astype(original, self.dtype)
            # numpy compares int64 with float64 in float64, and int64 -> uint64 -> int64
            # round-trips: the values survive only if both comparisons hold.
            if _same_values(original, converted) \
                    and _same_values(original, _astype(converted, original.dtype)):
                return converted
        raise TypeError(
            f"cannot convert {_describe(value)} to {self.dtype} without losing precision; "
            f"convert it yourself (e.g. numpy.asarray(value, dtype='{self.dtype}')) or "
            f"compile with allow_input_downcast=True")

    # Static, as Theano's: code calls TensorType.values_eq(a, b) on the class.
    @staticmethod
    def values_eq(a, b) -> bool:
        """a and b have the same shape, dtype and values (NaNs equal NaNs)."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return _same_values(a, b)

    @staticmethod
    def values_eq_approx(a, b, rtol: float | None = None, atol: float | None = None):
        """a and b have the same shape and close values: within the tolerance of the less
        precise of their float dtypes (NaNs equal NaNs, infinities equal same-signed
        infinities), exactly equal otherwise."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
            return bool(np.all(a == b))
        tolerance = max(
            {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}.get(array.dtype.name, 1e-8)
            for array in (a, b) if array.dtype.kind in "fc")
        return bool(np.allclose(a, b, rtol=tolerance * 10 if rtol is None else rtol,
                                atol=tolerance if atol is None else atol, equal_nan=True))

    def data_signature(self, data):
        data = np.ascontiguousarray(data)
        if data.size > 1000:
            # Large constants: a cryptographic digest, so that different values never share a
            # signature (Python's hash() of the bytes can collide).
            return (data.shape, data.dtype.str, hashlib.blake2b(data.tobytes()).hexdigest())
        return (data.shape, data.dtype.str, data.tobytes())


def _astype(data: np.ndarray, dtype: str) -> np.ndarray:
    """data as `dtype` with numpy's unsafe casting, without warnings (callers check losses)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return np.asarray(data).astype(dtype)


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Elementwise equality where NaN equals NaN (real and imaginary parts apart)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            return _same_values(np.real(a), np.real(b)) and _same_values(np.imag(a),
                                                                         np.imag(b))
        equal = a == b
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            equal = equal | (np.isnan(a) & np.isnan(b))
        return bool(np.all(equal))


def is_discrete(variable: Any) -> bool:
    """Bool and integer tensors: piecewise constant, so they carry no gradient or tangent."""
    return isinstance(getattr(variable, "type", None), TensorType) \
        and variable.type.dtype in DISCRETE_DTYPES


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an ndarray of dtype {value.dtype} and shape {value.shape}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _shape_text(shape: Shape) -> str:
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + \
        ("," if len(shape) == 1 else "") + ")"


@functools.cache
def _cached_tensor_type(dtype: str, shape: Shape) -> TensorType:
    return TensorType(dtype, shape)


def tensor_type(dtype: Any, shape: Sequence[int | None]) -> TensorType:
    return _cached_tensor_type(normalize_dtype(dtype), _normalize_shape(shape))


# ---------------------------------------------------------------------------------------------
# Constructors, with Theano's names. dtype=None (or 'floatX') means config.floatX.

def _dtype_or_floatx(dtype: Any) -> str:
    if dtype is None or (isinstance(dtype, str) and dtype == "floatX"):
        return normalize_dtype(config.floatX)
    return normalize_dtype(dtype)


def _is_dtype_name(text: str) -> bool:
    if text == "floatX":
        return True
    try:
        normalize_dtype(text)
    except TypeError:
        return False
    return True


def tensor(dtype: Any = None, shape: Sequence[int | None] | None = None, name: str | None = None,
           broadcastable: Sequence[bool] | None = None, ndim: int | None = None):
    """A symbolic tensor: tensor('float32', shape=(None, 3), name='x').

    As in PyTensor, a first argument that is not a dtype name is the variable's name:
    tensor('x', shape=(None, 3)) is a floatX tensor named 'x'. Without shape, broadcastable
    or ndim the tensor is 0-d.
    """
    if isinstance(dtype, str) and not _is_dtype_name(dtype):
        if name is not None:
            raise TypeError(f"tensor: {dtype!r} is not a dtype (and name={name!r} is given)")
        dtype, name = None, dtype
    if shape is not None and broadcastable is not None:
        raise TypeError("tensor: give shape or broadcastable, not both")
    if shape is None:
        shape = broadcastable if broadcastable is not None else (None,) * (ndim or 0)
    shape = _normalize_shape(shape)
    if ndim is not None and ndim != len(shape):
        raise ValueError(f"tensor: ndim={ndim} does not match shape {_shape_text(shape)}")
    return tensor_type(_dtype_or_floatx(dtype), shape)(name)


_KINDS: dict[str, Shape] = {
    "scalar": (), "vector": (None,), "matrix": (None, None), "row": (1, None),
    "col": (None, 1), "tensor3": (None,) * 3, "tensor4": (None,) * 4, "tensor5": (None,) * 5,
    "tensor6": (None,) * 6, "tensor7": (None,) * 7}


# Theano names these patterns in a Type's text; other all-unknown ones read "3D".
_KIND_NAMES = {_KINDS[kind]: kind for kind in ("scalar", "vector", "matrix", "row", "col")}


def _kind_shape(kind: str, shape: Sequence[int | None] | None) -> Shape:
    """The static shape of a `kind` variable, refined by the user's `shape`."""
    default = _KINDS[kind]
    if shape is None:
        return default
    shape = _normalize_shape(shape)
    if len(shape) != len(default):
        raise ValueError(f"{kind}: expected a shape of {len(default)} entries, got "
                         f"{_shape_text(shape)}")
    for axis, (given, fixed) in enumerate(zip(shape, default)):
        if fixed is not None and given not in (None, fixed):
            raise ValueError(f"{kind}: axis {axis} of a {kind} has length {fixed}, got shape "
                             f"{_shape_text(shape)}")
    return tuple(given if given is not None else fixed for given, fixed in zip(shape, default))


def _generic_constructor(kind: str):
    def make(name: str | None = None, dtype: Any = None,
             shape: Sequence[int | None] | None = None):
        return tensor_type(_dtype_or_floatx(dtype), _kind_shape(kind, shape))(name)
    make.__name__ = make.__qualname__ = kind
    make.__doc__ = (f"A symbolic {kind} (static shape {_shape_text(_KINDS[kind])}) of dtype "
                    f"`dtype` (config.floatX by default); `shape` may fix unknown lengths.")
    return make


def _plural(singular: str) -> str:
    return singular[:-len("matrix")] + "matrices" if singular.endswith("matrix") \
        else singular + "s"


def _many(name: str, constructor):
    """Several variables from one constructor: f(3) (three unnamed), f('a', 'b'),
    f('a, b'), or, as Theano's, f('ab'): one string without commas names one variable per
    character (p, t = T.matrices('pt'))."""
    def make_many(*names: Any) -> list:
        if len(names) == 1 and isinstance(names[0], int) and not isinstance(names[0], bool):
            return [constructor() for _ in range(names[0])]
        if len(names) == 1 and isinstance(names[0], str):
            text = names[0]
            names = (tuple(part.strip() for part in text.split(",")) if "," in text
                     else tuple(text))
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"{make_many.__name__}: expected names (str) or a count (int), "
                                f"got {name!r}")
        return [constructor(name) for name in names]
    make_many.__name__ = make_many.__qualname__ = _plural(name)
    make_many.__doc__ = (f"Several {name}s: {make_many.__name__}('a', 'b'), "
                         f"{make_many.__name__}('ab') (Theano's: one per character) or "
                         f"{make_many.__name__}(2).")
    return make_many


_PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
             "d": "float64", "c": "complex64", "z": "complex128"}
# PyTensor's unsigned scalar constructors (there are no unsigned vectors, matrices, ...).
_UNSIGNED_SCALARS = {"ubscalar": "uint8", "uwscalar": "uint16", "uiscalar": "uint32",
                     "ulscalar": "uint64"}

_CONSTRUCTORS: dict[str, Any] = {}
for _kind in _KINDS:
    _CONSTRUCTORS[_kind] = _generic_constructor(_kind)
    for _prefix, _dtype in _PREFIXES.items():
        # As in Theano, T.dmatrix is the Type itself: x.type is T.dmatrix.
        _CONSTRUCTORS[_prefix + _kind] = tensor_type(_dtype, _KINDS[_kind])
for _name, _dtype in _UNSIGNED_SCALARS.items():
    _CONSTRUCTORS[_name] = tensor_type(_dtype, ())
_CONSTRUCTORS.update({_plural(name): _many(name, constructor)
                      for name, constructor in list(_CONSTRUCTORS.items())})
globals().update(_CONSTRUCTORS)

# Theano's dtype lists (T.float_dtypes, ...), as lists of names.
DTYPE_LISTS = {"int_dtypes": INT_DTYPES, "uint_dtypes": UINT_DTYPES,
               "integer_dtypes": INTEGER_DTYPES, "discrete_dtypes": DISCRETE_DTYPES,
               "float_dtypes": FLOAT_DTYPES, "complex_dtypes": COMPLEX_DTYPES,
               "continuous_dtypes": CONTINUOUS_DTYPES, "all_dtypes": ALL_DTYPES}
globals().update({name: list(dtypes) for name, dtypes in DTYPE_LISTS.items()})

# Theano's older name of the class.
Tensor = TensorType

__all__ = ["Tensor", "TensorType", "tensor_type", "tensor", *_CONSTRUCTORS,  # noqa: PLE0604
           *DTYPE_LISTS]
