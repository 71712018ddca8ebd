"""sort and argsort on the device against the reference backend: every sortable dtype, any
axis and axis None, lengths that are not powers of two, NaNs and infinities last, ties in
stable order, views, empty and one-element axes, random shapes (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gpu import GpuArrayType
from sympile.gpu.runtime import emulate, placement_target
from sympile.gpu.sort import GpuSort

from .test_elemwise import _values

DTYPES = ("bool", "int8", "uint16", "int64", "float16", "float32", "float64")


def _both(build, dtype, ndim, context):
    host = T.tensor(dtype, (None,) * ndim)
    reference = sympile.function([host], build(host))
    device = GpuArrayType(dtype, (None,) * ndim, context)()
    with placement_target(context):
        f = sympile.function([device], build(device))
    assert any(isinstance(n.op, GpuSort) for n in f.maker.fgraph.apply_nodes)
    return reference, f


def _check(f, reference, value):
    for got, want in zip(f(value), reference(value)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_and_argsort_along_every_axis(dtype, context):
    def build(x):
        return [T.sort(x, axis=0), T.sort(x, axis=2), T.argsort(x, axis=1),
                T.argsort(x, axis=None), T.sort(x, axis=None)]
    reference, f = _both(build, dtype, 3, context)
    _check(f, reference, _values(dtype, (3, 5, 7), np.random.default_rng(1)))


def test_nans_infinities_and_ties(context):
    def build(x):
        return [T.sort(x, axis=-1), T.argsort(x, axis=-1)]
    reference, f = _both(build, "float64", 2, context)
    value = np.array([[np.nan, 1.0, -np.inf, 1.0, np.inf, np.nan, -0.0, 0.0, 1.0],
                      [2.0, 2.0, 2.0, np.nan, -1.0, 2.0, np.inf, -np.inf, 2.0]])
    _check(f, reference, value)


def test_views_empty_and_single_elements(context):
    def build(x):
        return [T.sort(x.T[::2], axis=1), T.argsort(x[:, ::-1], axis=0)]
    reference, f = _both(build, "float32", 2, context)
    rng = np.random.default_rng(2)
    for shape in [(6, 4), (1, 1), (0, 3), (3, 0), (17, 2)]:
        _check(f, reference, rng.normal(size=shape).astype("float32"))


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 9), min_size=1, max_size=3), axis=st.integers(0, 2),
       seed=st.integers(0, 100))
def test_random_shapes(shape, axis, seed):
    axis = min(axis, len(shape) - 1)
    value = np.random.default_rng(seed).integers(-3, 4, shape).astype("float64")

    def build(x):
        return [T.sort(x, axis=axis), T.argsort(x, axis=axis)]
    host = T.tensor("float64", (None,) * len(shape))
    with emulate():
        f = sympile.function([host], build(host))
    got_sorted, got_order = f(value)
    np.testing.assert_array_equal(got_sorted, np.sort(value, axis=axis))
    np.testing.assert_array_equal(got_order, np.argsort(value, axis=axis, kind="stable"))


def test_sort_gradient_and_permutations(context):
    """The sort's derivative (PermuteAlongAxis) runs on the device: gradients equal the
    reference's; a bad permutation is the CPU's ValueError."""
    from sympile.gpu.sort import GpuPermuteAlongAxis
    from sympile.tensor.sort.ops import PermuteAlongAxis

    x = T.dmatrix("x")
    weights = np.arange(12.0).reshape(3, 4)
    reference = sympile.function([x], sympile.grad((T.sort(x, axis=1) * weights).sum(), x))
    device = GpuArrayType("float64", (None, None), context)()
    with placement_target(context):
        f = sympile.function([device], sympile.grad(
            (T.sort(device, axis=1) * weights).sum(), device))
    assert any(isinstance(n.op, GpuPermuteAlongAxis) for n in f.maker.fgraph.apply_nodes)
    value = np.random.default_rng(5).normal(size=(3, 4))
    np.testing.assert_array_equal(f(value), reference(value))
    p = GpuArrayType("int64", (None, None), context)("p")
    with placement_target(context):
        g = sympile.function([device, p], [PermuteAlongAxis(0)(device, p),
                                           PermuteAlongAxis(0, inverse=True)(device, p)])
    order = np.array([[2, 0, 1, 1], [0, 1, 2, 0], [1, 2, 0, 2]])
    gathered, scattered = g(value, order)
    np.testing.assert_array_equal(gathered, np.take_along_axis(value, order, axis=0))
    expected = np.empty_like(value)
    np.put_along_axis(expected, order, value, axis=0)
    np.testing.assert_array_equal(scattered, expected)
    with pytest.raises(ValueError, match=r"must lie in \[0, 3\)"):
        g(value, order + 1)
    with pytest.raises(ValueError, match="not a permutation along axis 0"):
        g(value, np.zeros((3, 4), dtype="int64"))
