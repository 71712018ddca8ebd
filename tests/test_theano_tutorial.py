"""Programs from the Theano tutorial that need no gradient, with only the import changed."""

import numpy as np

import sympile as theano
import sympile.tensor as T
from sympile import In, function, pp, shared


def test_adding_two_scalars():
    x = T.dscalar("x")
    y = T.dscalar("y")
    z = x + y
    f = function([x, y], z)
    assert f(2, 3) == 5.0
    np.testing.assert_allclose(f(16.3, 12.1), 28.4)
    assert type(x) is T.TensorVariable
    assert x.type is T.dscalar().type
    assert pp(z) == "(x + y)"
    np.testing.assert_allclose(z.eval({x: 16.3, y: 12.1}), 28.4)


def test_adding_two_matrices():
    x = T.dmatrix("x")
    y = T.dmatrix("y")
    z = x + y
    f = function([x, y], z)
    np.testing.assert_array_equal(f([[1, 2], [3, 4]], [[10, 20], [30, 40]]),
                                  [[11.0, 22.0], [33.0, 44.0]])
    np.testing.assert_array_equal(f(np.array([[1, 2], [3, 4]]), np.array([[10, 20], [30, 40]])),
                                  [[11.0, 22.0], [33.0, 44.0]])


def test_exercise_vectors():
    a = T.vector()
    b = T.vector()
    out = a ** 2 + b ** 2 + 2 * a * b
    f = function([a, b], out)
    np.testing.assert_array_equal(f([0, 1, 2], [1, 2, 3]), [1, 9, 25])


def test_logistic_function():
    x = T.dmatrix("x")
    s = 1 / (1 + T.exp(-x))
    logistic = theano.function([x], s)
    expected = [[0.5, 0.73105858], [0.26894142, 0.11920292]]
    np.testing.assert_allclose(logistic([[0, 1], [-1, -2]]), expected, rtol=1e-7)
    s2 = (1 + T.tanh(x / 2)) / 2
    logistic2 = theano.function([x], s2)
    np.testing.assert_allclose(logistic2([[0, 1], [-1, -2]]), expected, rtol=1e-7)


def test_computing_more_than_one_thing_at_once():
    a, b = T.dmatrices("a", "b")
    diff = a - b
    abs_diff = abs(diff)
    diff_squared = diff ** 2
    f = theano.function([a, b], [diff, abs_diff, diff_squared])
    d, ad, ds = f([[1, 1], [1, 1]], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(d, [[1.0, 0.0], [-1.0, -2.0]])
    np.testing.assert_array_equal(ad, [[1.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(ds, [[1.0, 0.0], [1.0, 4.0]])


def test_default_values_and_names():
    x, y = T.dscalars("x", "y")
    z = x + y
    f = function([x, In(y, value=1)], z)
    assert f(33) == 34.0
    assert f(33, 2) == 35.0
    x, y, w = T.dscalars("x", "y", "w")
    z = (x + y) * w
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], z)
    assert f(33) == 68.0
    assert f(33, 2) == 70.0
    assert f(33, 0, 1) == 33.0
    assert f(33, w_by_name=1) == 34.0
    assert f(33, w_by_name=1, y=0) == 33.0


def test_shared_variables_accumulator_and_givens():
    state = shared(0)
    inc = T.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert state.get_value() == 0
    assert accumulator(1) == 0
    assert state.get_value() == 1
    assert accumulator(300) == 1
    assert state.get_value() == 301
    state.set_value(-1)
    assert accumulator(3) == -1
    assert state.get_value() == 2
    decrementor = function([inc], state, updates=[(state, state - inc)])
    assert decrementor(2) == 2
    assert state.get_value() == 0
    fn_of_state = state * 2 + inc
    foo = T.scalar(dtype=state.dtype)
    skip_shared = function([inc, foo], fn_of_state, givens=[(state, foo)])
    assert skip_shared(1, 3) == 7
    assert state.get_value() == 0


def test_copying_functions():
    state = shared(0)
    inc = T.iscalar("inc")
    accumulator = theano.function([inc], state, updates=[(state, state + inc)])
    accumulator(10)
    assert state.get_value() == 10
    new_state = theano.shared(0)
    new_accumulator = accumulator.copy(swap={state: new_state})
    # Theano's copy returns a list even of one output: the tutorial prints [array(0)].
    assert new_accumulator(100) == [0]
    assert new_state.get_value() == 100
    assert state.get_value() == 10
    null_accumulator = accumulator.copy(delete_updates=True)
    assert null_accumulator(9000) == [10]
    assert state.get_value() == 10


def test_config_floatx_and_typed_scalars():
    assert theano.config.floatX in ("float32", "float64")
    x = T.scalar(dtype=theano.config.floatX)
    assert x.dtype == theano.config.floatX
    assert T.iscalar().dtype == "int32"


def test_debugprint_runs():
    x = T.dvector("x")
    text = theano.printing.debugprint(x ** 2, file="str")
    assert "pow" in text
