"""sympile.tensor.nnet: values against stable numpy references, gradients (verify_grad in
float64), R_op against finite differences and against Lop, bad input."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import Lop, Rop, verify_grad
from sympile.tensor import nnet
from tests.link.c.utils import requires_compiler

rng = np.random.default_rng(42)


def reference_log_softmax(x, axis=-1):
    x = np.asarray(x, "float64")
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def evaluate(inputs, outputs, *values):
    return sympile.function(inputs, outputs)(*values)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax_match_numpy(dtype, axis):
    x = T.matrix("x", dtype=dtype)
    values = (rng.standard_normal((4, 5)) * 3).astype(dtype)
    probabilities, log_probabilities = evaluate(
        [x], [nnet.softmax(x, axis), nnet.log_softmax(x, axis)], values)
    expected = reference_log_softmax(values, axis)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    assert probabilities.dtype == dtype and log_probabilities.dtype == dtype
    np.testing.assert_allclose(probabilities, np.exp(expected), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(log_probabilities, expected, rtol=tolerance, atol=tolerance)


def test_softmax_of_huge_logits_is_finite():
    x = T.dmatrix("x")
    values = np.array([[1e4, 0.0, -1e4], [1000.0, 1001.0, 999.0]])
    probabilities, log_probabilities = evaluate(
        [x], [nnet.softmax(x), nnet.log_softmax(x)], values)
    np.testing.assert_allclose(log_probabilities, reference_log_softmax(values))
    np.testing.assert_allclose(probabilities, np.exp(reference_log_softmax(values)))


def test_crossentropy_softmax_1hot_values():
    x = T.dmatrix("x")
    y = T.lvector("y")
    values = np.array([[1e4, 0.0, 1.0], [1.0, 2.0, 3.0], [0.0, -1e4, 5.0]])
    targets = np.array([1, 2, 0])
    loss, probabilities = evaluate([x, y], nnet.crossentropy_softmax_1hot(x, y), values,
                                   targets)
    expected = -reference_log_softmax(values)[np.arange(3), targets]
    np.testing.assert_allclose(loss, expected)
    assert np.all(np.isfinite(loss))
    np.testing.assert_allclose(probabilities, np.exp(reference_log_softmax(values)))


def test_crossentropy_dx_values():
    g, y = T.dvector("g"), T.lvector("y")
    sm = T.dmatrix("sm")
    probabilities = np.exp(reference_log_softmax(rng.standard_normal((3, 4))))
    targets = np.array([3, 0, 3])
    grads = rng.standard_normal(3)
    result = evaluate([g, sm, y], nnet.CrossentropySoftmax1HotDx()(g, sm, y), grads,
                      probabilities, targets)
    onehot = np.eye(4)[targets]
    np.testing.assert_allclose(result, grads[:, None] * (probabilities - onehot))


@pytest.mark.parametrize("axis", [-1, 0])
def test_verify_grad_softmax_family(axis):
    point = [rng.standard_normal((3, 4))]
    verify_grad(lambda x: nnet.softmax(x, axis), point, rng=rng)
    verify_grad(lambda x: nnet.log_softmax(x, axis), point, rng=rng)
    probabilities = np.exp(reference_log_softmax(rng.standard_normal((3, 4)), axis))
    verify_grad(lambda dy, sm: nnet.SoftmaxGrad(axis)(dy, sm),
                [rng.standard_normal((3, 4)), probabilities], rng=rng)


def test_verify_grad_fused_crossentropy():
    targets = np.array([0, 3, 1])
    y = T.constant(targets)
    point = [rng.standard_normal((3, 4))]
    verify_grad(lambda x: nnet.crossentropy_softmax_1hot(x, y)[0], point, rng=rng)
    verify_grad(lambda x: nnet.crossentropy_softmax_1hot(x, y)[1], point, rng=rng)
    probabilities = np.exp(reference_log_softmax(rng.standard_normal((3, 4))))
    verify_grad(lambda g, sm: nnet.CrossentropySoftmax1HotDx()(g, sm, y),
                [rng.standard_normal(3), probabilities], rng=rng)


def _check_rop(build, values):
    """R_op against central differences and against Lop (<J v, u> = <v, J^T u>)."""
    inputs = [T.tensor(dtype="float64", shape=(None,) * np.ndim(v)) for v in values]
    tangents = [T.tensor(dtype="float64", shape=(None,) * np.ndim(v)) for v in values]
    output = build(*inputs)
    forward = sympile.function(inputs, output)
    tangent_values = [rng.standard_normal(np.shape(v)) for v in values]
    directional = sympile.function(inputs + tangents, Rop(output, inputs, tangents))(
        *values, *tangent_values)
    eps = 1e-6
    plus = forward(*[v + eps * t for v, t in zip(values, tangent_values)])
    minus = forward(*[v - eps * t for v, t in zip(values, tangent_values)])
    np.testing.assert_allclose(directional, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)
    projection = rng.standard_normal(np.shape(plus))
    transposed = sympile.function(inputs, Lop(output, inputs, T.constant(projection)))(*values)
    left = np.sum(directional * projection)
    right = sum(np.sum(t * g) for t, g in zip(tangent_values, transposed))
    np.testing.assert_allclose(left, right, rtol=1e-9)


def test_rop_of_every_op():
    x = rng.standard_normal((3, 4))
    probabilities = np.exp(reference_log_softmax(rng.standard_normal((3, 4))))
    y = T.constant(np.array([2, 0, 3]))
    _check_rop(lambda v: nnet.softmax(v), [x])
    _check_rop(lambda v: nnet.log_softmax(v, 0), [x])
    _check_rop(lambda dy, sm: nnet.SoftmaxGrad(-1)(dy, sm), [x, probabilities])
    _check_rop(lambda v: nnet.crossentropy_softmax_1hot(v, y)[0], [x])
    _check_rop(lambda v: nnet.crossentropy_softmax_1hot(v, y)[1], [x])
    _check_rop(lambda g, sm: nnet.CrossentropySoftmax1HotDx()(g, sm, y),
               [rng.standard_normal(3), probabilities])


def test_loss_functions_match_numpy():
    p, t = T.dmatrix("p"), T.dmatrix("t")
    y = T.lvector("y")
    probabilities = np.exp(reference_log_softmax(rng.standard_normal((3, 4))))
    onehot_targets = np.eye(4)[[1, 0, 3]]
    integer, onehot = evaluate([p, y, t], [nnet.categorical_crossentropy(p, y),
                                           nnet.categorical_crossentropy(p, t)],
                               probabilities, np.array([1, 0, 3]), onehot_targets)
    expected = -np.log(probabilities[np.arange(3), [1, 0, 3]])
    np.testing.assert_allclose(integer, expected)
    np.testing.assert_allclose(onehot, expected)
    logits = np.array([[-800.0, -1.0, 0.0, 2.0, 800.0]])
    targets = np.array([[1.0, 0.0, 1.0, 0.5, 0.0]])
    a, b = T.dmatrix("a"), T.dmatrix("b")
    stable, naive, rectified, leaky, soft = evaluate(
        [a, b], [nnet.sigmoid_binary_crossentropy(a, b),
                 nnet.binary_crossentropy(nnet.sigmoid(a), b), nnet.relu(a),
                 nnet.relu(a, 0.1), nnet.softsign(a)], logits, targets)
    expected = targets * np.logaddexp(0, -logits) + (1 - targets) * np.logaddexp(0, logits)
    np.testing.assert_allclose(stable, expected)
    np.testing.assert_allclose(naive[0, 1:4], expected[0, 1:4])
    np.testing.assert_allclose(rectified, np.maximum(logits, 0))
    np.testing.assert_allclose(leaky, np.where(logits > 0, logits, 0.1 * logits))
    np.testing.assert_allclose(soft, logits / (1 + np.abs(logits)))


def test_sigmoid_and_softplus_are_the_math_ops():
    assert nnet.sigmoid is T.sigmoid and nnet.softplus is T.softplus
    assert T.nnet.softmax is nnet.softmax


def test_bad_input():
    with pytest.raises(TypeError, match="Softmax.*float"):
        nnet.softmax(T.lmatrix("x"))
    with pytest.raises(ValueError, match="Softmax.*0-d"):
        nnet.softmax(T.dscalar("x"))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        nnet.softmax(T.dmatrix("x"), axis=2)
    with pytest.raises(TypeError, match="targets.*integer vector"):
        nnet.crossentropy_softmax_1hot(T.dmatrix("x"), T.dvector("y"))
    with pytest.raises(ValueError, match="must be a matrix"):
        nnet.crossentropy_softmax_1hot(T.dvector("x"), T.lvector("y"))
    x, y = T.dmatrix("x"), T.lvector("y")
    f = sympile.function([x, y], nnet.crossentropy_softmax_1hot(x, y)[0])
    with pytest.raises(ValueError, match="2 targets for 3 rows"):
        f(np.zeros((3, 4)), np.array([0, 1]))
    with pytest.raises(IndexError, match=r"in \[0, 4\)"):
        f(np.zeros((3, 4)), np.array([0, 1, 4]))


@pytest.mark.parametrize("backend", ["python", pytest.param("c", marks=requires_compiler)])
def test_infinities_in_the_softmax_family(backend):
    """One behaviour on both backends (module docstring): softmax == exp(log_softmax)."""
    from sympile.compile.mode import Mode
    mode = Mode(sympile.compile.get_mode("FAST_RUN").rewriter, backend=backend)
    x, y = T.dmatrix("x"), T.lvector("y")
    loss, probabilities = nnet.crossentropy_softmax_1hot(x, y)
    f = sympile.function([x, y], [nnet.softmax(x), nnet.log_softmax(x), loss, probabilities],
                         mode=mode)
    inf, nan = np.inf, np.nan
    values = np.array([[1.0, 2.0, inf], [1.0, -inf, 0.0], [nan, 1.0, 2.0], [0.0, inf, 1.0]])
    with np.errstate(all="ignore"):
        soft, log_soft, losses, fused = f(values, np.array([0, 2, 1, 1]))
    np.testing.assert_array_equal(soft[0], [0.0, 0.0, nan])
    np.testing.assert_allclose(soft[1], [0.7310585786300049, 0.0, 0.2689414213699951])
    assert np.isnan(soft[2]).all()
    np.testing.assert_array_equal(log_soft[0], [-inf, -inf, nan])
    np.testing.assert_allclose(log_soft[1], [-0.31326168751822286, -inf, -1.3132616875182228])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(soft, np.exp(log_soft), rtol=1e-15)  # NaNs where NaNs
    np.testing.assert_array_equal(fused, soft)
    assert losses[0] == inf and np.isnan(losses[2]) and np.isnan(losses[3])
    np.testing.assert_allclose(losses[1], 1.3132616875182228)


def test_theanos_softmax_names():
    """softmax_op, logsoftmax_op, softmax_with_bias, softmax_graph and T.nnet.sigm."""
    x, b = T.dmatrix("x"), T.dvector("b")
    value = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 1000.0]])
    bias = np.array([0.5, -1.0, 0.0])
    outputs = [nnet.softmax_op(x), nnet.logsoftmax_op(x), nnet.softmax_with_bias(x, b),
               nnet.softmax_graph(x)]
    got = sympile.function([x, b], outputs)(value, bias)

    def reference(v):
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got[0], reference(value), rtol=1e-12)
    shifted = value - value.max(axis=1, keepdims=True)
    np.testing.assert_allclose(got[1], shifted - np.log(np.exp(shifted).sum(axis=1,
                                                                           keepdims=True)),
                               rtol=1e-12)
    np.testing.assert_allclose(got[2], reference(value + bias), rtol=1e-12)
    np.testing.assert_allclose(got[3], reference(value), rtol=1e-12)
    assert nnet.softmax(x).owner.op == nnet.softmax_op
    verify_grad(lambda a, c: nnet.softmax_with_bias(a, c) * np.arange(6.0).reshape(2, 3),
                [np.array([[0.1, -0.4, 0.3], [1.0, 0.2, -0.5]]), bias], rng=3)
    assert nnet.sigm.sigmoid is T.sigmoid and nnet.sigm.hard_sigmoid is nnet.hard_sigmoid
    with pytest.raises(TypeError, match="softmax_graph"):
        nnet.softmax_graph(T.lmatrix())
