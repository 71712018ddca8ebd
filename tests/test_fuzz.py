"""A differential fuzzer: random expression graphs over mixed dtypes, broadcasting,
reductions, casts, slicing and the special values (+-0, +-inf, NaN, extremes, empty and
size-1 axes), each computed by numpy and by sympile on the Python backend without
rewrites, the Python backend with them, the C backend, and the emulated GPU; every result
must agree with numpy's. A fixed seed and 150 graphs in the normal run; 1,000 more as a slow
test. Each mismatch it has found is a fixed regression case at the end of this file.

The rewriting backends run every FAST_RUN rewrite but the stabilize phase's, whose purpose
is to give better values than the expression as written where it over- or underflows
(log(exp(1e30)) is 1e30, not numpy's inf): tests/tensor/rewriting/test_stabilize.py
checks those."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.gpu import GpuHostOpsWarning, emulate
from sympile.graph.rewriting.db import RewriteQuery
from tests.link.c.utils import requires_compiler

DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float32", "float64")
# Leaf shapes: (static shape, the value's shape); length-1 axes broadcast.
SHAPES = (((None, None), (3, 4)), ((1, None), (1, 4)), ((None, 1), (3, 1)), ((None,), (4,)),
          ((), ()), ((None, None), (0, 4)), ((None, None), (1, 1)))
SPECIAL_FLOATS = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 1e30, -1e-30, 3.0)

BINARY = {"add": (T.add, np.add), "sub": (T.sub, np.subtract), "mul": (T.mul, np.multiply),
          "maximum": (T.maximum, np.maximum), "minimum": (T.minimum, np.minimum),
          "lt": (T.lt, np.less), "eq": (T.eq, np.equal), "true_div": (T.true_div, np.true_divide)}
UNARY = {"neg": (T.neg, np.negative), "abs": (abs, np.abs), "exp": (T.exp, np.exp),
         "log": (T.log, np.log), "sqrt": (T.sqrt, np.sqrt), "tanh": (T.tanh, np.tanh),
         "floor": (T.floor, np.floor), "sign": (T.sgn, np.sign), "sin": (T.sin, np.sin)}
REDUCTIONS = {"sum": (T.sum, np.sum), "max": (T.max, np.max), "min": (T.min, np.min),
              "prod": (T.prod, np.prod)}
# No-bool unary ops (numpy refuses negative and subtract on bools).
NO_BOOL = {"neg", "sub", "sign"}

REWRITES = RewriteQuery(include=("fast_run",), exclude=("stabilize",))
C_MODE = Mode(REWRITES, backend="c")
PYTHON_MODE = Mode(REWRITES, backend="python")
NO_REWRITES = Mode(None, backend="python")


def _leaf_value(rng, dtype: str, shape: tuple) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([0, 1, 2, 3, -1, -7, info.min, info.max], dtype=np.int64)
        pool = pool[(pool >= info.min) & (pool <= info.max)]
        return rng.choice(pool, size=shape).astype(dtype)
    return rng.choice(np.array(SPECIAL_FLOATS), size=shape).astype(dtype)


class _Program:
    """A random expression, built symbolically and as numpy calls at once."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.inputs, self.values = [], []
        self.terms = []  # (symbolic, numpy value)

    def leaf(self):
        dtype = str(self.rng.choice(DTYPES))
        static, shape = SHAPES[self.rng.integers(len(SHAPES))]
        variable = T.tensor(dtype, static, name=f"x{len(self.inputs)}")
        value = _leaf_value(self.rng, dtype, shape)
        self.inputs.append(variable)
        self.values.append(value)
        return variable, value

    def term(self, depth: int):
        if depth == 0 or self.rng.random() < 0.25:
            return self.leaf()
        choice = self.rng.random()
        if choice < 0.35:
            (a, av), (b, bv) = self.term(depth - 1), self.term(depth - 1)
            if not _broadcastable(a, av, b, bv):
                return a, av
            name = str(self.rng.choice(list(BINARY)))
            if name in NO_BOOL and (av.dtype == bool and bv.dtype == bool):
                name = "add"
            symbolic, numeric = BINARY[name]
            return symbolic(a, b), numeric(av, bv)
        a, av = self.term(depth - 1)
        if choice < 0.6:
            name = str(self.rng.choice(list(UNARY)))
            if name in NO_BOOL and av.dtype == bool:
                name = "abs"
            symbolic, numeric = UNARY[name]
            return symbolic(a), numeric(av)
        if choice < 0.72:
            dtype = str(self.rng.choice(DTYPES))
            return T.cast(a, dtype), np.asarray(av).astype(dtype)
        if choice < 0.86 and np.ndim(av) > 0:
            axis = int(self.rng.integers(np.ndim(av)))
            name = str(self.rng.choice(list(REDUCTIONS)))
            if name in ("max", "min") and np.shape(av)[axis] == 0:
                name = "sum"
            symbolic, numeric = REDUCTIONS[name]
            return symbolic(a, axis=axis), np.asarray(numeric(av, axis=axis))
        if np.ndim(av) > 0:
            index = (slice(None, None, -1), slice(1, None), slice(None, None, 2))[
                self.rng.integers(3)]
            return a[index], np.asarray(av)[index]
        return a, av


def _broadcastable(a, av, b, bv) -> bool:
    """numpy broadcasts the values, and where their lengths differ the length-1 one is
    declared broadcastable (sympile's rule, Theano's)."""
    ndim = max(np.ndim(av), np.ndim(bv))
    shapes = [(1,) * (ndim - np.ndim(v)) + np.shape(v) for v in (av, bv)]
    static = [(1,) * (ndim - v.type.ndim) + v.type.shape for v in (a, b)]
    for axis in range(ndim):
        lengths = (shapes[0][axis], shapes[1][axis])
        if lengths[0] == lengths[1]:
            continue
        ones = [i for i in (0, 1) if lengths[i] == 1]
        if not ones or static[ones[0]][axis] != 1:
            return False
    return True


def _compile(inputs, output, mode):
    return sympile.function(inputs, output, mode=mode, on_unused_input="ignore")


def _agree(got, want, what: str) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: {got.dtype}{got.shape} where numpy gives {want.dtype}{want.shape}"
    if want.dtype.kind == "f":
        # Within rounding where finite; infinities and NaNs exactly where numpy has them.
        tolerance = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=0, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check_program(seed: int, depth: int = 4) -> None:
    """Build program `seed` and compare every backend with numpy."""
    rng = np.random.default_rng(seed)
    program = _Program(rng)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        output, expected = program.term(depth)
    expected = np.asarray(expected)
    inputs, values = program.inputs, program.values
    label = f"program {seed}: {output}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GpuHostOpsWarning)
        functions = {"python without rewrites": _compile(inputs, output, NO_REWRITES),
                     "python": _compile(inputs, output, PYTHON_MODE),
                     "c": _compile(inputs, output, C_MODE)}
        with emulate():
            functions["emulated gpu"] = _compile(inputs, output, PYTHON_MODE)
    for name, function in functions.items():
        _agree(function(*[np.copy(v) for v in values]), expected, f"{label} [{name}]")


# The seeds in blocks, so that the suite's workers share them.
@requires_compiler
@pytest.mark.parametrize("first", range(0, 150, 50))
def test_random_programs_agree_with_numpy(first):
    for seed in range(first, first + 50):
        check_program(seed)


@pytest.mark.slow
@requires_compiler
@pytest.mark.parametrize("first", range(150, 1150, 100))
def test_random_programs_agree_with_numpy_long(first):
    for seed in range(first, first + 100):
        check_program(seed)


# -- what the fuzzer found ----------------------------------------------------------------------

@requires_compiler
def test_float32_tanh_is_one_where_it_rounds_to_one():
    """Program 353: the C backend's vectorised tanhf clamped its argument at 9, where tanh
    is still the float below 1, so tanh(1e30) was 1 - 2**-24 (numpy: 1)."""
    x = T.fvector("x")
    f = _compile([x], T.tanh(x), C_MODE)
    values = np.array([9.5, 12.0, 1e30, -1e30, np.inf, -20.0], dtype="float32")
    np.testing.assert_array_equal(f(values), [1, 1, 1, -1, 1, -1])
    check_program(353)


def test_float16_on_the_device_rounds_after_each_op():
    """Programs 423, 495, 527, 621, 925, 1024, 1085: the emulated GPU computed a float16
    graph (int8 -> float16 by numpy's rules) in float32 without rounding between ops, so
    floor(0.9999) was 0 where numpy's float16 loop had rounded the argument to 1."""
    x = T.tensor("float16", (None,), name="x")
    values = np.array([0.99995, 2.5, 0.3, 1000.7], dtype="float16")
    expected = np.floor(np.exp(np.log(values)))
    with emulate():
        f = _compile([x], T.floor(T.exp(T.log(x))), PYTHON_MODE)
    np.testing.assert_array_equal(f(values), expected)
    for seed in (423, 495, 527, 621, 925, 1024, 1085):
        check_program(seed)
