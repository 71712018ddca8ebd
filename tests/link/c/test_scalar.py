"""The scalar ops' C code (sympile.scalar.c_rules), run through Elemwise on the C backend and
compared with the Python backend (numpy): every op for every dtype numpy defines it for, mixed
dtypes, and the edge cases where C and numpy differ unless the rule takes care (integer
division and remainder signs, division by zero, overflow, NaN in max/min/clip, shifts past the
width, casts). Several ops go into one compiled function to keep the number of compiles low."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.ccode import C_TYPES
from sympile.scalar import c_rules
from sympile.scalar.basic import SCALAR_OPS, Cast, ScalarOp, get_scalar_type
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.math import elemwise_of
from tests.link.c.utils import requires_compiler
from tests.utils import ELEMWISE_CASES, assert_like_numpy, domain_values

pytestmark = requires_compiler

# No rewrites: each op runs as written, not as a rewrite would replace it.
C_PLAIN = Mode(None, backend="c", name="C_PLAIN")
PYTHON_PLAIN = Mode(None, backend="python", name="PYTHON_PLAIN")
C_DTYPES = tuple(C_TYPES)


def check_against_python(cases: Sequence[tuple[str, Callable, Sequence[np.ndarray]]],
                         allowed_fallbacks: Callable[[str], bool] = lambda label: False
                         ) -> list[str]:
    """Compile every (label, build, values) case into one C function and one Python function;
    each output must equal the Python backend's. Returns the labels whose node ran perform()
    (allowed_fallbacks(label) must accept each)."""
    inputs, outputs, values, labels = [], [], [], []
    for label, build, arrays in cases:
        variables = [T.tensor(dtype=a.dtype, shape=(None,) * a.ndim) for a in arrays]
        outputs.append(build(*variables))
        inputs += variables
        values += arrays
        labels.append(label)
    c_function = sympile.function(inputs, outputs, mode=C_PLAIN, on_unused_input="ignore")
    python_function = sympile.function(inputs, outputs, mode=PYTHON_PLAIN,
                                       on_unused_input="ignore")
    fallback_outputs = {v for node in c_function._vm.fallback_nodes for v in node.outputs}
    fallbacks = [label for label, output in zip(labels, c_function.maker.fgraph.outputs)
                 if output in fallback_outputs]
    unexpected = [label for label in fallbacks if not allowed_fallbacks(label)]
    assert not unexpected, f"no C code for {unexpected}"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = python_function(*[np.copy(v) for v in values])
    actual = c_function(*[np.copy(v) for v in values])
    for label, result, reference in zip(labels, actual, expected):
        try:
            assert_like_numpy(np.asarray(result), reference)
        except AssertionError as error:
            raise AssertionError(f"{label}: {error}") from None
    return fallbacks


def _numpy_defines(op: ScalarOp, dtypes: Sequence[str]) -> bool:
    try:
        op.output_dtypes(*dtypes)
    except TypeError:
        return False
    return True


def _c_expected(op: ScalarOp, dtypes: Sequence[str]) -> bool:
    """Whether the op must have C code for inputs of these dtypes."""
    if op in c_rules.NO_C_CODE:
        return False
    return all(d in C_TYPES for d in (*dtypes, *op.output_dtypes(*dtypes)))


def test_every_scalar_op_has_a_c_rule_or_is_a_deliberate_fallback():
    missing = [name for name, op in SCALAR_OPS.items()
               if op.c_rule is None and op not in c_rules.NO_C_CODE]
    assert missing == []
    assert Cast.c_rule is not None


@pytest.mark.parametrize("dtype", C_DTYPES)
def test_every_op_in_every_dtype_matches_the_python_backend(dtype):
    """Each op, its inputs all of `dtype` (where numpy defines it), on the values of the op
    table (spread over its domain, plus 0, -0, nan and infinities for floats)."""
    cases, expect_c = [], {}
    for name, op in sorted(SCALAR_OPS.items()):
        case = ELEMWISE_CASES[name]
        dtypes = [dtype] * op.nin
        if not _numpy_defines(op, dtypes):
            continue
        arrays = [domain_values(dtype, domain, size=24, seed=index)
                  for index, domain in enumerate(case.domains)]
        if name in ("int_div", "mod") and dtype != "bool":
            # Every sign combination, and zero divisors.
            arrays = [np.resize(arrays[0], 48), np.repeat(arrays[1], 2)]
        cases.append((name, elemwise_of(op), arrays))
        expect_c[name] = _c_expected(op, dtypes)
    fallbacks = check_against_python(cases, allowed_fallbacks=lambda name: not expect_c[name])
    assert set(fallbacks) == {name for name, expected in expect_c.items() if not expected}


MIXED_DTYPES = [("int8", "float32"), ("uint8", "int8"), ("int64", "uint64"),
                ("bool", "int16"), ("uint16", "float64"), ("int32", "float32"),
                ("uint64", "int8"), ("bool", "float32")]


@pytest.mark.parametrize("first, second", MIXED_DTYPES)
def test_binary_ops_on_mixed_dtypes(first, second):
    """Inputs converted to the loop's dtype (numpy's promotion) before the op; a signed integer
    and a uint64 compared exactly."""
    cases = []
    for name, op in sorted(SCALAR_OPS.items()):
        if op.nin != 2 or op in c_rules.NO_C_CODE or not _numpy_defines(op, [first, second]):
            continue
        case = ELEMWISE_CASES[name]
        arrays = [domain_values(first, case.domains[0], size=24, seed=1),
                  domain_values(second, case.domains[1], size=24, seed=2)]
        cases.append((name, elemwise_of(op), arrays))
    check_against_python(cases, allowed_fallbacks=lambda name: True)


def _extremes(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    values = [info.min, info.min + 1, -7, -3, -2, -1, 0, 1, 2, 3, 7, info.max - 1, info.max]
    return np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32",
                                   "uint64"])
def test_integer_edge_cases(dtype):
    """Every pair of extreme and small values: division and remainder signs, division by zero
    (0, as numpy), INT_MIN // -1, overflow wrapping in +, -, *, neg, abs, square, power; shifts
    by counts past the width."""
    extremes = _extremes(dtype)
    first, second = np.repeat(extremes, len(extremes)), np.tile(extremes, len(extremes))
    counts = np.array([c for c in (0, 1, 5, 7, 8, 15, 16, 31, 32, 63, 64, 65, 200)
                       if c <= np.iinfo(dtype).max], dtype=dtype)
    shifted = np.resize(extremes, len(counts))
    exponents = np.resize(np.array([0, 1, 2, 3, 7, 31, 63, 64], dtype=dtype), len(extremes))
    binary = ["add", "sub", "mul", "int_div", "mod", "maximum", "minimum", "bitwise_and",
              "bitwise_or", "bitwise_xor", "eq", "lt", "ge"]
    unary = ["neg", "abs", "sqr", "sign", "reciprocal", "invert", "floor", "round_half_to_even"]
    cases = [(name, elemwise_of(SCALAR_OPS[name]), [first, second]) for name in binary]
    cases += [(name, elemwise_of(SCALAR_OPS[name]), [extremes]) for name in unary
              if _numpy_defines(SCALAR_OPS[name], [dtype])]
    cases += [(name, elemwise_of(SCALAR_OPS[name]), [shifted, counts])
              for name in ("left_shift", "right_shift")]
    cases.append(("pow", elemwise_of(SCALAR_OPS["pow"]), [extremes, exponents]))
    cases.append(("clip", elemwise_of(SCALAR_OPS["clip"]),
                  [first, np.minimum(first, second), np.maximum(first, second)]))
    check_against_python(cases)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_edge_cases(dtype):
    """NaN in either operand of maximum, minimum and clip; signed zeros and infinities in
    floor division, remainder, logaddexp, arctan2; huge arguments of sigmoid and softplus."""
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 1e30,
                         -1e30, 3.0, -7.0], dtype=dtype)
    first = np.repeat(specials, len(specials))
    second = np.tile(specials, len(specials))
    third = np.roll(second, 5)
    binary = ["int_div", "mod", "maximum", "minimum", "logaddexp", "arctan2", "hypot", "pow",
              "true_div", "eq", "neq", "lt", "le", "gt", "ge", "logical_and", "logical_xor"]
    unary = ["sigmoid", "softplus", "sign", "abs", "isnan", "isinf", "isfinite", "floor",
             "ceil", "trunc", "round_half_to_even", "round_half_away_from_zero", "gammaln",
             "psi", "tri_gamma", "gamma", "erf", "erfc", "reciprocal", "logical_not",
             "deg2rad", "rad2deg", "angle", "imag", "exp2", "log2", "expm1", "log1p"]
    cases = [(name, elemwise_of(SCALAR_OPS[name]), [first, second]) for name in binary]
    cases += [(name, elemwise_of(SCALAR_OPS[name]), [specials]) for name in unary]
    cases.append(("clip", elemwise_of(SCALAR_OPS["clip"]), [first, second, third]))
    cases.append(("switch", elemwise_of(SCALAR_OPS["switch"]), [first, second, third]))
    check_against_python(cases)


def test_psi_and_tri_gamma_near_poles_and_far_out():
    values = np.array([-4.999, -4.5, -3.001, -2.5, -1e-8, 1e-8, 1e-3, 0.5, 1.4616321449683622,
                       2.0, 9.99, 10.0, 10.01, 1e3, 1e8, 1e300], dtype="float64")
    check_against_python([(name, elemwise_of(SCALAR_OPS[name]), [values])
                          for name in ("psi", "tri_gamma", "gammaln", "gamma")])


def test_integer_to_negative_integer_power_raises_like_numpy():
    x, y = T.lvector("x"), T.lvector("y")
    f = sympile.function([x, y], x ** y, mode=C_PLAIN)
    assert f._vm.fallback_nodes == []
    np.testing.assert_array_equal(f(np.array([2, 3]), np.array([3, 0])), [8, 1])
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        f(np.array([2, 3]), np.array([1, -1]))
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        np.power(np.array([2, 3]), np.array([1, -1]))


CAST_SOURCES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64",
                "float32", "float64"]


def _in_range_values(source: str, target: str) -> np.ndarray:
    """Values of `source` that convert to `target` without overflow (float to int is
    platform-defined outside the target's range, in numpy as in C)."""
    values = np.concatenate([domain_values(source, (-130.0, 300.0), size=24),
                             np.array([0, 1, 127], dtype=source)])
    if np.dtype(source).kind == "f":
        values = np.concatenate([values, np.array([-0.5, 0.99, -1.99, 2.5], dtype=source)])
        if np.dtype(target).kind in "iub":
            values = values[np.isfinite(values)]
    if np.dtype(target).kind in "iu" and np.dtype(source).kind == "f":
        info = np.iinfo(target)
        values = values[(values > info.min - 1) & (values < info.max + 1)]
    return values


def test_casts_between_every_pair_of_c_dtypes():
    cases = [(f"{source}->{target}", elemwise_of(Cast(target)),
              [_in_range_values(source, target)])
             for source, target in itertools.product(CAST_SOURCES, C_DTYPES)
             if source != target]
    check_against_python(cases)


def test_c_literals_keep_exact_values():
    """Constants of fused graphs are C literals: extremes and awkward floats keep their
    exact value."""
    values = {"int64": [np.iinfo("int64").min, np.iinfo("int64").max],
              "uint64": [np.iinfo("uint64").max], "int8": [-128, 127], "bool": [True, False],
              "float32": [np.float32(0.1), np.finfo("float32").tiny, np.inf, -np.inf, np.nan],
              "float64": [0.1, 5e-324, 1.7976931348623157e308, -0.0, np.nan]}
    cases = []
    for dtype, row in values.items():
        for value in row:
            placeholder = get_scalar_type("float64")()
            constant = get_scalar_type(dtype).make_constant(np.asarray(value, dtype=dtype)[()])
            cases.append((f"{dtype} {value}", Elemwise(Composite([placeholder], [constant])),
                          [np.zeros(2)]))
    check_against_python(cases)
    assert c_rules.c_literal(np.iinfo("int64").min, "int64") == \
        "((npy_int64)(-9223372036854775807LL - 1))"
