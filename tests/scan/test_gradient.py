"""Derivatives through scan (sympile.scan.gradient): BPTT against numpy and finite differences
for every kind of scan input, truncate_gradient, R_op against finite differences and Lop, and
second derivatives."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import (
    DisconnectedInputError,
    finite_differences,
    gauss_newton_vector_product,
    grad,
    hessian,
    hessian_vector_product,
    verify_grad,
    verify_rop,
)
from sympile.graph.basic import ancestors, io_toposort
from sympile.graph.gradient_types import is_disconnected
from sympile.scan import Scan, scan, until


def rng(seed=0):
    return np.random.default_rng(seed)


def scan_nodes(outputs):
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return [node for node in io_toposort([], outputs) if isinstance(node.op, Scan)]


# ---------------------------------------------------------------------------------------------
# A tanh RNN: BPTT against a numpy loop

def rnn(X, W, U, b, h0, truncate_gradient=-1):
    states, _ = scan(lambda x_t, h, W, U, b: T.tanh(T.dot(x_t, W) + T.dot(h, U) + b),
                     sequences=X, outputs_info=h0, non_sequences=[W, U, b],
                     truncate_gradient=truncate_gradient)
    return states


def numpy_bptt(x, w, u, b, h0, weights, truncate_gradient=-1):
    """Gradients of sum(weights * H) for H the tanh RNN's states, by a hand-written
    backward loop over the last truncate_gradient steps (all of them for -1)."""
    states, h = [], h0
    for x_t in x:
        h = np.tanh(x_t @ w + h @ u + b)
        states.append(h)
    steps = len(x)
    first = 0 if truncate_gradient == -1 else max(0, steps - truncate_gradient)
    dx, dw, du, db = np.zeros_like(x), np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    carry = np.zeros_like(h0)
    for t in range(steps - 1, first - 1, -1):
        previous = states[t - 1] if t else h0
        pre = (weights[t] + carry) * (1 - states[t] ** 2)
        dx[t] = pre @ w.T
        dw += np.outer(x[t], pre)
        du += np.outer(previous, pre)
        db += pre
        carry = pre @ u.T
    dh0 = carry if first == 0 else np.zeros_like(h0)
    return [dx, dw, du, db, dh0]


def rnn_point(seed=0, steps=6, n_in=3, n_hidden=4):
    generator = rng(seed)
    return [generator.standard_normal((steps, n_in)), generator.standard_normal((n_in, n_hidden)),
            generator.standard_normal((n_hidden, n_hidden)) * 0.5,
            generator.standard_normal(n_hidden), generator.standard_normal(n_hidden)]


def rnn_gradients(truncate_gradient=-1):
    X, W, U, h0 = T.dmatrix("X"), T.dmatrix("W"), T.dmatrix("U"), T.dvector("h0")
    b, weights = T.dvector("b"), T.dmatrix("weights")
    cost = (rnn(X, W, U, b, h0, truncate_gradient) * weights).sum()
    return sympile.function([X, W, U, b, h0, weights], grad(cost, [X, W, U, b, h0]))


def test_tanh_rnn_bptt_equals_a_numpy_loop():
    point = rnn_point()
    weights = rng(1).standard_normal((6, 4))
    computed = rnn_gradients()(*point, weights)
    for got, expected in zip(computed, numpy_bptt(*point, weights)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_tanh_rnn_gradient_numerically():
    verify_grad(rnn, rnn_point(steps=4), rng=0)


def test_gradient_of_the_last_state_only():
    # The cost reads one row of the states: the other rows' output gradients are zeros.
    def last(X, W, U, b, h0):
        return rnn(X, W, U, b, h0)[-1]
    verify_grad(last, rnn_point(steps=4), rng=1)


def test_gradient_graph_is_one_reverse_scan_reading_the_forward_states():
    X, W, U, h0, b = T.dmatrix("X"), T.dmatrix("W"), T.dmatrix("U"), T.dvector("h0"), \
        T.dvector("b")
    states = rnn(X, W, U, b, h0)
    gradients = grad(states.sum(), [X, W, U, b, h0])
    forward, reverse = scan_nodes(gradients)
    assert forward is states.owner
    assert reverse.op.name == "grad_of_scan"
    assert reverse.op.recurrent_taps == ((-1,),) * 4  # one carry, three accumulators
    assert states in ancestors(reverse.inputs)
    # The step's tanh is read from the forward states, not recomputed.
    inner_ops = [str(node.op) for node in io_toposort(reverse.op.inner_inputs,
                                                      reverse.op.inner_outputs)]
    assert not any("tanh" in name.lower() for name in inner_ops)


def test_zero_steps_give_zero_gradients():
    X, W, U, h0, b = T.dmatrix("X"), T.dmatrix("W"), T.dmatrix("U"), T.dvector("h0"), \
        T.dvector("b")
    cost = rnn(X, W, U, b, h0).sum()
    compute = sympile.function([X, W, U, b, h0], grad(cost, [X, W, U, b, h0]))
    point = rnn_point(steps=0)
    for got, value in zip(compute(*point), point):
        np.testing.assert_array_equal(got, np.zeros_like(value))


# ---------------------------------------------------------------------------------------------
# verify_grad through every kind of input


def test_sequence_with_taps_minus_one_zero_two():
    # Row t of the sequence is read at steps t + 1, t and t - 2: the overlapping taps' gradients
    # are summed into each row.
    def fun(x, w):
        out, _ = scan(lambda before, now, later, w: before * T.sin(now) + later * w,
                      sequences=dict(input=x, taps=[-1, 0, 2]), non_sequences=w)
        return out
    verify_grad(fun, [rng(2).standard_normal((7, 2)), rng(3).standard_normal(2)], rng=0)


def test_state_with_taps_minus_two_minus_one():
    def fun(initial, w):
        out, _ = scan(lambda two_back, one_back, w: T.tanh(two_back * w + one_back),
                      outputs_info=dict(initial=initial, taps=[-2, -1]), non_sequences=w,
                      n_steps=5)
        return out
    verify_grad(fun, [rng(4).standard_normal((2, 3)), rng(5).standard_normal(3)], rng=0)


def test_initial_rows_beyond_the_taps_get_zero_gradient():
    initial, w = T.dmatrix("initial"), T.dvector("w")
    out, _ = scan(lambda two_back, one_back, w: two_back * w + T.sin(one_back),
                  outputs_info=dict(initial=initial, taps=[-2, -1]), non_sequences=w,
                  n_steps=4)
    gradient = sympile.function([initial, w], grad(out.sum(), initial))
    value = gradient(rng(6).standard_normal((4, 3)), rng(7).standard_normal(3))
    np.testing.assert_array_equal(value[:2], 0)
    assert np.all(value[2:] != 0)
    verify_grad(lambda i, w: scan(lambda a, b, w: a * w + T.sin(b),
                                  outputs_info=dict(initial=i, taps=[-2, -1]),
                                  non_sequences=w, n_steps=4)[0],
                [rng(6).standard_normal((4, 3)), rng(7).standard_normal(3)], rng=0)


def test_taps_minus_three_and_minus_one_skip_a_row():
    def fun(initial):
        out, _ = scan(lambda three_back, one_back: three_back * T.cos(one_back),
                      outputs_info=dict(initial=initial, taps=[-3, -1]), n_steps=5)
        return out
    verify_grad(fun, [rng(8).standard_normal((3, 2))], rng=0)


def test_non_sequences_sum_over_steps():
    def fun(x, w, scale):
        out, _ = scan(lambda x_t, h, w, scale: T.tanh(x_t * w + h) * scale, sequences=x,
                      outputs_info=T.zeros_like(w), non_sequences=[w, scale])
        return out
    verify_grad(fun, [rng(9).standard_normal((4, 3)), rng(10).standard_normal(3),
                      np.array(0.7)], rng=0)


def test_several_outputs_and_a_plain_output():
    def fun(x, h0, c0, w):
        (h, c, y), _ = scan(lambda x_t, h, c, w: [T.tanh(x_t * c + w), T.sin(h) + x_t,
                                                  (h * x_t).sum()],
                            sequences=x, outputs_info=[h0, c0, None], non_sequences=w)
        return h.sum() + 2 * c.sum() + 3 * y.sum()
    verify_grad(fun, [rng(11).standard_normal((4, 3)), rng(12).standard_normal(3),
                      rng(13).standard_normal(3), rng(14).standard_normal(3)], rng=0)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_gradient_for_one_output_of_several(which):
    # The other outputs' gradients are disconnected.
    def fun(x, h0, c0):
        outputs, _ = scan(lambda x_t, h, c: [T.tanh(x_t + c), c * x_t, h * c],
                          sequences=x, outputs_info=[h0, c0, None])
        return outputs[which]
    verify_grad(fun, [rng(15).standard_normal((4, 2)), rng(16).standard_normal(2),
                      rng(17).standard_normal(2)], rng=0)


def test_plain_outputs_only():
    def fun(x, y):
        out, _ = scan(lambda a, b: T.exp(a) * b, sequences=[x, y])
        return out
    verify_grad(fun, [rng(18).standard_normal((5, 2)), rng(19).standard_normal((5, 2))], rng=0)


def test_go_backwards():
    def fun(x, h0):
        out, _ = scan(lambda x_t, h: T.sin(h) * x_t + h, sequences=x, outputs_info=h0,
                      go_backwards=True)
        return out
    verify_grad(fun, [rng(20).standard_normal((4, 3)), rng(21).standard_normal(3)], rng=0)


def test_until_gradient_over_the_steps_that_ran():
    def fun(h0, w):
        out, _ = scan(lambda h, w: (h * w + 0.1, until(h.sum() > 2.0)), outputs_info=h0,
                      non_sequences=w, n_steps=50)
        return out
    h0, w = np.array([0.3, 0.2]), np.array([1.3, 1.2])
    h0_var, w_var = T.dvector("h0"), T.dvector("w")
    run = sympile.function([h0_var, w_var], fun(h0_var, w_var))
    assert 1 < run(h0, w).shape[0] < 50
    verify_grad(fun, [h0, w], rng=0)


def test_until_with_a_sequence_longer_than_the_steps_run():
    def fun(x, h0):
        out, _ = scan(lambda x_t, h: (h + x_t * x_t, until(h.sum() > 3.0)), sequences=x,
                      outputs_info=h0)
        return out
    x = rng(22).uniform(0.5, 1.0, (10, 2))
    x_var, h_var = T.dmatrix("x"), T.dvector("h0")
    gradient = sympile.function([x_var, h_var], grad(fun(x_var, h_var).sum(), x_var))(
        x, np.zeros(2))
    steps = sympile.function([x_var, h_var], fun(x_var, h_var))(x, np.zeros(2)).shape[0]
    assert steps < 10
    np.testing.assert_array_equal(gradient[steps:], 0)
    verify_grad(fun, [x, np.zeros(2)], rng=0)


def test_n_steps_without_sequences():
    def fun(a):
        out, _ = scan(lambda prior, a: prior * a, outputs_info=T.ones_like(a),
                      non_sequences=a, n_steps=4)
        return out
    verify_grad(fun, [rng(23).uniform(0.5, 1.5, 3)], rng=0)


def test_n_steps_shorter_than_the_sequence():
    x_var, h_var = T.dmatrix("x"), T.dvector("h0")
    out, _ = scan(lambda x_t, h: T.tanh(h * x_t + x_t), sequences=x_var, outputs_info=h_var,
                  n_steps=3)
    gradient = sympile.function([x_var, h_var], grad(out.sum(), x_var))(
        rng(24).standard_normal((5, 2)), rng(25).standard_normal(2))
    assert gradient.shape == (5, 2)
    np.testing.assert_array_equal(gradient[3:], 0)
    assert np.all(gradient[:3] != 0)


def test_symbolic_n_steps_is_disconnected():
    a, k = T.dvector("a"), T.iscalar("k")
    out, _ = scan(lambda prior, a: prior * a, outputs_info=T.ones_like(a), non_sequences=a,
                  n_steps=k)
    node = out.owner
    gradients = node.op.L_op(node.inputs, node.outputs, [T.ones_like(out)])
    assert is_disconnected(gradients[0])
    value = sympile.function([a, k], grad(out[-1].sum(), a))(np.array([2.0, 3.0]), 3)
    np.testing.assert_allclose(value, 3 * np.array([2.0, 3.0]) ** 2)


def test_unused_non_sequence_is_disconnected():
    x, w = T.dvector("x"), T.dvector("w")
    out, _ = scan(lambda x_t, w: x_t * 2.0, sequences=x, non_sequences=w)
    with pytest.raises(DisconnectedInputError):
        grad(out.sum(), w)


def test_independent_state_is_disconnected():
    # The cost reads the first state only; the second never feeds it.
    h0, c0 = T.dvector("h0"), T.dvector("c0")
    (h, _), _ = scan(lambda h, c: [h * 2.0, T.sin(c)], outputs_info=[h0, c0], n_steps=3)
    with pytest.raises(DisconnectedInputError):
        grad(h.sum(), c0)
    # The forward node computes both states, so the gradient's graph reads c0 too.
    np.testing.assert_allclose(sympile.function([h0, c0], grad(h.sum(), h0))(np.ones(2),
                                                                            np.ones(2)),
                               [14.0, 14.0])


def test_implicit_shared_non_sequence():
    w = sympile.shared(rng(26).standard_normal(3), name="w")
    x = T.dmatrix("x")
    out, _ = scan(lambda x_t, h: T.tanh(x_t * w + h), sequences=x,
                  outputs_info=T.zeros_like(x[0]))
    gradient = sympile.function([x], grad(out.sum(), w))
    x_value = rng(27).standard_normal((4, 3))

    def cost(w_value):
        h, total = np.zeros(3), 0.0
        for x_t in x_value:
            h = np.tanh(x_t * w_value + h)
            total += h.sum()
        return total

    np.testing.assert_allclose(gradient(x_value), finite_differences(cost, [w.get_value()])[0],
                               rtol=1e-6)


def test_state_from_a_shared_variable_update():
    total = sympile.shared(np.zeros(2), name="total")
    x, w = T.dmatrix("x"), T.dvector("w")
    out, updates = scan(lambda x_t, w: (x_t * w, {total: total + x_t * w}), sequences=x,
                        non_sequences=w)
    gradient = sympile.function([x, w], grad(updates[total].sum() + out.sum(), w))
    x_value = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(gradient(x_value, np.ones(2)), 2 * x_value.sum(axis=0))


def test_nested_scan():
    def fun(x, w):
        def row(x_t, w):
            inner, _ = scan(lambda v, acc: T.sin(acc * v + w), sequences=x_t,
                            outputs_info=T.zeros_like(w))
            return inner[-1]
        out, _ = scan(row, sequences=x, non_sequences=w)
        return out
    verify_grad(fun, [rng(28).standard_normal((3, 2)), np.array(0.4)], rng=0)


def test_float32_gradient_keeps_the_dtype():
    x, h0 = T.fmatrix("x"), T.fvector("h0")
    out, _ = scan(lambda x_t, h: T.tanh(x_t + h), sequences=x, outputs_info=h0)
    gradients = grad(out.sum(), [x, h0])
    assert [g.type.dtype for g in gradients] == ["float32", "float32"]
    values = sympile.function([x, h0], gradients)(np.ones((3, 2), "float32"),
                                                 np.zeros(2, "float32"))
    assert all(v.dtype == np.float32 for v in values)


@settings(max_examples=6, deadline=None)
@given(sequence_taps=st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True),
       state_taps=st.lists(st.integers(-3, -1), min_size=1, max_size=2, unique=True),
       go_backwards=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_random_taps_gradient(sequence_taps, state_taps, go_backwards, seed):
    steps = 3
    lag = -min(state_taps)

    def fun(sequence, initial, w):
        def step(*arguments):
            reads = arguments[:len(sequence_taps)]
            past = arguments[len(sequence_taps):-1]
            return T.tanh(arguments[-1] * sum(reads[1:], reads[0])
                          + 0.5 * sum(past[1:], past[0]) * reads[0])
        out, _ = scan(step, sequences=dict(input=sequence, taps=sequence_taps),
                      outputs_info=dict(initial=initial, taps=state_taps), non_sequences=w,
                      go_backwards=go_backwards)
        return out
    generator = rng(seed)
    length = steps + max(sequence_taps) - min(sequence_taps)
    verify_grad(fun, [generator.standard_normal((length, 2)),
                      generator.standard_normal((lag, 2)), generator.standard_normal(2)],
                rng=seed)


# ---------------------------------------------------------------------------------------------
# Theano's tutorial programs


def test_tutorial_power_gradient():
    A, k = T.dvector("A"), T.iscalar("k")
    result, _ = scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A,
                     n_steps=k)
    gradient = sympile.function([A, k], grad(result[-1].sum(), A))
    a = np.array([0.5, 1.0, 2.0])
    for power in (1, 2, 5):
        np.testing.assert_allclose(gradient(a, power), power * a ** (power - 1))


def test_tutorial_polynomial_gradient():
    coefficients, x = T.dvector("coefficients"), T.dscalar("x")
    components, _ = scan(lambda c, power, free: c * (free ** power), outputs_info=None,
                         sequences=[coefficients, T.arange(1000)], non_sequences=x)
    polynomial = components.sum()
    gradient = sympile.function([coefficients, x], grad(polynomial, [coefficients, x]))
    c = np.array([1.0, 0.0, 2.0, -1.0])
    d_coefficients, d_x = gradient(c, 3.0)
    np.testing.assert_allclose(d_coefficients, 3.0 ** np.arange(4))
    np.testing.assert_allclose(d_x, sum(i * c[i] * 3.0 ** (i - 1) for i in range(1, 4)))


# ---------------------------------------------------------------------------------------------
# truncate_gradient


@pytest.mark.parametrize("truncate_gradient", [1, 3, 6, 10])
def test_truncated_bptt_equals_a_numpy_loop(truncate_gradient):
    point = rnn_point(seed=3)
    weights = rng(4).standard_normal((6, 4))
    computed = rnn_gradients(truncate_gradient)(*point, weights)
    for got, expected in zip(computed, numpy_bptt(*point, weights, truncate_gradient)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_truncated_gradient_differs_from_full():
    point = rnn_point(seed=5)
    weights = rng(6).standard_normal((6, 4))
    full = rnn_gradients()(*point, weights)
    truncated = rnn_gradients(2)(*point, weights)
    assert not np.allclose(full[1], truncated[1])
    np.testing.assert_array_equal(truncated[0][:4], 0)
    np.testing.assert_array_equal(truncated[4], 0)


def test_truncate_gradient_is_stored_on_the_op():
    X, h0 = T.dmatrix("X"), T.dvector("h0")
    out, _ = scan(lambda x_t, h: h + x_t, sequences=X, outputs_info=h0, truncate_gradient=3)
    assert out.owner.op.truncate_gradient == 3
    reverse = scan_nodes(grad(out.sum(), X))
    assert [node.op.truncate_gradient for node in reverse] == [3, -1]


@pytest.mark.parametrize("value", [0, -2, 1.5, True])
def test_bad_truncate_gradient(value):
    with pytest.raises(ValueError, match="truncate_gradient"):
        scan(lambda x_t: x_t * 2, sequences=T.dvector("x"), truncate_gradient=value)


# ---------------------------------------------------------------------------------------------
# R_op: against finite differences and Lop (verify_rop checks both)


def test_rop_tanh_rnn():
    verify_rop(rnn, rnn_point(steps=4), rng=0)


def test_rop_sequence_and_state_taps():
    def fun(x, initial, w):
        out, _ = scan(lambda before, later, two_back, one_back, w:
                      T.tanh(two_back * w + one_back * before) + later,
                      sequences=dict(input=x, taps=[-1, 2]),
                      outputs_info=dict(initial=initial, taps=[-2, -1]), non_sequences=w)
        return out
    verify_rop(fun, [rng(29).standard_normal((6, 2)), rng(30).standard_normal((2, 2)),
                     rng(31).standard_normal(2)], rng=0)


def test_rop_plain_outputs_and_go_backwards():
    def fun(x, h0):
        (h, y), _ = scan(lambda x_t, h: [T.sin(h) * x_t, (h * h).sum() + x_t[0]],
                         sequences=x, outputs_info=[h0, None], go_backwards=True)
        return h.sum() + y.sum()
    verify_rop(fun, [rng(32).standard_normal((4, 3)), rng(33).standard_normal(3)], rng=0)


def test_rop_until():
    def fun(h0, w):
        out, _ = scan(lambda h, w: (h * w + 0.1, until(h.sum() > 2.0)), outputs_info=h0,
                      non_sequences=w, n_steps=50)
        return out
    verify_rop(fun, [np.array([0.3, 0.2]), np.array([1.3, 1.2])], rng=0)


def test_rop_with_respect_to_some_inputs():
    # Only W has a tangent: the state gets one from the step, its initial tangent is zero.
    X, W, h0 = T.dmatrix("X"), T.dmatrix("W"), T.dvector("h0")
    states, _ = scan(lambda x_t, h, W: T.tanh(T.dot(x_t, W) + h), sequences=X,
                     outputs_info=h0, non_sequences=W)
    V = T.dmatrix("V")
    jvp = sympile.function([X, W, h0, V], sympile.gradient.Rop(states, W, V))
    x, w, h, v = (rng(34).standard_normal((4, 3)), rng(35).standard_normal((3, 3)),
                  rng(36).standard_normal(3), rng(37).standard_normal((3, 3)))
    forward = sympile.function([X, W, h0], states)
    step = 1e-6
    numeric = (forward(x, w + step * v, h) - forward(x, w - step * v, h)) / (2 * step)
    np.testing.assert_allclose(jvp(x, w, h, v), numeric, rtol=1e-6, atol=1e-8)


def test_rop_of_an_output_without_tangent_is_none():
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    (h, _), _ = scan(lambda x_t, h: [h * 2.0, x_t * 3.0], sequences=x, outputs_info=[h0, None])
    node = h.owner
    tangents = node.op.R_op(node.inputs, [None, None, T.dmatrix("t")])
    assert tangents[1] is None and tangents[0] is not None


# ---------------------------------------------------------------------------------------------
# Second derivatives


def test_grad_of_grad():
    def fun(h0, w):
        out, _ = scan(lambda h, w: T.tanh(h * w) + h, outputs_info=h0, non_sequences=w,
                      n_steps=3)
        return grad((out ** 2).sum(), w)
    verify_grad(fun, [rng(38).standard_normal(2), rng(39).standard_normal(2)], rng=0)


def test_grad_of_grad_with_taps_and_sequences():
    def fun(x, initial):
        out, _ = scan(lambda x_t, two_back, one_back: T.sin(two_back * x_t) + one_back * x_t,
                      sequences=x, outputs_info=dict(initial=initial, taps=[-2, -1]))
        return grad(out.sum(), x)
    verify_grad(fun, [rng(40).standard_normal((3, 2)), rng(41).standard_normal((2, 2))],
                rng=0)


def test_hessian_vector_product_through_scan():
    X, W, U, b, h0 = T.dmatrix("X"), T.dmatrix("W"), T.dmatrix("U"), T.dvector("b"), \
        T.dvector("h0")
    cost = (rnn(X, W, U, b, h0) ** 2).sum()
    V = T.dmatrix("V")
    product = sympile.function([X, W, U, b, h0, V], hessian_vector_product(cost, U, V))
    gradient = sympile.function([X, W, U, b, h0], grad(cost, U))
    x, w, u, b_value, h = rnn_point(seed=7, steps=4)
    v = rng(8).standard_normal(u.shape)
    step = 1e-6
    numeric = (gradient(x, w, u + step * v, b_value, h)
               - gradient(x, w, u - step * v, b_value, h)) / (2 * step)
    np.testing.assert_allclose(product(x, w, u, b_value, h, v), numeric, rtol=1e-5, atol=1e-7)


def test_hessian_through_scan():
    h0, w = T.dvector("h0"), T.dvector("w")
    out, _ = scan(lambda h, w: T.tanh(h * w) + h, outputs_info=h0, non_sequences=w, n_steps=3)
    cost = (out ** 2).sum()
    full = sympile.function([h0, w], hessian(cost, w))
    gradient = sympile.function([h0, w], grad(cost, w))
    h_value, w_value = np.array([0.3, -0.5]), np.array([0.7, 1.1])
    numeric = np.stack([finite_differences(lambda point, row=row: gradient(h_value, point)[row],
                                     [w_value])[0]
                        for row in range(2)])
    np.testing.assert_allclose(full(h_value, w_value), numeric, rtol=1e-6, atol=1e-8)


def test_gauss_newton_vector_product_through_scan():
    # For the loss sum(states ** 2), G v = 2 J^T J v with J the Jacobian of the states in U,
    # built here column by column from finite differences.
    X, W, U, b, h0 = T.dmatrix("X"), T.dmatrix("W"), T.dmatrix("U"), T.dvector("b"), \
        T.dvector("h0")
    states = rnn(X, W, U, b, h0)
    V = T.dmatrix("V")
    product = sympile.function([X, W, U, b, h0, V], gauss_newton_vector_product(
        (states ** 2).sum(), states, U, V))
    forward = sympile.function([X, W, U, b, h0], states)
    x, w, u, b_value, h = rnn_point(seed=9, steps=3, n_in=2, n_hidden=3)
    v = rng(10).standard_normal(u.shape)
    step = 1e-6
    columns = []
    for index in range(u.size):
        shift = np.zeros(u.size)
        shift[index] = step
        shift = shift.reshape(u.shape)
        columns.append(((forward(x, w, u + shift, b_value, h)
                         - forward(x, w, u - shift, b_value, h)) / (2 * step)).ravel())
    jacobian = np.stack(columns, axis=1)
    expected = (2 * jacobian.T @ (jacobian @ v.ravel())).reshape(u.shape)
    np.testing.assert_allclose(product(x, w, u, b_value, h, v), expected, rtol=1e-6, atol=1e-8)


def test_rop_of_the_gradient_scan_against_lop():
    # R_op through the reverse scan, checked both ways by verify_rop.
    def fun(h0, w):
        out, _ = scan(lambda h, w: T.sin(h * w), outputs_info=h0, non_sequences=w, n_steps=3)
        return grad(out.sum(), w)
    verify_rop(fun, [rng(42).standard_normal(2), rng(43).standard_normal(2)], rng=0)
