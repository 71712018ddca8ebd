"""Shared test tools: compile-and-compare against numpy, infer_shape checks, strategies."""

from __future__ import annotations

import decimal
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.special
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sympile
from sympile.graph.basic import Variable
from sympile.tensor.shape import shape_i
from sympile.tensor.variable import as_tensor_variable

FLOAT_DTYPES = ["float16", "float32", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NUMERIC_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES + ["complex64", "complex128"]

_TOLERANCE = {"float16": 5e-3, "float32": 1e-5, "complex64": 1e-5}


def evaluate(outputs: Variable | Sequence[Variable], inputs: Sequence[Variable] = (),
             values: Sequence[Any] = (), mode: Any = None):
    """Compile `outputs` as a function of `inputs` and call it on `values`."""
    function = sympile.function(list(inputs), outputs, mode=mode, on_unused_input="ignore")
    return function(*values)


def assert_like_numpy(actual: Any, expected: Any, rtol: float | None = None,
                      atol: float | None = None, check_dtype: bool = True) -> None:
    """`actual` equals numpy's `expected`: same shape, same dtype, values equal (floats: close
    at the dtype's precision, NaNs and infinities in the same places)."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), f"expected an ndarray, got {type(actual).__name__}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != numpy's {expected.shape}"
    if check_dtype:
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != numpy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        tolerance = _TOLERANCE.get(expected.dtype.name, 1e-12)
        np.testing.assert_allclose(actual, expected, rtol=rtol or tolerance,
                                   atol=atol if atol is not None else tolerance, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def check_infer_shape(outputs: Variable | Sequence[Variable], inputs: Sequence[Variable],
                      values: Sequence[Any]) -> None:
    """Each output node's infer_shape, evaluated on `values`, gives the shapes the node
    actually produces."""
    outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    for output in outputs:
        node = output.owner
        input_shapes = [tuple(shape_i(v, axis) for axis in range(v.type.ndim))
                        for v in node.inputs]
        inferred = node.op.infer_shape(None, node, input_shapes)
        inferred_output = inferred[output.index]
        assert len(inferred_output) == output.type.ndim, \
            f"{node.op}.infer_shape gave {len(inferred_output)} lengths for a " \
            f"{output.type.ndim}-d output"
        lengths = [as_tensor_variable(length) for length in inferred_output]
        function = sympile.function(list(inputs), [output] + lengths, on_unused_input="ignore")
        actual, *computed = function(*values)
        assert tuple(int(n) for n in computed) == actual.shape, \
            f"{node.op}.infer_shape gives {tuple(int(n) for n in computed)}, the output has " \
            f"shape {actual.shape}"


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def arrays(dtype: str, shape: Any, elements: Any = None):
    """Finite values of `dtype` (moderate magnitudes unless `elements` is given)."""
    if elements is None:
        kind = np.dtype(dtype).kind
        if kind == "f":
            elements = st.floats(-10, 10, width=np.dtype(dtype).itemsize * 8)
        elif kind == "c":
            elements = st.complex_numbers(max_magnitude=10,
                                          width=np.dtype(dtype).itemsize * 8)
        elif kind in "iu":
            info = np.iinfo(dtype)
            elements = st.integers(max(info.min, -100), min(info.max, 100))
    return hnp.arrays(dtype, shape, elements=elements)


class GradCase:
    """One row of the gradient table: `fun` maps symbolic float inputs to one output, and
    `make_point(rng)` gives the float64 values to check at. `rop=False` only where forward
    mode does not apply (say why in `note`)."""

    def __init__(self, name: str, fun: Any, make_point: Any, rop: bool = True,
                 note: str = "", **tolerances: float):
        self.name, self.fun, self.make_point = name, fun, make_point
        self.rop, self.note, self.tolerances = rop, note, tolerances

    def __repr__(self):
        return self.name


def check_grad_case(case: GradCase, seed: int = 0) -> None:
    """verify_grad, and verify_rop (finite differences and the Lop identity), on `case`."""
    from sympile.gradient import verify_grad, verify_rop
    rng = np.random.default_rng(seed)
    point = case.make_point(rng)
    verify_grad(case.fun, point, rng=rng, **case.tolerances)
    if case.rop:
        verify_rop(case.fun, point, rng=rng, **case.tolerances)


# ---------------------------------------------------------------------------------------------
# The elementwise op table: for each scalar op of sympile.scalar (by name), numpy's (or
# scipy's) function and the value range where it is worth testing. Backends and rewrites reuse
# it to compare every elementwise op with numpy.

class ElemwiseCase:
    """reference: the numpy/scipy function computing the op; domains: per input, the (low,
    high) range of test values (integer dtypes take the integers in it)."""

    def __init__(self, reference: Any, *domains: tuple[float, float]):
        self.reference = reference
        self.domains = domains


def _round_half_away_reference(x: np.ndarray) -> np.ndarray:
    """C's round(), computed exactly with decimal arithmetic."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("no rounding of complex numbers away from zero")
    if x.dtype.kind != "f":
        return np.round(x)

    def one(value: float) -> float:
        if not np.isfinite(value) or abs(value) >= 2.0 ** 52:
            return value  # already a whole number
        rounded = decimal.Decimal(float(value)).quantize(decimal.Decimal(1), decimal.ROUND_HALF_UP)
        return float(np.copysign(float(rounded), value))

    return np.vectorize(one, otypes=[x.dtype])(x) if x.size else x.copy()


def _softplus_reference(x: np.ndarray) -> np.ndarray:
    # A real function (as in Theano); accurate on its domain, where exp does not overflow.
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("softplus is not defined for complex numbers")
    return np.log1p(np.exp(x))


_WIDE = (-10.0, 10.0)
_UNIT = (-1.2, 1.2)

ELEMWISE_CASES: dict[str, ElemwiseCase] = {
    "add": ElemwiseCase(np.add, _WIDE, _WIDE),
    "sub": ElemwiseCase(np.subtract, _WIDE, _WIDE),
    "mul": ElemwiseCase(np.multiply, _WIDE, _WIDE),
    "true_div": ElemwiseCase(np.true_divide, _WIDE, _WIDE),
    "int_div": ElemwiseCase(np.floor_divide, _WIDE, _WIDE),
    "mod": ElemwiseCase(np.mod, _WIDE, _WIDE),
    # Integers to negative integer powers raise in numpy: exponents >= 0.
    "pow": ElemwiseCase(np.power, (-4.0, 4.0), (0.0, 4.0)),
    "neg": ElemwiseCase(np.negative, _WIDE),
    "abs": ElemwiseCase(np.absolute, _WIDE),
    "sign": ElemwiseCase(np.sign, _WIDE),
    "sqr": ElemwiseCase(np.square, _WIDE),
    "sqrt": ElemwiseCase(np.sqrt, (-1.0, 50.0)),
    "reciprocal": ElemwiseCase(np.reciprocal, _WIDE),
    "maximum": ElemwiseCase(np.maximum, _WIDE, _WIDE),
    "minimum": ElemwiseCase(np.minimum, _WIDE, _WIDE),
    "clip": ElemwiseCase(np.clip, _WIDE, (-10.0, 0.0), (0.0, 10.0)),
    "switch": ElemwiseCase(np.where, (-1.0, 1.0), _WIDE, _WIDE),
    "identity": ElemwiseCase(np.copy, _WIDE),
    "conj": ElemwiseCase(np.conjugate, _WIDE),
    "real": ElemwiseCase(np.real, _WIDE),
    "imag": ElemwiseCase(np.imag, _WIDE),
    "angle": ElemwiseCase(np.angle, _WIDE),
    "exp": ElemwiseCase(np.exp, _WIDE),
    "exp2": ElemwiseCase(np.exp2, _WIDE),
    "expm1": ElemwiseCase(np.expm1, _WIDE),
    "log": ElemwiseCase(np.log, (-1.0, 50.0)),
    "log2": ElemwiseCase(np.log2, (-1.0, 50.0)),
    "log10": ElemwiseCase(np.log10, (-1.0, 50.0)),
    "log1p": ElemwiseCase(np.log1p, (-1.5, 20.0)),
    "sigmoid": ElemwiseCase(scipy.special.expit, _WIDE),
    "softplus": ElemwiseCase(_softplus_reference, _WIDE),
    "logaddexp": ElemwiseCase(np.logaddexp, _WIDE, _WIDE),
    "sin": ElemwiseCase(np.sin, _WIDE),
    "cos": ElemwiseCase(np.cos, _WIDE),
    "tan": ElemwiseCase(np.tan, (-1.5, 1.5)),
    "arcsin": ElemwiseCase(np.arcsin, _UNIT),
    "arccos": ElemwiseCase(np.arccos, _UNIT),
    "arctan": ElemwiseCase(np.arctan, _WIDE),
    "arctan2": ElemwiseCase(np.arctan2, _WIDE, _WIDE),
    "sinh": ElemwiseCase(np.sinh, _WIDE),
    "cosh": ElemwiseCase(np.cosh, _WIDE),
    "tanh": ElemwiseCase(np.tanh, _WIDE),
    "arcsinh": ElemwiseCase(np.arcsinh, _WIDE),
    "arccosh": ElemwiseCase(np.arccosh, (0.5, 20.0)),
    "arctanh": ElemwiseCase(np.arctanh, _UNIT),
    "hypot": ElemwiseCase(np.hypot, _WIDE, _WIDE),
    "deg2rad": ElemwiseCase(np.deg2rad, (-400.0, 400.0)),
    "rad2deg": ElemwiseCase(np.rad2deg, _WIDE),
    "erf": ElemwiseCase(scipy.special.erf, (-4.0, 4.0)),
    "erfc": ElemwiseCase(scipy.special.erfc, (-4.0, 4.0)),
    "erfinv": ElemwiseCase(scipy.special.erfinv, _UNIT),
    "erfcinv": ElemwiseCase(scipy.special.erfcinv, (-0.2, 2.2)),
    "gamma": ElemwiseCase(scipy.special.gamma, (-5.0, 20.0)),
    "gammaln": ElemwiseCase(scipy.special.gammaln, (-5.0, 50.0)),
    "psi": ElemwiseCase(scipy.special.psi, (-5.0, 50.0)),
    "erfcx": ElemwiseCase(scipy.special.erfcx, (-3.0, 20.0)),
    "chi2sf": ElemwiseCase(lambda x, k: scipy.special.chdtrc(k, x), (0.1, 20.0), (1.0, 10.0)),
    "complex": ElemwiseCase(lambda x, y: x + 1j * y, _WIDE, _WIDE),
    # numpy's r * cos(t) + (r * sin(t)) * 1j: float16 for bool and int8 parts, so complex64.
    "complex_from_polar": ElemwiseCase(lambda r, t: r * np.cos(t) + (r * np.sin(t)) * 1j,
                                       (0.0, 5.0), (-4.0, 4.0)),
    "j0": ElemwiseCase(scipy.special.j0, (-20.0, 20.0)),
    "j1": ElemwiseCase(scipy.special.j1, (-20.0, 20.0)),
    "jv": ElemwiseCase(scipy.special.jv, (-3.0, 5.0), (-20.0, 20.0)),
    "i0": ElemwiseCase(scipy.special.i0, (-10.0, 10.0)),
    "i1": ElemwiseCase(scipy.special.i1, (-10.0, 10.0)),
    "iv": ElemwiseCase(scipy.special.iv, (-3.0, 5.0), (-10.0, 10.0)),
    "tri_gamma": ElemwiseCase(lambda x: np.asarray(scipy.special.polygamma(1, x)).astype(
        scipy.special.psi(np.zeros(0, dtype=np.asarray(x).dtype)).dtype), (-5.0, 50.0)),
    "floor": ElemwiseCase(np.floor, _WIDE),
    "ceil": ElemwiseCase(np.ceil, _WIDE),
    "trunc": ElemwiseCase(np.trunc, _WIDE),
    "round_half_to_even": ElemwiseCase(np.round, _WIDE),
    "round_half_away_from_zero": ElemwiseCase(_round_half_away_reference, _WIDE),
    "eq": ElemwiseCase(np.equal, (-3.0, 3.0), (-3.0, 3.0)),
    "neq": ElemwiseCase(np.not_equal, (-3.0, 3.0), (-3.0, 3.0)),
    "lt": ElemwiseCase(np.less, (-3.0, 3.0), (-3.0, 3.0)),
    "gt": ElemwiseCase(np.greater, (-3.0, 3.0), (-3.0, 3.0)),
    "le": ElemwiseCase(np.less_equal, (-3.0, 3.0), (-3.0, 3.0)),
    "ge": ElemwiseCase(np.greater_equal, (-3.0, 3.0), (-3.0, 3.0)),
    "isnan": ElemwiseCase(np.isnan, _WIDE),
    "isinf": ElemwiseCase(np.isinf, _WIDE),
    "isfinite": ElemwiseCase(np.isfinite, _WIDE),
    "logical_and": ElemwiseCase(np.logical_and, (-1.0, 1.0), (-1.0, 1.0)),
    "logical_or": ElemwiseCase(np.logical_or, (-1.0, 1.0), (-1.0, 1.0)),
    "logical_xor": ElemwiseCase(np.logical_xor, (-1.0, 1.0), (-1.0, 1.0)),
    "logical_not": ElemwiseCase(np.logical_not, (-1.0, 1.0)),
    "bitwise_and": ElemwiseCase(np.bitwise_and, (-100.0, 100.0), (-100.0, 100.0)),
    "bitwise_or": ElemwiseCase(np.bitwise_or, (-100.0, 100.0), (-100.0, 100.0)),
    "bitwise_xor": ElemwiseCase(np.bitwise_xor, (-100.0, 100.0), (-100.0, 100.0)),
    "invert": ElemwiseCase(np.invert, (-100.0, 100.0)),
    # Shift counts below the width of the narrowest integer dtype.
    "left_shift": ElemwiseCase(np.left_shift, (-20.0, 20.0), (0.0, 7.0)),
    "right_shift": ElemwiseCase(np.right_shift, (-100.0, 100.0), (0.0, 7.0)),
}


def reference_result(case: ElemwiseCase, *values: np.ndarray) -> np.ndarray:
    """The reference's result, computed as compiled code does: floating-point errors (overflow,
    division by zero, invalid) give inf/nan silently. TypeError if numpy has no such op for
    these dtypes."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(case.reference(*values))


def domain_elements(dtype: str, domain: tuple[float, float]):
    """A hypothesis strategy of values of `dtype` in `domain` (bool: both values)."""
    kind = np.dtype(dtype).kind
    low, high = domain
    if kind == "b":
        return st.booleans()
    if kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, int(np.ceil(low))), min(info.max, int(np.floor(high))))
    width = np.dtype(dtype).itemsize * 8
    part_width = width // 2 if kind == "c" else width
    # The bounds must be representable at the width (-1.2 is not a float16).
    part_dtype = f"float{part_width}"
    part = st.floats(float(np.asarray(low, part_dtype)), float(np.asarray(high, part_dtype)),
                     width=part_width)
    if kind == "c":
        return st.builds(complex, part, part)
    return part


def domain_values(dtype: str, domain: tuple[float, float], size: int = 24,
                  seed: int = 0) -> np.ndarray:
    """Deterministic test values of `dtype`: spread over `domain`, plus (floats and complex)
    0, -0, nan, inf and -inf, and (integers) the dtype's extremes."""
    if size < 8:
        raise ValueError(f"domain_values: size must be at least 8 (room for the special "
                         f"values), got {size}")
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    low, high = domain
    if kind == "b":
        return np.array([True, False] * (size // 2), dtype=dtype)
    if kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(info.min, int(np.ceil(low))), min(info.max, int(np.floor(high)))
        spread = rng.integers(low, high, size=size - 2, endpoint=True)
        return np.concatenate([spread, [low, high]]).astype(dtype)
    spread = rng.uniform(low, high, size=size - 6)
    special = [0.0, -0.0, np.nan, np.inf, -np.inf, high]
    values = np.concatenate([spread, special])
    if kind == "c":
        parts = values
        values = np.empty(parts.shape, dtype=dtype)
        values.real, values.imag = parts, np.roll(parts, 3)
    return values.astype(dtype)


def op_name(op) -> str:
    """An op's text, an elementwise one by its scalar op's name: 'add', not
    'Elemwise{add,no_inplace}' (rewrite tests list the ops a function kept)."""
    if type(op).__name__ == "Elemwise" and not op.inplace_pattern:
        return op.name or str(op.scalar_op)
    return str(op)
