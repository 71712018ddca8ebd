"""Placement on graphs (no device needed to decide): which nodes land on the device, where
the transfers go, and that a training step transfers only its inputs and outputs."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.config import GpuUnavailableError, config
from sympile.gpu import (
    GpuArraySharedVariable,
    GpuArrayType,
    GpuFromHost,
    GpuHostOpsWarning,
    HostFromGpu,
    emulate,
)
from sympile.gpu.elemwise import GpuDimShuffle, GpuElemwise, GpuShapeOp
from sympile.gpu.runtime import EmulatedArray, target_context
from sympile.tensor.elemwise import DimShuffle, Elemwise

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = pytest.mark.smoke


def _ops(f, op_class):
    return [node for node in f.maker.fgraph.apply_nodes if isinstance(node.op, op_class)]


def _compile(*args, **kwargs):
    with emulate(), warnings.catch_warnings():
        warnings.simplefilter("ignore", GpuHostOpsWarning)
        return sympile.function(*args, **kwargs)


def test_nothing_moves_without_a_target():
    assert target_context() is None
    x = T.fmatrix("x")
    f = sympile.function([x], T.exp(x) + 1)
    assert not _ops(f, (GpuElemwise, GpuFromHost, HostFromGpu))


def test_a_fused_expression_moves_with_one_transfer_each_way():
    x, y = T.fmatrix("x"), T.fvector("y")
    f = _compile([x, y], T.exp(x) * y + 2)
    assert len(_ops(f, GpuElemwise)) == 1
    assert len(_ops(f, GpuFromHost)) == 2 and len(_ops(f, HostFromGpu)) == 1
    assert not _ops(f, Elemwise)
    assert f.maker.fgraph.outputs[0].owner.op == HostFromGpu()


def test_training_step_transfers_only_its_inputs_and_outputs():
    """Parameters on the device, every op of the step with a GPU implementation: the only
    transfers are the minibatch in and the cost out; the updates stay on the device."""
    with emulate():
        W = sympile.shared(np.full((3, 2), 0.5, "float32"), name="W")
        b = sympile.shared(np.zeros(2, "float32"), name="b")
    x = T.fvector("x")
    # A step of elementwise work only (products and reductions have no GPU ops yet).
    out = T.tanh(W * x.dimshuffle(0, "x") + b)
    cost = T.sqr(out)
    f = _compile([x], cost, updates=[(W, W - 0.1 * out), (b, b * 0.5)])
    to_device, to_host = _ops(f, GpuFromHost), _ops(f, HostFromGpu)
    # One transfer in: x (as the column view the product broadcasts).
    assert len(to_device) == 1
    moved, x = to_device[0].inputs[0], f.maker.fgraph.inputs[0]
    assert moved is x or (isinstance(moved.owner.op, DimShuffle)
                          and moved.owner.op.new_order == (0, "x")
                          and moved.owner.inputs[0] is x)
    assert len(to_host) == 1 and to_host[0].outputs[0] in f.maker.fgraph.outputs
    for update in f.maker.fgraph.outputs[1:]:
        assert isinstance(update.type, GpuArrayType)


def test_updates_of_device_shared_variables_apply():
    with emulate():
        W = sympile.shared(np.arange(6, dtype="float32").reshape(2, 3), name="W")
    assert isinstance(W, GpuArraySharedVariable)
    x = T.fvector("x")
    f = _compile([x], (W * x).sum(), updates=[(W, W + x)])
    assert np.isclose(f(np.ones(3, "float32")), 15.0)
    np.testing.assert_array_equal(W.get_value(), np.arange(6).reshape(2, 3) + 1)
    assert isinstance(W.get_value(borrow=True, return_internal_type=True), EmulatedArray)


def test_shared_target_cpu_stays_on_the_host():
    with emulate():
        kept = sympile.shared(np.zeros(3, "float32"), target="cpu")
        ints = sympile.shared(np.zeros(3, "int64"))
        forced = sympile.shared(np.zeros(3, "int64"), target="emulated")
    assert not isinstance(kept, GpuArraySharedVariable)
    assert not isinstance(ints, GpuArraySharedVariable)
    assert isinstance(forced, GpuArraySharedVariable)
    with pytest.raises(ValueError, match="target must be 'cpu' or a GPU"):
        sympile.shared(np.zeros(3), target="tpu")


def test_set_value_converts_and_checks():
    with emulate():
        W = sympile.shared(np.zeros((2, 2), "float32"), shape=(2, 2))
    W.set_value(np.ones((2, 2), "float32"))
    np.testing.assert_array_equal(W.get_value(), 1)
    with pytest.raises(TypeError, match="set_value of shared variable"):
        W.set_value(np.ones((3, 2), "float32"))


def test_integer_shape_arithmetic_stays_on_the_host():
    x = T.fmatrix("x")
    f = _compile([x], T.exp(x).reshape((x.shape[0] * x.shape[1],)))
    assert all(not isinstance(n.op, GpuElemwise) or n.outputs[0].type.dtype.startswith("float")
               for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_allclose(f(np.ones((2, 3), "float32")), np.full(6, np.e), rtol=1e-6)


def test_views_and_shapes_move_only_with_device_inputs():
    with emulate():
        W = sympile.shared(np.ones((2, 3), "float32"))
    x = T.fmatrix("x")
    f = _compile([x], [T.exp(W.T), x.T, W.shape[0]])
    assert len(_ops(f, GpuDimShuffle)) == 1  # W.T; x.T stays a host view
    assert len(_ops(f, GpuShapeOp)) == 1  # W.shape[0]: read from the device array
    assert len(_ops(f, HostFromGpu)) == 1  # only exp(W.T) comes back
    result = f(np.ones((3, 2), "float32"))
    np.testing.assert_allclose(result[0], np.full((3, 2), np.e), rtol=1e-6)


def test_host_ops_are_reported_once_with_the_users_line():
    x = T.fmatrix("x")
    with emulate(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = sympile.function([x], T.exp(x).sum() + T.nlinalg.matrix_inverse(x).sum()
                             + T.nlinalg.det(x))
    reports = [w for w in caught if issubclass(w.category, GpuHostOpsWarning)]
    assert len(reports) == 1
    assert reports[0].filename == __file__
    on_host = [str(n.op) for n in f.maker.fgraph.apply_nodes
               if not type(n.op).__name__.startswith(("Gpu", "HostFromGpu"))
               and any(v.type.dtype == "float32" for v in n.outputs)]
    assert len(on_host) == 2
    assert all(name in str(reports[0].message) for name in on_host)


def test_constants_move_at_compile_time():
    x = T.fvector("x")
    f = _compile([x], x + np.arange(4, dtype="float32"))
    assert len(_ops(f, GpuFromHost)) == 1  # x only
    np.testing.assert_array_equal(f(np.zeros(4, "float32")), np.arange(4))


def test_gradients_through_transfers():
    x = T.fvector("x")
    moved = GpuFromHost("emulated")(x)
    cost = T.sum(HostFromGpu()(moved) ** 2)
    g = sympile.grad(cost, x)
    f = _compile([x], g)
    np.testing.assert_allclose(f(np.array([1, 2], "float32")), [2, 4])


def test_device_flag_values():
    with pytest.raises(ValueError, match="'cpu', 'cuda' or 'cudaN'"):
        config.device = "gpu0"
    assert config.device == "cpu"


def test_device_flag_without_cupy_or_gpu_is_a_clear_error(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(GpuUnavailableError, match=r"needs CuPy.*sympile\[cuda\]"):
        config.device = "cuda"
    assert config.device == "cpu"


def test_device_arrays_as_inputs_without_copy():
    """A device array passed for a GpuArrayType input is used as it is."""
    x = GpuArrayType("float64", (None,), "emulated")("x")
    f = _compile([x], T.exp(x))
    from sympile.gpu.runtime import runtime
    value = runtime("emulated").to_device(np.zeros(3))
    np.testing.assert_array_equal(f(value), 1)
    with pytest.raises(TypeError, match="float64"):
        f(runtime("emulated").to_device(np.zeros(3, "float32")))


def test_device_outputs_return_numpy_unless_asked():
    with emulate():
        W = sympile.shared(np.ones(3, "float32"))
    plain = _compile([], [W * 2, W])
    assert all(isinstance(value, np.ndarray) for value in plain())
    device = _compile([], [W * 2, W], return_device_arrays=True)
    assert all(isinstance(value, EmulatedArray) for value in device())
    one = _compile([], [sympile.Out(W * 2, device_array=True), W * 3])
    first, second = one()
    assert isinstance(first, EmulatedArray) and isinstance(second, np.ndarray)
