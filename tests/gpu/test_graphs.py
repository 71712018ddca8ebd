"""A function's device work captured once and replayed (sympile.gpu.graphs): every result the
same as the uncaptured function's, bit for bit, through index changes, new shapes, set_value,
errors (a failed call changes nothing) and fn(n_calls)."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuFromHost, GpuHostOpsWarning, HostFromGpu
from sympile.gpu.blas import GpuDot
from sympile.gpu.graphs import RECAPTURES, GraphedSteps
from sympile.gpu.random import GpuPhiloxDraw
from sympile.gpu.runtime import CaptureError, placement_target, runtime
from sympile.gpu.subtensor import GpuSubtensor
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.tensor.random import RandomStreams

BATCH, EXAMPLES = 5, 40


def _model(context, graphs, style="index"):
    """A softmax regression with a hidden layer, trained on minibatches of shared data
    (rows data[i * BATCH:(i + 1) * BATCH], labels on the host), as the paper's MLP."""
    rng = np.random.default_rng(0)
    with sympile.config.change_flags(gpu_graphs=graphs), placement_target(context), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", GpuHostOpsWarning)
        data = sympile.shared(rng.standard_normal((EXAMPLES, 6)).astype("float32"))
        labels = sympile.shared(rng.integers(0, 3, EXAMPLES), name="labels")
        params = [sympile.shared(rng.standard_normal(shape).astype("float32") * 0.5, name=name)
                  for shape, name in (((6, 4), "W"), ((4,), "b"), ((4, 3), "V"), ((3,), "c"))]
        W, b, V, c = params
        if style == "n_calls":
            i = sympile.shared(np.int64(0), name="position")
        else:
            i = T.lscalar("i")
        x, y = data[i * BATCH:(i + 1) * BATCH], labels[i * BATCH:(i + 1) * BATCH]
        p = T.nnet.softmax(T.dot(T.tanh(T.dot(x, W) + b), V) + c)
        cost = -T.log(p[T.arange(y.shape[0]), y]).mean()
        updates = [(q, q - np.float32(0.1) * g) for q, g in zip(params, sympile.grad(cost, params))]
        if style == "n_calls":
            updates.append((i, (i + 1) % (EXAMPLES // BATCH)))
            f = sympile.function([], cost, updates=updates)
        else:
            f = sympile.function([i], cost, updates=updates)
    return f, params, labels


def _values(params):
    return [q.get_value() for q in params]


def test_replayed_steps_are_the_uncaptured_steps(context):
    results = {}
    for graphs in (False, True):
        f, params, _ = _model(context, graphs)
        costs = [f(np.int64(k % 8)) for k in range(12)]
        results[graphs] = costs, _values(params)
    for got, want in zip(results[True][0], results[False][0]):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(results[True][1], results[False][1]):
        np.testing.assert_array_equal(got, want)
    vm = f._vm
    assert isinstance(vm, GraphedSteps) and not vm.gave_up
    # The minibatch's rows vary per call: their view leaves the body after one capture.
    assert any(isinstance(node.op, GpuSubtensor) for node in vm._excluded)
    assert vm.replays >= 12 - 4
    assert sum(isinstance(node.op, GpuDot) for node in vm._plan(()).body) == 5


def test_gpu_graphs_off_runs_as_compiled(context):
    f, _, _ = _model(context, graphs=False)
    assert not isinstance(f._vm, GraphedSteps)


def test_n_calls_are_single_calls(context, monkeypatch):
    f, params, _ = _model(context, True, "n_calls")
    g, reference, _ = _model(context, False, "n_calls")
    for n in (1, 3, 7, 2):
        np.testing.assert_array_equal(f.fn(n_calls=n), g.fn(n_calls=n))
    for got, want in zip(_values(params), _values(reference)):
        np.testing.assert_array_equal(got, want)
    assert f._vm.replays > 6
    # The steps run without waiting for the device: the host reads it after the steps
    # (their error flags) and for the last call's flags and cost, whatever their number.
    device, reads = f._vm.device, []
    to_host = device.to_host
    monkeypatch.setattr(device, "to_host", lambda value: reads.append(1) or to_host(value))
    f.fn(n_calls=9)
    assert len(reads) == 3


def test_a_failed_call_changes_nothing(context):
    f, params, labels = _model(context, True)
    for k in range(6):
        f(np.int64(k))
    assert f._vm.replays
    before = _values(params)
    bad = labels.get_value()
    bad[7] = 3  # out of range for 3 classes, in minibatch 1
    labels.set_value(bad)
    with pytest.raises(IndexError, match="(?s)out of bounds.*while computing"):
        f(np.int64(1))
    for got, want in zip(_values(params), before):
        np.testing.assert_array_equal(got, want)
    replays = f._vm.replays
    f(np.int64(2))  # a good minibatch: replayed, and applied
    assert f._vm.replays == replays + 1
    assert not np.array_equal(params[0].get_value(), before[0])


def test_a_failed_step_of_n_calls_keeps_the_steps_before_it(context):
    results = {}
    for graphs in (False, True):
        f, params, labels = _model(context, graphs, "n_calls")
        f.fn(n_calls=5)
        bad = labels.get_value()
        bad[BATCH * 7 + 1] = -9  # minibatch 7: the third step from here
        labels.set_value(bad)
        with pytest.raises(IndexError):
            f.fn(n_calls=4)
        position, = [v for v in f.maker.fgraph.inputs if v.name == "position"]
        results[graphs] = _values(params), position.get_value()
    for got, want in zip(results[True][0], results[False][0]):
        np.testing.assert_array_equal(got, want)
    assert results[True][1] == results[False][1] == 7


def test_set_value_and_new_shapes_are_captured_again(context):
    results = {}
    for graphs in (False, True):
        f, params, _ = _model(context, graphs)
        costs = [f(np.int64(k)) for k in range(4)]
        params[0].set_value(np.full((6, 4), 0.25, "float32"))
        costs += [f(np.int64(k)) for k in range(4)]
        results[graphs] = costs, _values(params)
    np.testing.assert_array_equal(results[True][0], results[False][0])
    for got, want in zip(results[True][1], results[False][1]):
        np.testing.assert_array_equal(got, want)
    # A batch of another length each call: captured RECAPTURES times, then run as compiled.
    x = T.fmatrix("x")
    with placement_target(context):
        W = sympile.shared(np.ones((3, 2), "float32"))
        f = sympile.function([x], T.tanh(T.dot(x, W)).sum() * 2, updates=[(W, W * 0.5)])
    for rows in range(1, 9):
        value = np.arange(rows * 3, dtype="float32").reshape(rows, 3)
        want = np.tanh(value @ W.get_value()).sum() * 2
        np.testing.assert_allclose(f(value), want, rtol=1e-6)
    assert f._vm.gave_up and f._vm._captures == RECAPTURES


def test_device_outputs_of_replays_are_the_callers(context):
    x = T.fvector("x")
    with placement_target(context):
        f = sympile.function([x], [T.exp(x) * 2, T.tanh(x) + 1], return_device_arrays=True)
    device = runtime(f._vm.device.context)
    results = [f(np.full(4, k, "float32")) for k in range(5)]
    assert f._vm.replays == 4
    for k, (a, b) in enumerate(results):
        np.testing.assert_allclose(device.to_host(a), np.exp(np.full(4, k, "float32")) * 2)
        np.testing.assert_allclose(device.to_host(b), np.tanh(np.full(4, k, "float32")) + 1)


def test_outputs_reading_an_updated_variable_see_its_old_value(context):
    with placement_target(context):
        W = sympile.shared(np.ones(3, "float32"), name="W")
        f = sympile.function([], [W * 1, T.exp(W)], updates=[(W, T.tanh(W) + W)])
    values = [W.get_value()]
    for _ in range(4):
        old, expo = f()
        np.testing.assert_array_equal(old, values[-1])
        np.testing.assert_allclose(expo, np.exp(values[-1]), rtol=1e-6)
        values.append(W.get_value())
        np.testing.assert_allclose(values[-1], np.tanh(values[-2]) + values[-2], rtol=1e-6)


def test_random_draws_advance_at_every_replay(context):
    results = {}
    for graphs in (False, True):
        streams = RandomStreams(seed=3)
        with sympile.config.change_flags(gpu_graphs=graphs), placement_target(context):
            f = sympile.function([], T.exp(streams.uniform((7,))) * 2 + 1)
        results[graphs] = [f() for _ in range(6)]
    for got, want in zip(*results.values()):
        np.testing.assert_array_equal(got, want)
    assert len({float(r[0]) for r in results[True]}) == 6
    # The draw reads its stream's state from the device: it is replayed, not left out.
    vm = f._vm
    assert vm.replays == 5 and not vm._excluded
    assert any(isinstance(node.op, GpuPhiloxDraw) for node in vm._plan(()).body)


def test_a_capture_refuses_transfers_and_waits():
    device = runtime("emulated")
    with device.capture() as step:
        with pytest.raises(CaptureError, match="transfer to the host"):
            device.to_host(device.empty((2,), "float32"))
        with pytest.raises(CaptureError, match="transfer to the device"):
            device.to_device(np.ones(2))
    assert step.graph is not None


class _ScaledByHostMax(Op):
    """x / max(x), the maximum read on the host (a transfer inside perform)."""

    __props__ = ("context",)

    def __init__(self, context):
        self.context = context

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        device = runtime(self.context)
        largest = device.to_host(inputs[0]).max()
        output_storage[0][0] = device.to_device(device.to_host(inputs[0]) / largest)


def test_a_node_that_transfers_leaves_the_body(context):
    """A node whose perform moves values between host and device cannot be captured: it
    runs uncaptured, and the rest of the step is replayed."""
    x = T.fmatrix("x")
    w = np.linspace(-1, 1, 6).astype("float32").reshape(3, 2)
    with placement_target(context):
        W = sympile.shared(w)
        scaled = _ScaledByHostMax(W.type.context)(
            GpuFromHost(W.type.context)(T.dot(T.tanh(x), W) + 2))
        f = sympile.function([x], T.exp(HostFromGpu()(scaled)) + 1)
    value = np.arange(6, dtype="float32").reshape(2, 3) / 7
    product = np.tanh(value) @ w + 2
    want = np.exp(product / product.max()) + 1
    for _ in range(5):
        np.testing.assert_allclose(f(value), want, rtol=1e-6)
    assert f._vm.replays >= 2
    assert any(isinstance(node.op, _ScaledByHostMax) for node in f._vm._excluded)


def test_repeat_moves_its_positions_once_and_is_replayed(context):
    x = T.fmatrix("x")
    w = np.linspace(-1, 1, 6).astype("float32").reshape(3, 2)
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("ignore", GpuHostOpsWarning)
        W = sympile.shared(w)
        f = sympile.function([x], T.exp(T.repeat(T.dot(T.tanh(x), W), 2, axis=0)) + 1)
    value = np.arange(6, dtype="float32").reshape(2, 3) / 7
    want = np.exp(np.repeat(np.tanh(value) @ w, 2, axis=0)) + 1
    for _ in range(5):
        np.testing.assert_allclose(f(value), want, rtol=1e-6)
    assert f._vm.replays == 4 and not f._vm._excluded


def test_a_device_scan_is_captured_whole(context):
    """A scan's loop and its gradient's (training a tanh RNN over device sequences) are
    replayed with the rest of the step: their launches are captured, one per step,
    unrolled."""
    results = {}
    rng = np.random.default_rng(1)
    data = [rng.standard_normal((6, 4, 2)).astype("float32") for _ in range(5)]
    for graphs in (False, True):
        rng = np.random.default_rng(0)
        with sympile.config.change_flags(gpu_graphs=graphs), placement_target(context):
            W = sympile.shared(rng.standard_normal((3, 3)).astype("float32") * 0.5)
            U = sympile.shared(rng.standard_normal((2, 3)).astype("float32") * 0.5)
            xs = T.ftensor3("xs")
            hs, _ = sympile.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)),
                                 sequences=xs, non_sequences=[U, W],
                                 outputs_info=T.zeros((xs.shape[1], 3), "float32"))
            cost = (hs[-1] ** 2).sum()
            gW, gU = sympile.grad(cost, [W, U])
            f = sympile.function([xs], [cost, hs],
                                 updates=[(W, W - 0.1 * gW), (U, U - 0.1 * gU)])
        results[graphs] = [f(d) for d in data], W.get_value(), U.get_value()
    for (got_cost, got), (want_cost, want) in zip(results[True][0], results[False][0]):
        np.testing.assert_array_equal(got_cost, want_cost)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(results[True][1], results[False][1])
    np.testing.assert_array_equal(results[True][2], results[False][2])
    # The gradient's lazy ifelse (no steps: no gradient) is decided before each replay.
    vm = f._vm
    assert vm._conditionals and vm.replays == 4
    assert sum("Scan" in str(node.op) for node in vm._plan(vm._decide()).body) == 2
