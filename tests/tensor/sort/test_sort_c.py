"""C code of SortOp and ArgSortOp against numpy (bit for bit) and the Python backend: every
axis and the flattened input, every dtype, every kind, ties (argsort's stable order), NaNs,
infinities and signed zeros (numpy's placement), C/F/strided/negative-stride inputs, 0-d and
empty inputs, long lines and random shapes."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile.tensor as T
from sympile.tensor.sort import argsort, sort
from tests.link.c.utils import (
    LAYOUTS,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

DTYPES = ["float64", "float32", "float16", "int8", "int32", "int64", "uint8", "uint64", "bool",
          "complex64"]
AXES = (0, 1, 2, None)
_FUNCTIONS: dict = {}


def _sorting_function(dtype: str, ndim: int):
    """One compiled C function per dtype and rank: sort and argsort on every axis and the
    flattened input (compiled once for all the values a test tries)."""
    key = (dtype, ndim)
    if key not in _FUNCTIONS:
        x = T.tensor(dtype=dtype, shape=(None,) * ndim)
        axes = [*range(ndim), None]
        outputs = [sort(x, axis) for axis in axes] + [argsort(x, axis) for axis in axes]
        function = compile_c([x], outputs)
        assert function._vm.fallback_nodes == []
        _FUNCTIONS[key] = (function, axes)
    return _FUNCTIONS[key]


def _bytes(value: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(value).view(np.uint8)


def _assert_like_numpy(value: np.ndarray) -> None:
    function, axes = _sorting_function(value.dtype.name, value.ndim)
    results = function(value)
    # sort's default kind is numpy's quicksort, argsort's numpy's stable kind.
    expected = [np.sort(value, axis) for axis in axes] \
        + [np.argsort(value, axis, kind="stable") for axis in axes]
    for actual, reference in zip(results, expected):
        assert actual.dtype == reference.dtype and actual.shape == reference.shape
        # Equal bits: the same NaNs and signed zeros in the same places.
        np.testing.assert_array_equal(_bytes(actual), _bytes(reference))


def _values_with_ties(rng, dtype: str, shape: tuple) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.startswith(("float", "complex")):
        choices = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -2.0, 3.0], dtype=dtype)
        return choices[rng.integers(0, len(choices), shape)]
    info = np.iinfo(dtype)
    choices = np.array([info.min, info.max, 0, 1, 7], dtype=dtype)
    return choices[rng.integers(0, len(choices), shape)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_axis_and_the_flattened_input(layout, dtype):
    rng = np.random.default_rng(0)
    value = LAYOUTS[layout](_values_with_ties(rng, dtype, (3, 37, 5)))
    _assert_like_numpy(value)
    _assert_like_numpy(LAYOUTS[layout](_values_with_ties(rng, dtype, (5, 3, 37))))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_long_lines_sorted_reversed_and_random(dtype):
    # numpy's vectorized sorts take over on long lines.
    rng = np.random.default_rng(1)
    for value in (np.arange(1000), np.arange(1000)[::-1], rng.integers(0, 50, 1000),
                  rng.standard_normal(1001) * 100):
        _assert_like_numpy(value.astype(dtype))


def test_zero_dimensional_and_empty_inputs():
    for shape in ((), (0,), (1,)):
        _assert_like_numpy(np.ones(shape, "float64"))
    for shape in ((0, 3, 2), (3, 0, 2), (2, 3, 0), (1, 1, 1)):
        _assert_like_numpy(np.zeros(shape, "int32"))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 40), min_size=1, max_size=3),
       dtype=st.sampled_from(["float64", "int16"]), seed=st.integers(0, 2**32 - 1),
       layout=st.sampled_from(list(LAYOUTS)))
def test_random_shapes(shape, dtype, seed, layout):
    value = _values_with_ties(np.random.default_rng(seed), dtype, tuple(shape))
    if value.size:
        value = LAYOUTS[layout](value)
    _assert_like_numpy(value)


@pytest.mark.parametrize("kind", ["quicksort", "mergesort", "heapsort", "stable"])
def test_every_kind_has_c_code_and_numpy_values(kind):
    x = T.fmatrix("x")
    value = np.random.default_rng(2).standard_normal((6, 50)).astype("float32")
    value[2, ::3] = np.nan
    value[3, ::2] = np.where(np.arange(25) % 2, -0.0, 0.0)
    results = compare_backends([sort(x, 1, kind), sort(x, 0, kind)], [x], [value])
    for result, axis in zip(results, (1, 0)):
        # The kind's own order of -0.0 and 0.0 too.
        np.testing.assert_array_equal(_bytes(result), _bytes(np.sort(value, axis, kind)))


def test_a_new_array_and_the_input_untouched():
    x = T.dvector("x")
    function = compile_c([x], [sort(x), argsort(x)])
    value = np.array([3.0, 1.0, 2.0])
    sorted_values, permutation = function(value)
    assert not np.shares_memory(sorted_values, value)
    np.testing.assert_array_equal(value, [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(permutation, [1, 2, 0])


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.sort import argsort, sort

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x = T.tensor3("x")
    outputs = [sort(x, 0), sort(x, 2), sort(x, None), argsort(x, 1), argsort(x, 2),
               argsort(x, None)]
    f = sympile.function([x], outputs, mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    rng = np.random.default_rng(0)
    for shape in [(2, 35, 4), (0, 3, 4), (2, 1, 0), (1, 1, 1), (3, 2, 70)]:
        value = rng.standard_normal(shape)
        f(value)
        f(np.asfortranarray(value))
    print("clean")
""")


@pytest.mark.slow
def test_sort_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
