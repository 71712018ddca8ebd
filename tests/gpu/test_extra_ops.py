"""cumsum and cumprod on the device against the reference backend: numpy's bits (the same
order of operations), numpy's dtypes (int8 accumulates in int64; float16 rounds each step),
any axis and axis None, views, empty axes, infinities and NaN."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuArrayType
from sympile.gpu.extra_ops import GpuCumOp
from sympile.gpu.runtime import placement_target

from .test_elemwise import _values


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                   "float64"])
def test_cumsum_and_cumprod_are_numpys(dtype, context):
    def build(x):
        return [T.cumsum(x, axis=0), T.cumsum(x, axis=2), T.cumprod(x, axis=1),
                T.cumsum(x), T.cumprod(x[:, ::-1].dimshuffle(2, 0, 1), axis=2)]
    host = T.tensor(dtype, (None,) * 3)
    reference = sympile.function([host], build(host))
    device = GpuArrayType(dtype, (None,) * 3, context)()
    with placement_target(context):
        f = sympile.function([device], build(device))
    assert any(isinstance(n.op, GpuCumOp) for n in f.maker.fgraph.apply_nodes)
    for shape in [(3, 4, 5), (2, 0, 3), (1, 1, 1)]:
        value = _values(dtype, shape, np.random.default_rng(3)) if np.prod(shape) >= 6 \
            else np.ones(shape, dtype)
        for got, want in zip(f(value), reference(value)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float64"])
def test_repeat_is_numpys(dtype, context):
    counts = T.lvector("counts")

    def build(x):
        return [T.repeat(x, 2, axis=1), T.repeat(x, counts, axis=0), T.repeat(x.T, 3),
                T.repeat(x[::-1], counts[0], axis=0)]
    host = T.tensor(dtype, (None, None))
    reference = sympile.function([host, counts], build(host))
    device = GpuArrayType(dtype, (None, None), context)()
    with placement_target(context):
        f = sympile.function([device, counts], build(device))
    value = _values(dtype, (3, 4), np.random.default_rng(4))
    for repeats in ([0, 2, 1], [3, 0, 0]):
        for got, want in zip(f(value, np.array(repeats)), reference(value, np.array(repeats))):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="repeats must be >= 0"):
        f(value, np.array([1, -1, 1]))
    with pytest.raises(ValueError, match="repeats has 2 entries"):
        f(value, np.array([1, 1]))
