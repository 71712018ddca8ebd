"""Convolution (2d and 3d, both gradients) and 2d pooling (every mode, both gradients) on the
device against the reference backend, their errors, batch normalization (tensor operations,
so placed on the device as they are), and a LeNet training step that runs wholly on the
device."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuHostOpsWarning
from sympile.gpu.conv import GpuConv
from sympile.gpu.pool import GpuPool
from sympile.gpu.reduction import GpuCAReduce
from sympile.gpu.runtime import placement_target
from sympile.tensor.nnet.abstract_conv import AbstractConvGradInputs, AbstractConvGradWeights
from sympile.tensor.nnet.bn import batch_normalization_test, batch_normalization_train
from sympile.tensor.signal.pool import pool_2d
from tests.gpu.test_nnet import _both

TOLERANCE = {"float32": 2e-5, "float64": 1e-12}


def _close(got, want, dtype):
    """Equal up to the rounding of sums in another order (BLAS's): relative to the
    largest magnitude."""
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = np.nanmax(np.abs(want), initial=1.0)
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype] * scale)


def _count(f, op_class) -> int:
    return sum(isinstance(node.op, op_class) for node in f.maker.fgraph.apply_nodes)


def _conv_and_grads(x, w, **options):
    y = T.nnet.conv2d(x, w, **options) if x.type.ndim == 4 else \
        T.nnet.conv3d(x, w, **options)
    cost = (y * y).sum()
    return [y, *sympile.grad(cost, [x, w])]


CONV_OPTIONS = [
    {},
    {"border_mode": "half", "subsample": (2, 1)},
    {"border_mode": (1, 2), "filter_dilation": (2, 1), "filter_flip": False},
    {"border_mode": "full", "num_groups": 2},
    {"subsample": (3, 2), "border_mode": (2, 0)},
]


@pytest.mark.parametrize("options", CONV_OPTIONS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_and_its_gradients(options, dtype, context):
    x = T.tensor(dtype, (None,) * 4, name="x")
    w = T.tensor(dtype, (None,) * 4, name="w")
    reference, f = _both([x, w], _conv_and_grads(x, w, **options), context)
    assert _count(f, GpuConv) == 3
    rng = np.random.default_rng(1)
    groups = options.get("num_groups", 1)
    values = [rng.normal(size=(3, 4, 8, 7)).astype(dtype),
              rng.normal(size=(6, 4 // groups, 3, 2)).astype(dtype)]
    for got, want in zip(f(*values), reference(*values)):
        _close(got, want, dtype)


def test_conv3d_and_its_gradients(context):
    x, w = T.dtensor5("x"), T.dtensor5("w")
    options = {"border_mode": (1, 0, 1), "subsample": (1, 2, 1), "filter_dilation": (2, 1, 1)}
    reference, f = _both([x, w], _conv_and_grads(x, w, **options), context)
    assert _count(f, GpuConv) == 3
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(2, 3, 5, 6, 4)), rng.normal(size=(4, 3, 2, 3, 2))]
    for got, want in zip(f(*values), reference(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_of_strided_views_and_empty_batches(context):
    """A transposed input and filters (device views with any strides) and a batch of
    zero images."""
    x, w = T.dtensor4("x"), T.dtensor4("w")
    outputs = _conv_and_grads(x.dimshuffle(0, 1, 3, 2), w[:, :, ::-1], border_mode="half")
    reference, f = _both([x, w], outputs, context)
    rng = np.random.default_rng(3)
    for images in (2, 0):
        values = [rng.normal(size=(images, 2, 5, 6)), rng.normal(size=(3, 2, 3, 3))]
        for got, want in zip(f(*values), reference(*values)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_gradient_ops_alone(context):
    """The two transposes built directly, as conv2d_grad_wrt_* build them."""
    w, gy, x = T.dtensor4("w"), T.dtensor4("gy"), T.dtensor4("x")
    gx = AbstractConvGradInputs(border_mode=1, subsample=2)(w, gy, [7, 6])
    gw = AbstractConvGradWeights(border_mode=1, subsample=2)(x, gy, [3, 3])
    reference, f = _both([w, gy, x], [gx, gw], context)
    rng = np.random.default_rng(4)
    values = [rng.normal(size=(5, 2, 3, 3)), rng.normal(size=(2, 5, 4, 3)),
              rng.normal(size=(2, 2, 7, 6))]
    for got, want in zip(f(*values), reference(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_errors_are_the_cpus(context):
    x, w = T.dtensor4("x"), T.dtensor4("w")
    reference, f = _both([x, w], T.nnet.conv2d(x, w), context)
    for values in ([np.zeros((1, 3, 5, 5)), np.zeros((2, 2, 3, 3))],   # channels
                   [np.zeros((1, 2, 2, 5)), np.zeros((2, 2, 3, 3))]):  # filter too large
        with pytest.raises(ValueError) as device_error:
            f(*values)
        with pytest.raises(ValueError) as host_error:
            reference(*values)
        assert str(device_error.value).split("\n")[0] == str(host_error.value).split("\n")[0]


def test_conv_of_float16_stays_on_the_host(context):
    """Named in the warning as what runs: FAST_RUN lowered it to Theano's CorrMM."""
    x, w = T.tensor("float16", (None,) * 4), T.tensor("float16", (None,) * 4)
    with placement_target(context), pytest.warns(GpuHostOpsWarning, match="CorrMM"):
        f = sympile.function([x, w], T.nnet.conv2d(x, w))
    assert _count(f, GpuConv) == 0


POOL_OPTIONS = [
    {"ws": (2, 2)},
    {"ws": (3, 2), "stride": (1, 2), "pad": (1, 1)},
    {"ws": (2, 3), "stride": (2, 1), "ignore_border": False},
    {"ws": (3, 3), "stride": (2, 2), "ignore_border": False},
]


@pytest.mark.parametrize("options", POOL_OPTIONS, ids=str)
@pytest.mark.parametrize("mode", ["max", "sum", "average_inc_pad", "average_exc_pad"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pool_and_its_gradient(mode, options, dtype, context):
    x = T.tensor(dtype, (None,) * 4, name="x")
    y = pool_2d(x, mode=mode, **options)
    reference, f = _both([x], [y, sympile.grad((y * T.sin(y)).sum(), x)], context)
    assert _count(f, GpuPool) == 2
    rng = np.random.default_rng(5)
    value = rng.normal(size=(2, 3, 7, 8)).astype(dtype)
    value[0, 0, :3, :3] = 1.5  # ties: max pooling's gradient goes to every maximum
    value[1, 2, 4, 4] = np.nan
    for got, want in zip(f(value), reference(value)):
        _close(got, want, dtype)


def test_pool_of_a_strided_view_and_three_leading_axes(context):
    x = T.dtensor5("x")
    y = pool_2d(x.dimshuffle(0, 1, 2, 4, 3), ws=(2, 2), mode="average_exc_pad",
                ignore_border=False)
    reference, f = _both([x], [y, sympile.grad(y.sum(), x)], context)
    value = np.random.default_rng(6).normal(size=(2, 2, 3, 5, 4))
    for got, want in zip(f(value), reference(value)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_pool_errors(context):
    x = T.dtensor4("x")
    reference, f = _both([x], pool_2d(x, ws=(4, 4)), context)
    with pytest.raises(ValueError, match="larger than the input"):
        f(np.zeros((1, 1, 3, 5)))
    with pytest.raises(ValueError, match="larger than the input"):
        reference(np.zeros((1, 1, 3, 5)))


def test_lenet_step_runs_on_the_device(context):
    """conv, max pooling, tanh, a dense softmax layer and SGD on device shared variables:
    no op on the host, and the CPU's losses and parameters after three steps."""
    rng = np.random.default_rng(7)
    initial = {"w": rng.normal(size=(4, 1, 3, 3)) * 0.3, "b": np.zeros(4),
               "v": rng.normal(size=(4 * 3 * 3, 5)) * 0.1}
    images = rng.normal(size=(6, 1, 8, 8)).astype("float32")
    labels = rng.integers(0, 5, size=6)

    def step(context_name):
        with placement_target(context_name) if context_name else _no_target():
            params = {k: sympile.shared(v.astype("float32"), name=k)
                      for k, v in initial.items()}
            x, y = T.ftensor4("x"), T.lvector("y")
            h = T.tanh(pool_2d(T.nnet.conv2d(x, params["w"]), ws=(2, 2))
                       + params["b"].dimshuffle("x", 0, "x", "x"))
            p = T.nnet.softmax(T.dot(h.flatten(2), params["v"]))
            loss = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
            grads = sympile.grad(loss, list(params.values()))
            updates = [(s, s - np.float32(0.1) * g) for s, g in zip(params.values(), grads)]
            with warnings.catch_warnings():
                warnings.simplefilter("error", GpuHostOpsWarning)
                f = sympile.function([x, y], loss, updates=updates)
        losses = [float(f(images, labels)) for _ in range(3)]
        return f, losses, {k: s.get_value() for k, s in params.items()}

    _, want_losses, want = step(None)
    f, losses, got = step(context)
    assert _count(f, GpuConv) == 2 and _count(f, GpuPool) == 2  # forward, weights
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axes", ["spatial", "per-activation"])
def test_batch_normalization_on_the_device(axes, dtype, context):
    """Training statistics, running averages, the three gradients and the test-time form:
    no op on the host, the CPU's values (the variance of a shifted input included)."""
    rng = np.random.default_rng(11)
    shape = (5, 3, 4, 4)
    stats = (1, 3, 1, 1) if axes == "spatial" else (1, 3, 4, 4)
    x = T.tensor(dtype, (None,) * 4, name="x")
    gamma, beta, mean, var = (T.tensor(dtype, (1, None, None, None), name=n)
                              for n in ("gamma", "beta", "mean", "var"))
    out, batch_mean, invstd, new_mean, new_var = batch_normalization_train(
        x, gamma, beta, axes, running_mean=mean, running_var=var)
    grads = sympile.grad((out * out * T.arange(5, dtype=dtype).dimshuffle(0, "x", "x", "x"))
                         .sum(), [x, gamma, beta])
    test_out = batch_normalization_test(x, gamma, beta, mean, var, axes)
    inputs = [x, gamma, beta, mean, var]
    outputs = [out, batch_mean, invstd, new_mean, new_var, *grads, test_out]
    reference, f = _both(inputs, outputs, context)
    assert _count(f, GpuCAReduce) >= 2
    values = [(rng.normal(size=shape) * 3 + 100).astype(dtype),
              *(rng.uniform(0.5, 2, size=stats).astype(dtype) for _ in range(4))]
    for got, want in zip(f(*values), reference(*values)):
        _close(got, want, dtype)


class _no_target:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
