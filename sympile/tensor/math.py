"""Elementwise tensor math: every scalar Op of sympile.scalar as a broadcasting function.

Each function applies one Elemwise node; dtypes and broadcasting follow numpy.
"""

from __future__ import annotations

import functools
from typing import Any

from sympile.scalar import basic as scalar
from sympile.scalar.basic import cast_op, normalize_dtype
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.variable import as_tensor_variable


@functools.lru_cache(maxsize=None)
def elemwise_of(scalar_op: scalar.ScalarOp) -> Elemwise:
    """The (shared) Elemwise Op of `scalar_op`."""
    return Elemwise(scalar_op)


def _lift(scalar_op: scalar.ScalarOp, name: str):
    op = elemwise_of(scalar_op)
    arguments = ", ".join("xyz"[:scalar_op.nin])

    def apply(*inputs: Any, name: str | None = None):
        return op(*inputs, name=name)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"{name}({arguments}) elementwise, with numpy broadcasting and dtypes."
    return apply


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
    "expit": "sigmoid", "log_gamma": "gammaln", "digamma": "psi", "equal": "eq",
    "not_equal": "neq", "less": "lt", "greater": "gt", "less_equal": "le",
    "greater_equal": "ge", "and_": "bitwise_and", "or_": "bitwise_or", "xor": "bitwise_xor",
    "bitwise_not": "invert", "bitwise_invert": "invert", "where": "switch",
}

_FUNCTIONS = {name: _lift(op, name) for name, op in _NAMES.items()}
_FUNCTIONS.update({alias: _FUNCTIONS[target] for alias, target in _ALIASES.items()})
globals().update(_FUNCTIONS)


def cast(x: Any, dtype: Any):
    """x converted to `dtype` (numpy's astype); returns x itself if it already has it."""
    x = as_tensor_variable(x, op="cast")
    dtype = normalize_dtype(dtype)
    if x.type.dtype == dtype:
        return x
    return elemwise_of(cast_op(dtype))(x)


def round(x: Any, mode: str = "half_to_even"):
    """Round to the nearest integer: mode 'half_to_even' (numpy's) or 'half_away_from_zero'."""
    if mode == "half_to_even":
        return _FUNCTIONS["round_half_to_even"](x)
    if mode == "half_away_from_zero":
        return _FUNCTIONS["round_half_away_from_zero"](x)
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', got {mode!r}")



__all__ = sorted(_FUNCTIONS) + ["cast", "round", "elemwise_of"]
