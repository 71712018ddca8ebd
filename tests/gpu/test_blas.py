"""Products on the device against the reference backend: dot in every rank combination,
the Gemm, Gemv and Ger forms the blas rewrites make, errors, and what stays on the host."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuFromHost, HostFromGpu
from sympile.gpu.blas import GpuDot, GpuMatMul
from sympile.gpu.runtime import placement_target
from sympile.tensor.blas.basic import Dot
from sympile.tensor.blas.gemm import Gemm, Gemv, Ger

RANKS = {(2, 2): ((4, 3), (3, 5)), (2, 1): ((4, 3), (3,)), (1, 2): ((3,), (3, 5)),
         (1, 1): ((3,), (3,))}


def _compile(inputs, outputs, context):
    with placement_target(context):
        return sympile.function(inputs, outputs)


def _nodes(f, op_class):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, op_class)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("ranks", list(RANKS), ids=str)
def test_dot(ranks, dtype, context):
    a_shape, b_shape = RANKS[ranks]
    a = T.tensor(dtype, (None,) * ranks[0], name="a")
    b = T.tensor(dtype, (None,) * ranks[1], name="b")
    rng = np.random.default_rng(sum(ranks))
    values = [rng.normal(size=a_shape).astype(dtype), rng.normal(size=b_shape).astype(dtype)]
    f = _compile([a, b], T.dot(a, b), context)
    assert _nodes(f, GpuDot) and not _nodes(f, Dot)
    got, want = f(*values), np.dot(*values)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol={"float16": 3e-3}.get(dtype, 1e-5))


def test_gemm_gemv_ger_forms(context):
    """The expressions the blas rewrites turn into Gemm, Gemv and Ger, computed on the
    device from a product and one kernel."""
    x, y, z = T.dmatrix("x"), T.dmatrix("y"), T.dmatrix("z")
    u, v = T.dvector("u"), T.dvector("v")
    outputs = [z * 0.5 + 2.0 * T.dot(x, y), u * 3.0 + T.dot(x, v) * 0.25,
               z + 1.5 * T.outer(u, v)]
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(3, 4)), rng.normal(size=(4, 4)), rng.normal(size=(3, 4)),
              rng.normal(size=3), rng.normal(size=4)]
    inputs = [x, y, z, u, v]
    host = sympile.function(inputs, outputs)
    assert {type(n.op) for n in host.maker.fgraph.apply_nodes} >= {Gemm, Gemv, Ger}
    f = _compile(inputs, outputs, context)
    assert not _nodes(f, (Gemm, Gemv, Ger, Dot))
    for got, want in zip(f(*values), host(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_misaligned_shapes_name_the_op(context):
    a, b = T.fmatrix("a"), T.fmatrix("b")
    f = _compile([a, b], T.dot(a, b), context)
    with pytest.raises(ValueError, match="GpuDot.*not aligned"):
        f(np.ones((2, 3), "float32"), np.ones((4, 2), "float32"))


def test_integer_and_mixed_products_stay_on_the_host(context):
    a, b = T.lmatrix("a"), T.lmatrix("b")
    f = _compile([a, b], T.dot(a, b), context)
    assert not _nodes(f, GpuDot)
    c = T.fmatrix("c")
    d = T.dmatrix("d")
    f = _compile([c, d], T.dot(c, d), context)
    assert not _nodes(f, GpuDot)
    np.testing.assert_array_equal(f(np.ones((2, 2), "float32"), np.ones((2, 2))), 2)


def test_mlp_step_moves_its_minibatch_once(context):
    """A tanh layer's SGD step with device parameters: the minibatch moves in once (its
    transpose for the weights' gradient is taken on the device), the cost comes back, and
    the only other transfer is the batch size for the mean."""
    with placement_target(context):
        W = sympile.shared(np.random.default_rng(0).normal(size=(5, 3)).astype("float32"))
        b = sympile.shared(np.zeros(3, "float32"))
    x = T.fmatrix("x")
    cost = T.sqr(T.tanh(T.dot(x, W) + b)).mean()
    gW, gb = sympile.grad(cost, [W, b])
    with placement_target(context):
        f = sympile.function([x], cost, updates=[(W, W - 0.1 * gW), (b, b - 0.1 * gb)])
    moved = [n.inputs[0] for n in _nodes(f, GpuFromHost)]
    assert f.maker.fgraph.inputs[0] in moved
    assert all(v is f.maker.fgraph.inputs[0] or v.type.dtype == "int64" for v in moved)
    assert len(_nodes(f, HostFromGpu)) == 1
    xv = np.random.default_rng(1).normal(size=(4, 5)).astype("float32")
    W0, b0 = W.get_value(), b.get_value()
    expected = np.mean(np.tanh(xv @ W0 + b0) ** 2)
    np.testing.assert_allclose(f(xv), expected, rtol=1e-5)
    assert not np.allclose(W.get_value(), W0)


@pytest.mark.parametrize(("a_shape", "b_shape", "a_static"), [
    ((2, 3, 4), (2, 4, 5), (None, None, None)),   # a batch of products
    ((1, 3, 4), (6, 4, 2), (1, None, None)),      # a batch axis broadcast by its type
    ((3, 4), (7, 4, 2), (None, None)),            # a matrix against a batch
    ((4,), (2, 4, 3), (None,)),                   # a vector as a row
])
def test_matmul(a_shape, b_shape, a_static, context):
    a = T.tensor("float32", a_static, name="a")
    b = T.tensor("float32", (None,) * len(b_shape), name="b")
    rng = np.random.default_rng(len(a_shape))
    values = [rng.normal(size=a_shape).astype("float32"),
              rng.normal(size=b_shape).astype("float32")]
    f = _compile([a, b], T.matmul(a, b), context)
    assert _nodes(f, GpuMatMul)
    np.testing.assert_allclose(f(*values), np.matmul(*values), rtol=1e-5)


def test_matmul_checks_shapes_as_the_host_op(context):
    a, b = T.ftensor3("a"), T.ftensor3("b")
    f = _compile([a, b], T.matmul(a, b), context)
    with pytest.raises(ValueError, match="not aligned"):
        f(np.ones((2, 3, 4), "float32"), np.ones((2, 5, 2), "float32"))
    with pytest.raises(ValueError, match="batch axes that cannot be broadcast"):
        f(np.ones((1, 3, 4), "float32"), np.ones((2, 4, 2), "float32"))
