"""TensorType: an n-d array of one dtype with a (partly) static shape, and its constructors."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.type import Type
from sympile.scalar.basic import normalize_dtype

Shape = tuple[int | None, ...]


def _normalize_shape(shape: Sequence[int | None]) -> Shape:
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
    """Arrays of `dtype` with `ndim = len(shape)`; each shape entry is an int or None."""

    def __init__(self, dtype: Any, shape: Sequence[int | None] | None = None,
                 broadcastable: Sequence[bool] | None = None):
        if shape is None and broadcastable is None:
            raise TypeError("TensorType: give shape (or broadcastable)")
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
        shape = ", ".join("?" if s is None else str(s) for s in self.shape)
        if self.ndim == 1:
            shape += ","
        return f"TensorType({self.dtype}, shape=({shape}))"

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
        """`value` as an ndarray of this Type (Theano's rules).

        An ndarray of the exact dtype is taken as is. strict=True accepts only that. Otherwise
        the value is converted when no precision can be lost (int8 -> float32, a list of ints ->
        a float vector), when it is a Python float and the dtype is floatX, or when
        allow_downcast is True; anything else raises TypeError.
        """
        if isinstance(value, np.ndarray) and value.dtype.name == self.dtype:
            data = value
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
        if isinstance(value, np.ndarray) or isinstance(value, np.generic):
            original = np.asarray(value)
        else:
            try:
                original = np.asarray(value)
            except (TypeError, ValueError) as error:
                raise TypeError(f"cannot convert {_describe(value)} to an array: {error}") \
                    from None
            if original.dtype.kind == "O":
                raise TypeError(f"cannot convert {_describe(value)} to an array of "
                                f"{self.dtype}")
        if original.dtype.kind in "USVO":
            raise TypeError(f"expected numbers of dtype {self.dtype}, got {_describe(value)}")
        if allow_downcast:
            return np.asarray(original, dtype=self.dtype)
        if np.can_cast(original.dtype, self.dtype, casting="safe"):
            return np.asarray(original, dtype=self.dtype)
        python_data = not isinstance(value, (np.ndarray, np.generic))
        if python_data:
            if isinstance(value, float) and self.dtype == config.floatX:
                return np.asarray(original, dtype=self.dtype)
            # Python ints and lists: fine if every value survives the conversion exactly.
            with np.errstate(all="ignore"):
                converted = original.astype(self.dtype)
            if original.dtype.kind in "biu" and np.array_equal(converted, original):
                return converted
        raise TypeError(
            f"cannot convert {_describe(value)} to {self.dtype} without losing precision; "
            f"convert it yourself (e.g. numpy.asarray(value, dtype='{self.dtype}')) or "
            f"compile with allow_input_downcast=True")

    def values_eq(self, a, b) -> bool:
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and \
            bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind in "fc"
                        else a == b))

    def values_eq_approx(self, a, b, rtol: float | None = None, atol: float | None = None):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc":
            return bool(np.all(a == b))
        tolerance = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}.get(self.dtype, 1e-8)
        return bool(np.allclose(a, b, rtol=rtol or tolerance * 10, atol=atol or tolerance,
                                equal_nan=True))

    def data_signature(self, data):
        data = np.asarray(data)
        if data.size > 1000:
            # Large constants: compare by identity-free digest of their bytes.
            return (data.shape, data.dtype.str, hash(data.tobytes()))
        return (data.shape, data.dtype.str, data.tobytes())

    # -- variables --------------------------------------------------------------------------
    def make_variable(self, name=None):
        from sympile.tensor.variable import TensorVariable
        return TensorVariable(self, None, None, name)

    def make_constant(self, value, name=None):
        from sympile.tensor.variable import TensorConstant
        return TensorConstant(self, value, name)


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


@functools.lru_cache(maxsize=None)
def _cached_tensor_type(dtype: str, shape: Shape) -> TensorType:
    return TensorType(dtype, shape)


def tensor_type(dtype: Any, shape: Sequence[int | None]) -> TensorType:
    return _cached_tensor_type(normalize_dtype(dtype), _normalize_shape(shape))


# ---------------------------------------------------------------------------------------------
# Constructors, with Theano's names. dtype=None means config.floatX.

def _dtype_or_floatx(dtype: Any) -> str:
    return normalize_dtype(config.floatX if dtype is None else dtype)


def tensor(dtype: Any = None, shape: Sequence[int | None] | None = None, name: str | None = None,
           broadcastable: Sequence[bool] | None = None, ndim: int | None = None):
    """A symbolic tensor: tensor('float32', shape=(None, 3), name='x').

    As in PyTensor, a first argument that is not a dtype name is the variable's name.
    """
    if isinstance(dtype, str) and dtype not in _DTYPE_NAMES and name is None:
        dtype, name = None, dtype
    if shape is None:
        shape = broadcastable if broadcastable is not None else (None,) * (ndim or 0)
    elif ndim is not None and ndim != len(shape):
        raise ValueError(f"tensor: ndim={ndim} does not match shape {shape}")
    return tensor_type(_dtype_or_floatx(dtype), shape)(name)


_DTYPE_NAMES = {name for name in np.sctypeDict if isinstance(name, str)}


def _constructor(ndim_shape: Shape, doc: str):
    def make(name: str | None = None, dtype: Any = None, shape: Sequence[int | None] | None = None):
        if shape is not None:
            if len(shape) != len(ndim_shape):
                raise ValueError(f"expected a shape of {len(ndim_shape)} entries, got {shape}")
            merged = tuple(s if s is not None else d for s, d in zip(shape, ndim_shape))
        else:
            merged = ndim_shape
        return tensor_type(_dtype_or_floatx(dtype), merged)(name)
    make.__doc__ = doc
    return make


scalar = _constructor((), "A 0-d tensor.")
vector = _constructor((None,), "A 1-d tensor.")
matrix = _constructor((None, None), "A 2-d tensor.")
row = _constructor((1, None), "A 1xN matrix (broadcastable rows).")
col = _constructor((None, 1), "An Nx1 matrix (broadcastable columns).")
tensor3 = _constructor((None,) * 3, "A 3-d tensor.")
tensor4 = _constructor((None,) * 4, "A 4-d tensor.")
tensor5 = _constructor((None,) * 5, "A 5-d tensor.")
tensor6 = _constructor((None,) * 6, "A 6-d tensor.")
tensor7 = _constructor((None,) * 7, "A 7-d tensor.")

_PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
             "d": "float64", "c": "complex64", "z": "complex128"}
_KINDS = {"scalar": (), "vector": (None,), "matrix": (None, None), "row": (1, None),
          "col": (None, 1), "tensor3": (None,) * 3, "tensor4": (None,) * 4,
          "tensor5": (None,) * 5, "tensor6": (None,) * 6, "tensor7": (None,) * 7}

_TYPED: dict[str, Any] = {}
for _prefix, _dtype in _PREFIXES.items():
    for _kind, _shape in _KINDS.items():
        def _make(name=None, _dtype=_dtype, _shape=_shape):
            return tensor_type(_dtype, _shape)(name)

        def _make_many(*names, _dtype=_dtype, _shape=_shape):
            if len(names) == 1 and isinstance(names[0], int):
                return [tensor_type(_dtype, _shape)() for _ in range(names[0])]
            if len(names) == 1 and isinstance(names[0], str) and "," in names[0]:
                names = tuple(n.strip() for n in names[0].split(","))
            return [tensor_type(_dtype, _shape)(n) for n in names]

        _make.__name__ = _prefix + _kind
        _make.__doc__ = f"A {_dtype} {_kind}."
        _plural = _prefix + ("matrices" if _kind == "matrix" else _kind + "s")
        _make_many.__name__ = _plural
        _make_many.__doc__ = f"Several {_dtype} {_kind}s: {_plural}('a', 'b')."
        _TYPED[_prefix + _kind] = _make
        _TYPED[_plural] = _make_many
globals().update(_TYPED)


def _floatx_many(kind: str):
    def make_many(*names):
        shape = _KINDS[kind]
        if len(names) == 1 and isinstance(names[0], int):
            return [tensor_type(config.floatX, shape)() for _ in range(names[0])]
        return [tensor_type(config.floatX, shape)(n) for n in names]
    make_many.__name__ = kind + "s"
    return make_many


scalars = _floatx_many("scalar")
vectors = _floatx_many("vector")
matrices = _floatx_many("matrix")
rows = _floatx_many("row")
cols = _floatx_many("col")
tensor3s = _floatx_many("tensor3")
tensor4s = _floatx_many("tensor4")

__all__ = ["TensorType", "tensor_type", "tensor", "scalar", "vector", "matrix", "row", "col",
           "tensor3", "tensor4", "tensor5", "tensor6", "tensor7", "scalars", "vectors",
           "matrices", "rows", "cols", "tensor3s", "tensor4s", *_TYPED]
