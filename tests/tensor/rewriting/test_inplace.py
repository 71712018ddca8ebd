"""Tests of sympile/tensor/rewriting/inplace.py (and the DestroyHandler and function() behind
it): graphs that would like to overwrite a value someone still needs, on the Python and the C
backend. Each checks which nodes go inplace and that the values are the unrewritten graph's,
with the caller's arrays, constants, shared values and returned outputs left as they were."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.compile.debugmode import DebugMode
from sympile.compile.function import In
from sympile.compile.mode import Mode
from sympile.graph.basic import Constant
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.db import RewriteQuery
from sympile.ifelse import ifelse
from sympile.link.schedule import lazy_schedule
from sympile.tensor.inplace import GemmInplace, IncSubtensorInplace
from sympile.tensor.rewriting import rewrite_db
from sympile.tensor.subtensor import set_subtensor
from tests.link.c.utils import requires_compiler
from tests.utils import assert_like_numpy

NO_REWRITE = Mode(rewriter=None, name="no rewrite")
INPLACE_QUERY = RewriteQuery(include=("fast_run",))
PLAIN_QUERY = RewriteQuery(include=("fast_run",), exclude=("inplace",))
BACKENDS = ["python", pytest.param("c", marks=pytest.mark.slow)]


def test_fast_run_goes_inplace_last():
    fast_run = [name for name in rewrite_db.names() if "fast_run" in rewrite_db.tags_of(name)]
    assert fast_run[-1] == "inplace"
    assert fast_run.index("inplace") > max(fast_run.index("blas"),
                                           fast_run.index("local_elemwise_fusion"))
    x = T.dmatrix("x")
    f = sympile.function([x], T.tanh(T.dot(x, x)) * 2, mode="FAST_RUN")
    assert destroyers(f)
    g = sympile.function([x], T.tanh(T.dot(x, x)) * 2,
                         mode=sympile.get_mode("FAST_RUN").excluding("inplace"))
    assert not destroyers(g)


def inplace_mode(backend: str = "python") -> Mode:
    return Mode(INPLACE_QUERY, backend=backend, name=f"inplace on {backend}")


def plain_mode(backend: str = "python") -> Mode:
    return Mode(PLAIN_QUERY, backend=backend, name=f"no inplace on {backend}")


def destroyers(function) -> list:
    return [node for node in function.maker.fgraph.apply_nodes if node.op.destroy_map]


def destroyed_inputs(function) -> list:
    return function.maker.fgraph.destroy_handler.destroyed_inputs()


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_callers_input_is_never_overwritten(backend):
    x, y = T.dvector("x"), T.dvector("y")
    output = T.exp(x) * 2 + T.sin(y)
    f = sympile.function([x, y], output, mode=inplace_mode(backend))
    assert destroyed_inputs(f) == []
    x_value, y_value = random(5), random(5, seed=1)
    x_copy, y_copy = x_value.copy(), y_value.copy()
    assert_like_numpy(f(x_value, y_value), np.exp(x_copy) * 2 + np.sin(y_copy))
    np.testing.assert_array_equal(x_value, x_copy)
    np.testing.assert_array_equal(y_value, y_copy)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mutable_input_is_overwritten_and_only_then(backend):
    x = T.dmatrix("x")
    output = T.tanh(x) * 3
    mutable = sympile.function([In(x, mutable=True)], output, mode=inplace_mode(backend))
    protected = sympile.function([x], output, mode=inplace_mode(backend))
    assert destroyed_inputs(mutable) == [mutable.maker.fgraph.inputs[0]]
    assert destroyed_inputs(protected) == []
    value = random(3, 4)
    expected = np.tanh(value) * 3
    kept = value.copy()
    assert_like_numpy(protected(value), expected)
    np.testing.assert_array_equal(value, kept)
    assert_like_numpy(mutable(value), expected)
    # The mutable input's memory holds the result (it was reused), not the input any more.
    assert not np.array_equal(value, kept)


def test_in_mutable_must_be_a_bool():
    with pytest.raises(TypeError, match="In: mutable must be True or False"):
        In(T.dvector("x"), mutable="yes")


def test_a_mutable_inputs_default_value_is_never_overwritten():
    x = T.dvector("x")
    default = np.array([0.5, 1.5])
    f = sympile.function([In(x, value=default, mutable=True)], T.exp(x),
                         mode=inplace_mode())
    assert destroyed_inputs(f) != []
    first, second = f(), f()
    assert_like_numpy(first, np.exp([0.5, 1.5]))
    assert_like_numpy(second, np.exp([0.5, 1.5]))
    np.testing.assert_array_equal(default, [0.5, 1.5])


def test_a_mutable_input_aliasing_another_input_is_copied_first():
    x, y = T.dvector("x"), T.dvector("y")
    # The product reads y after the exp has overwritten x: wrong if they share memory.
    output = T.exp(x) * y[::-1]
    f = sympile.function([In(x, mutable=True), y], output, mode=inplace_mode())
    assert destroyed_inputs(f) != []
    value = random(6)
    expected = np.exp(value) * value[::-1]
    assert_like_numpy(f(value, value), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_constant_is_never_overwritten(backend):
    x = T.dvector("x")
    constant = T.as_tensor_variable(np.array([1.0, 2.0, 3.0]))
    f = sympile.function([x], T.exp(constant + x), mode=inplace_mode(backend))
    constants = [v for v in f.maker.fgraph.variables if isinstance(v, Constant)]
    for node in destroyers(f):
        for indexes in node.op.destroy_map.values():
            assert not any(node.inputs[index] in constants for index in indexes)
    for _ in range(2):
        assert_like_numpy(f(np.zeros(3)), np.exp([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_value_read_twice_is_overwritten_after_its_reader(backend):
    x = T.dvector("x")
    shared_value = T.exp(x)
    destroyed = T.sin(shared_value) * 2
    reader = shared_value[::-1] + 1
    f = sympile.function([x], [destroyed, reader], mode=inplace_mode(backend))
    assert destroyers(f)
    value = random(7)
    expected = np.exp(value)
    results = f(value)
    assert_like_numpy(results[0], np.sin(expected) * 2)
    assert_like_numpy(results[1], expected[::-1] + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_views_of_an_intermediate(backend):
    x = T.dmatrix("x")
    base = T.exp(x)
    view = base.dimshuffle(1, 0)[1:]
    destroyed = T.tanh(view) + 1
    reader = base.sum(axis=0)
    f = sympile.function([x], [destroyed, reader], mode=inplace_mode(backend))
    value = random(3, 4)
    expected = np.exp(value)
    results = f(value)
    assert_like_numpy(results[0], np.tanh(expected.T[1:]) + 1)
    assert_like_numpy(results[1], expected.sum(axis=0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_a_protected_input_are_not_overwritten(backend):
    x = T.dmatrix("x")
    f = sympile.function([x], T.exp(x.dimshuffle(1, 0)[1:]), mode=inplace_mode(backend))
    assert destroyed_inputs(f) == []
    value = random(3, 4)
    kept = value.copy()
    assert_like_numpy(f(value), np.exp(kept.T[1:]))
    np.testing.assert_array_equal(value, kept)


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_outputs_are_not_overwritten_by_the_next_call(backend):
    x = T.dmatrix("x")
    # The tanh is written over the product's buffer, which the next call may reuse.
    f = sympile.function([x], T.tanh(T.dot(x, x)) + 1, mode=inplace_mode(backend))
    assert destroyers(f)
    first_input, second_input = random(4, 4), random(4, 4, seed=1)
    first = f(first_input)
    kept = first.copy()
    second = f(second_input)
    np.testing.assert_array_equal(first, kept)
    assert_like_numpy(second, np.tanh(second_input @ second_input) + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_output_that_is_also_a_mutable_input(backend):
    x = T.dvector("x")
    f = sympile.function([In(x, mutable=True)], [x, T.exp(x) * 2], mode=inplace_mode(backend))
    assert destroyed_inputs(f) == []
    value = random(4)
    kept = value.copy()
    returned, doubled = f(value)
    np.testing.assert_array_equal(returned, kept)
    assert_like_numpy(doubled, np.exp(kept) * 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemm_goes_inplace_over_an_intermediate(backend):
    a, b, c = T.dmatrix("a"), T.dmatrix("b"), T.dmatrix("c")
    output = T.dot(a, b) + T.exp(c)
    f = sympile.function([a, b, c], output, mode=inplace_mode(backend))
    assert any(isinstance(node.op, GemmInplace) for node in f.maker.fgraph.apply_nodes)
    values = [random(3, 4), random(4, 5, seed=1), random(3, 5, seed=2)]
    assert_like_numpy(f(*values), values[0] @ values[1] + np.exp(values[2]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_subtensor_goes_inplace_over_an_intermediate(backend):
    x, y = T.dvector("x"), T.dvector("y")
    output = set_subtensor(T.exp(x)[1:3], y)
    f = sympile.function([x, y], output, mode=inplace_mode(backend))
    assert any(isinstance(node.op, IncSubtensorInplace) for node in f.maker.fgraph.apply_nodes)
    x_value, y_value = random(5), random(2, seed=1)
    expected = np.exp(x_value)
    expected[1:3] = y_value
    assert_like_numpy(f(x_value, y_value), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shared_variable_read_in_the_graph_that_updates_it(backend):
    weights = sympile.shared(random(3, 3), name="weights")
    initial = weights.get_value()
    x = T.dvector("x")
    read = T.dot(weights, x)
    f = sympile.function([x], read, updates=[(weights, weights * 0.5 + T.outer(x, x))],
                         mode=inplace_mode(backend))
    value = random(3, seed=1)
    assert_like_numpy(f(value), initial @ value)
    np.testing.assert_allclose(weights.get_value(), initial * 0.5 + np.outer(value, value))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("destroyer_first", [False, True])
def test_ifelse_branch_nodes_read_before_a_destroyer_runs(backend, destroyer_first):
    x = T.dvector("x")
    condition = T.lscalar("condition")
    intermediate = T.exp(x)
    # Only the then branch reads `intermediate` (through a view), so the lazy schedule
    # would like to run the reader inside the conditional's step, after the destroyer.
    chosen = ifelse(condition, intermediate[::-1] * 3, x)
    destroyed = T.sin(intermediate) + 1
    outputs = [destroyed, chosen] if destroyer_first else [chosen, destroyed]
    f = sympile.function([condition, x], outputs, mode=inplace_mode(backend))
    assert destroyers(f)
    value = random(5)
    for flag in (0, 1):
        results = dict(zip(["destroyed", "chosen"] if destroyer_first
                           else ["chosen", "destroyed"], f(flag, value)))
        expected = np.exp(value)[::-1] * 3 if flag else value
        assert_like_numpy(results["chosen"], expected)
        assert_like_numpy(results["destroyed"], np.sin(np.exp(value)) + 1)


def test_lazy_schedule_keeps_a_branch_node_ordered_before_an_outside_node():
    x = T.dvector("x")
    condition = T.lscalar("condition")
    intermediate = T.exp(x)
    reader = intermediate * 3
    chosen = ifelse(condition, reader, x)
    destroyed = T.sin(intermediate)
    fgraph = FunctionGraph([condition, x], [destroyed, chosen], clone=False)
    nodes = [intermediate.owner, reader.owner, destroyed.owner, chosen.owner]
    lazy = lazy_schedule(nodes, fgraph.outputs)
    assert [step.index for step in lazy] == [0, 2, 3]
    assert [step.index for step in lazy[2].then_steps] == [1]
    ordered = lazy_schedule(nodes, fgraph.outputs, {destroyed.owner: [reader.owner]})
    assert [step.index for step in ordered] == [0, 1, 2, 3]
    assert ordered[3].then_steps == []
    # An ordering inside the branch keeps the nodes lazy.
    both = ifelse(condition, reader + destroyed, x)
    nodes = [intermediate.owner, reader.owner, destroyed.owner, both.owner.inputs[1].owner,
             both.owner]
    inside = lazy_schedule(nodes, [both], {destroyed.owner: [reader.owner]})
    assert [step.index for step in inside] == [4]
    assert [step.index for step in inside[0].then_steps] == [0, 1, 2, 3]


def test_debug_mode_checks_inplace_graphs():
    x, y = T.dvector("x"), T.dvector("y")
    intermediate = T.exp(x)
    outputs = [T.sin(intermediate) * y, intermediate[::-1] + 1]
    mode = DebugMode(INPLACE_QUERY)
    f = sympile.function([x, y], outputs, mode=mode)
    assert destroyers(f)
    x_value, y_value = random(4), random(4, seed=1)
    results = f(x_value, y_value)
    assert_like_numpy(results[0], np.sin(np.exp(x_value)) * y_value)
    assert_like_numpy(results[1], np.exp(x_value)[::-1] + 1)


# -- random graphs -------------------------------------------------------------------------------

UNARY = [T.exp, T.tanh, T.sin, T.neg, lambda v: v * 2.0]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, T.maximum]


@st.composite
def elementwise_programs(draw):
    """A small DAG of elementwise and matrix-product steps over three 3x3 inputs; each step
    reads earlier values (so values are read several times), some values become outputs."""
    steps = []
    n_values = 3
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "dot", "transpose"]))
        operands = [draw(st.integers(0, n_values - 1)) for _ in range(2)]
        function_index = draw(st.integers(0, 4))
        steps.append((kind, operands, function_index))
        n_values += 1
    outputs = draw(st.lists(st.integers(3, n_values - 1), min_size=1, max_size=3, unique=True))
    return steps, outputs


def build(steps, outputs, variables):
    values = list(variables)
    for kind, (first, second), function_index in steps:
        if kind == "unary":
            values.append(UNARY[function_index % len(UNARY)](values[first]))
        elif kind == "binary":
            values.append(BINARY[function_index % len(BINARY)](values[first], values[second]))
        elif kind == "dot":
            values.append(T.dot(values[first], values[second]) + values[function_index % 3])
        else:
            values.append(values[first].T)
    return [values[index] for index in outputs]


@settings(max_examples=40)
@given(elementwise_programs(), st.booleans())
def test_random_graphs_compute_the_unrewritten_values(program, mutable):
    steps, output_indexes = program
    variables = [T.dmatrix(name) for name in "abc"]
    outputs = build(steps, output_indexes, variables)
    inputs = [In(v, mutable=mutable) for v in variables]
    f = sympile.function(inputs, outputs, mode=inplace_mode(), on_unused_input="ignore")
    reference = sympile.function(variables, outputs, mode=NO_REWRITE, on_unused_input="ignore")
    values = [random(3, 3, seed=seed) for seed in range(3)]
    expected = reference(*values)
    kept = [v.copy() for v in values]
    first = f(*[v.copy() for v in values] if mutable else values)
    if not mutable:
        for value, original in zip(values, kept):
            np.testing.assert_array_equal(value, original)
    first_kept = [r.copy() for r in first]
    second = f(*[v.copy() for v in values] if mutable else values)
    for actual, again, wanted, before in zip(first, second, expected, first_kept):
        assert_like_numpy(actual, wanted)
        assert_like_numpy(again, wanted)
        np.testing.assert_array_equal(actual, before)


# -- shared variables updated in place -----------------------------------------------------------

def sgd_functions(backend: str, seed: int = 0):
    """One SGD step W <- W - 0.1 * grad of a least-squares cost, with and without inplace,
    on two shared weights of the same initial value."""
    functions = []
    for mode in (inplace_mode(backend), plain_mode(backend)):
        weights = sympile.shared(random(4, 3, seed=seed), name="weights")
        bias = sympile.shared(np.zeros(3), name="bias")
        x, y = T.dmatrix("x"), T.dmatrix("y")
        cost = T.sqr(T.dot(x, weights) + bias - y).sum()
        gradients = sympile.grad(cost, [weights, bias])
        updates = [(p, p - 0.1 * g) for p, g in zip([weights, bias], gradients)]
        functions.append((sympile.function([x, y], cost, updates=updates, mode=mode),
                          weights, bias))
    return functions


@pytest.mark.slow
@requires_compiler
def test_a_shared_update_overwrites_the_old_value_in_place():
    """On the C backend (the Python backend replaces updated values whole: test_threads)."""
    (fast, weights, bias), (plain, plain_weights, plain_bias) = sgd_functions("c")
    fgraph = fast.maker.fgraph
    assert set(destroyed_inputs(fast)) == set(fgraph.inputs[2:])
    assert destroyed_inputs(plain) == []
    storage = weights.get_value(borrow=True)
    x_value, y_value = random(5, 4, seed=1), random(5, 3, seed=2)
    for _step in range(3):
        before = weights.get_value(borrow=False)
        bias_before = bias.get_value()
        costs = fast(x_value, y_value), plain(x_value, y_value)
        np.testing.assert_allclose(costs[0], costs[1], rtol=1e-12)
        np.testing.assert_allclose(weights.get_value(), plain_weights.get_value(), rtol=1e-12)
        np.testing.assert_allclose(bias.get_value(), plain_bias.get_value(), rtol=1e-12)
        # The copy taken before the call keeps the old value...
        assert not np.array_equal(before, weights.get_value())
        expected = before - 0.1 * 2 * x_value.T @ (x_value @ before + bias_before - y_value)
        np.testing.assert_allclose(weights.get_value(), expected, rtol=1e-12)
    # ... and the shared storage itself was written, not replaced.
    assert weights.get_value(borrow=True) is storage


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shared_value_read_by_another_function_is_the_updated_one(backend):
    (fast, weights, _), _ = sgd_functions(backend)
    reader = sympile.function([], weights * 1.0, mode=inplace_mode(backend))
    x_value, y_value = random(5, 4, seed=1), random(5, 3, seed=2)
    fast(x_value, y_value)
    np.testing.assert_array_equal(reader(), weights.get_value())


def test_an_update_whose_old_value_is_returned_is_not_in_place():
    weights = sympile.shared(random(3), name="weights")
    initial = weights.get_value()
    f = sympile.function([], [weights, weights.dimshuffle("x", 0)],
                         updates=[(weights, T.exp(weights))], mode=inplace_mode())
    assert destroyed_inputs(f) == []
    returned, row = f()
    np.testing.assert_array_equal(returned, initial)
    np.testing.assert_array_equal(row, initial[None])
    np.testing.assert_allclose(weights.get_value(), np.exp(initial))


@requires_compiler
def test_two_shared_variables_on_one_array_are_unshared_before_an_in_place_update():
    array = random(3)
    first = sympile.shared(array, name="first", borrow=True)
    second = sympile.shared(array, name="second", borrow=True)
    # The update of `first` runs in place; `second` is read after it in data order.
    f = sympile.function([], (second * 2)[::-1], updates=[(first, T.exp(first))],
                         mode=inplace_mode("c"))
    assert destroyed_inputs(f) != []
    expected = array.copy()
    np.testing.assert_allclose(f(), (expected * 2)[::-1])
    np.testing.assert_allclose(first.get_value(), np.exp(expected))
    np.testing.assert_array_equal(second.get_value(), expected)
