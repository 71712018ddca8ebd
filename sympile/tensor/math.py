"""Elementwise tensor math: every scalar Op of sympile.scalar as a broadcasting Elemwise op
(T.add, T.exp, T.switch, ... are Op instances, as in Theano): calling one applies one
Elemwise node; dtypes and broadcasting follow numpy.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from sympile.config import config
from sympile.scalar import basic as scalar
from sympile.scalar.basic import cast_op, normalize_dtype
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.variable import as_tensor_variable, is_python_scalar


@functools.cache
def elemwise_of(scalar_op: scalar.ScalarOp) -> Elemwise:
    """The (shared) Elemwise Op of `scalar_op`."""
    return Elemwise(scalar_op)


def _named(scalar_op: scalar.ScalarOp, name: str) -> Elemwise:
    """The Elemwise op of `scalar_op`, documented under `name`: as in Theano, T.add, T.exp,
    T.switch, ... are Op instances, so that `(x + y).owner.op == T.add` holds."""
    op = elemwise_of(scalar_op)
    op.__name__ = name
    arguments = ", ".join("xyz"[:scalar_op.nin])
    if scalar_op.nin == 2 and scalar_op.associative:
        arguments += ", ..."
    op.__doc__ = (f"{name}({arguments}) elementwise, with numpy broadcasting and dtypes"
                  + ("; several inputs are combined from left to right."
                     if scalar_op.nin == 2 and scalar_op.associative else "."))
    return op


_NAMES = {
    # sympile name: scalar op
    "add": scalar.add, "sub": scalar.sub, "mul": scalar.mul, "true_div": scalar.true_div,
    "int_div": scalar.int_div, "mod": scalar.mod, "pow": scalar.pow, "neg": scalar.neg,
    "abs": scalar.abs, "sign": scalar.sign, "sqr": scalar.sqr, "sqrt": scalar.sqrt,
    "reciprocal": scalar.reciprocal, "maximum": scalar.maximum, "minimum": scalar.minimum,
    "identity": scalar.identity, "conj": scalar.conj, "real": scalar.real, "imag": scalar.imag,
    "angle": scalar.angle, "exp": scalar.exp, "exp2": scalar.exp2, "expm1": scalar.expm1,
    "log": scalar.log, "log2": scalar.log2, "log10": scalar.log10, "log1p": scalar.log1p,
    "sigmoid": scalar.sigmoid, "softplus": scalar.softplus, "logaddexp": scalar.logaddexp,
    "sin": scalar.sin, "cos": scalar.cos, "tan": scalar.tan, "arcsin": scalar.arcsin,
    "arccos": scalar.arccos, "arctan": scalar.arctan, "arctan2": scalar.arctan2,
    "sinh": scalar.sinh, "cosh": scalar.cosh, "tanh": scalar.tanh, "arcsinh": scalar.arcsinh,
    "arccosh": scalar.arccosh, "arctanh": scalar.arctanh, "hypot": scalar.hypot,
    "deg2rad": scalar.deg2rad, "rad2deg": scalar.rad2deg, "erf": scalar.erf,
    "erfc": scalar.erfc, "erfinv": scalar.erfinv, "erfcinv": scalar.erfcinv,
    "gamma": scalar.gamma, "gammaln": scalar.gammaln, "psi": scalar.psi,
    "tri_gamma": scalar.tri_gamma, "erfcx": scalar.erfcx, "chi2sf": scalar.chi2sf,
    "complex": scalar.complex, "complex_from_polar": scalar.complex_from_polar,
    "j0": scalar.j0, "j1": scalar.j1, "jv": scalar.jv,
    "i0": scalar.i0, "i1": scalar.i1, "iv": scalar.iv,
    "floor": scalar.floor, "ceil": scalar.ceil, "trunc": scalar.trunc,
    "round_half_to_even": scalar.round_half_to_even,
    "round_half_away_from_zero": scalar.round_half_away_from_zero,
    "eq": scalar.eq, "neq": scalar.neq, "lt": scalar.lt, "gt": scalar.gt, "le": scalar.le,
    "ge": scalar.ge, "isnan": scalar.isnan, "isinf": scalar.isinf, "isfinite": scalar.isfinite,
    "logical_and": scalar.logical_and, "logical_or": scalar.logical_or,
    "logical_xor": scalar.logical_xor, "logical_not": scalar.logical_not,
    "bitwise_and": scalar.bitwise_and, "bitwise_or": scalar.bitwise_or,
    "bitwise_xor": scalar.bitwise_xor, "invert": scalar.invert,
    "left_shift": scalar.left_shift, "right_shift": scalar.right_shift,
    "switch": scalar.switch, "clip": scalar.clip,
}

# Other names users of numpy, Theano and PyTensor reach for.
_ALIASES = {
    "subtract": "sub", "multiply": "mul", "true_divide": "true_div", "divide": "true_div",
    "floor_div": "int_div", "floor_divide": "int_div", "power": "pow", "negative": "neg",
    "abs_": "abs", "absolute": "abs", "square": "sqr", "inv": "reciprocal",
    "rint": "round_half_to_even",
    "expit": "sigmoid", "log_gamma": "gammaln", "digamma": "psi", "equal": "eq",
    "not_equal": "neq", "less": "lt", "greater": "gt", "less_equal": "le",
    "greater_equal": "ge", "and_": "bitwise_and", "or_": "bitwise_or", "xor": "bitwise_xor",
    "bitwise_not": "invert", "bitwise_invert": "invert", "where": "switch", "sgn": "sign",
    "tensor_copy": "identity",
    # Theano's names of isnan and isinf without its shortcut for integers (sympile has none)
    "isnan_": "isnan", "isinf_": "isinf",
    # numpy 2's array-API names
    "acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2",
    "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
}

_FUNCTIONS = {name: _named(op, name) for name, op in _NAMES.items()}
_FUNCTIONS.update({alias: _FUNCTIONS[target] for alias, target in _ALIASES.items()})
globals().update({name: f for name, f in _FUNCTIONS.items() if name != "clip"})


def cast(x: Any, dtype: Any):
    """x converted to `dtype` (numpy's astype); returns x itself if it already has it."""
    x = as_tensor_variable(x, op="cast")
    dtype = normalize_dtype(dtype)
    if x.type.dtype == dtype:
        return x
    return elemwise_of(cast_op(dtype))(x)


def round(x: Any, mode: str | None = None):
    """Round to the nearest integer, in x's dtype: mode 'half_to_even' (numpy's round; also
    mode=None) or 'half_away_from_zero' (C's round). With config.warn.round, a call without
    a mode warns (Theano's default was once half_away_from_zero)."""
    if mode is None and config.warn.round:
        warnings.warn("round: without a mode, sympile rounds half to even (numpy's rule; "
                      "Theano before 0.9 rounded half away from zero); pass mode= or set "
                      "config.warn.round = False", stacklevel=2)
    if mode is None or mode == "half_to_even":
        return _FUNCTIONS["round_half_to_even"](x)
    if mode == "half_away_from_zero":
        return _FUNCTIONS["round_half_away_from_zero"](x)
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', got {mode!r}")


def iround(x: Any, mode: str | None = "half_to_even"):
    """round(x, mode) as int64 (Theano's iround)."""
    return cast(round(x, mode), "int64")


def clip(x: Any, a_min: Any, a_max: Any, name: str | None = None):
    """x limited to [a_min, a_max] elementwise (numpy.clip); a bound may be None (no limit).

    As in numpy, a Python int bound beyond the integer dtype's range on the side where it
    cannot matter (a_min below its minimum, a_max above its maximum) is dropped, so
    clip(int8 x, -1000, 1000) is int8.
    """
    x, a_min, a_max = (v if v is None or is_python_scalar(v)
                       else as_tensor_variable(v, op="clip", argument=i)
                       for i, v in enumerate((x, a_min, a_max)))
    dtypes = [v.type.dtype for v in (x, a_min, a_max) if v is not None and
              not is_python_scalar(v)]
    dtype = np.result_type(*dtypes) if dtypes else None
    if dtype is not None and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if _is_python_int(a_min) and a_min < info.min:
            a_min = None
        if _is_python_int(a_max) and a_max > info.max:
            a_max = None
    if a_min is None and a_max is None:
        return _FUNCTIONS["identity"](x, name=name)
    if a_min is None:
        return _FUNCTIONS["minimum"](x, a_max, name=name)
    if a_max is None:
        return _FUNCTIONS["maximum"](x, a_min, name=name)
    return elemwise_of(scalar.clip)(x, a_min, a_max, name=name)


def _is_python_int(value: Any) -> bool:
    return is_python_scalar(value) and isinstance(value, int) and not isinstance(value, bool)


def ceil_intdiv(a: Any, b: Any):
    """a // b rounded up instead of down (Theano's ceil_intdiv): the floor quotient, plus 1
    where b does not divide a."""
    quotient = _FUNCTIONS["int_div"](a, b)
    remainder = _FUNCTIONS["mod"](a, b)
    return quotient + cast(_FUNCTIONS["neq"](remainder, 0), quotient.type.dtype)


_OTHER_NAMES = ["cast", "ceil_intdiv", "clip", "elemwise_of", "iround", "round"]
__all__ = [*sorted(set(_FUNCTIONS) - {"clip"}), *_OTHER_NAMES]  # noqa: PLE0604
