"""Scan and IfElse on the device against the reference backend: the loop's float sequences,
states, non-sequences and outputs are device arrays and its step's nodes run on the device
with no transfer per step; taps, plain outputs, integer sequences on the host, until, the
last-steps-only buffers, no steps; gradients through the device loop; a lazy IfElse of
device values."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuFromHost, GpuHostOpsWarning, HostFromGpu
from sympile.gpu.runtime import placement_target
from sympile.gpu.scan import DeviceIfElse, DeviceScan
from sympile.ifelse import ifelse
from sympile.scan import until

RNG = np.random.default_rng(0)


def _device_function(context, *args, **kwargs):
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        return sympile.function(*args, **kwargs)


def _nodes(f, op_class):
    return [node for node in f.maker.fgraph.apply_nodes if isinstance(node.op, op_class)]


def _transfers(function) -> list[str]:
    return [str(node.op) for node in function.maker.fgraph.apply_nodes
            if isinstance(node.op, (GpuFromHost, HostFromGpu))]


def _check(got, want):
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_recurrence_and_its_gradient_loop_on_the_device(context):
    weights = RNG.normal(size=(4, 4)).astype("float32") * 0.3
    with placement_target(context):
        W = sympile.shared(weights, name="W")
    x, h0, host_w = T.fmatrix("x"), T.fvector("h0"), T.fmatrix("host_w")

    def run(matrix):
        states, _ = sympile.scan(lambda xt, h, m: T.tanh(T.dot(h, m) + xt), sequences=x,
                                 outputs_info=h0, non_sequences=matrix)
        return states, (states ** 2).sum()

    states, cost = run(host_w)
    reference = sympile.function([x, h0, host_w], [states, cost, sympile.grad(cost, host_w)])
    states, cost = run(W)
    f = _device_function(context, [x, h0], [states, cost, sympile.grad(cost, W)])
    loops = _nodes(f, DeviceScan)
    assert len(loops) == 2   # the forward loop and its gradient's
    values = [RNG.normal(size=(6, 4)).astype("float32"), RNG.normal(size=4).astype("float32")]
    _check(f(*values), reference(*values, weights))
    # Each step reads and writes device arrays only: its inner function moves nothing.
    for node in loops:
        inner = node.op._compiled(node)
        assert _transfers(inner) == [], _transfers(inner)
    empty = [np.zeros((0, 4), "float32"), values[1]]
    _check(f(*empty), reference(*empty, weights))


def test_gradient_of_a_batched_recurrence_moves_nothing_per_step(context):
    """The gradient's step returns each non-sequence's per-step gradient as a device array
    (a round trip of a round trip was left there, two transfers each way per step)."""
    weights = RNG.normal(size=(3, 3)).astype("float32") * 0.5
    inputs = RNG.normal(size=(2, 3)).astype("float32") * 0.5
    with placement_target(context):
        W, U = sympile.shared(weights), sympile.shared(inputs)
    xs = T.ftensor3("xs")

    def step(x, h, U, W):
        return T.tanh(T.dot(x, U) + T.dot(h, W))

    hs, _ = sympile.scan(step, sequences=xs, non_sequences=[U, W],
                         outputs_info=T.zeros((xs.shape[1], 3), "float32"))
    cost = (hs[-1] ** 2).sum()
    f = _device_function(context, [xs], [cost, *sympile.grad(cost, [W, U])])
    host_w, host_u = T.fmatrix("w"), T.fmatrix("u")
    hs, _ = sympile.scan(step, sequences=xs, non_sequences=[host_u, host_w],
                         outputs_info=T.zeros((xs.shape[1], 3), "float32"))
    cost = (hs[-1] ** 2).sum()
    reference = sympile.function([xs, host_w, host_u],
                                 [cost, *sympile.grad(cost, [host_w, host_u])])
    value = RNG.normal(size=(5, 4, 2)).astype("float32")
    _check(f(value), reference(value, weights, inputs))
    loops = _nodes(f, DeviceScan)
    assert len(loops) == 2
    for node in loops:
        inner = node.op._compiled(node)
        assert _transfers(inner) == [], _transfers(inner)


def test_taps_plain_outputs_and_an_integer_sequence_on_the_host(context):
    """Two past states (taps -2, -1), a plain output per step, and token indices that stay
    host integers, each indexing a device matrix as a view."""
    table = RNG.normal(size=(7, 3)).astype("float32")
    tokens, initial = T.lvector("tokens"), T.fmatrix("initial")

    def build(embedding):
        def step(token, older, old):
            new = T.tanh(old * 0.5 + older * 0.25 + embedding[token])
            return new, new.sum()
        (states, sums), _ = sympile.scan(step, sequences=tokens,
                                         outputs_info=[dict(initial=initial, taps=[-2, -1]),
                                                       None])
        return [states, sums]

    host_table = T.fmatrix("table")
    reference = sympile.function([tokens, initial, host_table], build(host_table))
    with placement_target(context):
        embedding = sympile.shared(table, name="embedding")
    f = _device_function(context, [tokens, initial], build(embedding))
    assert _nodes(f, DeviceScan)
    values = [np.array([3, 0, 6, -1, 2]), RNG.normal(size=(2, 3)).astype("float32")]
    _check(f(*values), reference(*values, table))


def test_until_and_the_last_state_only(context):
    """A loop that stops when its state passes a bound (the condition is a host value), and
    one whose last state only is returned (a buffer of the steps it reads)."""
    start = T.fvector("start")
    doubled, _ = sympile.scan(lambda h: (h * 2, until(h.sum() > 20)),
                              outputs_info=start, n_steps=10)
    last, _ = sympile.scan(lambda h: h * 1.5 - 1, outputs_info=start, n_steps=5)
    outputs = [doubled, last[-1]]
    reference = sympile.function([start], outputs)
    f = _device_function(context, [start], outputs)
    loops = _nodes(f, DeviceScan)
    assert len(loops) == 2 and any(node.op.kept_steps != (0,) for node in loops)
    value = np.array([1.0, 2.0], "float32")
    got, want = f(value), reference(value)
    assert got[0].shape == want[0].shape == (4, 2)   # stops after the step from sum 24
    _check(got, want)


def test_ifelse_of_device_values_is_lazy(context):
    weights = RNG.normal(size=(3,)).astype("float32")
    with placement_target(context):
        w = sympile.shared(weights, name="w")
    flag = T.lscalar("flag")
    counted = T.fvector("counted")
    chosen = ifelse(flag, T.exp(w) * counted, T.log(T.abs(w)) + 1)
    f = _device_function(context, [flag, counted], chosen)
    assert _nodes(f, DeviceIfElse)
    value = np.arange(3, dtype="float32")
    np.testing.assert_allclose(f(1, value), np.exp(weights) * value, rtol=1e-6)
    np.testing.assert_allclose(f(0, value), np.log(np.abs(weights)) + 1, rtol=1e-6)
    # The branch not taken is not computed: its input's bad shape goes unnoticed.
    np.testing.assert_allclose(f(0, np.zeros(5, "float32")), np.log(np.abs(weights)) + 1,
                               rtol=1e-6)
    with pytest.raises(ValueError):
        f(1, np.zeros(5, "float32"))
