"""Tests of sympile/tensor/extra_ops/numpy_ops.py: bincount, bartlett, unique,
ravel_multi_index, unravel_index, cpu_contiguous and fill_diagonal_offset against numpy on
both backends, their gradients (numerically, in float64) and tangents, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import Lop, Rop, verify_grad
from sympile.tensor import extra_ops
from sympile.tensor.extra_ops import (
    Unique,
    bartlett,
    bincount,
    cpu_contiguous,
    fill_diagonal_offset,
    squeeze,
    unique,
)
from tests.link.c.utils import compare_backends, requires_compiler
from tests.utils import assert_like_numpy, evaluate


@requires_compiler
def test_bincount_is_numpys_on_both_backends():
    x, weights = T.lvector("x"), T.dvector("weights")
    values = [np.array([1, 3, 3, 0, 7]), np.array([0.5, 1.0, 2.0, -1.0, 4.0])]
    counts, weighted, long = compare_backends(
        [bincount(x), bincount(x, weights), bincount(x, minlength=10)], [x, weights], values,
        require_c=False)
    assert_like_numpy(counts, np.bincount(values[0]))
    assert_like_numpy(weighted, np.bincount(values[0], values[1]))
    assert_like_numpy(long, np.bincount(values[0], minlength=10))
    empty = evaluate(bincount(x, minlength=3), [x], [np.array([], dtype="int64")])
    assert_like_numpy(empty, np.zeros(3, dtype="int64"))


def test_bincount_refuses_negative_values_and_bad_arguments():
    x = T.lvector("x")
    with pytest.raises(ValueError, match="negative value -2"):
        evaluate(bincount(x), [x], [np.array([1, -2])])
    with pytest.raises(TypeError, match="bincount: x must be an integer"):
        bincount(T.dvector())
    with pytest.raises(TypeError, match="minlength must be a non-negative int"):
        bincount(x, minlength=-1)
    with pytest.raises(ValueError, match="weights has shape"):
        weights = T.dvector()
        evaluate(bincount(x, weights), [x, weights], [np.array([1]), np.array([1.0, 2.0])])


def test_bincount_gradient_and_tangent_of_the_weights():
    x = np.array([2, 0, 2, 1])
    verify_grad(lambda w: bincount(x, w), [np.array([0.3, -1.0, 2.0, 0.5])],
                rng=np.random.default_rng(0))
    weights, tangent = T.dvector("w"), T.dvector("t")
    values = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 10.0, 100.0, 1000.0])]
    assert_like_numpy(evaluate(Rop(bincount(x, weights), weights, tangent), [weights, tangent],
                               values), np.bincount(x, values[1]))
    cotangent = T.dvector("c")
    assert_like_numpy(evaluate(Lop(bincount(x, weights), weights, cotangent),
                               [weights, cotangent], [values[0], np.array([1.0, 2.0, 3.0])]),
                      np.array([3.0, 1.0, 3.0, 2.0]))


@requires_compiler
@pytest.mark.parametrize("length", [0, 1, 2, 5, 6])
def test_bartlett_is_numpys(length):
    M = T.lscalar("M")
    window = compare_backends(bartlett(M), [M], [length], require_c=False)
    assert_like_numpy(window, np.bartlett(length))


def test_bartlett_needs_an_integer_scalar_and_knows_its_shape():
    with pytest.raises(TypeError, match="bartlett: M must be an integer scalar"):
        bartlett(T.dscalar())
    M = T.lscalar("M")
    shape = evaluate(bartlett(M).shape, [M], [4])
    assert tuple(shape) == (4,)


@requires_compiler
def test_unique_and_its_extra_outputs_are_numpys():
    x = T.lmatrix("x")
    value = np.array([[3, 1, 3], [2, 1, 0]])
    outputs = unique(x, return_index=True, return_inverse=True, return_counts=True)
    results = compare_backends(outputs, [x], [value], require_c=False)
    expected = np.unique(value, return_index=True, return_inverse=True, return_counts=True)
    for actual, reference in zip(results, expected):
        assert_like_numpy(actual, np.asarray(reference).reshape(-1))
    rows = evaluate(Unique(axis=0)(x), [x], [np.array([[1, 2], [0, 5], [1, 2]])])
    assert_like_numpy(rows, np.unique(np.array([[1, 2], [0, 5], [1, 2]]), axis=0))
    assert isinstance(unique(x), sympile.Variable)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        Unique(axis=2)(x)


def test_cpu_contiguous_copies_only_what_is_not_contiguous():
    x = T.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3)
    result = evaluate(cpu_contiguous(x.T), [x], [value])
    assert result.flags.c_contiguous
    assert_like_numpy(result, value.T)
    verify_grad(lambda a: cpu_contiguous(a.T) * 2, [value], rng=np.random.default_rng(1))
    tangent = T.dmatrix("t")
    assert_like_numpy(evaluate(Rop(cpu_contiguous(x), x, tangent), [x, tangent],
                               [value, value + 1]), value + 1)


@requires_compiler
@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 5])
def test_fill_diagonal_offset_is_numpys(offset):
    a, k = T.dmatrix("a"), T.lscalar("k")
    value = np.arange(12.0).reshape(3, 4)
    expected = value.copy()
    rows = np.arange(max(min(3 + min(offset, 0), 4 - max(offset, 0)), 0))
    expected[rows + max(-offset, 0), rows + max(offset, 0)] = 7.0
    result = compare_backends(fill_diagonal_offset(a, 7.0, k), [a, k], [value, offset])
    assert_like_numpy(result, expected)


def test_fill_diagonal_offset_gradients_and_errors():
    for offset in (-1, 0, 2):
        verify_grad(lambda a, v, k=offset: fill_diagonal_offset(a, v, k),
                    [np.arange(12.0).reshape(4, 3) / 7, np.array(0.5)],
                    rng=np.random.default_rng(offset + 5))
    with pytest.raises(TypeError, match="a must be a matrix"):
        fill_diagonal_offset(T.dvector(), 1.0, 0)
    with pytest.raises(TypeError, match="does not fit the dtype int64"):
        fill_diagonal_offset(T.lmatrix(), 1.5, 0)
    with pytest.raises(TypeError, match="offset must be an integer scalar"):
        fill_diagonal_offset(T.dmatrix(), 1.0, 0.5)


def test_squeeze_is_theanos_extra_ops_name():
    x = T.tensor("float64", shape=(1, None, 1))
    assert squeeze is T.squeeze
    assert squeeze(x).type.ndim == 1


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       count=st.integers(0, 7), mode=st.sampled_from(["raise", "wrap", "clip"]),
       order=st.sampled_from(["C", "F"]), seed=st.integers(0, 2**32 - 1))
def test_ravel_multi_index_and_unravel_index_match_numpy(dims, count, mode, order, seed):
    """ravel_multi_index and unravel_index against numpy's, in every mode and order, and
    each the other's inverse; indices out of range wrap or clip, or raise ValueError."""
    rng = np.random.default_rng(seed)
    low, high = (0, 1) if mode == "raise" else (-3, 4)
    multi = [rng.integers(low * n, high * n, (count,)) for n in dims]
    index_vars = [T.lvector(f"i{axis}") for axis in range(len(dims))]
    flat = extra_ops.ravel_multi_index(index_vars, dims, mode=mode, order=order)
    back = extra_ops.unravel_index(flat, dims, order=order)
    f = sympile.function(index_vars, [flat, *back])
    got_flat, *got_back = f(*multi)
    want_flat = np.ravel_multi_index(tuple(multi), dims, mode=mode, order=order)
    np.testing.assert_array_equal(got_flat, want_flat)
    assert got_flat.dtype == np.int64
    for got, want in zip(got_back, np.unravel_index(want_flat, dims, order=order)):
        np.testing.assert_array_equal(got, want)
    if mode == "raise" and count:
        bad = [m.copy() for m in multi]
        bad[0][0] = dims[0]
        with pytest.raises(ValueError, match="RavelMultiIndex"):
            f(*bad)


def test_unravel_index_needs_ndim_for_dims_of_unknown_length():
    dims = T.lvector("dims")
    with pytest.raises(ValueError, match="give ndim"):
        extra_ops.unravel_index(T.lvector("i"), dims)
    rows, cols = extra_ops.unravel_index(T.lscalar("i"), dims, ndim=2)
    f = sympile.function([rows.owner.inputs[0], dims], [rows, cols])
    assert [int(v) for v in f(7, np.array([3, 4]))] == [1, 3]
    with pytest.raises(ValueError, match="ndim is 2"):
        f(7, np.array([2, 2, 2]))
    with pytest.raises(TypeError, match="indices"):
        extra_ops.unravel_index(T.dvector("x"), (3, 4))
    with pytest.raises(TypeError, match="tuple or a list"):
        extra_ops.ravel_multi_index(T.lvector("i"), (3, 4))
