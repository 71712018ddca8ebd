"""C code of ARange against the Python backend (numpy.arange of Python scalars): every output
dtype with C arithmetic, integer, bool and float bounds, negative steps, empty results,
float rounding of the length and of the fill (bit for bit), integer wrap-around in the fill,
and bad bounds: a zero step, NaN, infinite lengths, first values out of an integer dtype."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.basic import ARange
from tests.link.c.utils import (
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

OUTPUT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64"]
_FUNCTIONS: dict = {}


def _functions(bound_dtype: str, dtype: str):
    """ARange of scalars of bound_dtype, compiled for C and Python (once per pair)."""
    key = (bound_dtype, dtype)
    if key not in _FUNCTIONS:
        bounds = [T.tensor(dtype=bound_dtype, shape=()) for _ in range(3)]
        output = ARange(dtype)(*bounds)
        c_function = compile_c(bounds, output)
        assert c_function._vm.fallback_nodes == []
        python_function = sympile.function(bounds, output, mode=PYTHON_MODE)
        _FUNCTIONS[key] = (c_function, python_function)
    return _FUNCTIONS[key]


def _outcome(function, values):
    try:
        return function(*values)
    except (ValueError, OverflowError, TypeError) as error:
        return type(error), str(error).splitlines()[0]


def _assert_like_python(bound_dtype: str, dtype: str, values) -> None:
    values = [np.asarray(v, dtype=bound_dtype) for v in values]
    c_function, python_function = _functions(bound_dtype, dtype)
    actual, expected = _outcome(c_function, values), _outcome(python_function, values)
    if isinstance(expected, tuple):
        assert actual == expected
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual.view(np.uint8), expected.view(np.uint8))


BOUNDS = [(0, 10, 1), (3, -7, -2), (5, 5, 1), (7, 2, 1), (-4, 30, 7), (2, 3, 5)]
FLOAT_BOUNDS = [(0.0, 1.0, 0.1), (0.5, 5.0, 1.5), (-2.25, 3.5, 0.75), (1.0, -1.0, -0.3),
                (0.0, 1e-3, 1e-5), (-0.7, 2.9, 0.5)]


@pytest.mark.parametrize("dtype", OUTPUT_DTYPES)
@pytest.mark.parametrize("bound_dtype", ["int64", "int32", "uint8", "float64", "float32"])
def test_every_dtype(bound_dtype, dtype):
    for values in BOUNDS + (FLOAT_BOUNDS if bound_dtype.startswith("float") else []):
        if bound_dtype == "uint8" and min(values) < 0:
            continue
        _assert_like_python(bound_dtype, dtype, values)


def test_bool_bounds():
    for values in [(False, True, True), (True, False, True), (False, True, False)]:
        _assert_like_python("bool", "int64", values)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
def test_the_fill_wraps_and_the_first_values_are_checked(dtype):
    for values in [(250, 260, 1), (0, 400, 100), (300, 0, -100), (-1, 3, 1), (120, 130, 7),
                   (-130, 0, 50)]:
        _assert_like_python("int64", dtype, values)
    for values in [(300.5, 0.0, -100.0), (-1.5, 3.0, 1.0), (1e30, 2e30, 1e29)]:
        _assert_like_python("float64", dtype, values)


def test_quotients_that_underflow():
    """numpy's underflow check: a nonzero span whose quotient rounds to zero holds one
    element when the quotient is +0 (once found by hypothesis: 0 to 5e-324 by 2 in float32
    had no element on the C backend)."""
    cases = [(0.0, 5e-324, 2.0), (0.0, -5e-324, 2.0), (0.0, 5e-324, -2.0), (1.0, 2.0, np.inf),
             (2.0, 1.0, np.inf), (-1.0, -2.0, -np.inf)]
    for values in cases:
        for dtype in ("float32", "float64", "int32"):
            _assert_like_python("float64", dtype, values)
    a, b, c = T.dscalar("a"), T.dscalar("b"), T.dscalar("c")
    node = T.arange(a, b, c).owner
    length = sympile.function([a, b, c], node.op.infer_shape(None, node, [(), (), ()])[0][0])
    for values in cases:
        assert length(*values) == len(np.arange(*values))


def test_bad_bounds():
    for values in [(0.0, np.inf, 1.0), (0.0, np.nan, 1.0), (0.0, 1.0, 0.0), (-np.inf, 0.0, 1.0),
                   (np.inf, np.inf, 1.0)]:
        _assert_like_python("float64", "float64", values)
    _assert_like_python("int64", "int32", (0, 5, 0))


@settings(max_examples=60, deadline=None)
@given(start=st.floats(-50, 50), span=st.floats(-60, 60), step=st.floats(0.01, 7),
       negative=st.booleans(), dtype=st.sampled_from(["float32", "float64", "int32"]))
def test_random_float_bounds(start, span, step, negative, dtype):
    _assert_like_python("float64", dtype, (start, start + span, -step if negative else step))


@settings(max_examples=60, deadline=None)
@given(start=st.integers(-1000, 1000), stop=st.integers(-1000, 1000),
       step=st.integers(1, 50), negative=st.booleans(),
       dtype=st.sampled_from(["int64", "int16", "float32", "uint32"]))
def test_random_integer_bounds(start, stop, step, negative, dtype):
    _assert_like_python("int64", dtype, (start, stop, -step if negative else step))


@pytest.mark.parametrize("dtype", ["bool", "float16", "complex64"])
def test_bool_float16_and_complex_outputs_give_no_c_code(dtype):
    bounds = [T.lscalar() for _ in range(3)]
    node = ARange(dtype).make_node(*bounds)
    assert node.op.c_code(node, CNames(("a", "b", "c"), ("out",), "")) is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.basic import ARange

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    a, b, c = T.dscalar(), T.dscalar(), T.dscalar()
    i, j, k = T.lscalar(), T.lscalar(), T.lscalar()
    f = sympile.function([a, b, c, i, j, k], [ARange("float32")(a, b, c),
                                              ARange("uint8")(i, j, k)], mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for values in [(0.0, 1.0, 0.1, 0, 300, 1), (1.0, 0.0, 1.0, 5, 5, 1),
                   (0.0, 3.0, 1.0, 9, 0, -2)]:
        f(*values)
    try:
        f(0.0, 1.0, 0.0, 0, 1, 1)
    except ValueError:
        pass
    print("clean")
""")


@pytest.mark.slow
def test_arange_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
