"""Tests of the lazy schedule (sympile/link/python/vm.py, lazy_schedule) where orderings
(a DestroyHandler's) link nodes of a conditional's two branches: the two never run together,
so such an ordering keeps neither branch's node out of its branch. Each compiled test runs on
the Python and the C backend, counts the perform() calls of the branch nodes, and compares the
values (and the shared variables updated in place) with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.compile.function import In
from sympile.compile.mode import Mode
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.db import RewriteQuery
from sympile.ifelse import ifelse
from sympile.link.c.cmodule import compiler_available
from sympile.link.schedule import lazy_schedule
from tests.ifelse.test_basic import CALLS, Counted
from tests.link.c.utils import C_MODE, PYTHON_MODE

BACKENDS = [pytest.param(PYTHON_MODE, id="python"),
            pytest.param(C_MODE, id="c", marks=pytest.mark.skipif(
                not compiler_available(), reason="no C compiler (config.cxx)"))]


NO_REWRITE = Mode(rewriter=None, name="no rewrite")
INPLACE = Mode(RewriteQuery(include=("fast_run",)), backend="python", name="inplace on python")


@pytest.fixture(autouse=True)
def reset_calls():
    CALLS.clear()


def random(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def overwritten(function) -> list[str]:
    """The names of the graph inputs (here: shared variables) `function` updates in place.

    An update computed inside a lazy branch is not written in place: its branch could fail
    after the write, and a failed call must change no shared variable (compile/updates.py).
    The tests below check that the branches run lazily and compute the right values."""
    return [variable.name for variable in function.maker.fgraph.destroy_handler.destroyed_inputs()]


# -- the schedule itself -----------------------------------------------------------------------

def test_an_ordering_between_the_two_branches_keeps_both_lazy():
    condition = T.lscalar("condition")
    x = T.dvector("x")
    reader = T.exp(x)
    destroyer = T.sin(x)
    chosen = ifelse(condition, destroyer, reader)
    FunctionGraph([condition, x], [chosen], clone=False)
    # Either order (the nodes in an order that honours it).
    for before, after in [(reader, destroyer), (destroyer, reader)]:
        nodes = [before.owner, after.owner, chosen.owner]
        steps = lazy_schedule(nodes, [chosen], {after.owner: [before.owner]})
        assert [step.index for step in steps] == [2]
        assert [nodes[step.index] for step in steps[0].then_steps] == [destroyer.owner]
        assert [nodes[step.index] for step in steps[0].else_steps] == [reader.owner]


def test_an_ordering_into_another_conditional_keeps_the_node_out():
    condition = T.lscalar("condition")
    x = T.dvector("x")
    reader = T.exp(x)
    destroyer = T.sin(x)
    first = ifelse(condition, reader, x)
    second = ifelse(condition, x, destroyer)
    FunctionGraph([condition, x], [first, second], clone=False)
    nodes = [reader.owner, first.owner, destroyer.owner, second.owner]
    steps = lazy_schedule(nodes, [first, second], {destroyer.owner: [reader.owner]})
    # `destroyer` runs in the second conditional's step, after the first one's: `reader`
    # must run before it, in the main sequence.
    assert [step.index for step in steps] == [0, 1, 3]
    assert steps[1].then_steps == []
    assert [step.index for step in steps[2].else_steps] == [2]


def test_an_ordering_across_the_branches_of_an_enclosing_conditional():
    outer_condition, inner_condition = T.lscalars("outer_condition", "inner_condition")
    x = T.dvector("x")
    then_reader, else_reader = T.exp(x), T.cos(x)
    inner = ifelse(inner_condition, then_reader, else_reader)
    destroyer = T.sin(x)
    outer = ifelse(outer_condition, inner, destroyer)
    FunctionGraph([outer_condition, inner_condition, x], [outer], clone=False)
    nodes = [then_reader.owner, else_reader.owner, inner.owner, destroyer.owner, outer.owner]
    orderings = {destroyer.owner: [then_reader.owner, else_reader.owner]}
    steps = lazy_schedule(nodes, [outer], orderings)
    assert [step.index for step in steps] == [4]
    assert [step.index for step in steps[0].else_steps] == [3]
    inner_step, = steps[0].then_steps
    assert inner_step.index == 2
    assert [step.index for step in inner_step.then_steps] == [0]
    assert [step.index for step in inner_step.else_steps] == [1]


# -- compiled: a shared variable updated in place in one branch, read by the other ------------

@pytest.mark.parametrize("mode", BACKENDS)
def test_the_else_reader_of_a_value_the_then_branch_overwrites_runs_only_on_else(mode):
    weights = sympile.shared(random(3, 3), name="weights")
    x = T.dvector("x")
    condition = T.iscalar("condition")
    # As in the RNN's SGD step: the then branch updates `weights` in place (Ger_inplace), the
    # else branch reads it; the DestroyHandler orders the reader before the destroyer.
    new_weights = ifelse(condition, weights - 0.1 * T.outer(x, x), Counted("else")(weights))
    f = sympile.function([condition, x], new_weights.sum(), updates=[(weights, new_weights)],
                         mode=mode)
    assert overwritten(f) == []
    expected = weights.get_value()
    value = random(3, seed=1)
    flags = [1, 1, 0, 1, 0, 0, 1]
    for flag in flags:
        expected = expected - 0.1 * np.outer(value, value) if flag else expected + 1
        np.testing.assert_allclose(f(flag, value), expected.sum(), rtol=1e-12)
        np.testing.assert_allclose(weights.get_value(), expected, rtol=1e-12)
    assert CALLS == {"else": flags.count(0)}


@pytest.mark.parametrize("mode", BACKENDS)
def test_a_reader_after_the_conditional_sees_the_value_before_it_is_overwritten(mode):
    weights = sympile.shared(random(4), name="weights")
    x = T.dvector("x")
    condition = T.iscalar("condition")
    new_weights = ifelse(condition, weights * 2 + x, Counted("else")(weights))
    # Read outside the conditional: the in-place then branch must not run before it.
    total = (weights * 3).sum()
    f = sympile.function([condition, x], [new_weights, total],
                         updates=[(weights, new_weights)], mode=mode)
    value = random(4, seed=1)
    for flag in [1, 0, 1, 1, 0]:
        old = weights.get_value()
        returned, returned_total = f(flag, value)
        expected = old * 2 + value if flag else old + 1
        np.testing.assert_allclose(returned, expected, rtol=1e-12)
        np.testing.assert_allclose(returned_total, (old * 3).sum(), rtol=1e-12)
        np.testing.assert_allclose(weights.get_value(), expected, rtol=1e-12)
    assert CALLS == {"else": 2}


@pytest.mark.parametrize("mode", BACKENDS)
def test_two_shared_variables_updated_in_both_branches(mode):
    first = sympile.shared(random(3, seed=1), name="first")
    second = sympile.shared(random(3, seed=2), name="second")
    condition = T.iscalar("condition")
    new_first = ifelse(condition, first * 2 + 1, first - second)
    new_second = ifelse(condition, second + first, second * 3)
    f = sympile.function([condition], [], updates=[(first, new_first), (second, new_second)],
                         mode=mode)
    assert overwritten(f) == []
    expected_first, expected_second = first.get_value(), second.get_value()
    for flag in [1, 0, 0, 1, 1, 0, 1]:
        if flag:
            expected_first, expected_second = (expected_first * 2 + 1,
                                               expected_second + expected_first)
        else:
            expected_first, expected_second = (expected_first - expected_second,
                                               expected_second * 3)
        f(flag)
        np.testing.assert_allclose(first.get_value(), expected_first, rtol=1e-12)
        np.testing.assert_allclose(second.get_value(), expected_second, rtol=1e-12)


@pytest.mark.parametrize("mode", BACKENDS)
def test_nested_readers_of_a_value_overwritten_in_the_outer_else_branch(mode):
    weights = sympile.shared(random(3), name="weights")
    x = T.dvector("x")
    outer_condition, inner_condition = T.iscalars("outer_condition", "inner_condition")
    inner = ifelse(inner_condition, Counted("then then")(weights), Counted("then else")(weights))
    new_weights = ifelse(outer_condition, inner, weights * 2 + x)
    f = sympile.function([outer_condition, inner_condition, x], [],
                         updates=[(weights, new_weights)], mode=mode)
    assert overwritten(f) == []
    value = random(3, seed=1)
    expected = weights.get_value()
    for outer_flag in (1, 0):
        for inner_flag in (1, 0):
            CALLS.clear()
            f(outer_flag, inner_flag, value)
            if outer_flag:
                expected = expected + 1
                assert CALLS == {"then then" if inner_flag else "then else": 1}
            else:
                expected = expected * 2 + value
                assert CALLS == {}
            np.testing.assert_allclose(weights.get_value(), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", BACKENDS)
def test_nested_reader_of_a_value_overwritten_in_the_inner_then_branch(mode):
    weights = sympile.shared(random(3), name="weights")
    x = T.dvector("x")
    outer_condition, inner_condition = T.iscalars("outer_condition", "inner_condition")
    inner = ifelse(inner_condition, weights * 2 + x, Counted("inner else")(weights))
    new_weights = ifelse(outer_condition, inner, Counted("outer else")(weights))
    f = sympile.function([outer_condition, inner_condition, x], [],
                         updates=[(weights, new_weights)], mode=mode)
    assert overwritten(f) == []
    value = random(3, seed=1)
    expected = weights.get_value()
    for outer_flag, inner_flag in [(1, 1), (1, 0), (0, 1), (0, 0), (1, 1)]:
        CALLS.clear()
        f(outer_flag, inner_flag, value)
        if outer_flag and inner_flag:
            expected = expected * 2 + value
            assert CALLS == {}
        else:
            expected = expected + 1
            assert CALLS == {"inner else" if outer_flag else "outer else": 1}
        np.testing.assert_allclose(weights.get_value(), expected, rtol=1e-12)


# -- random programs: conditionals over values that inplace nodes overwrite -------------------

UNARY = [T.exp, T.tanh, T.sin, lambda v: v * 2.0]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b]


@st.composite
def conditional_programs(draw):
    """A small DAG over three 3x3 inputs of elementwise steps, products and ifelses on two
    conditions (an ifelse of ifelses nests them); each step reads earlier values, so a value
    is read inside and outside branches; some values are outputs."""
    steps = []
    n_values = 3
    for _ in range(draw(st.integers(2, 9))):
        kind = draw(st.sampled_from(["unary", "binary", "dot", "ifelse", "ifelse"]))
        operands = [draw(st.integers(0, n_values - 1)) for _ in range(2)]
        steps.append((kind, operands, draw(st.integers(0, 3))))
        n_values += 1
    outputs = draw(st.lists(st.integers(3, n_values - 1), min_size=1, max_size=3, unique=True))
    return steps, outputs


def build(steps, outputs, variables, conditions):
    values = list(variables)
    for kind, (first, second), choice in steps:
        if kind == "unary":
            values.append(UNARY[choice](values[first]))
        elif kind == "binary":
            values.append(BINARY[choice % len(BINARY)](values[first], values[second]))
        elif kind == "dot":
            values.append(T.dot(values[first], values[second]) + values[choice % 3])
        else:
            # The branches are new nodes (a reader and a candidate for inplace) so that each
            # branch has work of its own.
            values.append(ifelse(conditions[choice % 2], values[first] * 3.0,
                                 T.exp(values[second]) - 1.0))
    return [values[index] for index in outputs]


def check_against_the_unrewritten_program(program, mode: Mode) -> None:
    steps, output_indexes = program
    variables = [T.dmatrix(name) for name in "abc"]
    conditions = [T.iscalar("first"), T.iscalar("second")]
    outputs = build(steps, output_indexes, variables, conditions)
    inputs = [*conditions, *(In(variable, mutable=True) for variable in variables)]
    f = sympile.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    reference = sympile.function([*conditions, *variables], outputs, mode=NO_REWRITE,
                                 on_unused_input="ignore")
    values = [random(3, 3, seed=seed) for seed in range(3)]
    for flags in [(1, 1), (1, 0), (0, 1), (0, 0)]:
        expected = reference(*flags, *values)
        actual = f(*flags, *[value.copy() for value in values])
        # A wrong schedule or an input overwritten too early is off by O(1). Chains of up to
        # nine exp/sin/tanh, whose arguments exp can make large, amplify the 1-4 ulp by
        # which numpy's vectorised functions, fused scalar code and C differ: 2.8e-12 seen.
        for got, wanted in zip(actual, expected):
            np.testing.assert_allclose(got, wanted, rtol=1e-9)


# About a third of these programs have a schedule the rule between branches changes.
@settings(max_examples=60, deadline=None)
@given(conditional_programs())
def test_random_conditional_programs_compute_the_unrewritten_values(program):
    check_against_the_unrewritten_program(program, INPLACE)


@pytest.mark.slow
@pytest.mark.skipif(not compiler_available(), reason="no C compiler (config.cxx)")
@settings(max_examples=12, deadline=None)
@given(conditional_programs())
def test_random_conditional_programs_on_the_c_backend(program):
    check_against_the_unrewritten_program(program, C_MODE)
