"""Gradients of sympile.tensor.elemwise: the scalar derivative table of sympile.scalar.basic
lifted by Elemwise (reverse mode, and forward mode derived from the same rules) and DimShuffle.

Every differentiable scalar op is checked through its tensor function against finite
differences, at points inside its domain and away from its kinks, poles and jumps; then come
broadcasting (gradients summed back over broadcast axes), chains of ops, float32 graphs, the
static types of gradients, and the ops without a gradient (disconnected or not implemented).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import NullTypeGradError, Rop, grad
from sympile.graph.basic import graph_inputs, toposort
from sympile.graph.gradient_types import DisconnectedType, NullType
from sympile.graph.utils import MethodNotDefined
from sympile.scalar import basic as scalar
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.shape import specify_shape
from tests.utils import GradCase, check_grad_case, evaluate

# -- points ------------------------------------------------------------------------------------
# A value generator maps (rng, shape) to a float64 array of that shape.

Generator = Callable[[np.random.Generator, tuple], np.ndarray]


def uniform(low: float, high: float) -> Generator:
    return lambda rng, shape: rng.uniform(low, high, shape)


def away_from_zero(low: float, high: float) -> Generator:
    """Magnitudes in [low, high), either sign: clear of a kink or pole at 0."""
    return lambda rng, shape: rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


def fractional(low: int, high: int) -> Generator:
    """k + f for integers k in [low, high) and f in (0.15, 0.35) or (0.65, 0.85): clear of the
    integers (floor, ceil, trunc jump there) and of the halves (where rounding jumps)."""
    def generate(rng, shape):
        whole = rng.integers(low, high, shape)
        part = rng.uniform(0.15, 0.35, shape) + rng.choice([0.0, 0.5], shape)
        return whole + part
    return generate


def random_shape(rng: np.random.Generator, ndim: int | None = None) -> tuple:
    """A shape of 1 to 3 axes (or `ndim`) of lengths 2 to 4 (no accidental length 1)."""
    ndim = int(rng.integers(1, 4)) if ndim is None else ndim
    return tuple(int(n) for n in rng.integers(2, 5, size=ndim))


def points(*generators: Generator, shapes: Callable | None = None,
           dtype: str = "float64") -> Callable:
    """make_point: one array per generator, all of one random shape, or of the shapes
    `shapes(rng)` gives (one per generator)."""
    def make_point(rng):
        if shapes is None:
            shape = random_shape(rng)
            chosen = [shape] * len(generators)
        else:
            chosen = shapes(rng)
        return [generate(rng, shape).astype(dtype)
                for generate, shape in zip(generators, chosen)]
    return make_point


def no_ties(dtype: str = "float64") -> Callable:
    """x and y = x ± [0.2, 1): maximum and minimum away from x == y."""
    def make_point(rng):
        shape = random_shape(rng)
        x = rng.uniform(-2, 2, shape)
        return [x.astype(dtype), (x + away_from_zero(0.2, 1.0)(rng, shape)).astype(dtype)]
    return make_point


def quotient_point(rng):
    """x and y with x / y at least 0.15 from an integer: int_div and mod away from jumps."""
    shape = random_shape(rng)
    y = away_from_zero(0.5, 2.0)(rng, shape)
    return [fractional(-3, 3)(rng, shape) * y, y]


def clip_point(rng):
    """x below, inside or above [low, high], at least 0.1 from either bound."""
    shape = random_shape(rng)
    low, high = rng.uniform(-1.0, -0.5, shape), rng.uniform(0.5, 1.0, shape)
    region = rng.integers(0, 3, shape)
    x = np.choose(region, [low - rng.uniform(0.1, 1.0, shape),
                           rng.uniform(low + 0.1, high - 0.1),
                           high + rng.uniform(0.1, 1.0, shape)])
    return [x, low, high]


def inverted_clip_point(rng):
    """Bounds with low > high, where numpy's clip gives high whatever x."""
    shape = random_shape(rng)
    return [rng.uniform(-2.0, 2.0, shape), rng.uniform(0.5, 1.0, shape),
            rng.uniform(-1.0, -0.5, shape)]


def signs_point(rng):
    """A condition of ±[0.5, 1) (never near 0, where its truth value changes) and two
    branches."""
    shape = random_shape(rng)
    return [away_from_zero(0.5, 1.0)(rng, shape), rng.standard_normal(shape),
            rng.standard_normal(shape)]


def as_row(x):
    return specify_shape(x, (1, None))


def as_col(x):
    return specify_shape(x, (None, 1))


def row_and_matrix(rng):
    rows, columns = random_shape(rng, 2)
    return [(1, columns), (rows, columns)]


def col_and_matrix(rng):
    rows, columns = random_shape(rng, 2)
    return [(rows, 1), (rows, columns)]


def col_and_row(rng):
    rows, columns = random_shape(rng, 2)
    return [(rows, 1), (1, columns)]


def col_matrix_and_row(rng):
    rows, columns = random_shape(rng, 2)
    return [(rows, 1), (rows, columns), (1, columns)]


def scalar_and_tensor(rng):
    return [(), random_shape(rng)]


def middle_one_and_tensor(rng):
    a, b, c = random_shape(rng, 3)
    return [(a, 1, c), (a, b, c)]


def vector_and_matrix(rng):
    rows, columns = random_shape(rng, 2)
    return [(columns,), (rows, columns)]


def affine_point(rng):
    rows, columns = random_shape(rng, 2)
    return [rng.standard_normal((rows, 1)), rng.standard_normal((rows, columns)) / 2,
            rng.standard_normal((1, columns))]


# -- the table -----------------------------------------------------------------------------------
# Unary ops by domain: (tensor function name, value generator). The piecewise-constant ops are
# here too: their derivative is 0 away from their jumps, and a wrong rule would not be.
WIDE = uniform(-2.0, 2.0)
POSITIVE = uniform(0.3, 4.0)
UNIT = uniform(-0.9, 0.9)

UNARY = [
    ("neg", WIDE), ("abs", away_from_zero(0.2, 2.0)), ("sign", away_from_zero(0.2, 2.0)),
    ("sqr", WIDE), ("sqrt", POSITIVE), ("reciprocal", away_from_zero(0.3, 2.0)),
    ("identity", WIDE), ("conj", WIDE), ("real", WIDE), ("imag", WIDE),
    ("angle", away_from_zero(0.2, 2.0)),
    ("exp", WIDE), ("exp2", WIDE), ("expm1", WIDE), ("log", POSITIVE), ("log2", POSITIVE),
    ("log10", POSITIVE), ("log1p", uniform(-0.6, 3.0)), ("sigmoid", uniform(-4.0, 4.0)),
    ("softplus", uniform(-4.0, 4.0)),
    ("sin", uniform(-4.0, 4.0)), ("cos", uniform(-4.0, 4.0)), ("tan", uniform(-1.2, 1.2)),
    ("arcsin", UNIT), ("arccos", UNIT), ("arctan", WIDE), ("sinh", WIDE), ("cosh", WIDE),
    ("tanh", WIDE), ("arcsinh", WIDE), ("arccosh", uniform(1.1, 4.0)), ("arctanh", UNIT),
    ("deg2rad", uniform(-200.0, 200.0)), ("rad2deg", WIDE),
    ("erf", WIDE), ("erfc", WIDE), ("erfinv", UNIT), ("erfcinv", uniform(0.1, 1.9)),
    ("gamma", uniform(0.5, 4.0)), ("gammaln", POSITIVE), ("psi", uniform(0.5, 5.0)),
    ("erfcx", uniform(-2.0, 5.0)),
    ("j0", uniform(-8.0, 8.0)), ("j1", uniform(-8.0, 8.0)), ("i0", WIDE), ("i1", WIDE),
    ("floor", fractional(-3, 3)), ("ceil", fractional(-3, 3)), ("trunc", fractional(-3, 3)),
    ("round_half_to_even", fractional(-3, 3)), ("round_half_away_from_zero", fractional(-3, 3)),
]

BINARY = [
    ("add", points(WIDE, WIDE)), ("sub", points(WIDE, WIDE)), ("mul", points(WIDE, WIDE)),
    ("true_div", points(WIDE, away_from_zero(0.5, 2.0))), ("int_div", quotient_point),
    ("mod", quotient_point), ("pow", points(uniform(0.3, 3.0), WIDE)),
    ("maximum", no_ties()), ("minimum", no_ties()), ("logaddexp", points(WIDE, WIDE)),
    # arctan2(y, x) jumps across the negative x axis: y is kept away from 0.
    ("arctan2", points(away_from_zero(0.3, 2.0), WIDE)),
    ("hypot", points(away_from_zero(0.3, 2.0), away_from_zero(0.3, 2.0))),
]


def unary_case(name: str, generate: Generator, dtype: str = "float64") -> GradCase:
    function = getattr(T, name)
    return GradCase(f"{name}[{dtype}]", lambda x: function(x), points(generate, dtype=dtype))


def binary_case(name: str, make_point: Callable, dtype: str = "float64") -> GradCase:
    function = getattr(T, name)

    def typed_point(rng):
        return [value.astype(dtype) for value in make_point(rng)]
    return GradCase(f"{name}[{dtype}]", lambda x, y: function(x, y), typed_point)


def in_float32(make_point: Callable) -> Callable:
    return lambda rng: [value.astype("float32") for value in make_point(rng)]


GRAD_CASES = [
    *(unary_case(name, generate) for name, generate in UNARY),
    *(binary_case(name, make_point) for name, make_point in BINARY),
    GradCase("clip(x, low, high)", T.clip, clip_point),
    GradCase("clip(x, low, high) with low > high", T.clip, inverted_clip_point),
    GradCase("clip(x, -0.5, 0.5)", lambda x: T.clip(x, -0.5, 0.5),
             points(uniform(-0.4, 0.4))),
    GradCase("clip(x, -0.5, 0.5) outside", lambda x: T.clip(x, -0.5, 0.5),
             points(away_from_zero(0.6, 2.0))),
    GradCase("switch(c > 0, a, b)", lambda c, a, b: T.switch(T.gt(c, 0), a, b), signs_point),
    GradCase("switch(c, a, b) (c never 0)", T.switch, signs_point),
    GradCase("switch(c, a, b) (c 0 or not)",
             lambda c, a, b: T.switch(T.round_half_to_even(c), a, b),
             points(fractional(-2, 2), WIDE, WIDE)),
    # Ties: maximum(x, x) is x; the gradient is split, not doubled.
    # Bessel functions of integer and fractional order: the order has no derivative.
    GradCase("jv(2, x)", lambda x: T.jv(2, x), points(uniform(-8.0, 8.0))),
    GradCase("jv(1.5, x)", lambda x: T.jv(1.5, x), points(uniform(0.5, 8.0))),
    GradCase("iv(3, x)", lambda x: T.iv(np.int8(3), x), points(WIDE)),
    GradCase("iv(0.5, x)", lambda x: T.iv(0.5, x), points(uniform(0.5, 3.0))),
    # chi2sf(x, k): the degrees of freedom k have no derivative.
    GradCase("chi2sf(x, 3)", lambda x: T.chi2sf(x, 3), points(uniform(0.2, 8.0))),
    GradCase("chi2sf(x, 4.5)", lambda x: T.chi2sf(x, 4.5), points(uniform(0.2, 8.0))),
    GradCase("maximum(x, x)", lambda x: T.maximum(x, x), points(WIDE)),
    GradCase("minimum(x, x) * x", lambda x: T.minimum(x, x) * x, points(WIDE)),
    GradCase("x ** 3 (Python int exponent)", lambda x: x ** 3, points(WIDE)),
    GradCase("x ** int8 constant", lambda x: x ** T.constant(np.int8(2)), points(WIDE)),
    GradCase("2 ** x", lambda x: 2 ** x, points(WIDE)),
    GradCase("x / 3 and 3 / x", lambda x: x / 3 + 3 / x, points(away_from_zero(0.5, 2.0))),
    # Cast between float dtypes: the gradient cast back to the input's dtype. float32 points
    # (finite differences at float32 precision) where the path goes through float32.
    GradCase("cast float32 -> float64", lambda x: T.sin(T.cast(x, "float64")),
             points(WIDE, dtype="float32"), eps=1e-3, abs_tol=1e-2, rel_tol=1e-2),
    GradCase("cast float64 -> float32", lambda x: T.cast(x, "float32") * 3,
             points(WIDE), eps=1e-2, abs_tol=1e-2, rel_tol=1e-2),
    GradCase("cast float32 -> float16 -> float32",
             lambda x: T.cast(T.cast(x, "float16"), "float32") * 2,
             points(uniform(0.5, 2.0), dtype="float32"), eps=0.1, abs_tol=5e-2,
             rel_tol=5e-2),
    # Broadcasting: gradients summed back to the broadcast input's shape.
    GradCase("row + matrix", lambda r, m: as_row(r) + m,
             points(WIDE, WIDE, shapes=row_and_matrix)),
    GradCase("matrix - row", lambda r, m: m - as_row(r),
             points(WIDE, WIDE, shapes=row_and_matrix)),
    GradCase("col * matrix", lambda c, m: as_col(c) * m,
             points(WIDE, WIDE, shapes=col_and_matrix)),
    GradCase("matrix / col", lambda c, m: m / as_col(c),
             points(away_from_zero(0.5, 2.0), WIDE, shapes=col_and_matrix)),
    GradCase("col ** row", lambda c, r: as_col(c) ** as_row(r),
             points(uniform(0.5, 2.0), WIDE, shapes=col_and_row)),
    GradCase("hypot(col, row)", lambda c, r: T.hypot(as_col(c), as_row(r)),
             points(away_from_zero(0.3, 2.0), away_from_zero(0.3, 2.0), shapes=col_and_row)),
    GradCase("scalar + tensor", lambda s, t: s + t, points(WIDE, WIDE, shapes=scalar_and_tensor)),
    GradCase("scalar * tensor", lambda s, t: s * t, points(WIDE, WIDE, shapes=scalar_and_tensor)),
    GradCase("tensor ** scalar", lambda s, t: t ** s,
             points(WIDE, POSITIVE, shapes=scalar_and_tensor)),
    GradCase("logaddexp(length-1 axis, tensor)",
             lambda a, b: T.logaddexp(specify_shape(a, (None, 1, None)), b),
             points(WIDE, WIDE, shapes=middle_one_and_tensor)),
    GradCase("maximum(length-1 axis, tensor)",
             lambda a, b: T.maximum(specify_shape(a, (None, 1, None)), b),
             points(uniform(-2.0, -1.0), uniform(-0.8, 2.0), shapes=middle_one_and_tensor)),
    GradCase("vector (padded on the left) * matrix", lambda v, m: v * m,
             points(WIDE, WIDE, shapes=vector_and_matrix)),
    GradCase("clip(matrix, row, 1.0)", lambda r, m: T.clip(m, as_row(r), 1.0),
             points(uniform(-1.0, -0.5), uniform(-0.4, 0.9), shapes=row_and_matrix)),
    GradCase("switch(col, matrix, row)", lambda c, m, r: T.switch(as_col(c), m, as_row(r)),
             points(away_from_zero(0.5, 1.0), WIDE, WIDE, shapes=col_matrix_and_row)),
    # Chains: several rules, and inputs used more than once.
    GradCase("logistic 1 / (1 + exp(-x))", lambda x: 1 / (1 + T.exp(-x)), points(WIDE)),
    GradCase("tanh(x * W + b)", lambda x, w, b: T.tanh(as_col(x) * w + as_row(b)),
             affine_point),
    GradCase("x * x * x", lambda x: x * x * x, points(WIDE)),
    GradCase("log(sigmoid(x)) + softplus(-x) * x",
             lambda x: T.log(T.sigmoid(x)) + T.softplus(-x) * x, points(WIDE)),
    GradCase("sqrt(x ** 2 + y ** 2) / (1 + exp(x - y))",
             lambda x, y: T.sqrt(x ** 2 + y ** 2) / (1 + T.exp(x - y)),
             points(away_from_zero(0.3, 2.0), WIDE)),
    GradCase("sin(x) * cos(y) - tan(x * y)",
             lambda x, y: T.sin(x) * T.cos(y) - T.tan(x * y),
             points(uniform(-1.0, 1.0), uniform(-1.0, 1.0))),
    GradCase("erf(x) * gammaln(y) + arctan2(x, y)",
             lambda x, y: T.erf(x) * T.gammaln(y) + T.arctan2(x, y), points(WIDE, POSITIVE)),
    GradCase("floor(x) * x + abs(x) * mod(x, 1.5)",
             lambda x: T.floor(x) * x + abs(x) * T.mod(x, 1.5),
             points(lambda rng, shape: fractional(-2, 2)(rng, shape) * 1.5)),
    # Mixed dtypes: the float32 input's gradient is cast back to float32. Finite differences
    # of the float32 input are at float32 precision, hence the step and tolerances.
    GradCase("float32 * float64", lambda x, y: x * T.exp(y),
             lambda rng: [rng.uniform(-2, 2, (2, 3)).astype("float32"),
                          rng.uniform(-2, 2, (2, 3))], eps=1e-3, abs_tol=1e-2, rel_tol=1e-2),
    # float32: verify_grad's float32 tolerances.
    *(unary_case(name, generate, "float32") for name, generate in UNARY
      if name in ("exp", "log", "sqrt", "tanh", "sigmoid", "softplus", "arcsin", "erf",
                  "gammaln", "psi", "floor")),
    *(binary_case(name, make_point, "float32") for name, make_point in BINARY),
    GradCase("clip(x, low, high)[float32]", T.clip, in_float32(clip_point)),
    GradCase("tanh(x * W + b)[float32]", lambda x, w, b: T.tanh(as_col(x) * w + as_row(b)),
             in_float32(affine_point)),
    GradCase("logistic[float32]", lambda x: 1 / (1 + T.exp(-x)), points(WIDE, dtype="float32")),
    GradCase("row + matrix[float32]", lambda r, m: as_row(r) * m + 1.5,
             points(WIDE, WIDE, shapes=row_and_matrix, dtype="float32")),
    GradCase("x ** int8 constant[float32]", lambda x: x ** T.constant(np.int8(3)),
             points(WIDE, dtype="float32")),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def gradient_of(function: Callable) -> Callable:
    """x -> d sum(function(x)) / dx: a graph of the rules' own graphs, whose derivatives check
    that the rules are differentiable in turn (Hessians, Hessian-vector products)."""
    return lambda x: grad(T.sum(function(x)), x)


def gradients_of(function: Callable) -> Callable:
    """(x, y) -> a combination of the two partial gradients of sum(function(x, y))."""
    def combined(x, y):
        gx, gy = grad(T.sum(function(x, y)), [x, y])
        return gx * 2 + gy
    return combined


SECOND_ORDER_CASES = [
    GradCase(f"second derivative of {name}", gradient_of(function), points(generate))
    for name, function, generate in [
        ("tanh", T.tanh, WIDE), ("sigmoid", T.sigmoid, WIDE), ("softplus", T.softplus, WIDE),
        ("log", T.log, POSITIVE), ("sqrt", T.sqrt, POSITIVE), ("erf", T.erf, WIDE),
        ("erfinv", T.erfinv, UNIT), ("gamma", T.gamma, uniform(0.5, 3.0)),
        ("gammaln", T.gammaln, POSITIVE), ("arcsin", T.arcsin, UNIT), ("tan", T.tan, UNIT),
        ("arccosh", T.arccosh, uniform(1.1, 3.0)), ("abs(x) * x", lambda x: abs(x) * x,
                                                     away_from_zero(0.2, 2.0)),
        ("maximum(x, 0.1) * x", lambda x: T.maximum(x, 0.1) * x, away_from_zero(0.3, 2.0)),
        ("clip(x, -0.5, 0.5) * x ** 2", lambda x: T.clip(x, -0.5, 0.5) * x ** 2,
         uniform(-0.4, 0.4)),
        ("logistic", lambda x: 1 / (1 + T.exp(-x)), WIDE),
    ]
] + [
    GradCase(f"second derivatives of {name}", gradients_of(function), make_point)
    for name, function, make_point in [
        ("pow", T.pow, points(uniform(0.3, 3.0), WIDE)),
        ("true_div", T.true_div, points(WIDE, away_from_zero(0.5, 2.0))),
        ("arctan2", T.arctan2, points(away_from_zero(0.3, 2.0), WIDE)),
        ("hypot", T.hypot, points(away_from_zero(0.3, 2.0), away_from_zero(0.3, 2.0))),
        ("logaddexp", T.logaddexp, points(WIDE, WIDE)),
        ("mod(x, y) * x", lambda x, y: T.mod(x, y) * x, quotient_point),
        ("row * matrix", lambda r, m: T.exp(as_row(r) * m),
         points(WIDE, WIDE, shapes=row_and_matrix)),
    ]
]


@pytest.mark.parametrize("case", SECOND_ORDER_CASES, ids=repr)
def test_second_derivatives(case):
    check_grad_case(case)


def test_psi_second_derivative_is_not_implemented():
    # psi's derivative is tri_gamma, which has no rule (it would need polygamma(2, x)).
    x = T.dvector("x")
    with pytest.raises(NullTypeGradError, match="tri_gamma has no derivative rule"):
        grad(T.sum(grad(T.sum(T.psi(x)), x)), x)


def _scalar_ops_of(outputs) -> set:
    return {node.op.scalar_op for node in toposort(outputs) if isinstance(node.op, Elemwise)}


def _symbolic_inputs(case: GradCase) -> list:
    values = case.make_point(np.random.default_rng(0))
    return [T.tensor(v.dtype, shape=(None,) * v.ndim) for v in values]


def test_every_derivative_rule_is_in_the_table():
    covered = set()
    for case in GRAD_CASES:
        covered |= _scalar_ops_of(case.fun(*_symbolic_inputs(case)))
    missing = [str(op) for op in scalar._DERIVATIVES if op not in covered]
    assert not missing, f"no gradient case for {missing}"
    assert {scalar.cast_op("float32"), scalar.cast_op("float64"),
            scalar.cast_op("float16")} <= covered


# -- float32 gradient graphs stay float32 --------------------------------------------------------

def _float32_expressions():
    """(name, inputs, output): every rule of the table on float32 inputs (and int8 operands
    where numpy keeps float32)."""
    x, y, z = T.fmatrix("x"), T.fmatrix("y"), T.fmatrix("z")
    v, s = T.fvector("v"), T.fscalar("s")
    small = T.bmatrix("small")
    expressions = []
    for op in scalar._DERIVATIVES:
        function = T.elemwise_of(op)
        if op in (scalar.jv, scalar.iv):
            # The order has no derivative: an integer one.
            expressions.append((str(op), [y], function(small, y)))
            continue
        if op is scalar.chi2sf:
            # Nor do the degrees of freedom.
            expressions.append((str(op), [x], function(x, small)))
            continue
        arguments = [x, y, z][:op.nin]
        expressions.append((str(op), [x, y, z][:op.nin], function(*arguments)))
    expressions += [
        ("pow(float32, int8)", [x], x ** T.constant(np.int8(3))),
        ("pow(float32, int8 matrix)", [x], T.pow(x, small)),
        ("pow(int8 matrix, float32)", [x], T.pow(small, x)),
        ("mul(float32, int8)", [x], x * small),
        ("true_div(int8, float32)", [x], small / x),
        ("mod(float32, int8)", [x], T.mod(x, small)),
        ("python scalars", [x], 2 * x ** 2 + 1.5 / (1 + T.exp(-x)) - 3),
        ("cast(float32 -> float16 -> float32)", [x], T.cast(T.cast(x, "float16"), "float32")),
        ("switch(int8, float32, float32)", [x, y], T.switch(small, x, y)),
        ("clip(x, -1, 1)", [x], T.clip(x, -1, 1)),
        ("vector * matrix + 0-d (padded by DimShuffle)", [x, v, s], v * x + s),
        ("tanh(x * row + col)", [x, y], T.tanh(x * as_row(y[:1]) + T.fcol("col"))),
        ("dimshuffle", [x], T.exp(x.dimshuffle(1, "x", 0))),
    ]
    return expressions


def _float64_nodes(outputs) -> list:
    """The nodes of the graph of `outputs` (Elemwise and any other op) that compute a
    float64."""
    return [node for node in toposort(outputs)
            if any(getattr(o.type, "dtype", None) == "float64" for o in node.outputs)]


FLOAT32_EXPRESSIONS = _float32_expressions()


@pytest.mark.parametrize("name, inputs, output", FLOAT32_EXPRESSIONS,
                         ids=[name for name, _, _ in FLOAT32_EXPRESSIONS])
def test_float32_gradient_graph_stays_float32(name, inputs, output):
    forward = set(toposort([output]))
    gradients = grad(output.sum(), inputs, disconnected_inputs="ignore")
    tangent = Rop(output, inputs, [v.type() for v in inputs])
    for gradient in gradients:
        assert gradient.type.dtype == "float32"
    assert tangent.type.dtype == output.type.dtype
    extra = [node for node in _float64_nodes([*gradients, tangent])
             if node not in forward]
    assert not extra, f"float64 nodes in the float32 gradient: {[str(n.op) for n in extra]}"


# -- gradients' static types ---------------------------------------------------------------------

def _compatible(gradient_shape: tuple, input_shape: tuple) -> bool:
    """The gradient's static shape says nothing against the input's (it may know lengths the
    input's type does not, from the other operands), and a length-1 axis stays length 1."""
    return all(g == 1 if s == 1 else None in (g, s) or g == s
               for g, s in zip(gradient_shape, input_shape, strict=True))


# (output of the inputs, the inputs' static shapes, the shapes of the values to run them on)
STATIC_TYPE_CASES = [
    (lambda r, m: r * m, [(1, None), (None, None)], [(1, 3), (2, 3)]),
    (lambda r, m: T.exp(r) + T.sqrt(m), [(1, None), (None, None)], [(1, 3), (2, 3)]),
    (lambda c, m: T.maximum(c, m), [(None, 1), (None, None)], [(2, 1), (2, 3)]),
    (lambda c, r: T.hypot(c, r), [(None, 1), (1, None)], [(2, 1), (1, 3)]),
    (lambda s, t: s ** t, [(), (None, None, None)], [(), (2, 3, 2)]),
    (lambda a, b: T.logaddexp(a, b), [(None, 1, None), (2, 3, 4)], [(2, 1, 4), (2, 3, 4)]),
    (lambda a, b: T.floor(a) + b, [(1, 1), (3, 4)], [(1, 1), (3, 4)]),
    (lambda a, b: T.int_div(a, b) + a, [(1, 4), (3, 4)], [(1, 4), (3, 4)]),
    (lambda a, b: T.switch(a, b, 0.0), [(3, 1), (1, 4)], [(3, 1), (1, 4)]),
    (lambda a, b: T.clip(a, b, 2.0), [(1, None), (1, 1)], [(1, 3), (1, 1)]),
    (lambda a, b: T.cast(a, "float32") * b, [(1, 5), (None, None)], [(1, 5), (2, 5)]),
    (lambda a, b: a.dimshuffle(1, "x", 0) * b, [(1, 3), (3, 2, 1)], [(1, 3), (3, 2, 1)]),
]


@pytest.mark.parametrize("make_output, input_types, value_shapes", STATIC_TYPE_CASES)
def test_gradient_static_types_match_the_inputs(make_output, input_types, value_shapes):
    inputs = [T.tensor("float64", shape=shape) for shape in input_types]
    output = make_output(*inputs)
    gradients = grad(output.sum(), inputs)
    directions = [v.type() for v in inputs]
    tangent = Rop(output, inputs, directions)
    for variable, gradient in zip(inputs, gradients):
        assert gradient.type.dtype == variable.type.dtype
        assert _compatible(gradient.type.shape, variable.type.shape), \
            f"gradient type {gradient.type} for an input of type {variable.type}"
    assert _compatible(tangent.type.shape, output.type.shape)
    # The values have the inputs' shapes (and the tangent the output's).
    rng = np.random.default_rng(0)
    values = [rng.uniform(0.5, 1.5, shape) for shape in value_shapes]
    forward, jvp, *vjps = evaluate([output, tangent, *gradients], inputs + directions,
                                   values + values)
    assert jvp.shape == forward.shape
    for gradient, value in zip(vjps, values):
        assert gradient.shape == value.shape


def test_row_gradient_values_sum_over_the_broadcast_axis():
    r, m = T.row("r"), T.dmatrix("m")
    gradient = grad((r * m).sum(), r)
    assert gradient.type.shape == (1, None)
    values = [np.array([[1.0, 2.0, 3.0]]), np.arange(6.0).reshape(2, 3)]
    np.testing.assert_array_equal(evaluate(gradient, [r, m], values), [[3.0, 5.0, 7.0]])


@pytest.mark.parametrize("make_output", [
    lambda r, m: T.int_div(m, r), lambda r, m: T.int_div(r, m),
    lambda r, m: T.switch(r, m, 1.0),
], ids=["int_div(m, r)", "int_div(r, m)", "switch(r, m, 1)"])
def test_rop_tangent_of_a_constant_partial_has_the_output_shape(make_output):
    # int_div's and switch's condition's partial derivatives are the constant 0: the tangent
    # of the row alone must still have the output's shape, not the row's.
    r, m, v = T.row("r"), T.dmatrix("m"), T.row("v")
    output = make_output(r, m)
    node = output.owner
    (tangent,) = node.op.R_op(node.inputs, [v if x is r else None for x in node.inputs])
    assert _compatible(tangent.type.shape, output.type.shape)
    values = [np.full((1, 3), 0.7), np.full((2, 3), 2.5), np.ones((1, 3))]
    result, forward = evaluate([tangent, output], [r, m, v], values)
    assert result.shape == forward.shape


def test_rop_accepts_tangents_typed_less_precisely_than_the_inputs():
    # A (None, None) tangent for a row: declared like the row, so that it broadcasts and its
    # length-1 axis can be dropped.
    r, m, v = T.row("r"), T.dmatrix("m"), T.dmatrix("v")
    for output, expected in [(r + m, np.ones((2, 3))), (r.dimshuffle(1), np.ones(3)),
                             (T.exp(r.dimshuffle(1, 0)) * 0 + 1, np.zeros((3, 1)))]:
        tangent = Rop(output, r, v)
        assert _compatible(tangent.type.shape, output.type.shape)
        result = evaluate(tangent, [r, m, v], [np.zeros((1, 3)), np.ones((2, 3)),
                                               np.ones((1, 3))])
        np.testing.assert_array_equal(result, expected)


def test_rop_of_an_inplace_elemwise_does_not_overwrite_its_input():
    x, v = T.dvector("x"), T.dvector("v")
    output = Elemwise(scalar.exp, inplace_pattern=((0, 0),))(x)
    (tangent,) = output.owner.op.R_op([x], [v])
    assert all(not node.op.destroy_map for node in toposort([tangent])
               if isinstance(node.op, Elemwise))
    np.testing.assert_allclose(evaluate(tangent, [x, v], [[0.0, 1.0], [2.0, 1.0]]),
                               [2.0, np.e])


# -- no gradient ---------------------------------------------------------------------------------

DISCRETE_OUTPUTS = [
    ("eq", lambda x, y: T.eq(x, y)), ("neq", lambda x, y: T.neq(x, y)),
    ("lt", lambda x, y: T.lt(x, y)), ("gt", lambda x, y: T.gt(x, y)),
    ("le", lambda x, y: T.le(x, y)), ("ge", lambda x, y: T.ge(x, y)),
    ("isnan", lambda x, y: T.isnan(x)), ("isinf", lambda x, y: T.isinf(y)),
    ("isfinite", lambda x, y: T.isfinite(x)),
    ("logical_and", lambda x, y: T.logical_and(x, y)),
    ("logical_or", lambda x, y: T.logical_or(x, y)),
    ("logical_xor", lambda x, y: T.logical_xor(x, y)),
    ("logical_not", lambda x, y: T.logical_not(x)),
    ("bitwise_and", lambda x, y: T.bitwise_and(T.cast(x, "int32"), T.cast(y, "int32"))),
    ("bitwise_or", lambda x, y: T.bitwise_or(T.cast(x, "int32"), T.cast(y, "int32"))),
    ("bitwise_xor", lambda x, y: T.bitwise_xor(T.cast(x, "int32"), T.cast(y, "int32"))),
    ("invert", lambda x, y: T.invert(T.cast(x, "int16"))),
    ("left_shift", lambda x, y: T.left_shift(T.cast(x, "int64"), 2)),
    ("right_shift", lambda x, y: T.right_shift(T.cast(x, "uint8"), 1)),
    ("cast to int32", lambda x, y: T.cast(x, "int32")),
    ("iround", lambda x, y: T.iround(x)),
]


@pytest.mark.parametrize("name, make_output", DISCRETE_OUTPUTS,
                         ids=[name for name, _ in DISCRETE_OUTPUTS])
def test_discrete_outputs_have_zero_gradients(name, make_output):
    """A bool or integer result is piecewise constant: its inputs get zero gradients (as in
    Theano), not an error; it has no tangent."""
    x, y = T.dmatrix("x"), T.dmatrix("y")
    output = make_output(x, y)
    cost = T.cast(output, "float64").sum()
    values = [np.array([[0.5, -2.0], [3.0, 0.0]]), np.array([[1.0, -1.0], [2.0, 0.0]])]
    reached = [v for v in (x, y) if v in graph_inputs([output])]
    for gradient in evaluate(grad(cost, reached), [x, y], values):
        np.testing.assert_array_equal(gradient, np.zeros((2, 2)))
    node = output.owner
    rules = node.op.L_op(node.inputs, node.outputs,
                         [T.zeros_like(o, dtype="float64") for o in node.outputs])
    assert not any(isinstance(g.type, DisconnectedType) for g in rules)
    assert Rop(output, [x, y], [x.type(), y.type()],
               disconnected_outputs="ignore", return_disconnected="none") is None


def test_integer_operand_of_a_float_result_gets_a_zero_gradient():
    x, i = T.dvector("x"), T.ivector("i")
    output = x * i
    rules = output.owner.op.L_op(output.owner.inputs, [output], [T.ones_like(output)])
    assert rules[1].type.dtype == sympile.config.floatX
    np.testing.assert_array_equal(evaluate(rules[1], [x, i], [[1.0, 2.0], [3, 4]]), [0.0, 0.0])
    np.testing.assert_array_equal(evaluate(grad(output.sum(), x), [x, i], [[1.0, 2.0], [3, 4]]),
                                  [3.0, 4.0])


@pytest.mark.parametrize("make_cost", [
    lambda x: T.real(T.cast(x, "complex128") * 2).sum(),
    lambda x: T.abs(T.cast(x, "complex128")).sum(),
    lambda x: T.imag(T.exp(T.cast(x, "complex128"))).sum(),
    lambda x: T.real(T.cast(x, "complex64")).sum(),
], ids=["real(2 z)", "abs(z)", "imag(exp(z))", "real(complex64)"])
def test_complex_gradients_are_not_implemented(make_cost):
    x = T.dvector("x")
    with pytest.raises(NullTypeGradError, match="complex gradients are not implemented"):
        grad(make_cost(x), x)


def test_complex_forward_mode_is_refused():
    x = T.dvector("x")
    z = T.cast(x, "complex128")
    with pytest.raises(MethodNotDefined, match="complex tangents are not implemented"):
        z.owner.op.R_op([x], [T.dvector("v")])
    with pytest.raises(NotImplementedError, match="cast_complex128,no_inplace} has no R_op rule"):
        Rop(T.real(T.exp(z)), x, T.dvector("v"))


def test_an_op_without_a_rule_is_not_implemented():
    x = T.dvector("x")
    cost = T.tri_gamma(x).sum()
    with pytest.raises(NullTypeGradError, match="tri_gamma has no derivative rule"):
        grad(cost, x)
    null = grad(cost, x, null_gradients="return")
    assert isinstance(null.type, NullType)
    with pytest.raises(NotImplementedError, match="tri_gamma,no_inplace} has no R_op rule"):
        Rop(T.tri_gamma(x), x, T.dvector("v"))


def test_no_output_gradient_gives_no_input_gradient():
    x = T.dvector("x")
    output = T.exp(x)
    node = output.owner
    (rule,) = node.op.L_op(node.inputs, node.outputs, [DisconnectedType()()])
    assert isinstance(rule.type, DisconnectedType)
    shuffled = x.dimshuffle("x", 0)
    (rule,) = shuffled.owner.op.L_op([x], [shuffled], [DisconnectedType()()])
    assert isinstance(rule.type, DisconnectedType)


# -- DimShuffle ----------------------------------------------------------------------------------
# (input static shape, pattern): transposes, 'x' insertions, dropped length-1 axes, mixtures.
DIMSHUFFLES = [
    ((None, None), (1, 0)),
    ((None, None, None), (2, 0, 1)),
    ((None, None, None), (1, 0, 2)),
    ((None,), ("x", 0)),
    ((None,), (0, "x")),
    ((None, None), (0, "x", 1)),
    ((None, None), ("x", 1, "x", 0)),
    ((), ("x", "x")),
    ((1, None), (1,)),
    ((None, 1), (0,)),
    ((None, 1, None), (2, 0)),
    ((1, 1), ()),
    ((None, 1, None), ("x", 2, "x", 0)),
    ((1, None, 1), (1, "x")),
    ((None, None), (0, 1)),
]


def _dimshuffle_point(input_shape: tuple) -> Callable:
    def make_point(rng):
        shape = tuple(int(rng.integers(2, 5)) if n is None else n for n in input_shape)
        return [rng.standard_normal(shape)]
    return make_point


def _dimshuffled(input_shape: tuple, pattern: tuple) -> Callable:
    def fun(x):
        return T.sin(specify_shape(x, input_shape).dimshuffle(*pattern)) * 2
    return fun


DIMSHUFFLE_CASES = [GradCase(f"dimshuffle{pattern} of {input_shape}",
                             _dimshuffled(input_shape, pattern), _dimshuffle_point(input_shape))
                    for input_shape, pattern in DIMSHUFFLES]


@pytest.mark.parametrize("case", DIMSHUFFLE_CASES, ids=repr)
def test_dimshuffle_gradients(case):
    check_grad_case(case)


@pytest.mark.parametrize("input_shape, pattern", DIMSHUFFLES,
                         ids=[f"{s}-{p}" for s, p in DIMSHUFFLES])
def test_dimshuffle_gradient_types_and_values(input_shape, pattern):
    x = T.tensor("float64", shape=input_shape)
    output = x.dimshuffle(*pattern)
    cotangent = T.tensor("float64", shape=output.type.shape)
    (gradient,) = output.owner.op.L_op([x], [output], [cotangent])
    assert gradient.type.dtype == "float64"
    assert _compatible(gradient.type.shape, x.type.shape)
    rng = np.random.default_rng(1)
    value = rng.standard_normal([3 if n is None else n for n in input_shape])
    forward = evaluate(output, [x], [value])
    weights = rng.standard_normal(forward.shape)
    # The gradient is the cotangent rearranged back: inserted axes removed, the kept axes put
    # back in order, the dropped ones restored.
    kept = [axis for axis in pattern if axis != "x"]
    weights_kept = weights.reshape([n for axis, n in zip(pattern, weights.shape) if axis != "x"])
    expected = np.transpose(weights_kept, np.argsort(kept).astype(int)).reshape(value.shape)
    np.testing.assert_array_equal(evaluate(gradient, [cotangent], [weights]), expected)
    (tangent,) = output.owner.op.R_op([x], [x.type()])
    assert tangent.type == output.type


def test_dimshuffle_of_an_integer_has_a_zero_gradient():
    i = T.imatrix("i")
    output = i.dimshuffle(1, 0)
    (rule,) = output.owner.op.L_op([i], [output], [T.dmatrix()])
    assert rule.type.dtype == sympile.config.floatX
    np.testing.assert_array_equal(evaluate(rule, [i], [np.ones((2, 3), "int32")]),
                                  np.zeros((2, 3)))


def test_grad_through_dimshuffle_and_broadcast():
    v, m = T.dvector("v"), T.dmatrix("m")
    cost = (v.dimshuffle(0, "x") * m).sum()
    gradient = grad(cost, v)
    values = [np.array([1.0, 2.0]), np.arange(6.0).reshape(2, 3)]
    np.testing.assert_array_equal(evaluate(gradient, [v, m], values), [3.0, 12.0])


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_power_exponent_gradient_where_the_base_is_zero(mode):
    """d(x ** y)/dy is x ** y log(x): 0 where x is 0 (0 ** y does not change with y > 0),
    not 0 * -inf = NaN, on both backends (Theano's rule)."""
    x, y = T.dvector("x"), T.dvector("y")
    gx, gy = grad((x ** y).sum(), [x, y])
    base, exponent = np.array([0.0, 0.0, 2.0, 0.0]), np.array([2.0, 0.5, 3.0, -1.0])
    got_x, got_y = sympile.function([x, y], [gx, gy], mode=mode)(base, exponent)
    np.testing.assert_array_equal(got_y, [0.0, 0.0, 8.0 * np.log(2.0), 0.0])
    np.testing.assert_array_equal(got_x, [0.0, np.inf, 12.0, -np.inf])
