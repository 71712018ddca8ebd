"""function(): inputs, outputs, updates, givens, defaults, keywords, input checking, errors."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile import In, Out, function, shared
from sympile.compile.function import UnusedInputError
from sympile.graph.fgraph import MissingInputError

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = pytest.mark.smoke


def test_outputs_single_list_and_dict():
    x, y = T.dvectors("x", "y")
    single = function([x, y], x + y)
    assert isinstance(single([1, 2], [3, 4]), np.ndarray)
    np.testing.assert_array_equal(single([1, 2], [3, 4]), [4, 6])
    listed = function([x, y], [x + y, x * y])
    total, product = listed([1, 2], [3, 4])
    np.testing.assert_array_equal(product, [3, 8])
    named = function([x, y], {"sum": x + y, "product": x * y})
    result = named([1, 2], [3, 4])
    assert list(result) == ["sum", "product"]
    np.testing.assert_array_equal(result["product"], [3, 8])
    assert function([x], [], on_unused_input="ignore")([1.0]) == []


def test_keyword_inputs_and_defaults():
    x, y, w = T.dscalars("x", "y", "w")
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], (x + y) * w)
    assert f(33) == 68
    assert f(33, 2) == 70
    assert f(33, 0, 1) == 33
    assert f(33, w_by_name=1) == 34
    assert f(33, w_by_name=1, y=0) == 33
    assert f(x=33) == 68


def test_argument_errors():
    x, y = T.dscalars("x", "y")
    f = function([x, y], x + y)
    with pytest.raises(TypeError, match="missing input 1 \\('y'\\)"):
        f(1.0)
    with pytest.raises(TypeError, match="at most 2 arguments, got 3"):
        f(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match="unknown keyword argument 'z'"):
        f(1.0, z=2.0)
    with pytest.raises(TypeError, match="'x' is given twice"):
        f(1.0, 2.0, x=3.0)


def test_input_type_checking():
    x = T.fvector("x")
    f = function([x], x * 2, name="double")
    with pytest.raises(TypeError, match="function 'double': bad input 0 \\('x'\\).*1 dimensions"):
        f(np.zeros((2, 2), dtype="float32"))
    with pytest.raises(TypeError, match="dtype float64.*to float32 without losing precision"):
        f(np.zeros(3))
    # A lossless conversion is done silently, as in Theano.
    assert f([1, 2, 3]).dtype == np.float32
    assert f(np.arange(3, dtype="int8")).dtype == np.float32
    loose = function([x], x * 2, allow_input_downcast=True)
    np.testing.assert_array_equal(loose(np.array([1.5, 2.5])), [3.0, 5.0])
    i = T.ivector("i")
    g = function([i], i + 1)
    with pytest.raises(TypeError, match="int32 without losing precision"):
        g([1.5])
    with pytest.raises(TypeError, match="int32"):
        g(["a"])
    np.testing.assert_array_equal(g([1, 2]), [2, 3])


def test_static_shape_is_checked():
    x = T.tensor("float64", shape=(3,), name="x")
    f = function([x], x + 1)
    with pytest.raises(TypeError, match="axis 0 has length 2, not 3"):
        f(np.zeros(2))


def test_trust_input_skips_conversion():
    x = T.dvector("x")
    f = function([x], x + 1)
    f.trust_input = True
    value = np.arange(3.0)
    np.testing.assert_array_equal(f(value), [1, 2, 3])
    compiled = function([x], x + 1, trust_input=True)
    np.testing.assert_array_equal(compiled(value), [1, 2, 3])


def test_updates_are_simultaneous_and_after_outputs():
    a = shared(np.float64(1.0), name="a")
    b = shared(np.float64(2.0), name="b")
    swap = function([], [a, b], updates=[(a, b), (b, a)])
    before = swap()
    assert [float(v) for v in before] == [1.0, 2.0]
    assert (a.get_value(), b.get_value()) == (2.0, 1.0)


def test_accumulator_from_the_theano_tutorial():
    state = shared(0)
    inc = T.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert state.get_value() == 0
    assert accumulator(1) == 0
    assert state.get_value() == 1
    accumulator(300)
    assert state.get_value() == 301
    state.set_value(-1)
    accumulator(3)
    assert state.get_value() == 2
    decrementor = function([inc], state, updates=[(state, state - inc)])
    decrementor(2)
    assert state.get_value() == 0
    fn_of_state = state * 2 + inc
    foo = T.scalar(dtype=state.dtype)
    skip_shared = function([inc, foo], fn_of_state, givens=[(state, foo)])
    assert skip_shared(1, 3) == 7
    assert state.get_value() == 0


def test_fn_n_calls_applies_updates_each_call():
    counter = shared(np.int64(0), name="counter")
    step = shared(np.float64(0.5), name="step")
    f = function([], counter * step, updates={counter: counter + 1})
    last = f.fn(n_calls=10)
    assert counter.get_value() == 10
    assert last == [4.5]
    with pytest.raises(ValueError, match="n_calls must be a positive int"):
        f.fn(n_calls=0)


def test_fn_uses_stored_inputs():
    x = T.dscalar("x")
    total = shared(np.float64(0.0))
    f = function([x], total, updates=[(total, total + x)])
    with pytest.raises(TypeError, match="no stored value"):
        f.fn(n_calls=2)
    f(2.0)
    f.fn(n_calls=3)
    assert total.get_value() == 8.0


def test_givens_replace_intermediate_and_shared():
    x = T.dvector("x")
    y = T.dvector("y")
    hidden = T.exp(x)
    f = function([y], hidden * 2, givens={hidden: y})
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    with pytest.raises(TypeError, match="another type"):
        function([y], hidden, givens={hidden: T.ivector()})
    with pytest.raises(ValueError, match="both an explicit input and replaced"):
        function([x], x * 2, givens={x: y})


def test_intermediate_variable_as_input_cuts_the_graph():
    x = T.dvector("x")
    hidden = x * 3
    f = function([hidden], hidden + 1)
    np.testing.assert_array_equal(f([1.0]), [2.0])


def test_unused_and_missing_inputs():
    x, y = T.dvectors("x", "y")
    with pytest.raises(UnusedInputError, match="input y"):
        function([x, y], x * 2)
    with pytest.warns(UserWarning, match="not used"):
        function([x, y], x * 2, on_unused_input="warn")
    function([x, y], x * 2, on_unused_input="ignore")
    with pytest.raises(MissingInputError, match="created at.*not among the inputs"):
        function([x], x + y)


def test_bad_arguments_to_function():
    x = T.dvector("x")
    s = shared(np.zeros(2))
    with pytest.raises(TypeError, match="shared variable"):
        function([s], s * 2)
    with pytest.raises(TypeError, match="inputs must be a list"):
        function(x, x * 2)
    with pytest.raises(TypeError, match="is a constant"):
        function([T.constant(1.0)], x, on_unused_input="ignore")
    with pytest.raises(ValueError, match="listed twice"):
        function([x, x], x)
    with pytest.raises(TypeError, match="target of an update must be a shared variable"):
        function([x], x, updates=[(x, x + 1)])
    with pytest.raises(ValueError, match="updated twice"):
        function([], s, updates=[(s, s + 1), (s, s * 2)])
    with pytest.raises(TypeError, match="must have the shared variable's dtype"):
        function([], s, updates=[(s, T.cast(s, "float32"))])
    with pytest.raises(TypeError, match="must be a pair"):
        function([], s, updates=[(s,)])
    with pytest.raises(ValueError, match="on_unused_input"):
        function([x], x, on_unused_input="maybe")
    with pytest.raises(ValueError, match="unknown mode"):
        function([x], x, mode="FASTEST")


def test_runtime_error_names_op_shapes_and_creation_site():
    x, y = T.dvectors("x", "y")
    total = shared(np.float64(5.0))
    product = x * y  # the line the error must point to
    f = function([x, y], product, updates=[(total, total + 1)])
    with pytest.raises(ValueError) as info:
        f(np.ones(2), np.ones(3))
    message = str(info.value)
    assert "mul" in message and "(2,), (3,)" in message
    assert "test_function.py" in message
    assert total.get_value() == 5.0  # a failed call leaves shared variables alone


def test_outputs_do_not_alias_inputs_or_shared_values():
    x = T.dvector("x")
    value = np.arange(3.0)
    identity = function([x], x)
    out = identity(value)
    out[0] = 100.0
    assert value[0] == 0.0
    s = shared(np.arange(3.0))
    read = function([], s)
    got = read()
    got[1] = 100.0
    assert s.get_value()[1] == 1.0
    view = function([], s.dimshuffle("x", 0))
    view()[0, 2] = -1.0
    assert s.get_value()[2] == 2.0


def test_returned_outputs_survive_the_next_call():
    x = T.dvector("x")
    f = function([x], T.exp(x))
    first = f([0.0])
    f([1.0])
    assert first[0] == 1.0


def test_borrowed_output():
    x = T.dvector("x")
    f = function([x], Out(x * 2, borrow=True))
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])


def test_update_with_static_shape_is_checked():
    s = shared(np.zeros(3), shape=(3,))
    v = T.dvector("v")
    f = function([v], [], updates=[(s, v)])
    f(np.ones(3))
    np.testing.assert_array_equal(s.get_value(), np.ones(3))
    with pytest.raises(ValueError, match="specify_shape"):
        f(np.ones(4))
    np.testing.assert_array_equal(s.get_value(), np.ones(3))


def test_shared_variable_used_by_two_functions():
    w = shared(np.float64(1.0), name="w")
    double = function([], [], updates=[(w, w * 2)])
    read = function([], w)
    double()
    double()
    assert read() == 4.0


def test_function_repr_and_maker():
    x = T.dvector("x")
    f = function([x], x + 1, name="inc")
    assert repr(f) == "<sympile.Function inc(x) -> Elemwise{add,no_inplace}.out>"
    y = T.dvector("y")
    w = sympile.shared(0.0, name="w")
    cost = (x * y).sum()
    cost.name = "cost"
    g = function([x, y], [cost, x], updates=[(w, w + 1)])
    assert repr(g) == "<sympile.Function function(x, y) -> (cost, x), 1 update>"
    assert len(f.maker.fgraph.outputs) == 1
    assert [spec.name for spec in f.inputs] == ["x"]


def test_eval_helper():
    x = T.dvector("x")
    np.testing.assert_array_equal((x * 2).eval({x: np.array([1.0, 2.0])}), [2.0, 4.0])
    assert T.constant(3.0).eval() == 3.0


def test_mode_argument():
    x = T.dvector("x")
    for mode in ["FAST_RUN", "FAST_COMPILE", sympile.Mode(name="custom"), None]:
        np.testing.assert_array_equal(function([x], x + 1, mode=mode)([1.0]), [2.0])
