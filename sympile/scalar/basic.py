"""Scalar Types and Ops: the math that Elemwise lifts to tensors.

Each scalar Op names its numpy (or scipy.special) function, `nfunc`, which works elementwise
on arrays. Output dtypes are numpy's own: they are found by applying `nfunc` to empty arrays of
the input dtypes, so sympile's type promotion is numpy's by construction.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.special

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.op import Op
from sympile.graph.type import Type

if TYPE_CHECKING:
    from sympile.scalar.c_rules import CScalar, CScalarCode

BOOL_DTYPES = ("bool",)
INT_DTYPES = ("int8", "int16", "int32", "int64")
UINT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES = ("float16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
INTEGER_DTYPES = INT_DTYPES + UINT_DTYPES
DISCRETE_DTYPES = BOOL_DTYPES + INTEGER_DTYPES
CONTINUOUS_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES
ALL_DTYPES = DISCRETE_DTYPES + CONTINUOUS_DTYPES


def normalize_dtype(dtype: Any) -> str:
    """The name of a supported dtype ('float32' for np.float32, 'f4', np.dtype('float32'),
    ...); TypeError if `dtype` is not a dtype or not one of ALL_DTYPES."""
    try:
        name = np.dtype(dtype).name
    except TypeError as error:
        raise TypeError(f"{dtype!r} is not a dtype") from error
    if name not in ALL_DTYPES:
        raise TypeError(f"dtype {name} is not supported; expected one of {', '.join(ALL_DTYPES)}")
    return name


def upcast(*dtypes: str) -> str:
    """numpy's promotion of the given dtypes."""
    return np.result_type(*dtypes).name


class ScalarType(Type):
    """A 0-d value of one dtype (used inside Elemwise and fused Composite graphs)."""

    def __init__(self, dtype: Any):
        self.dtype = normalize_dtype(dtype)

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype

    def __hash__(self):
        return hash((type(self), self.dtype))

    def __str__(self):
        return self.dtype

    def __repr__(self):
        return f"ScalarType({self.dtype})"

    def filter(self, value, strict=False, allow_downcast=None):
        """`value` as a numpy scalar of this dtype. A numpy scalar of the dtype passes; other
        numbers are converted when numpy casts their dtype safely, when they are Python
        numbers that convert exactly, or when allow_downcast is True; else TypeError."""
        if isinstance(value, np.generic) and value.dtype.name == self.dtype:
            return value
        if strict:
            raise TypeError(f"expected a numpy scalar of dtype {self.dtype}, got {value!r}")
        try:
            data = np.asarray(value)
        except (TypeError, ValueError) as error:
            raise TypeError(f"expected a scalar of dtype {self.dtype}, got {value!r} "
                            f"({error})") from None
        if data.ndim != 0 or data.dtype.kind not in "biufc":
            raise TypeError(f"expected a scalar of dtype {self.dtype}, got {value!r}")
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            converted = data.astype(self.dtype)
        python_number = not isinstance(value, (np.ndarray, np.generic))
        exact = python_number and (converted == data or bool(np.isnan(converted)
                                                             and np.isnan(data)))
        if allow_downcast or np.can_cast(data.dtype, self.dtype) or exact:
            return converted[()]
        raise TypeError(f"cannot convert {value!r} ({data.dtype}) to {self.dtype} without "
                        f"losing precision; pass allow_downcast=True to allow it")


def get_scalar_type(dtype: Any) -> ScalarType:
    return _scalar_types(normalize_dtype(dtype))


@functools.cache
def _scalar_types(dtype: str) -> ScalarType:
    return ScalarType(dtype)


def constant(value: Any, name: str | None = None, dtype: Any = None) -> Constant:
    """A scalar Constant holding the number `value`, of numpy's dtype for it or of `dtype`
    (Theano's theano.scalar.constant)."""
    data = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
    if data.ndim != 0 or data.dtype.kind not in "biufc":
        raise TypeError(f"scalar.constant: expected a number, got {value!r}")
    return get_scalar_type(data.dtype).make_constant(data[()], name)


class ScalarOp(Op):
    """An elementwise function of `nin` scalars with `nout` results.

    nfunc: the numpy-compatible implementation, applied to arrays by Elemwise.
    identity: the value x with op(x, y) == y, for reductions (None if there is none).
    """

    nin: int = 1
    nout: int = 1
    nfunc: Callable[..., Any] | None = None
    identity: Any = None
    commutative = False
    associative = False
    # A comparison's result is bool whatever its operands' dtype, so a Python int out of every
    # integer dtype's range can still be compared (see tensor.elemwise's weak scalars).
    comparison = False
    # The op uses its inputs only for their truth value (logical_and, ...): a Python scalar
    # operand is then just True or False, as in numpy's logical loops.
    logical = False
    # The inputs whose dtypes decide the result dtype (None: all). switch's condition is not
    # one of them, as in numpy.where.
    promoted_inputs: tuple[int, ...] | None = None

    def __init__(self, output_types_preference: Callable[..., Any] | None = None,
                 name: str | None = None):
        """Theano's constructor of a custom scalar op: output_types_preference, a function
        of the inputs' ScalarTypes giving the outputs' (upgrade_to_float, same_out,
        transfer_type(0), ...), and a name; without it, numpy's result dtypes (probed)."""
        if output_types_preference is not None:
            if not callable(output_types_preference):
                raise TypeError(f"{type(self).__name__}: output_types_preference must be a "
                                f"function of the inputs' types, got "
                                f"{output_types_preference!r}")
            self.output_types_preference = output_types_preference
        if name is not None:
            self._instance_name = name

    @property
    def name(self) -> str:
        return self.__dict__.get("_instance_name") or type(self).__name__.lower()

    def __str__(self):
        if self.__props__:
            return super().__str__()
        return self.name

    def _theano_options(self) -> tuple:
        return (self.__dict__.get("output_types_preference"),
                self.__dict__.get("_instance_name"))

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and self._theano_options() == other._theano_options()

    def __hash__(self) -> int:
        return hash((super().__hash__(), self._theano_options()))

    def impl(self, *inputs: Any) -> Any:
        return type(self).nfunc(*inputs)

    @property
    def impl_takes_arrays(self) -> bool:
        """Whether impl takes whole arrays (sympile's ops: their numpy function) or, as in
        Theano's contract, scalars (the impl of a custom op written outside sympile, applied
        element by element: see elementwise_impl)."""
        return _impl_takes_arrays(type(self))

    def output_dtypes(self, *input_dtypes: str) -> tuple[str, ...]:
        """The output_types_preference's dtypes where the op has one, else numpy's result
        dtype(s) for inputs of these dtypes; TypeError if numpy has none."""
        preference = getattr(self, "output_types_preference", None)
        if preference is not None:
            types = preference(*(get_scalar_type(d) for d in input_dtypes))
            if len(types) != self.nout:
                raise TypeError(f"{self}: output_types_preference gave {len(types)} types "
                                f"for {self.nout} output(s)")
            return tuple(normalize_dtype(t.dtype) for t in types)
        if not self.impl_takes_arrays:
            raise NotImplementedError(f"{self}: a scalar op whose impl takes scalars needs "
                                      f"an output_types_preference (Theano's constructor "
                                      f"argument) to give its output types")
        return _probe_output_dtypes(self, tuple(input_dtypes))



    def make_node(self, *inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self}: expected {self.nin} inputs, got {len(inputs)}")
        variables = [as_scalar(x) for x in inputs]
        dtypes = self.output_dtypes(*(v.type.dtype for v in variables))
        return Apply(self, variables, [get_scalar_type(d)() for d in dtypes])

    def perform(self, node, inputs, output_storage):
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for storage, result, variable in zip(output_storage, results, node.outputs):
            storage[0] = np.asarray(result).astype(variable.type.dtype)[()]

    # The op's C definition, a function of a CScalar (see sympile.scalar.c_rules, which sets
    # it for the ops of this module); None where the op has no C code. c_rules also binds
    # c_scalar(), which calls it.
    c_rule: Callable[[CScalar], CScalarCode | None] | None = None


class UnaryScalarOp(ScalarOp):
    """Theano's base of a custom scalar op of one input."""

    nin = 1


class BinaryScalarOp(ScalarOp):
    """Theano's base of a custom scalar op of two inputs."""

    nin = 2


# Theano's output_types_preference functions: each takes the inputs' ScalarTypes and gives
# the outputs'.

def _types(*dtypes: str) -> tuple[ScalarType, ...]:
    return tuple(get_scalar_type(dtype) for dtype in dtypes)


def _refuse(kind: str, types) -> None:
    for t in types:
        if np.dtype(t.dtype).kind == kind:
            name = {"c": "complex", "b": "bool"}[kind]
            raise TypeError(f"{name} inputs are not supported here, got {t.dtype}")


def upcast_out(*types: ScalarType) -> tuple[ScalarType, ...]:
    """The inputs' common dtype (numpy's promotion)."""
    return _types(upcast(*(t.dtype for t in types)))


def upcast_out_nobool(*types: ScalarType) -> tuple[ScalarType, ...]:
    """upcast_out, refusing a bool result."""
    result = upcast_out(*types)
    _refuse("b", result)
    return result


def upcast_out_min8(*types: ScalarType) -> tuple[ScalarType, ...]:
    """upcast_out, a bool result made int8."""
    result = upcast_out(*types)
    return _types("int8") if result[0].dtype == "bool" else result


def upcast_out_no_complex(*types: ScalarType) -> tuple[ScalarType, ...]:
    """upcast_out, refusing complex inputs."""
    _refuse("c", types)
    return upcast_out(*types)


# Theano's float for each integer: float32 where it holds every value, else float64.
_TO_FLOAT = {"bool": "float32", "int8": "float32", "uint8": "float32", "int16": "float32",
             "uint16": "float32", "int32": "float64", "uint32": "float64",
             "int64": "float64", "uint64": "float64"}


def upgrade_to_float(*types: ScalarType) -> tuple[ScalarType, ...]:
    """The common dtype of the inputs, integers counted as the float that holds them."""
    return _types(upcast(*(_TO_FLOAT.get(t.dtype, t.dtype) for t in types)))


def upgrade_to_float64(*types: ScalarType) -> tuple[ScalarType, ...]:
    return _types("float64")


def upgrade_to_float_no_complex(*types: ScalarType) -> tuple[ScalarType, ...]:
    """upgrade_to_float, refusing complex inputs."""
    _refuse("c", types)
    return upgrade_to_float(*types)


def same_out(type: ScalarType) -> tuple[ScalarType, ...]:
    """The input's type."""
    return (type,)


def same_out_nobool(type: ScalarType) -> tuple[ScalarType, ...]:
    _refuse("b", (type,))
    return (type,)


def same_out_min8(type: ScalarType) -> tuple[ScalarType, ...]:
    return _types("int8") if type.dtype == "bool" else (type,)


def same_out_nocomplex(type: ScalarType) -> tuple[ScalarType, ...]:
    _refuse("c", (type,))
    return (type,)


def int_out(*types: ScalarType) -> tuple[ScalarType, ...]:
    return _types("int64")


def int_out_nocomplex(*types: ScalarType) -> tuple[ScalarType, ...]:
    _refuse("c", types)
    return _types("int64")


def float_out(*types: ScalarType) -> tuple[ScalarType, ...]:
    return _types("float64")


def float_out_nocomplex(*types: ScalarType) -> tuple[ScalarType, ...]:
    _refuse("c", types)
    return _types("float64")


class transfer_type:
    """Theano's transfer_type(*transfer): output j gets the type of input transfer[j] (an
    index), the dtype transfer[j] names (a string), or the inputs' common type (None)."""

    def __init__(self, *transfer: int | str | None):
        for entry in transfer:
            if not (entry is None or isinstance(entry, str)
                    or (isinstance(entry, int) and not isinstance(entry, bool))):
                raise TypeError(f"transfer_type: each entry must be an input index, a dtype "
                                f"or None, got {entry!r}")
        self.transfer = transfer

    def __call__(self, *types: ScalarType) -> tuple[ScalarType, ...]:
        return tuple(upcast_out(*types)[0] if entry is None
                     else get_scalar_type(entry) if isinstance(entry, str)
                     else types[entry] for entry in self.transfer)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.transfer == self.transfer

    def __hash__(self) -> int:
        return hash((type(self), self.transfer))

    def __str__(self) -> str:
        return f"transfer_type{{{self.transfer}}}"


class specific_out:
    """Theano's specific_out(*types): these output types whatever the inputs'."""

    def __init__(self, *spec: Any):
        self.spec = tuple(get_scalar_type(getattr(t, "dtype", t)) for t in spec)

    def __call__(self, *types: ScalarType) -> tuple[ScalarType, ...]:
        return self.spec

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.spec == self.spec

    def __hash__(self) -> int:
        return hash((type(self), self.spec))


@functools.cache
def _impl_takes_arrays(cls: type) -> bool:
    owner = next(klass for klass in cls.__mro__ if "impl" in klass.__dict__)
    return owner.__module__.split(".")[0] == "sympile"


def elementwise_impl(op: ScalarOp, *inputs: Any) -> Any:
    """op's impl over (broadcast) arrays: at once where it takes arrays, else element by
    element (numpy.frompyfunc; object arrays, which the caller casts to the output dtypes)."""
    if op.impl_takes_arrays:
        return op.impl(*inputs)
    return np.frompyfunc(op.impl, op.nin, op.nout)(*inputs)


@functools.cache
def _probe_output_dtypes(op: ScalarOp, input_dtypes: tuple[str, ...]) -> tuple[str, ...]:
    probes = [np.zeros((0,), dtype=d) for d in input_dtypes]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = op.impl(*probes)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{op} is not defined for inputs of dtype "
                        f"{', '.join(input_dtypes)} ({error})") from None
    if op.nout == 1:
        results = (results,)
    return tuple(normalize_dtype(np.asarray(r).dtype) for r in results)


def as_scalar(value: Any) -> Variable:
    if isinstance(value, Variable):
        if not isinstance(value.type, ScalarType):
            raise TypeError(f"expected a scalar variable, got {value} of type {value.type}")
        return value
    data = np.asarray(value)
    return get_scalar_type(data.dtype).make_constant(data[()])


def _scalar_op(name: str, nin: int, nfunc: Callable[..., Any], **attributes: Any) -> ScalarOp:
    """Define a ScalarOp subclass called `name` and return its single instance."""
    class_name = "".join(part.capitalize() for part in name.split("_"))
    cls = type(class_name, (ScalarOp,), {"nin": nin, "nfunc": staticmethod(nfunc),
                                         "__module__": __name__, **attributes})
    cls.name = name
    globals()[class_name] = cls  # so instances pickle
    return cls()


def _softplus(x):
    # log(1 + exp(x)) without overflow for large x; logaddexp is exact to an ulp everywhere.
    # The zero has x's dtype so that the result dtype is exp's (bool -> float16, like np.exp).
    x = np.asarray(x)
    return np.logaddexp(np.zeros((), dtype=x.dtype), x)


def _complex(real, imag):
    return np.add(real, np.multiply(imag, 1j))


def _complex_from_polar(magnitude, angle):
    return _complex(np.multiply(magnitude, np.cos(angle)), np.multiply(magnitude, np.sin(angle)))


def _chi2sf(x, k):
    # Theano's chi2sf(x, k): the chi-squared survival function, scipy.stats.chi2.sf(x, k).
    return scipy.special.chdtrc(k, x)


def _round_half_away_from_zero(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("round_half_away_from_zero is not defined for complex numbers")
    if x.dtype.kind != "f":
        return np.round(x)
    # x - trunc(x) is exact, so ties are found exactly (floor(x + 0.5) rounds
    # 0.49999999999999994 up, because x + 0.5 rounds to 1). np.where keeps -0.0 and inf.
    whole = np.trunc(x)
    with np.errstate(invalid="ignore"):
        tie_or_above = np.abs(x - whole) >= 0.5
    return np.where(tie_or_above, whole + np.sign(x), whole)


def _identity(x):
    # A copy (np.positive is not defined for bool): an Elemwise output never aliases its input.
    return np.array(x, copy=True)


def _tri_gamma(x):
    """The derivative of psi, polygamma(1, x), in the dtype psi gives for x."""
    x = np.asarray(x)
    dtype = scipy.special.psi(np.zeros(0, dtype=x.dtype)).dtype
    return np.asarray(scipy.special.polygamma(1, x)).astype(dtype)


def _switch(condition, if_true, if_false):
    return np.where(condition, if_true, if_false)


# Arithmetic
add = _scalar_op("add", 2, np.add, identity=0, commutative=True, associative=True)
sub = _scalar_op("sub", 2, np.subtract)
mul = _scalar_op("mul", 2, np.multiply, identity=1, commutative=True, associative=True)
true_div = _scalar_op("true_div", 2, np.true_divide)
int_div = _scalar_op("int_div", 2, np.floor_divide)
mod = _scalar_op("mod", 2, np.mod)
pow = _scalar_op("pow", 2, np.power)
neg = _scalar_op("neg", 1, np.negative)
abs = _scalar_op("abs", 1, np.absolute)
sign = _scalar_op("sign", 1, np.sign)
sqr = _scalar_op("sqr", 1, np.square)
sqrt = _scalar_op("sqrt", 1, np.sqrt)
reciprocal = _scalar_op("reciprocal", 1, np.reciprocal)
maximum = _scalar_op("maximum", 2, np.maximum, commutative=True, associative=True)
minimum = _scalar_op("minimum", 2, np.minimum, commutative=True, associative=True)
clip = _scalar_op("clip", 3, np.clip)
switch = _scalar_op("switch", 3, _switch, promoted_inputs=(1, 2))
identity = _scalar_op("identity", 1, _identity)
conj = _scalar_op("conj", 1, np.conjugate)
real = _scalar_op("real", 1, np.real)
imag = _scalar_op("imag", 1, np.imag)
# Theano's complex(real, imag) and complex_from_polar(abs, angle): complex64 from float32
# (and smaller) parts, complex128 otherwise, as numpy's x + 1j * y.
complex = _scalar_op("complex", 2, _complex)
complex_from_polar = _scalar_op("complex_from_polar", 2, _complex_from_polar)
angle = _scalar_op("angle", 1, np.angle)

# Exponentials and logarithms
exp = _scalar_op("exp", 1, np.exp)
exp2 = _scalar_op("exp2", 1, np.exp2)
expm1 = _scalar_op("expm1", 1, np.expm1)
log = _scalar_op("log", 1, np.log)
log2 = _scalar_op("log2", 1, np.log2)
log10 = _scalar_op("log10", 1, np.log10)
log1p = _scalar_op("log1p", 1, np.log1p)
sigmoid = _scalar_op("sigmoid", 1, scipy.special.expit)
softplus = _scalar_op("softplus", 1, _softplus)
logaddexp = _scalar_op("logaddexp", 2, np.logaddexp, commutative=True)

# Trigonometric and hyperbolic
sin = _scalar_op("sin", 1, np.sin)
cos = _scalar_op("cos", 1, np.cos)
tan = _scalar_op("tan", 1, np.tan)
arcsin = _scalar_op("arcsin", 1, np.arcsin)
arccos = _scalar_op("arccos", 1, np.arccos)
arctan = _scalar_op("arctan", 1, np.arctan)
arctan2 = _scalar_op("arctan2", 2, np.arctan2)
sinh = _scalar_op("sinh", 1, np.sinh)
cosh = _scalar_op("cosh", 1, np.cosh)
tanh = _scalar_op("tanh", 1, np.tanh)
arcsinh = _scalar_op("arcsinh", 1, np.arcsinh)
arccosh = _scalar_op("arccosh", 1, np.arccosh)
arctanh = _scalar_op("arctanh", 1, np.arctanh)
hypot = _scalar_op("hypot", 2, np.hypot, commutative=True)
deg2rad = _scalar_op("deg2rad", 1, np.deg2rad)
rad2deg = _scalar_op("rad2deg", 1, np.rad2deg)

# Special functions
erf = _scalar_op("erf", 1, scipy.special.erf)
erfc = _scalar_op("erfc", 1, scipy.special.erfc)
erfinv = _scalar_op("erfinv", 1, scipy.special.erfinv)
erfcinv = _scalar_op("erfcinv", 1, scipy.special.erfcinv)
erfcx = _scalar_op("erfcx", 1, scipy.special.erfcx)
gamma = _scalar_op("gamma", 1, scipy.special.gamma)
gammaln = _scalar_op("gammaln", 1, scipy.special.gammaln)
psi = _scalar_op("psi", 1, scipy.special.psi)
tri_gamma = _scalar_op("tri_gamma", 1, _tri_gamma)
chi2sf = _scalar_op("chi2sf", 2, _chi2sf)
# Bessel functions of the first kind (j) and modified ones (i), as Theano's: jv and iv take
# the order first.
j0 = _scalar_op("j0", 1, scipy.special.j0)
j1 = _scalar_op("j1", 1, scipy.special.j1)
jv = _scalar_op("jv", 2, scipy.special.jv)
i0 = _scalar_op("i0", 1, scipy.special.i0)
i1 = _scalar_op("i1", 1, scipy.special.i1)
iv = _scalar_op("iv", 2, scipy.special.iv)

# Rounding
floor = _scalar_op("floor", 1, np.floor)
ceil = _scalar_op("ceil", 1, np.ceil)
trunc = _scalar_op("trunc", 1, np.trunc)
round_half_to_even = _scalar_op("round_half_to_even", 1, np.round)
round_half_away_from_zero = _scalar_op("round_half_away_from_zero", 1,
                                       _round_half_away_from_zero)
# Theano's numpy reference of the op, for tests written against Theano.
round_half_away_from_zero_vec = _round_half_away_from_zero

# Comparisons and predicates
eq = _scalar_op("eq", 2, np.equal, commutative=True, comparison=True)
neq = _scalar_op("neq", 2, np.not_equal, commutative=True, comparison=True)
lt = _scalar_op("lt", 2, np.less, comparison=True)
gt = _scalar_op("gt", 2, np.greater, comparison=True)
le = _scalar_op("le", 2, np.less_equal, comparison=True)
ge = _scalar_op("ge", 2, np.greater_equal, comparison=True)
isnan = _scalar_op("isnan", 1, np.isnan)
isinf = _scalar_op("isinf", 1, np.isinf)
isfinite = _scalar_op("isfinite", 1, np.isfinite)

# Logical and bitwise
logical_and = _scalar_op("logical_and", 2, np.logical_and, identity=True, commutative=True,
                         associative=True, logical=True)
logical_or = _scalar_op("logical_or", 2, np.logical_or, identity=False, commutative=True,
                        associative=True, logical=True)
logical_xor = _scalar_op("logical_xor", 2, np.logical_xor, commutative=True, logical=True)
logical_not = _scalar_op("logical_not", 1, np.logical_not, logical=True)
bitwise_and = _scalar_op("bitwise_and", 2, np.bitwise_and, commutative=True, associative=True)
bitwise_or = _scalar_op("bitwise_or", 2, np.bitwise_or, commutative=True, associative=True)
bitwise_xor = _scalar_op("bitwise_xor", 2, np.bitwise_xor, commutative=True)
invert = _scalar_op("invert", 1, np.invert)
left_shift = _scalar_op("left_shift", 2, np.left_shift)
right_shift = _scalar_op("right_shift", 2, np.right_shift)


class Cast(ScalarOp):
    """Conversion to `dtype`, as numpy's astype (unsafe casting, like C)."""

    __props__ = ("dtype",)
    nin = 1

    def __init__(self, dtype: Any):
        self.dtype = normalize_dtype(dtype)

    @property
    def name(self) -> str:
        return f"cast_{self.dtype}"

    def __str__(self):
        return self.name

    def impl(self, x):
        # astype's unsafe casting is the point (as in C): NaN -> int and complex -> real
        # (which drops the imaginary part) are not errors.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return np.asarray(x).astype(self.dtype)

    def output_dtypes(self, *input_dtypes):
        return (self.dtype,)

    def L_op(self, inputs, outputs, output_grads):
        """The identity on values: the gradient converted back to the input's dtype."""
        (x,), (gradient,) = inputs, output_grads
        if gradient.type.dtype == x.type.dtype:
            return [gradient]
        return [cast_op(x.type.dtype)(gradient)]


@functools.cache
def cast_op(dtype: str) -> Cast:
    return Cast(dtype)


SCALAR_OPS: dict[str, ScalarOp] = {
    name: value for name, value in globals().items() if isinstance(value, ScalarOp)
}


# ---------------------------------------------------------------------------------------------
# Derivatives. Each rule maps (inputs..., output, output gradient) to one gradient per input,
# written with the scalar ops above; Elemwise lifts the rule to tensors (and derives forward
# mode from it). Constants take the dtype of the value they combine with, so float32 graphs
# stay float32. Piecewise-constant functions (floor, sign, int_div, ...) have derivative 0
# wherever it exists; that zero is their true derivative, not a placeholder.

def _like(value: Any, variable: Variable) -> Variable:
    """The constant `value` with `variable`'s dtype (float64 if that dtype is discrete)."""
    dtype = variable.type.dtype
    if dtype in DISCRETE_DTYPES:
        dtype = "float64"
    return get_scalar_type(dtype).make_constant(np.asarray(value, dtype=dtype)[()])


def _zero(variable: Variable, like: Variable) -> Variable:
    """The zero derivative with respect to `variable`, in the dtype of the gradient `like`."""
    return _like(0, like)


def _square(x: Variable) -> Variable:
    return mul(x, x)


def _power_derivative(x: Variable, y: Variable, like: Variable) -> Variable:
    """d(x ** y)/dx = y x ** (y - 1), computed in the dtype of the gradient `like`: an integer
    exponent is cast first, so that y - 1 neither turns a float32 graph into float64 (int8 -
    1.0 is float64) nor wraps around (uint8 0 - 1 is 255)."""
    dtype = like.type.dtype
    exponent = y if y.type.dtype == dtype else cast_op(dtype)(y)
    return mul(exponent, pow(x, sub(exponent, _like(1, like))))


def _exponent_derivative(x: Variable, out: Variable, like: Variable) -> Variable:
    """d(x ** y)/dy = x ** y log(x), and 0 where x is 0 (0 ** y is constant in y > 0, where
    the product would be 0 * -inf = NaN), as Theano's."""
    return switch(eq(x, _like(0, x)), _like(0, like), mul(out, log(x)))


def _first_or_second(first: Variable, g: Variable) -> list:
    """The gradient g for the first input where `first` holds, for the second elsewhere."""
    return [switch(first, g, _like(0, g)), switch(first, _like(0, g), g)]


class _Derivative:
    """L_op of a scalar op from a rule (inputs..., output, output_gradient) -> gradients."""

    def __init__(self, rule: Callable[..., list]):
        self.rule = rule

    def __get__(self, op: ScalarOp, owner: type) -> Callable[..., list]:
        def L_op(inputs, outputs, output_grads):
            return self.rule(*inputs, outputs[0], output_grads[0])
        return L_op


_PI = np.pi
def _chi2sf_derivatives(x, k, out, g) -> list:
    """chi2sf's: d/dx is minus the chi-squared density, exp((k/2 - 1) log x - x/2 -
    (k/2) log 2 - gammaln(k/2)); the degrees of freedom's is undefined (None)."""
    half_k = true_div(k, _like(2, out))
    log_density = sub(sub(mul(sub(half_k, _like(1, out)), log(x)), true_div(x, _like(2, out))),
                      add(mul(half_k, _like(np.log(2.0), out)), gammaln(half_k)))
    return [neg(mul(g, exp(log_density))), None]


_DERIVATIVES: dict[ScalarOp, Callable[..., list]] = {
    add: lambda x, y, out, g: [g, g],
    sub: lambda x, y, out, g: [g, neg(g)],
    mul: lambda x, y, out, g: [mul(g, y), mul(g, x)],
    true_div: lambda x, y, out, g: [true_div(g, y), neg(true_div(mul(g, out), y))],
    int_div: lambda x, y, out, g: [_zero(x, g), _zero(y, g)],
    # x mod y = x - y floor(x / y)
    mod: lambda x, y, out, g: [g, neg(mul(g, floor(true_div(x, y))))],
    pow: lambda x, y, out, g: [mul(g, _power_derivative(x, y, g)), mul(g, _exponent_derivative(
        x, out, g))],
    neg: lambda x, out, g: [neg(g)],
    abs: lambda x, out, g: [mul(g, sign(x))],
    sign: lambda x, out, g: [_zero(x, g)],
    sqr: lambda x, out, g: [mul(g, mul(_like(2, x), x))],
    sqrt: lambda x, out, g: [true_div(mul(g, _like(0.5, out)), out)],
    reciprocal: lambda x, out, g: [neg(mul(g, mul(out, out)))],
    # Ties go to the first input (as in PyTensor), so that the two gradients add up to g:
    # maximum(x, x) is x, of derivative 1.
    maximum: lambda x, y, out, g: _first_or_second(eq(out, x), g),
    minimum: lambda x, y, out, g: _first_or_second(eq(out, x), g),
    # clip is minimum(maximum(x, low), high), as numpy computes it: when low > high the
    # result is high (whatever x), so the whole gradient goes to high.
    clip: lambda x, low, high, out, g: [
        switch(logical_and(ge(x, low), le(x, high)), g, _zero(x, g)),
        switch(logical_and(lt(x, low), le(low, high)), g, _zero(low, g)),
        switch(logical_or(gt(x, high), gt(low, high)), g, _zero(high, g))],
    switch: lambda condition, a, b, out, g: [
        _zero(condition, g), switch(condition, g, _zero(a, g)), switch(condition, _zero(b, g), g)],
    identity: lambda x, out, g: [g],
    exp: lambda x, out, g: [mul(g, out)],
    exp2: lambda x, out, g: [mul(g, mul(out, _like(np.log(2.0), out)))],
    expm1: lambda x, out, g: [mul(g, add(out, _like(1, out)))],
    log: lambda x, out, g: [true_div(g, x)],
    log2: lambda x, out, g: [true_div(g, mul(x, _like(np.log(2.0), out)))],
    log10: lambda x, out, g: [true_div(g, mul(x, _like(np.log(10.0), out)))],
    log1p: lambda x, out, g: [true_div(g, add(x, _like(1, out)))],
    sigmoid: lambda x, out, g: [mul(g, mul(out, sub(_like(1, out), out)))],
    softplus: lambda x, out, g: [mul(g, sigmoid(x))],
    logaddexp: lambda x, y, out, g: [mul(g, exp(sub(x, out))), mul(g, exp(sub(y, out)))],
    sin: lambda x, out, g: [mul(g, cos(x))],
    cos: lambda x, out, g: [neg(mul(g, sin(x)))],
    tan: lambda x, out, g: [mul(g, add(_like(1, out), mul(out, out)))],
    arcsin: lambda x, out, g: [true_div(g, sqrt(sub(_like(1, out), _square(x))))],
    arccos: lambda x, out, g: [neg(true_div(g, sqrt(sub(_like(1, out), _square(x)))))],
    arctan: lambda x, out, g: [true_div(g, add(_like(1, out), _square(x)))],
    arctan2: lambda y, x, out, g: [true_div(mul(g, x), add(_square(x), _square(y))),
                                   neg(true_div(mul(g, y), add(_square(x), _square(y))))],
    sinh: lambda x, out, g: [mul(g, cosh(x))],
    cosh: lambda x, out, g: [mul(g, sinh(x))],
    tanh: lambda x, out, g: [mul(g, sub(_like(1, out), mul(out, out)))],
    arcsinh: lambda x, out, g: [true_div(g, sqrt(add(_square(x), _like(1, out))))],
    arccosh: lambda x, out, g: [true_div(g, sqrt(sub(_square(x), _like(1, out))))],
    arctanh: lambda x, out, g: [true_div(g, sub(_like(1, out), _square(x)))],
    hypot: lambda x, y, out, g: [mul(g, true_div(x, out)), mul(g, true_div(y, out))],
    deg2rad: lambda x, out, g: [mul(g, _like(_PI / 180, out))],
    rad2deg: lambda x, out, g: [mul(g, _like(180 / _PI, out))],
    erf: lambda x, out, g: [mul(g, mul(_like(2 / np.sqrt(_PI), out), exp(neg(_square(x)))))],
    erfc: lambda x, out, g: [mul(g, mul(_like(-2 / np.sqrt(_PI), out), exp(neg(_square(x)))))],
    erfinv: lambda x, out, g: [mul(g, mul(_like(np.sqrt(_PI) / 2, out), exp(_square(out))))],
    erfcinv: lambda x, out, g: [mul(g, mul(_like(-np.sqrt(_PI) / 2, out), exp(_square(out))))],
    erfcx: lambda x, out, g: [mul(g, sub(mul(_like(2, out), mul(x, out)),
                                         _like(2 / np.sqrt(_PI), out)))],
    gamma: lambda x, out, g: [mul(g, mul(out, psi(x)))],
    chi2sf: _chi2sf_derivatives,
    gammaln: lambda x, out, g: [mul(g, psi(x))],
    psi: lambda x, out, g: [mul(g, tri_gamma(x))],
    # The order's derivative (None) is undefined, as in Theano; d/dx from the recurrences
    # J'_v = (J_{v-1} - J_{v+1}) / 2 and I'_v = (I_{v-1} + I_{v+1}) / 2.
    j0: lambda x, out, g: [neg(mul(g, j1(x)))],
    j1: lambda x, out, g: [mul(g, mul(_like(0.5, out), sub(j0(x), jv(_like(2, out), x))))],
    jv: lambda v, x, out, g: [None, mul(g, mul(_like(0.5, out), sub(
        jv(sub(v, _like(1, out)), x), jv(add(v, _like(1, out)), x))))],
    i0: lambda x, out, g: [mul(g, i1(x))],
    i1: lambda x, out, g: [mul(g, mul(_like(0.5, out), add(i0(x), iv(_like(2, out), x))))],
    iv: lambda v, x, out, g: [None, mul(g, mul(_like(0.5, out), add(
        iv(sub(v, _like(1, out)), x), iv(add(v, _like(1, out)), x))))],
    floor: lambda x, out, g: [_zero(x, g)],
    ceil: lambda x, out, g: [_zero(x, g)],
    trunc: lambda x, out, g: [_zero(x, g)],
    round_half_to_even: lambda x, out, g: [_zero(x, g)],
    round_half_away_from_zero: lambda x, out, g: [_zero(x, g)],
    # On real inputs (Elemwise refuses complex gradients): conj and real are the identity,
    # imag and angle are piecewise constant.
    conj: lambda x, out, g: [g],
    real: lambda x, out, g: [g],
    imag: lambda x, out, g: [_zero(x, g)],
    angle: lambda x, out, g: [_zero(x, g)],
}
for _op, _rule in _DERIVATIVES.items():
    type(_op).L_op = _Derivative(_rule)
