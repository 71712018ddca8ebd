"""gradient.py: grad, Lop, Rop, second-order products, markers, jacobian/hessian, verify_grad.

The per-op rules are checked by the GRAD_CASES tables of each op module's tests; this file
tests the machinery and the Theano tutorial's derivative examples.
"""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile import function, shared
from sympile.gradient import (
    DisconnectedInputError,
    GradientError,
    Lop,
    NullTypeGradError,
    Rop,
    disconnected_grad,
    gauss_newton_vector_product,
    grad,
    grad_clip,
    grad_scale,
    grad_undefined,
    hessian,
    hessian_vector_product,
    jacobian,
    verify_grad,
    verify_rop,
    zero_grad,
)
from sympile.graph.basic import Apply, applys_between, graph_inputs, io_toposort
from sympile.graph.op import Op

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = pytest.mark.smoke


def test_derivative_of_x_squared():
    x = T.dscalar("x")
    y = x ** 2
    gy = grad(y, x)
    assert gy.name == "(dcost/dx)" or gy.name.startswith("(d")
    f = function([x], gy)
    assert f(4) == 8.0
    assert np.allclose(f(94.2), 188.4)


def test_derivative_of_the_logistic():
    x = T.dmatrix("x")
    s = T.sum(1 / (1 + T.exp(-x)))
    gs = grad(s, x)
    dlogistic = function([x], gs)
    np.testing.assert_allclose(dlogistic([[0, 1], [-1, -2]]),
                               [[0.25, 0.19661193], [0.19661193, 0.10499359]], rtol=1e-7)


def test_tutorial_jacobian_and_hessian():
    x = T.dvector("x")
    y = x ** 2
    J = jacobian(y, x)
    f = function([x], J)
    np.testing.assert_array_equal(f([4, 4]), [[8.0, 0.0], [0.0, 8.0]])
    cost = y.sum()
    H = hessian(cost, x)
    np.testing.assert_array_equal(function([x], H)([4, 4]), [[2.0, 0.0], [0.0, 2.0]])


def test_tutorial_rop_and_lop():
    W = T.dmatrix("W")
    V = T.dmatrix("V")
    x = T.dvector("x")
    y = T.dot(x, W)
    JV = Rop(y, W, V)
    # Theano's tutorial compiles this without on_unused_input: W does not appear in J V for a
    # linear y, which sympile's function() reports unless told to ignore it.
    f = function([W, V, x], JV, on_unused_input="ignore")
    np.testing.assert_array_equal(f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]), [2.0, 2.0])
    v = T.dvector("v")
    VJ = Lop(y, W, v)
    g = function([v, x], VJ)
    np.testing.assert_array_equal(g([2, 2], [0, 1]), [[0.0, 0.0], [2.0, 2.0]])


def test_gradient_summed_over_clients_and_broadcasting():
    x = T.dvector("x")
    b = T.row("b")
    cost = (x * x + x).sum() + (b * T.dmatrix("m")).sum()
    gx = grad(cost, x, disconnected_inputs="ignore")
    np.testing.assert_allclose(function([x], gx)([1.0, 2.0]), [3.0, 5.0])
    m = T.dmatrix("m")
    cost = (b * m).sum()
    gb = grad(cost, b)
    assert gb.type.shape[0] == 1
    np.testing.assert_allclose(function([b, m], gb)([[1.0, 2.0]], np.ones((3, 2))), [[3.0, 3.0]])


def test_each_gradient_is_computed_once():
    x = T.dscalar("x")
    shared_part = T.exp(x)
    cost = shared_part * 2 + shared_part * 3
    gx = grad(cost, x)
    exps = [node for node in sympile.graph.basic.toposort([gx])
            if getattr(node.op, "scalar_op", None) is sympile.scalar.exp]
    assert len(exps) == 1  # the forward exp, reused by the rule
    assert np.isclose(function([x], gx)(0.0), 5.0)


def test_grad_errors():
    x = T.dvector("x")
    y = T.dvector("y")
    with pytest.raises(TypeError, match="cost must be a scalar"):
        grad(x * 2, x)
    with pytest.raises(DisconnectedInputError, match="does not depend on y"):
        grad(x.sum(), y)
    with pytest.warns(UserWarning, match="does not depend on y"):
        zero = grad(x.sum(), y, disconnected_inputs="warn")
    np.testing.assert_array_equal(function([y], zero)([1.0, 2.0]), [0.0, 0.0])
    assert grad(x.sum(), y, disconnected_inputs="ignore", return_disconnected="none") is None
    with pytest.raises(TypeError, match="constant"):
        grad(x.sum(), T.constant(1.0))
    with pytest.raises(TypeError, match="expected a Variable"):
        grad(x.sum(), [x, 3])
    with pytest.raises(ValueError, match="disconnected_inputs must be"):
        grad(x.sum(), x, disconnected_inputs="maybe")
    with pytest.raises(TypeError, match="nothing to differentiate"):
        grad(None, x)


def test_integer_inputs_the_cost_depends_on_get_zero_as_in_theano():
    i = T.ivector("i")
    x = T.dvector("x")
    cost = (x * i).sum()
    gi = grad(cost, i)
    assert gi.type.dtype == sympile.config.floatX
    np.testing.assert_array_equal(function([i], gi)([1, 2]), [0.0, 0.0])
    gx = grad(cost, x)
    np.testing.assert_array_equal(function([x, i], gx)([1.0, 1.0], [3, 4]), [3.0, 4.0])
    # Theano's example: the gradient of an integer reduction is zeros of its input's shape.
    b = T.bmatrix("b")
    gb = grad(b.all(), b)
    np.testing.assert_array_equal(function([b], gb)(np.ones((2, 3), dtype="int8")),
                                  np.zeros((2, 3)))
    # A comparison is piecewise constant: zero gradient for its float input too.
    np.testing.assert_array_equal(function([x], grad((x > 0).sum(), x))([1.0, -1.0]),
                                  [0.0, 0.0])
    # An integer input the cost does not read, or reads only as an index or a length, is
    # disconnected, as in Theano.
    with pytest.raises(DisconnectedInputError):
        grad(x.sum(), i)
    k = T.lscalar("k")
    with pytest.raises(DisconnectedInputError):
        grad(x[k], k)


class _NotDifferentiable(Op):
    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()

    def L_op(self, inputs, outputs, output_grads):
        return [grad_undefined(self, 0, inputs[0], "it is a test op")]


def test_undefined_gradients_raise_or_are_returned():
    x = T.dvector("x")
    cost = _NotDifferentiable()(x).sum()
    with pytest.raises(NullTypeGradError, match="undefined: it is a test op"):
        grad(cost, x)
    null = grad(cost, x, null_gradients="return")
    assert "undefined" in null.type.why_null


def test_known_grads_and_lop_structure():
    x = T.dvector("x")
    y = x * 3
    gx = grad(None, x, known_grads={y: T.constant(np.array([1.0, 2.0]))})
    f = function([x], gx, on_unused_input="ignore")  # a linear map: gx does not read x
    np.testing.assert_array_equal(f([0.0, 0.0]), [3.0, 6.0])
    with pytest.raises(ValueError, match="has 2 dimensions, but"):
        Lop(y, x, T.dmatrix())
    with pytest.raises(ValueError, match="1 outputs but 2 eval_points"):
        Lop(y, x, [T.dvector(), T.dvector()])


def test_known_grads_replace_what_the_cost_sends_back():
    """As in Theano: a variable's known gradient is its whole gradient, with a cost too;
    Lop of outputs that depend on each other still adds every path (a vector-Jacobian
    product)."""
    x, g = T.dvector("x"), T.dvector("g")
    y = x * 3
    gx = grad(y.sum(), x, known_grads={y: g})
    f = function([x, g], gx, on_unused_input="ignore")
    np.testing.assert_array_equal(f([1.0, 1.0], [1.0, 2.0]), [3.0, 6.0])
    # A seed upstream of another keeps its given value too.
    z = (y ** 2).sum()
    gx = grad(None, x, known_grads={y: g, z: T.constant(1.0)})
    np.testing.assert_array_equal(function([x, g], gx, on_unused_input="ignore")(
        [1.0, 1.0], [1.0, 2.0]), [3.0, 6.0])
    lop = Lop([y, y ** 2], x, [g, g])
    np.testing.assert_allclose(function([x, g], lop)([1.0, 2.0], [1.0, 2.0]),
                               [3.0 + 18.0, 6.0 + 72.0])


def test_rop_errors_and_disconnected_outputs():
    x = T.dvector("x")
    y = T.dvector("y")
    with pytest.raises(ValueError, match="does not depend"):
        Rop(y * 2, x, T.dvector())
    zero = Rop(y * 2, x, T.dvector(), disconnected_outputs="ignore")
    np.testing.assert_array_equal(function([y], zero)([1.0, 2.0]), [0.0, 0.0])
    with pytest.raises(ValueError, match="has 2 dimensions"):
        Rop(x * 2, x, T.dmatrix())
    with pytest.raises(TypeError, match="discrete dtype"):
        Rop(x * 2, x, T.ivector())


def test_markers():
    x = T.dvector("x")
    np.testing.assert_array_equal(function([x], grad((zero_grad(x) * x).sum(), x))([2.0, 3.0]),
                                  [2.0, 3.0])
    np.testing.assert_array_equal(
        function([x], grad((grad_scale(x, -2.0) * 1.0).sum(), x))([2.0, 3.0]), [-2.0, -2.0])
    np.testing.assert_array_equal(
        function([x], grad((grad_clip(x, -0.5, 0.5) * 3.0).sum(), x))([2.0, 3.0]), [0.5, 0.5])
    with pytest.raises(DisconnectedInputError):
        grad(disconnected_grad(x).sum(), x)
    with pytest.raises(ValueError, match="lower bound"):
        grad_clip(x, 1, 0)


def test_hessian_vector_product_matches_dense_hessian():
    rng = np.random.default_rng(0)
    x = T.dvector("x")
    a = rng.standard_normal((4, 4))
    cost = T.sum(T.tanh(T.dot(a, x)) ** 2) + T.sum(x ** 3)
    v = T.dvector("v")
    hv = hessian_vector_product(cost, x, v)
    dense = hessian(cost, x)
    f = function([x, v], [hv, dense])
    point, direction = rng.standard_normal(4), rng.standard_normal(4)
    product, matrix = f(point, direction)
    np.testing.assert_allclose(product, matrix @ direction, rtol=1e-10, atol=1e-12)


def test_gauss_newton_product_on_a_small_mlp():
    rng = np.random.default_rng(1)
    inputs = rng.standard_normal((5, 3))
    targets = rng.standard_normal((5, 2))
    w1 = T.dmatrix("w1")
    w2 = T.dmatrix("w2")
    hidden = T.tanh(T.dot(inputs, w1))
    outputs = T.dot(hidden, w2)
    loss = T.sum((outputs - targets) ** 2) / 2
    v1, v2 = T.dmatrix("v1"), T.dmatrix("v2")
    gv = gauss_newton_vector_product(loss, outputs, [w1, w2], [v1, v2])
    flat = outputs.flatten()
    jac1 = jacobian(flat, w1)
    jac2 = jacobian(flat, w2)
    f = function([w1, w2, v1, v2], gv + [jac1, jac2])
    p1, p2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    d1, d2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    g1, g2, j1, j2 = f(p1, p2, d1, d2)
    J = np.concatenate([j1.reshape(10, -1), j2.reshape(10, -1)], axis=1)
    # The loss's Hessian with respect to the outputs is the identity here.
    dense = J.T @ J @ np.concatenate([d1.ravel(), d2.ravel()])
    np.testing.assert_allclose(np.concatenate([g1.ravel(), g2.ravel()]), dense, rtol=1e-10)


def test_jacobian_shapes_static_and_symbolic():
    x = T.dmatrix("x")
    y = T.exp(x).sum(axis=0)
    J = jacobian(y, x)
    value = np.arange(6.0).reshape(2, 3) / 10
    result = function([x], J)(value)
    assert result.shape == (3, 2, 3)
    expected = np.zeros((3, 2, 3))
    for j in range(3):
        expected[j, :, j] = np.exp(value[:, j])
    np.testing.assert_allclose(result, expected)
    fixed = T.tensor("float64", shape=(2,), name="fixed")
    np.testing.assert_allclose(function([fixed], jacobian(fixed * 3, fixed),
                                        on_unused_input="ignore")([1.0, 2.0]),
                               3 * np.eye(2))


def test_jacobian_is_one_scan_with_the_forward_pass_outside():
    x, W = T.dvector("x"), T.dmatrix("W")
    f = function([W, x], jacobian(T.tanh(T.dot(W, x)), x))
    nodes = f.maker.fgraph.toposort()
    scans = [node for node in nodes if "Scan" in str(node.op)]
    assert len(scans) == 1
    inner = io_toposort(scans[0].op.inner_inputs, scans[0].op.inner_outputs)
    # The scan rewrites move tanh(W x) (not a function of the row index) out of the loop;
    # what stays is the row's own sweep (one-hot row times 1 - tanh**2, through W).
    assert not any("tanh" in str(node.op) for node in inner)
    assert any("tanh" in str(node.op) for node in nodes)
    w = np.random.default_rng(0).standard_normal((4, 3))
    value = np.linspace(-1, 1, 3)
    np.testing.assert_allclose(f(w, value), (1 - np.tanh(w @ value) ** 2)[:, None] * w,
                               rtol=1e-12)
    np.testing.assert_allclose(f(w, value), numeric_jacobian(lambda v: np.tanh(w @ v), value),
                               rtol=1e-6, atol=1e-8)


def numeric_jacobian(function_of, value, step=1e-6):
    columns = []
    for index in range(value.size):
        offset = np.zeros_like(value)
        offset[index] = step
        columns.append((function_of(value + offset) - function_of(value - offset)) / (2 * step))
    return np.stack(columns, axis=-1)


def test_verify_grad_catches_a_wrong_rule():
    with pytest.raises(GradientError, match="largest difference at index"):
        verify_grad(lambda x: grad_scale(x, 2.0) * 1.0, [np.ones(3)], rng=0)
    verify_grad(lambda x: T.exp(x) * x, [np.linspace(-1, 1, 4)], rng=0)
    verify_rop(lambda x: T.exp(x) * x, [np.linspace(-1, 1, 4)], rng=0)
    with pytest.raises(TypeError, match="floating-point"):
        verify_grad(lambda x: x, [np.arange(3)])


def test_gradient_through_shared_variables_and_sgd():
    w = shared(np.zeros(2), name="w")
    x = T.dmatrix("x")
    y = T.dvector("y")
    loss = T.mean((T.dot(x, w) - y) ** 2)
    gw = grad(loss, w)
    train = function([x, y], loss, updates=[(w, w - 0.1 * gw)])
    data = np.array([[1.0, 0.0], [0.0, 1.0]])
    targets = np.array([1.0, -1.0])
    losses = [float(train(data, targets)) for _ in range(50)]
    assert losses[-1] < losses[0] * 1e-3
    np.testing.assert_allclose(w.get_value(), targets, atol=1e-2)


# ---------------------------------------------------------------------------------------------
# grad differentiates the stabilized form of the cost

def _naive_nll(z, y):
    return -T.mean(T.log(T.exp(z) / T.exp(z).sum(1, keepdims=True))[T.arange(z.shape[0]), y])


def test_grad_of_naive_softmax_nll_is_the_stable_one():
    """Theano, PyTensor and JAX give NaN here: they differentiate the naive formula."""
    z, y = T.dmatrix("z"), T.ivector("y")
    stable = -T.mean(T.nnet.log_softmax(z)[T.arange(z.shape[0]), y])
    f = sympile.function([z, y], [sympile.grad(_naive_nll(z, y), z), sympile.grad(stable, z)])
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 3.0]])
    naive_grad, stable_grad = f(logits, np.array([0, 2], "int32"))
    assert np.all(np.isfinite(naive_grad))
    np.testing.assert_array_equal(naive_grad, stable_grad)
    np.testing.assert_allclose(stable_grad, [[0.0, 0.0, 0.0], [0.0, 0.5, -0.5]])
    verify_grad(lambda m: _naive_nll(m, T.constant(np.array([1, 0], "int32"))),
                [np.random.default_rng(0).normal(size=(2, 3))])


def test_grad_of_naive_softplus_and_through_an_intermediate_wrt():
    x = T.dvector("x")
    hidden = T.exp(x)
    cost = T.log(1 + hidden).sum()
    f = sympile.function([x], [sympile.grad(cost, x), sympile.grad(cost, hidden)])
    by_x, by_hidden = f([1000.0, -1000.0, 0.0])
    np.testing.assert_allclose(by_x, [1.0, 0.0, 0.5])
    np.testing.assert_allclose(by_hidden, [0.0, 1.0, 0.5])  # 1 / (1 + exp(x))
    # consider_constant still cuts the graph where the user says.
    with pytest.raises(DisconnectedInputError):
        sympile.grad(cost + hidden.sum(), x, consider_constant=[hidden])
    held = sympile.grad(cost + x.sum(), x, consider_constant=[hidden])
    np.testing.assert_array_equal(held.eval({x: np.array([1.0, 2.0])}), [1.0, 1.0])


def test_stabilized_grad_reuses_the_users_nodes():
    """Only the rewritten part is new: a dropout mask is drawn once, not once per graph."""
    x, y = T.dmatrix("x"), T.ivector("y")
    w = sympile.shared(np.ones((3, 3)), "w")
    mask = sympile.tensor.shared_randomstreams.RandomStreams(1).binomial((3,), p=0.5)
    cost = _naive_nll(T.dot(x * mask, w), y)
    gradient = sympile.grad(cost, w)
    draws = {id(node) for node in applys_between(graph_inputs([cost, gradient]),
                                                 [cost, gradient])
        if type(node.op).__name__ == "RandomDraw"}
    assert len(draws) == 1


def test_theanos_numeric_grad():
    """T.numeric_grad: gf of one array or a list, max_err's worst disagreement, shape
    checks; T.verify_grad is sympile.gradient's."""
    x, y = T.dvectors("xy")
    cube = sympile.function([x], (x ** 3).sum())
    single = T.numeric_grad(cube, np.array([1.0, 2.0]))
    np.testing.assert_allclose(single.gf, [3.0, 12.0], rtol=1e-8)
    assert single.max_err(np.array([3.0, 12.0]), 1e-4, 1e-4)[2] < 1e-6
    index, position, absolute, relative = single.max_err(np.array([3.0, 12.5]), 1e-4, 1e-4)
    assert (index, position) == (0, 1) and abs(absolute - 0.5) < 1e-6
    pair = T.numeric_grad(sympile.function([x, y], (x * y).sum()),
                          [np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    np.testing.assert_allclose(pair.gf[0], [3.0, 4.0], rtol=1e-8)
    assert pair.max_err([np.array([3.0, 4.0]), np.array([1.0, 9.0])], 1e-4, 1e-4)[:2] == (1, 1)
    with pytest.raises(ValueError, match="shape"):
        pair.abs_rel_errors([np.zeros(3), np.zeros(2)])
    with pytest.raises(TypeError, match="floating-point"):
        T.numeric_grad(cube, np.array([1, 2]))
    assert T.verify_grad is sympile.gradient.verify_grad


def test_lop_and_known_grads_differentiate_the_stable_form():
    """Lop (so verify_grad) and grad with known_grads differentiate log(softmax(x)) as
    log_softmax, as grad of a cost does: finite at logits of 10^4 where the naive
    gradient is NaN."""
    logits = np.exp(10 * np.random.default_rng(0).random((5, 10)))
    x, g = T.dmatrix("x"), T.dmatrix("g")
    output = T.log(T.nnet.softmax(x))
    lop = function([x, g], Lop(output, x, g))(logits, np.ones((5, 10)))
    known = function([x, g], grad(None, x, known_grads={output: g}))(logits,
                                                                      np.ones((5, 10)))
    assert np.all(np.isfinite(lop)) and np.all(np.isfinite(known))
    np.testing.assert_allclose(lop, known)
    # d/dx sum(g * log_softmax(x)) = g - softmax(x) * sum(g): with g = 1, 1 - 10 softmax.
    softmax = np.exp(logits - logits.max(axis=1, keepdims=True))
    softmax /= softmax.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(lop, 1 - 10 * softmax, atol=1e-12)
    verify_grad(lambda v: T.log(T.nnet.softmax(v)), [logits], eps=0.1, rng=0)
