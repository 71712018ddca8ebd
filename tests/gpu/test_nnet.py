"""Softmax, log-softmax, their gradient, the fused cross-entropy and Alloc on the device
against the reference backend, infinities and NaN rows included."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuHostOpsWarning
from sympile.gpu.nnet import GpuCrossentropyDx, GpuCrossentropyPick
from sympile.gpu.runtime import placement_target
from sympile.tensor.nnet.basic import SoftmaxGrad


def _both(inputs, outputs, context):
    """(the reference function, the device function), asserting that nothing of the
    device function runs on the host."""
    reference = sympile.function(inputs, outputs)
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        return reference, sympile.function(inputs, outputs)


def _logits(dtype, shape=(4, 6)):
    values = np.random.default_rng(7).normal(size=shape) * 3
    if shape[0] >= 4:
        values[1, 2] = np.inf
        values[2, :] = -np.inf
        values[3, 0] = np.nan
    return values.astype(dtype)


def _close(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    tolerance = {"float16": 3e-3, "float32": 1e-6}.get(dtype, 1e-14)
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax(axis, dtype, context):
    x = T.tensor(dtype, (None, None), name="x")
    outputs = [T.nnet.softmax(x, axis=axis), T.nnet.log_softmax(x, axis=axis)]
    reference, f = _both([x], outputs, context)
    value = _logits(dtype)
    for got, want in zip(f(value), reference(value)):
        _close(got, want, dtype)


def test_softmax_of_empty_slices(context):
    x = T.dmatrix("x")
    reference, f = _both([x], T.nnet.softmax(x, axis=0), context)
    value = np.zeros((0, 3))
    assert f(value).shape == reference(value).shape == (0, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_grad(dtype, context):
    dy = T.tensor(dtype, (None, None, None), name="dy")
    sm = T.tensor(dtype, (None, None, None), name="sm")
    reference, f = _both([dy, sm], SoftmaxGrad(1)(dy, sm), context)
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(2, 3, 4)).astype(dtype), rng.random((2, 3, 4)).astype(dtype)]
    _close(f(*values), reference(*values), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_crossentropy_step(dtype, context):
    """The fused loss and its gradient, the way a classifier's step builds them (finite
    logits: the mean would hide a wrong row behind another row's NaN)."""
    x = T.tensor(dtype, (None, None), name="x")
    y = T.lvector("y")
    p = T.nnet.softmax(x)
    loss = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    outputs = [loss, sympile.grad(loss, x), p]
    reference, f = _both([x, y], outputs, context)
    assert any(isinstance(n.op, GpuCrossentropyPick) for n in f.maker.fgraph.apply_nodes)
    assert any(isinstance(n.op, GpuCrossentropyDx) for n in f.maker.fgraph.apply_nodes)
    value = np.random.default_rng(4).normal(size=(5, 4)).astype(dtype) * 4
    targets = np.array([0, 3, 1, 1, 2])
    for got, want in zip(f(value, targets), reference(value, targets)):
        _close(got, want, dtype)


def test_crossentropy_rows_with_infinities(context):
    """Each row's loss and probabilities where a row holds +inf, only -inf, or NaN."""
    x, y = T.dmatrix("x"), T.lvector("y")
    reference, f = _both([x, y], list(T.nnet.crossentropy_softmax_1hot(x, y)), context)
    value, targets = _logits("float64", (5, 6)), np.array([1, 2, 0, 0, 5])
    for got, want in zip(f(value, targets), reference(value, targets)):
        _close(got, want, "float64")


def test_crossentropy_checks_targets(context):
    x, y = T.dmatrix("x"), T.lvector("y")
    p = T.nnet.softmax(x)
    loss = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    reference, f = _both([x, y], [loss, sympile.grad(loss, x)], context)
    value = np.zeros((2, 3))
    for bad in ([0, 3], [-1, 0]):
        with pytest.raises(IndexError, match=r"in \[0, 3\)"):
            f(value, np.array(bad))
        with pytest.raises(IndexError):
            reference(value, np.array(bad))


@pytest.mark.parametrize("shape", [(2, 3), (4, 1, 3), (3,)])
def test_alloc(shape, context):
    v = T.drow("v") if len(shape) > 1 else T.dvector("v")
    n = T.lscalar("n")
    out = T.alloc(v, n, *shape[:-1], shape[-1]) * 2
    reference, f = _both([v, n], out, context)
    value = np.arange(shape[-1], dtype="float64")[None] if len(shape) > 1 else \
        np.arange(shape[-1], dtype="float64")
    np.testing.assert_array_equal(f(value, 2), reference(value, 2))
    with pytest.raises(ValueError, match="negative length"):
        f(value, -1)
