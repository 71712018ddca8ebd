"""scan(): Theano's tutorial programs and each feature against a Python loop over numpy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.scan import Scan, scan, until


def test_power_by_repeated_multiplication():
    k = T.iscalar("k")
    A = T.vector("A")
    result, updates = scan(fn=lambda prior_result, A: prior_result * A,
                           outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    assert updates == {}
    final = sympile.function([A, k], result[-1], updates=updates)
    every = sympile.function([A, k], result)
    a = np.arange(10, dtype=A.type.dtype)
    np.testing.assert_allclose(final(a, 2), a ** 2)
    steps = every(a, 4)
    assert steps.shape == (4, 10)
    for step in range(4):
        np.testing.assert_allclose(steps[step], a ** (step + 1))


def test_polynomial_from_coefficients():
    coefficients = T.vector("coefficients")
    x = T.scalar("x")
    components, updates = scan(
        fn=lambda coefficient, power, free_variable: coefficient * (free_variable ** power),
        outputs_info=None, sequences=[coefficients, T.arange(1000)], non_sequences=x)
    polynomial = components.sum()
    calculate = sympile.function([coefficients, x], polynomial)
    test_coefficients = np.asarray([1, 0, 2], dtype=coefficients.type.dtype)
    np.testing.assert_allclose(calculate(test_coefficients, 3), 19.0)


def test_tanh_rnn():
    X = T.dmatrix("X")
    W = T.dmatrix("W")
    b_sym = T.dvector("b_sym")
    results, updates = scan(lambda v: T.tanh(T.dot(v, W) + b_sym), sequences=X)
    compute = sympile.function([X, W, b_sym], results)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 2))
    w = rng.standard_normal((2, 2))
    b = rng.standard_normal(2)
    np.testing.assert_allclose(compute(x, w, b), np.tanh(x @ w + b))


def test_recurrent_tanh_rnn_against_a_loop():
    X = T.dmatrix("X")
    W = T.dmatrix("W")
    U = T.dmatrix("U")
    h0 = T.dvector("h0")
    states, _ = scan(lambda x_t, h_previous, W, U: T.tanh(T.dot(x_t, W) + T.dot(h_previous, U)),
                     sequences=X, outputs_info=h0, non_sequences=[W, U])
    compute = sympile.function([X, W, U, h0], states)
    rng = np.random.default_rng(1)
    x, w, u = rng.standard_normal((6, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    h = rng.standard_normal(4)
    np.testing.assert_allclose(compute(x, w, u, h), loop_rnn(x, w, u, h))


def loop_rnn(x, w, u, h):
    rows = []
    for x_t in x:
        h = np.tanh(x_t @ w + h @ u)
        rows.append(h)
    return np.stack(rows)


def test_fibonacci_with_two_taps():
    initial = T.lvector("initial")
    n = T.lscalar("n")
    fibonacci, _ = scan(lambda two_back, one_back: two_back + one_back,
                        outputs_info=dict(initial=initial, taps=[-2, -1]), n_steps=n)
    compute = sympile.function([initial, n], fibonacci)
    values = [0, 1]
    for _ in range(10):
        values.append(values[-2] + values[-1])
    np.testing.assert_array_equal(compute(np.array([0, 1]), 10), values[2:])


def test_until_stops_after_the_condition_holds():
    max_value = T.scalar("max_value")

    def power_of_2(previous_power, max_value):
        return previous_power * 2, until(previous_power * 2 > max_value)

    values, _ = scan(power_of_2, outputs_info=T.constant(1.0, dtype=max_value.type.dtype),
                     non_sequences=max_value, n_steps=1024)
    compute = sympile.function([max_value], values)
    np.testing.assert_allclose(compute(45), [2, 4, 8, 16, 32, 64])
    np.testing.assert_allclose(compute(0.5), [2])


def test_until_runs_at_most_n_steps():
    x = T.dscalar("x")
    values, _ = scan(lambda previous: (until(previous > 1e9), previous + 1.0), outputs_info=x,
                     n_steps=3)
    np.testing.assert_allclose(sympile.function([x], values)(0.0), [1, 2, 3])


def test_until_with_updates_and_a_sequence_in_any_order():
    total = sympile.shared(np.float64(0.0), name="total")
    x = T.dvector("x")

    def step(x_t, previous):
        return [previous + x_t], {total: total + x_t}, until(previous + x_t > 5)

    running, updates = scan(step, sequences=x, outputs_info=T.constant(0.0))
    compute = sympile.function([x], running, updates=updates)
    np.testing.assert_allclose(compute(np.array([1.0, 2.0, 3.0, 4.0, 5.0])), [1, 3, 6])
    np.testing.assert_allclose(total.get_value(), 6.0)
    reordered, _ = scan(lambda x_t: [until(x_t < 0), x_t * 2], sequences=x)
    np.testing.assert_allclose(sympile.function([x], reordered)(np.array([1.0, -1.0, 2.0])),
                               [2, -2])


def test_shared_variable_updated_inside_scan():
    state = sympile.shared(np.float64(1.0), name="state")
    step = T.dscalar("step")
    outputs, updates = scan(lambda: ({state: state * step}, state + 0.0), n_steps=4)
    run = sympile.function([step], outputs, updates=updates)
    np.testing.assert_allclose(run(2.0), [1, 2, 4, 8])
    np.testing.assert_allclose(state.get_value(), 16.0)
    np.testing.assert_allclose(run(0.5), [16, 8, 4, 2])
    np.testing.assert_allclose(state.get_value(), 1.0)


def test_zero_steps_leave_a_shared_variable_unchanged():
    state = sympile.shared(np.array([1.0, 2.0]), name="state")
    n = T.lscalar("n")
    _, updates = scan(lambda: {state: state * 2.0}, n_steps=n)
    run = sympile.function([n], [], updates=updates)
    run(0)
    np.testing.assert_allclose(state.get_value(), [1.0, 2.0])
    run(2)
    np.testing.assert_allclose(state.get_value(), [4.0, 8.0])


def test_shared_variable_used_inside_fn_is_an_implicit_non_sequence():
    weights = sympile.shared(np.array([1.0, 2.0]), name="weights")
    x = T.dmatrix("x")
    rows, updates = scan(lambda row: (row * weights).sum(), sequences=x)
    compute = sympile.function([x], rows)
    value = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(compute(value), value @ [1.0, 2.0])
    weights.set_value(np.array([0.0, 1.0]))
    np.testing.assert_allclose(compute(value), value[:, 1])
    node = rows.owner
    assert isinstance(node.op, Scan)
    assert weights in node.inputs


def test_strict_rejects_variables_fn_was_not_given():
    weights = sympile.shared(np.array([1.0, 2.0]), name="weights")
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="scan: fn uses weights"):
        scan(lambda row: (row * weights).sum(), sequences=x, strict=True)
    rows, _ = scan(lambda row, w: (row * w).sum(), sequences=x, non_sequences=weights,
                   strict=True)
    np.testing.assert_allclose(sympile.function([x], rows)(np.ones((2, 2))), [3, 3])


def test_go_backwards():
    x = T.dvector("x")
    total, _ = scan(lambda x_t, running: running + x_t, sequences=x,
                    outputs_info=T.constant(0.0), go_backwards=True)
    value = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(sympile.function([x], total)(value), [4, 6, 7])


def test_several_outputs_mixed_recurrent_and_plain():
    x = T.dvector("x")
    (squares, running), _ = scan(lambda x_t, running: (x_t ** 2, running + x_t), sequences=x,
                                 outputs_info=[None, T.constant(0.0)])
    compute = sympile.function([x], [squares, running])
    value = np.array([1.0, 2.0, 3.0])
    got_squares, got_running = compute(value)
    np.testing.assert_allclose(got_squares, value ** 2)
    np.testing.assert_allclose(got_running, np.cumsum(value))


def loop_scan(sequence, sequence_taps, initial, state_taps, n_steps, weight):
    """Reference: out_t = weight * sum(sequence taps) + sum(state taps) * 0.5. As Theano's,
    step t reads the sequence's row t + tap, t running over the rows tap 0 would read too."""
    low, high = min(*sequence_taps, 0), max(*sequence_taps, 0)
    if n_steps is None:
        n_steps = len(sequence) - (high - low)
    buffer = list(initial[len(initial) - (-min(state_taps)):])
    lag = len(buffer)
    for step in range(n_steps):
        reads = sum(sequence[step + tap - low] for tap in sequence_taps)
        past = sum(buffer[lag + step + tap] for tap in state_taps)
        buffer.append(weight * reads + 0.5 * past)
    return np.array(buffer[lag:])


@settings(max_examples=25, deadline=None)
@given(length=st.integers(4, 9),
       sequence_taps=st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True),
       state_taps=st.lists(st.integers(-3, -1), min_size=1, max_size=3, unique=True),
       extra_initial_rows=st.integers(0, 2), fixed_steps=st.booleans(), seed=st.integers(0, 99))
def test_taps_against_a_python_loop(length, sequence_taps, state_taps, extra_initial_rows,
                                    fixed_steps, seed):
    rng = np.random.default_rng(seed)
    sequence_value = rng.standard_normal(length)
    n_available = length - (max(*sequence_taps, 0) - min(*sequence_taps, 0))
    n_steps = int(rng.integers(0, n_available + 1)) if fixed_steps else None
    sequence = T.dvector("sequence")
    weight = T.dscalar("weight")
    sitsot = state_taps == [-1]
    initial = T.dscalar("initial") if sitsot else T.dvector("initial")
    n_sequence_taps = len(sequence_taps)

    def step(*arguments):
        reads = arguments[:n_sequence_taps]
        past = arguments[n_sequence_taps:-1]
        return arguments[-1] * sum(reads[1:], reads[0]) + 0.5 * sum(past[1:], past[0])

    outputs, _ = scan(step, sequences=dict(input=sequence, taps=sequence_taps),
                      outputs_info=dict(initial=initial, taps=state_taps),
                      non_sequences=weight, n_steps=n_steps)
    compute = sympile.function([sequence, initial, weight], outputs)
    rows = -min(state_taps) + extra_initial_rows
    initial_value = rng.standard_normal(()) if sitsot else rng.standard_normal(rows)
    got = compute(sequence_value, initial_value, 0.7)
    expected = loop_scan(sequence_value, sequence_taps, np.atleast_1d(initial_value), state_taps,
                         n_steps, 0.7)
    assert got.shape == (len(expected),)
    np.testing.assert_allclose(got, expected)


def test_taps_on_one_side_of_zero_and_empty_outputs_info():
    """Theano's examples: taps [-1] alone run one step fewer than the rows (x[t - 1] for t
    from 1), taps [2] start at row 2; outputs_info=[] is no outputs_info."""
    x = T.dvector("x")
    previous, _ = scan(lambda a: [a], sequences=dict(input=x, taps=[-1]), outputs_info=[None])
    ahead, _ = scan(lambda a, b: a * 10 + b, sequences=dict(input=x, taps=[1, 2]))
    mapped, _ = scan(lambda a: a + 3, x, [], [])
    f = sympile.function([x], [previous, ahead, mapped])
    got = f(np.arange(5.0))
    for value, expected in zip(got, [[0, 1, 2, 3], [12, 23, 34], [3, 4, 5, 6, 7]]):
        np.testing.assert_array_equal(value, expected)


def test_symbolic_n_steps_shorter_than_the_sequence():
    x = T.dvector("x")
    n = T.lscalar("n")
    doubled, _ = scan(lambda x_t: x_t * 2, sequences=x, n_steps=n)
    compute = sympile.function([x, n], doubled)
    np.testing.assert_allclose(compute(np.arange(5.0), 3), [0, 2, 4])
    assert compute(np.arange(5.0), 0).shape == (0,)
    with pytest.raises(ValueError, match="fewer than the 7 steps"):
        compute(np.arange(5.0), 7)
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        compute(np.arange(5.0), -1)


def test_return_list_and_no_outputs():
    x = T.dvector("x")
    outputs, _ = scan(lambda x_t: x_t + 1, sequences=x, return_list=True)
    assert isinstance(outputs, list) and len(outputs) == 1
    counter = sympile.shared(np.int64(0), name="counter")
    nothing, updates = scan(lambda: {counter: counter + 1}, n_steps=5)
    assert nothing is None
    sympile.function([], [], updates=updates)()
    assert counter.get_value() == 5


def test_infer_shape_without_running_the_loop():
    x = T.dmatrix("x")
    h0 = T.dvector("h0")
    states, _ = scan(lambda x_t, h: h + x_t, sequences=x, outputs_info=h0)
    shape = sympile.function([x, h0], states.shape)
    np.testing.assert_array_equal(shape(np.zeros((4, 3)), np.zeros(3)), [4, 3])


def test_bad_input():
    x = T.dvector("x")
    with pytest.raises(ValueError, match="scan: give sequences or n_steps"):
        scan(lambda: x, outputs_info=None)
    with pytest.raises(ValueError, match="scan: n_steps must be >= 0"):
        scan(lambda h: h, outputs_info=x, n_steps=-2)
    with pytest.raises(TypeError, match="scan: n_steps must be an integer scalar"):
        scan(lambda h: h, outputs_info=x, n_steps=T.dscalar())
    with pytest.raises(ValueError, match=r"fn returned 2 output\(s\) but outputs_info has 1"):
        scan(lambda h: (h, h), outputs_info=x, n_steps=2)
    with pytest.raises(TypeError, match="fn's output 0 is float64 with 0 dimension"):
        scan(lambda h: h.sum(), outputs_info=x, n_steps=2)
    with pytest.raises(TypeError, match="fn's output 0 is float64 with 1 dimension.*int64"):
        scan(lambda h: h * 1.5, outputs_info=T.lvector(), n_steps=2)
    with pytest.raises(ValueError, match=r"sequences\[0\] has 3 rows, too few"):
        scan(lambda a, b: a + b, sequences=dict(input=T.constant(np.ones(3)), taps=[-2, 1]))
    with pytest.raises(ValueError, match="taps must be negative"):
        scan(lambda h: h, outputs_info=dict(initial=x, taps=[0]), n_steps=2)
    with pytest.raises(TypeError, match="until: the condition must be a bool or numeric"):
        until(x)
    with pytest.raises(TypeError, match="until: the condition must be a bool or numeric"):
        until(T.cscalar())


def test_until_takes_a_float_condition_as_theano():
    """A float condition stops where it is nonzero (Theano's truth of a number)."""
    x = T.dscalar("x")
    values, _ = scan(lambda previous: (previous + 1.0, until(previous + 1.0 - 3.0)),
                     outputs_info=x, n_steps=10)
    np.testing.assert_array_equal(sympile.function([x], values)(0.0), [1.0])
    np.testing.assert_array_equal(sympile.function([x], values)(2.0), [3.0, 4.0])


def test_nested_scan_uses_the_outer_loop_variables():
    matrix = T.dmatrix("matrix")
    scale = T.dscalar("scale")

    def row_sums(row):
        running, _ = scan(lambda value, total: total + value * scale, sequences=row,
                          outputs_info=T.constant(0.0))
        return running

    cumulative, _ = scan(row_sums, sequences=matrix)
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(sympile.function([matrix, scale], cumulative)(value, 2.0),
                               np.cumsum(value * 2.0, axis=1))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN", "DebugMode"])
def test_modes_agree(mode):
    x = T.dmatrix("x")
    w = T.dmatrix("w")
    h0 = T.dvector("h0")
    states, _ = scan(lambda x_t, h, w: T.tanh(x_t + T.dot(h, w)), sequences=x, outputs_info=h0,
                     non_sequences=w)
    rng = np.random.default_rng(3)
    x_value, w_value, h = rng.standard_normal((4, 3)), rng.standard_normal((3, 3)), np.zeros(3)
    expected = []
    for x_t in x_value:
        h = np.tanh(x_t + h @ w_value)
        expected.append(h)
    got = sympile.function([x, w, h0], states, mode=mode)(x_value, w_value, np.zeros(3))
    np.testing.assert_allclose(got, np.stack(expected))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_scalar_non_sequence_computed_by_another_op(mode):
    x = T.dvector("x")
    scaled, _ = scan(lambda x_t, total: x_t / total, sequences=x, non_sequences=x.sum())
    value = np.array([1.0, 3.0])
    np.testing.assert_allclose(sympile.function([x], scaled, mode=mode)(value), value / 4.0)


def test_fn_receives_the_non_sequences_themselves():
    """As in Theano, fn gets the outer non-sequences, so it can differentiate through them:
    the tutorial's Jacobian and Hessian by scan."""
    x = T.dvector("x")
    y = x ** 2
    jacobian, updates = sympile.scan(lambda i, y, x: T.grad(y[i], x),
                                     sequences=T.arange(y.shape[0]), non_sequences=[y, x])
    np.testing.assert_allclose(sympile.function([x], jacobian, updates=updates)([4.0, 4.0]),
                               [[8.0, 0.0], [0.0, 8.0]])
    gradient = T.grad((x ** 2).sum(), x)
    hessian, updates = sympile.scan(lambda i, g, x: T.grad(g[i], x),
                                    sequences=T.arange(gradient.shape[0]),
                                    non_sequences=[gradient, x])
    np.testing.assert_allclose(sympile.function([x], hessian, updates=updates)([4.0, 4.0]),
                               [[2.0, 0.0], [0.0, 2.0]])
    # A non-sequence fn returns as it is comes out as the value it was given.
    a = T.dvector("a")
    copies, _ = sympile.scan(lambda a: a, non_sequences=[a], n_steps=2)
    np.testing.assert_allclose(sympile.function([a], copies)([1.0, 2.0]), [[1, 2], [1, 2]])
