"""C code of the scalar ops: the C that computes one element with numpy's semantics.

Each rule maps a CScalar (the op, the C names and dtypes of its inputs and outputs) to the
statements computing one element plus the helper functions they call (a CScalarCode), or to
None where C cannot match numpy (no libm equivalent: erfinv, erfcinv, the Bessel functions;
float16 and complex have no C type at all). Elemwise loops and fused Composite graphs use them
on the CPU; CUDA kernels are to reuse them. Inputs are converted to the C type of the output
first, as numpy converts them to the dtype of the loop it picks. Integer arithmetic wraps (the
module is compiled with -fwrapv, as numpy's loops behave).

Importing sympile.scalar imports this module, which sets `c_rule` on the ops' classes and binds
ScalarOp.c_scalar(), which calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sympile.graph.ccode import C_TYPES, c_file, render
from sympile.graph.utils import bind_methods
from sympile.scalar.basic import (
    Cast,
    ScalarOp,
    abs,
    add,
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    ceil,
    chi2sf,
    clip,
    complex,
    complex_from_polar,
    conj,
    cos,
    cosh,
    deg2rad,
    eq,
    erf,
    erfc,
    erfcinv,
    erfcx,
    erfinv,
    exp,
    exp2,
    expm1,
    floor,
    gamma,
    gammaln,
    ge,
    gt,
    hypot,
    i0,
    i1,
    identity,
    imag,
    int_div,
    invert,
    isfinite,
    isinf,
    isnan,
    iv,
    j0,
    j1,
    jv,
    le,
    left_shift,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mod,
    mul,
    neg,
    neq,
    pow,
    psi,
    rad2deg,
    real,
    reciprocal,
    right_shift,
    round_half_away_from_zero,
    round_half_to_even,
    sigmoid,
    sign,
    sin,
    sinh,
    softplus,
    sqr,
    sqrt,
    sub,
    switch,
    tan,
    tanh,
    tri_gamma,
    true_div,
    trunc,
    upcast,
)
from sympile.scalar.c_fastmath import (
    FALLBACK_FLAG,
    FALLBACK_LIMIT_FLOAT32,
    FAST_MATH_SUPPORT,
    NEEDS_FALLBACK,
    fast_function,
)

__all__ = ["C_ERRORS", "C_ERROR_FLAG", "CScalar", "CScalarCode", "FLOAT_TO_INT", "NO_C_CODE",
           "c_conversion", "c_literal"]

# The int the statements set (or-ing a code of C_ERRORS into it) to report an error; the loop
# running them raises the matching exception after the loop.
C_ERROR_FLAG = "sympile_error"
# (code, Python exception, message) of each error the statements can report.
C_ERRORS = ((1, "PyExc_ValueError", "Integers to negative integer powers are not allowed."),)
_NEGATIVE_POWER = 1


@dataclass(frozen=True)
class CScalarCode:
    """What a C rule gives: statements, and the top-level helpers they call."""

    statements: str
    support: tuple[str, ...] = ()


@dataclass(frozen=True)
class CScalar:
    """The arguments of a C rule: the op, the C names of its inputs and outputs, their
    dtypes; the properties describe the first output."""

    op: ScalarOp
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    input_dtypes: tuple[str, ...]
    output_dtypes: tuple[str, ...]

    @property
    def out(self) -> str:
        return self.outputs[0]

    @property
    def dtype(self) -> str:
        return self.output_dtypes[0]

    @property
    def ctype(self) -> str:
        return C_TYPES[self.dtype]

    @property
    def kind(self) -> str:
        """numpy's kind of the output dtype: 'b', 'i', 'u' or 'f'."""
        return np.dtype(self.dtype).kind

    def x(self, index: int, dtype: str | None = None) -> str:
        """Input `index` converted to `dtype` (the output's by default)."""
        dtype = dtype or self.dtype
        name = self.inputs[index]
        return name if self.input_dtypes[index] == dtype else f"(({C_TYPES[dtype]}){name})"

    def function(self, name: str) -> str:
        """The C math function `name` for the output's float type (expf for float32)."""
        return name + "f" if self.dtype == "float32" else name

    def literal(self, value: Any) -> str:
        return c_literal(value, self.dtype)

    def assign(self, expression: str, *support: str) -> CScalarCode:
        return CScalarCode(f"{self.out} = {expression};", support)

    def with_locals(self, names: str, expression: str, *support: str,
                    before: str = "") -> CScalarCode:
        """`expression` of locals a, b, c (as many as `names` has letters) holding the inputs
        in the output's C type, so that each input is read once; `before`: statements run
        first."""
        declarations = " ".join(f"const {self.ctype} {name} = {self.x(i)};"
                                for i, name in enumerate(names))
        return CScalarCode(f"{{ {declarations} {before}{self.out} = {expression}; }}", support)


def c_literal(value: Any, dtype: str) -> str:
    """A C expression of type C_TYPES[dtype] whose value is `value` exactly."""
    value = np.asarray(value).astype(dtype)[()]
    ctype = C_TYPES[dtype]
    kind = np.dtype(dtype).kind
    if kind == "b":
        return "1" if value else "0"
    if kind == "u":
        return f"(({ctype}){int(value)}ULL)"
    if kind == "i":
        number = int(value)
        if number == np.iinfo(np.int64).min:
            # -9223372036854775808 would be the negation of a literal too large for long long.
            return f"(({ctype})(-9223372036854775807LL - 1))"
        return f"(({ctype}){number}LL)"
    number = float(value)
    if np.isnan(number):
        return f"(({ctype})NAN)"
    if np.isinf(number):
        return f"(({ctype}){'-' if number < 0 else ''}INFINITY)"
    # repr round-trips a double, and a float32 value converts to it exactly.
    return f"(({ctype}){number!r})"


def _float_only(function_name: str, via_double: bool = False):
    """output = function(x) for float outputs; via_double: computed in double and rounded
    (scipy's float32 loops compute in double)."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind != "f":
            return None
        if via_double and c.dtype == "float32":
            return c.assign(f"(npy_float32){function_name}((npy_float64){c.inputs[0]})")
        return c.assign(f"{c.function(function_name)}({c.x(0)})")
    return rule


def _vectorisable(function_name: str):
    """output = function(x) for float outputs, by sympile.scalar.c_fastmath's branch-free
    version where there is one for the dtype (libm's otherwise). sin and cos report arguments
    outside their fast range through FALLBACK_FLAG."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind != "f":
            return None
        fast = fast_function(function_name, c.dtype)
        if fast is None:
            return c.assign(f"{c.function(function_name)}({c.x(0)})")
        if function_name in NEEDS_FALLBACK:
            return c.with_locals("a", f"{fast}(a)", FAST_MATH_SUPPORT,
                                 before=f"{FALLBACK_FLAG} |= "
                                        f"!(fabsf(a) <= {FALLBACK_LIMIT_FLOAT32!r}f); ")
        return c.assign(f"{fast}({c.x(0)})", FAST_MATH_SUPPORT)
    return rule


def _binary(symbol: str, bool_symbol: str | None = None):
    """output = x symbol y (bool outputs: x bool_symbol y, None: no bool form)."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind == "b":
            if bool_symbol is None:
                return None
            return c.assign(f"({c.x(0)} {bool_symbol} {c.x(1)})")
        return c.assign(f"({c.x(0)} {symbol} {c.x(1)})")
    return rule


def _same_for_integers(float_rule):
    """Rounding functions: integers (and bools) are their own result, as in numpy."""
    def rule(c: CScalar) -> CScalarCode | None:
        return float_rule(c) if c.kind == "f" else c.assign(c.x(0))
    return rule


def _signed_division_support(dtype: str) -> str:
    """Floor division and Python's modulo of one signed dtype; 0 for a zero divisor (numpy).
    A divisor of -1 is handled apart: INT_MIN / -1 traps on x86."""
    t = C_TYPES[dtype]
    return f"""
static inline {t} sympile_floor_divide_{dtype}({t} a, {t} b)
{{
    if (b == 0)
        return 0;
    if (b == -1)
        return ({t})(0 - (npy_uint64)a);
    {t} quotient = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        quotient -= 1;
    return quotient;
}}

static inline {t} sympile_remainder_{dtype}({t} a, {t} b)
{{
    if (b == 0 || b == -1)
        return 0;
    {t} remainder = a % b;
    if (remainder != 0 && ((remainder < 0) != (b < 0)))
        remainder += b;
    return remainder;
}}
"""


_FLOAT_DIVISION = c_file(__file__, "float_division.c")


def _float_division_support(dtype: str) -> str:
    """numpy's floor division and remainder of floats (npy_divmod, float_division.c)."""
    return render(_FLOAT_DIVISION, {"T": C_TYPES[dtype], "dtype": dtype,
                                    "f": "f" if dtype == "float32" else ""})


def _division(function: str):
    """int_div and mod: numpy's signs, 0 for an integer zero divisor."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind == "u":
            symbol = "/" if function == "floor_divide" else "%"
            return c.with_locals("ab", f"b == 0 ? 0 : a {symbol} b")
        if c.kind == "b":
            return None
        support = (_signed_division_support(c.dtype) if c.kind == "i"
                   else _float_division_support(c.dtype))
        return c.assign(f"sympile_{function}_{c.dtype}({c.x(0)}, {c.x(1)})", support)
    return rule


def _power_support(dtype: str) -> str:
    """x ** y of integers by squaring, in uint64 (wraps like numpy; the low bits of the
    product do not depend on the width it is computed in). y < 0 gives 0: the caller
    reports the error."""
    t = C_TYPES[dtype]
    return f"""
static inline {t} sympile_power_{dtype}({t} base, {t} exponent)
{{
    npy_uint64 result = 1, factor = (npy_uint64)base;
    if (exponent < 0)
        return 0;
    for (npy_uint64 remaining = (npy_uint64)exponent; remaining; remaining >>= 1) {{
        if (remaining & 1)
            result *= factor;
        factor *= factor;
    }}
    return ({t})result;
}}
"""


def _power(c: CScalar) -> CScalarCode | None:
    if c.kind == "f":
        return c.assign(f"{c.function('pow')}({c.x(0)}, {c.x(1)})")
    if c.kind == "b":
        return None
    check = f"if (b < 0) {C_ERROR_FLAG} |= {_NEGATIVE_POWER}; " if c.kind == "i" else ""
    return c.with_locals("ab", f"sympile_power_{c.dtype}(a, b)", _power_support(c.dtype),
                         before=check)


def _absolute(c: CScalar) -> CScalarCode | None:
    if c.kind == "f":
        return c.assign(f"{c.function('fabs')}({c.x(0)})")
    if c.kind == "i":
        # -INT_MIN wraps to INT_MIN, as in numpy (-fwrapv).
        return c.with_locals("a", "a < 0 ? -a : a")
    return c.assign(c.x(0))


def _sign(c: CScalar) -> CScalarCode | None:
    if c.kind == "f":
        one, zero = c.literal(1), c.literal(0)
        # nan gives nan, -0 gives +0, as in numpy.
        return c.with_locals("a", f"a > 0 ? {one} : (a < 0 ? -{one} : (a == 0 ? {zero} : a))")
    if c.kind == "i":
        return c.with_locals("a", "(a > 0) - (a < 0)")
    if c.kind == "u":
        return c.assign(f"({c.x(0)} > 0)")
    return None


def _square(c: CScalar) -> CScalarCode | None:
    return None if c.kind == "b" else c.with_locals("a", "a * a")


def _reciprocal(c: CScalar) -> CScalarCode | None:
    if c.kind == "f":
        return c.assign(f"{c.literal(1)} / {c.x(0)}")
    if c.kind == "b":
        return None
    # numpy computes 1.0 / x and converts it: 0 for |x| > 1, and for x = 0 what its C
    # conversion of inf gives (platform-dependent), taken from numpy itself.
    with np.errstate(all="ignore"):
        of_zero = np.reciprocal(np.zeros(1, dtype=c.dtype))[0]
    minus_one = "a == -1 ? -1 : " if c.kind == "i" else ""
    return c.with_locals("a", f"a == 1 ? 1 : ({minus_one}(a == 0 ? {c.literal(of_zero)} : 0))")


def _extremum(symbol: str, bool_symbol: str):
    """maximum (symbol '>') and minimum ('<'): a NaN in either input gives NaN, and of equal
    values (0 and -0) the second, as numpy's loops do."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind == "b":
            return c.assign(f"({c.x(0)} {bool_symbol} {c.x(1)})")
        nan_test = " || isnan(a)" if c.kind == "f" else ""
        return c.with_locals("ab", f"(a {symbol} b{nan_test}) ? a : b")
    return rule


def _clip(c: CScalar) -> CScalarCode | None:
    # numpy: minimum(maximum(x, low), high) where each step keeps a NaN of its first operand
    # and takes the second on ties and NaN seconds.
    if c.kind == "f":
        return c.with_locals("abc", "isnan(m) ? m : (m < c ? m : c)",
                             before=f"const {c.ctype} m = isnan(a) ? a : (a > b ? a : b); ")
    return c.with_locals("abc", "m < c ? m : c", before=f"const {c.ctype} m = a > b ? a : b; ")


def _truth(c: CScalar, index: int) -> str:
    return f"({c.inputs[index]} != 0)"


def _switch_rule(c: CScalar) -> CScalarCode | None:
    return c.assign(f"{_truth(c, 0)} ? {c.x(1)} : {c.x(2)}")


def _zero_imaginary(c: CScalar) -> CScalarCode | None:
    return c.assign(c.literal(0))


def _angle(c: CScalar) -> CScalarCode | None:
    if c.kind != "f":
        return None
    return c.assign(f"{c.function('atan2')}({c.literal(0)}, {c.x(0)})")


def _sigmoid(c: CScalar) -> CScalarCode | None:
    # scipy's expit: 1 / (1 + exp(-x)), in the dtype; 0 (not NaN) where exp(-x) overflows.
    if c.kind != "f":
        return None
    one = c.literal(1)
    fast = fast_function("exp", c.dtype)
    return c.assign(f"{one} / ({one} + {fast}(-{c.x(0)}))", FAST_MATH_SUPPORT)


def _logaddexp_support(dtype: str) -> str:
    """numpy's logaddexp: x + log1p(exp(y - x)) for the larger x, exact for equal infinities."""
    t = C_TYPES[dtype]
    f = "f" if dtype == "float32" else ""
    return f"""
static inline {t} sympile_logaddexp_{dtype}({t} x, {t} y)
{{
    if (x == y)
        return x + ({t})0.693147180559945309417232121458176568;
    {t} difference = x - y;
    if (difference > 0)
        return x + log1p{f}(exp{f}(-difference));
    if (difference <= 0)
        return y + log1p{f}(exp{f}(difference));
    return difference;
}}
"""


def _logaddexp(c: CScalar) -> CScalarCode | None:
    if c.kind != "f":
        return None
    return c.assign(f"sympile_logaddexp_{c.dtype}({c.x(0)}, {c.x(1)})",
                    _logaddexp_support(c.dtype))


def _softplus_rule(c: CScalar) -> CScalarCode | None:
    # perform's logaddexp(0, x).
    if c.kind != "f":
        return None
    return c.assign(f"sympile_logaddexp_{c.dtype}({c.literal(0)}, {c.x(0)})",
                    _logaddexp_support(c.dtype))


def _scaled(factor_name: str):
    """deg2rad (x * (pi / 180)) and rad2deg, with the factor rounded to the dtype first, as
    numpy does."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind != "f":
            return None
        pi, half_turn = np.asarray(np.pi, c.dtype), np.asarray(180, c.dtype)
        factor = pi / half_turn if factor_name == "deg2rad" else half_turn / pi
        return c.assign(f"{c.x(0)} * {c.literal(factor)}")
    return rule


def _gammaln(c: CScalar) -> CScalarCode | None:
    # scipy gives -inf at -inf where C's lgamma gives +inf.
    if c.kind != "f":
        return None
    code = c.with_locals("a", "(npy_float64)a == -INFINITY ? a : "
                              f"({c.ctype})lgamma((npy_float64)a)")
    return code


_DIGAMMA = c_file(__file__, "digamma.h")

_TRIGAMMA = c_file(__file__, "trigamma.h")


def _special(function_name: str, support: str):
    """A function of sympile's C support, in double (float32 results rounded from it)."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind != "f":
            return None
        return c.assign(f"({c.ctype}){function_name}((npy_float64){c.inputs[0]})", support)
    return rule


_MIRRORED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}


def _comparison(symbol: str):
    """In the dtype numpy compares in (the inputs' promotion); a signed integer and a uint64,
    which promote to float64, are compared exactly, as numpy does."""
    def rule(c: CScalar) -> CScalarCode | None:
        kinds = [np.dtype(d).kind for d in c.input_dtypes]
        if sorted(kinds) == ["i", "u"] and "uint64" in c.input_dtypes:
            signed_first = kinds[0] == "i"
            signed = c.inputs[0 if signed_first else 1]
            unsigned = c.inputs[1 if signed_first else 0]
            operator = symbol if signed_first else _MIRRORED[symbol]
            negative_result = "1" if operator in ("<", "<=", "!=") else "0"
            return c.assign(f"({signed} < 0 ? {negative_result} : "
                            f"((npy_uint64){signed} {operator} {unsigned}))")
        common = upcast(*c.input_dtypes)
        return c.assign(f"({c.x(0, common)} {symbol} {c.x(1, common)})")
    return rule


def _predicate(macro: str, integer_value: str):
    def rule(c: CScalar) -> CScalarCode | None:
        if np.dtype(c.input_dtypes[0]).kind != "f":
            return c.assign(integer_value)
        # glibc's isinf may give -1: compare with 0 for a bool.
        return c.assign(f"({macro}({c.inputs[0]}) != 0)")
    return rule


def _logical(template: str):
    def rule(c: CScalar) -> CScalarCode | None:
        return c.assign(template.format(*(_truth(c, i) for i in range(len(c.inputs)))))
    return rule


def _invert(c: CScalar) -> CScalarCode | None:
    return c.assign(f"!{c.x(0)}" if c.kind == "b" else f"~{c.x(0)}")


def _shift(direction: str):
    """numpy's shifts: a count outside [0, width) gives 0 (right shift of a negative: -1)."""
    def rule(c: CScalar) -> CScalarCode | None:
        if c.kind not in "iu":
            return None
        width = np.dtype(c.dtype).itemsize * 8
        in_range = f"(npy_uint64)b < {width}"
        if direction == "left":
            # Shifted as unsigned: shifting a negative signed value left is undefined in C.
            expression = f"{in_range} ? ({c.ctype})((npy_uint64)a << b) : 0"
        else:
            negative = "a < 0 ? -1 : " if c.kind == "i" else ""
            expression = f"{in_range} ? a >> b : ({negative}0)"
        return c.with_locals("ab", expression)
    return rule


# Float to integer as numpy's astype (float_to_int.h): the conversion each integer dtype
# goes through.
FLOAT_TO_INT = c_file(__file__, "float_to_int.h")
_FLOAT_TO_INT_VIA = {"int8": "int32", "uint8": "int32", "int16": "int32", "uint16": "int32",
                     "int32": "int32", "uint32": "uint32", "int64": "int64",
                     "uint64": "uint64"}


def c_conversion(expression: str, source_dtype: str, dtype: str) -> str:
    """`expression` (of `source_dtype`) converted to `dtype` as numpy's astype converts:
    nonzero is True for bool (NaN included), a float to an integer through float_to_int.h
    (FLOAT_TO_INT, which the caller's support must hold) where C would be undefined, C's
    conversion otherwise."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return f"(npy_bool)(({expression}) != 0)"
    if kind in "iu" and np.dtype(source_dtype).kind == "f":
        return (f"({C_TYPES[dtype]})sympile_float_to_{_FLOAT_TO_INT_VIA[dtype]}"
                f"((double)({expression}))")
    return f"({C_TYPES[dtype]})({expression})"


def _cast_rule(c: CScalar) -> CScalarCode | None:
    if c.kind == "b":
        return c.assign(_truth(c, 0))
    conversion = c_conversion(c.inputs[0], c.input_dtypes[0], c.dtype)
    return c.assign(conversion, *((FLOAT_TO_INT,) if "sympile_float_to_" in conversion else ()))


_C_RULES: dict[ScalarOp, Callable[[CScalar], CScalarCode | None]] = {
    add: _binary("+", "||"),
    sub: _binary("-"),
    mul: _binary("*", "&&"),
    true_div: lambda c: c.assign(f"{c.x(0)} / {c.x(1)}") if c.kind == "f" else None,
    int_div: _division("floor_divide"),
    mod: _division("remainder"),
    pow: _power,
    neg: lambda c: c.assign(f"-{c.x(0)}") if c.kind != "b" else None,
    abs: _absolute,
    sign: _sign,
    sqr: _square,
    sqrt: _float_only("sqrt"),
    reciprocal: _reciprocal,
    maximum: _extremum(">", "||"),
    minimum: _extremum("<", "&&"),
    clip: _clip,
    switch: _switch_rule,
    identity: lambda c: c.assign(c.x(0)),
    conj: lambda c: c.assign(c.x(0)),
    real: lambda c: c.assign(c.x(0)),
    imag: _zero_imaginary,
    angle: _angle,
    exp: _vectorisable("exp"),
    exp2: _float_only("exp2"),
    expm1: _float_only("expm1"),
    log: _vectorisable("log"),
    log2: _float_only("log2"),
    log10: _float_only("log10"),
    log1p: _float_only("log1p"),
    sigmoid: _sigmoid,
    softplus: _softplus_rule,
    logaddexp: _logaddexp,
    sin: _vectorisable("sin"),
    cos: _vectorisable("cos"),
    tan: _float_only("tan"),
    arcsin: _float_only("asin"),
    arccos: _float_only("acos"),
    arctan: _float_only("atan"),
    arctan2: lambda c: (c.assign(f"{c.function('atan2')}({c.x(0)}, {c.x(1)})")
                        if c.kind == "f" else None),
    sinh: _float_only("sinh"),
    cosh: _float_only("cosh"),
    tanh: _vectorisable("tanh"),
    arcsinh: _float_only("asinh"),
    arccosh: _float_only("acosh"),
    arctanh: _float_only("atanh"),
    hypot: lambda c: (c.assign(f"{c.function('hypot')}({c.x(0)}, {c.x(1)})")
                      if c.kind == "f" else None),
    deg2rad: _scaled("deg2rad"),
    rad2deg: _scaled("rad2deg"),
    erf: _float_only("erf", via_double=True),
    erfc: _float_only("erfc", via_double=True),
    gamma: _float_only("tgamma", via_double=True),
    gammaln: _gammaln,
    psi: _special("sympile_digamma", _DIGAMMA),
    tri_gamma: _special("sympile_trigamma", _TRIGAMMA),
    floor: _same_for_integers(_float_only("floor")),
    ceil: _same_for_integers(_float_only("ceil")),
    trunc: _same_for_integers(_float_only("trunc")),
    # rint rounds half to even in the default rounding mode, as np.round.
    round_half_to_even: _same_for_integers(_float_only("rint")),
    round_half_away_from_zero: _same_for_integers(_float_only("round")),
    eq: _comparison("=="),
    neq: _comparison("!="),
    lt: _comparison("<"),
    gt: _comparison(">"),
    le: _comparison("<="),
    ge: _comparison(">="),
    isnan: _predicate("isnan", "0"),
    isinf: _predicate("isinf", "0"),
    isfinite: _predicate("isfinite", "1"),
    logical_and: _logical("{} && {}"),
    logical_or: _logical("{} || {}"),
    logical_xor: _logical("{} != {}"),
    logical_not: _logical("!{}"),
    bitwise_and: _binary("&", "&"),
    bitwise_or: _binary("|", "|"),
    bitwise_xor: _binary("^", "^"),
    invert: _invert,
    left_shift: _shift("left"),
    right_shift: _shift("right"),
}
# The ops left to perform(): scipy's inverse error functions, erfcx, chi2sf and Bessel
# functions have no libm equivalent (libm's j0 and j1 differ from scipy's in the last bits);
# complex and complex_from_polar build complex values, which the C kernels do not.
NO_C_CODE = frozenset({erfinv, erfcinv, erfcx, chi2sf, j0, j1, jv, i0, i1, iv, complex,
                       complex_from_polar})

for _op, _c_rule in _C_RULES.items():
    type(_op).c_rule = staticmethod(_c_rule)
Cast.c_rule = staticmethod(_cast_rule)


class _ScalarOpC:
    """c_scalar(), bound onto ScalarOp: it builds a CScalar, which this module defines on
    top of sympile.scalar.basic."""

    def c_scalar(self, inputs: Sequence[str], outputs: Sequence[str],
                 input_dtypes: Sequence[str], output_dtypes: Sequence[str]) -> CScalarCode | None:
        """The C computing one element: statements that assign each output variable (a local
        of its dtype's C type, named in `outputs`) from the input variables (named in
        `inputs`, of the C types of `input_dtypes`, see sympile.graph.ccode.C_TYPES) with
        numpy's semantics, and the top-level helpers they call. They may declare locals inside
        their own braces and report an error by or-ing a code of c_rules.C_ERRORS into the int
        c_rules.C_ERROR_FLAG (the loop running them raises after the loop). None: no C code
        for these dtypes (float16, complex, or a function C does not have); Elemwise then
        calls perform()."""
        if self.c_rule is None or not all(d in C_TYPES for d in (*input_dtypes, *output_dtypes)):
            return None
        return type(self).c_rule(CScalar(self, tuple(inputs), tuple(outputs),
                                         tuple(input_dtypes), tuple(output_dtypes)))


bind_methods(ScalarOp, _ScalarOpC)
