"""CAReduce and FusedCAReduce on the device against the reference backend: every fold in
the dtypes it takes, any axes, NaNs, empty axes, dtype and acc_dtype, fused reductions, the
passes over partial results; Argmax and Argmin."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuArrayType
from sympile.gpu.reduction import GpuArgReduce, GpuCAReduce, partial_count
from sympile.gpu.runtime import placement_target, runtime
from sympile.scalar import basic as scalar
from sympile.tensor.reduction import CAReduce

from .test_elemwise import _values

FOLDS = {"add": scalar.add, "mul": scalar.mul, "maximum": scalar.maximum,
         "minimum": scalar.minimum, "logical_and": scalar.logical_and,
         "logical_or": scalar.logical_or}
DTYPES = ("bool", "int8", "int64", "uint32", "float16", "float32", "float64")
AXES = (None, (0,), (1,), (0, 2), (1, 2), ())


def _run(build, dtype, shape, context, value=None, static=None, reduces=True,
         kind=GpuCAReduce):
    """(device result, reference result) of build(x) for x a device input; reduces: the
    compiled graph must hold a reduction on the device (rewrites remove some: a sum over no
    axis of an int64 tensor is the tensor)."""
    value = _values(dtype, shape, np.random.default_rng(len(shape))) if value is None else value
    host = T.tensor(dtype, static or (None,) * len(shape))
    expected = sympile.function([host], build(host))(value)
    device = GpuArrayType(dtype, static or (None,) * len(shape), context)()
    with placement_target(context):
        f = sympile.function([device], build(device))
    assert not reduces or any(isinstance(n.op, kind) for n in f.maker.fgraph.apply_nodes)
    return f(value), expected


def _check(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    loose = "float16" in (dtype, want.dtype.name)
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"),
                               rtol=3e-3 if loose else 1e-5, atol=1e-2 if loose else 1e-9)


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fold", FOLDS)
def test_fold_table(fold, dtype, axis, context):
    if fold == "mul" and dtype == "float16":
        pytest.skip("numpy multiplies float16 values in float16, the device accumulates in "
                    "float32: where a running product of 60 values leaves float16's range, "
                    "the two differ")
    # Finite values (NaN and infinities are test_nan_propagates_through_max_and_sum's): a
    # NaN would make every result NaN and the comparison say nothing.
    value = _values(dtype, (3, 4, 5), np.random.default_rng(5))
    if value.dtype.kind == "f":
        value = np.nan_to_num(value, posinf=2.0, neginf=-2.0)
    got, want = _run(lambda x: CAReduce(FOLDS[fold], axis)(x), dtype, (3, 4, 5), context,
                     value, reduces=axis != ())
    _check(got, want, dtype)


def test_nan_propagates_through_max_and_sum(context):
    value = np.arange(24.0).reshape(4, 6)
    value[1, 3] = np.nan
    for build in (lambda x: x.max(axis=1), lambda x: x.sum(axis=0), lambda x: x.min()):
        got, want = _run(build, "float64", (4, 6), context, value)
        np.testing.assert_array_equal(got, want)


def test_empty_axes(context):
    got, want = _run(lambda x: x.sum(axis=0), "float32", (0, 3), context,
                     np.zeros((0, 3), "float32"))
    np.testing.assert_array_equal(got, want)
    got, want = _run(lambda x: x.sum(axis=1), "float32", (0, 3), context,
                     np.zeros((0, 3), "float32"))
    assert got.shape == want.shape == (0,)
    with pytest.raises(ValueError, match="empty"):
        _run(lambda x: x.max(axis=0), "float32", (0, 3), context, np.zeros((0, 3), "float32"))


def test_dtype_and_acc_dtype(context):
    value = np.full((50, 40), 100, "int8")
    for build in (lambda x: x.sum(dtype="int8"), lambda x: x.sum(acc_dtype="int64"),
                  lambda x: x.sum(axis=0, dtype="float32"), lambda x: x.prod(axis=1)):
        got, want = _run(build, "int8", (50, 40), context, value)
        np.testing.assert_array_equal(got, want)


def test_fused_reductions(context):
    """sum((x - mean)^2) and sum(exp(x), axis) become FusedCAReduce nodes, on the device."""
    value = np.random.default_rng(3).normal(size=(30, 20)).astype("float32")
    for build in (lambda x: ((x - x.mean()) ** 2).sum(), lambda x: T.exp(x).sum(axis=1),
                  lambda x: T.max(abs(x), axis=0)):
        got, want = _run(build, "float32", (30, 20), context, value)
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_transposed_and_broadcast_inputs(context):
    x = T.dmatrix("x")
    y = T.drow("y")
    build = [T.sum(x.T * y, axis=1), T.sum(x.T * y, axis=0), (x.T + y).max()]
    values = [np.random.default_rng(1).normal(size=(7, 5)), np.arange(7.0)[None, :]]
    expected = sympile.function([x, y], build)(*values)
    with placement_target(context):
        f = sympile.function([x, y], build)
    for got, want in zip(f(*values), expected):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_passes_over_partial_results():
    """The emulated device splits every reduction into few partials: a sum of 1000 values
    takes four passes (K = 8, 4, 2, 1), and gives numpy's value."""
    device = runtime("emulated")
    counts = [partial_count(device, 1, 1000)]
    while counts[-1] > 1:
        counts.append(partial_count(device, 1, counts[-1]))
    assert counts == [8, 4, 2, 1]
    value = np.random.default_rng(0).normal(size=1000)
    got, want = _run(lambda x: x.sum(), "float64", (1000,), "emulated", value)
    np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_centered_square_sum(dtype, context):
    """sum((x - x.mean())**2), which the CPU reads once (CenteredSquareSum), is the two
    passes on the device."""
    value = np.random.default_rng(2).normal(size=(40, 30)).astype(dtype) + 5
    got, want = _run(lambda x: ((x - x.mean()) ** 2).sum(), dtype, (40, 30), context, value)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)


ARG_DTYPES = ("bool", "int8", "uint16", "int64", "float16", "float32", "float64")


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (1, 2)], ids=str)
@pytest.mark.parametrize("dtype", ARG_DTYPES)
def test_argmax_argmin(dtype, axis, context):
    """Few distinct values, so ties are many: the first extreme wins, as in numpy."""
    value = (np.random.default_rng(4).integers(0, 3, (3, 4, 5)) - (dtype != "bool" and
             not dtype.startswith("u"))).astype(dtype)
    for build in (lambda x: T.argmax(x, axis=axis), lambda x: T.argmin(x, axis=axis)):
        got, want = _run(build, dtype, (3, 4, 5), context, value, kind=GpuArgReduce)
        assert got.dtype == want.dtype == np.int64
        np.testing.assert_array_equal(got, want)


def test_argmax_argmin_nan_and_infinities(context):
    """The first NaN is the answer of both (numpy's rule); infinities are ordinary extremes."""
    value = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, 2.0, np.inf, np.inf],
                      [np.inf, np.inf, -np.inf, np.nan], [np.nan, 0.0, 0.0, 0.0]], "float32")
    for axis in (None, 0, 1):
        for arg in (T.argmax, T.argmin):
            got, want = _run(lambda x, arg=arg, axis=axis: arg(x, axis=axis), "float32", (4, 4),
                             context, value, kind=GpuArgReduce)
            np.testing.assert_array_equal(got, want)
    got, _ = _run(lambda x: T.argmax(x, axis=1), "float32", (4, 4), context, value,
                  kind=GpuArgReduce)
    np.testing.assert_array_equal(got, [1, 2, 3, 0])


def test_argmax_of_a_transposed_view_and_empty_inputs(context):
    value = np.random.default_rng(6).normal(size=(6, 7))
    got, want = _run(lambda x: T.argmax(x.T[:, ::2], axis=1), "float64", (6, 7), context,
                     value, kind=GpuArgReduce)
    np.testing.assert_array_equal(got, want)
    got, want = _run(lambda x: T.argmin(x, axis=1), "float64", (0, 7), context,
                     np.zeros((0, 7)), kind=GpuArgReduce)
    assert got.shape == want.shape == (0,)
    with pytest.raises(ValueError, match="empty"):
        _run(lambda x: T.argmax(x, axis=0), "float64", (0, 7), context, np.zeros((0, 7)),
             kind=GpuArgReduce)
