"""Tests of sympile/graph/rewriting/basic.py: node rewriters, walks, equilibrium, history.

Graph-layer tests: the small float Type and ops of tests/graph/test_basic.py, no tensors.
"""

from __future__ import annotations

import pytest

from sympile.graph.basic import Apply
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    RewriteCycleError,
    RewriteHistory,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    apply_node_rewriter,
    in2out,
    node_rewriter,
    out2in,
)
from tests.graph.test_basic import Add, Mul, MyType, OtherType, Scale, add, evaluate, mul
from tests.graph.test_fgraph import Veto


@node_rewriter([Scale(1.0)])
def remove_scale_by_one(fgraph, node):
    """Scale(1)(x) -> x"""
    return [node.inputs[0]]


@node_rewriter([Scale])
def combine_scales(fgraph, node):
    """Scale(a)(Scale(b)(x)) -> Scale(a * b)(x)"""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, Scale):
        return None
    return [Scale(node.op.factor * inner.op.factor)(inner.inputs[0])]


@node_rewriter([Add])
def add_self_to_scale(fgraph, node):
    """x + x -> Scale(2)(x)"""
    a, b = node.inputs
    if a is not b:
        return None
    return {node.outputs[0]: Scale(2.0)(a)}


def op_names(fgraph: FunctionGraph) -> list[str]:
    return [str(node.op) for node in fgraph.toposort()]


def test_node_rewriter_decorator_names_and_tracks():
    assert isinstance(remove_scale_by_one, NodeRewriter)
    assert remove_scale_by_one.name == "remove_scale_by_one"
    assert str(remove_scale_by_one) == "remove_scale_by_one"
    assert remove_scale_by_one.__doc__ == "Scale(1)(x) -> x"
    assert remove_scale_by_one.tracks() == (Scale(1.0),)
    # An op instance matches by equality, an op class by isinstance.
    assert remove_scale_by_one.applies_to(Scale(1.0))
    assert not remove_scale_by_one.applies_to(Scale(2.0))
    assert combine_scales.applies_to(Scale(7.0)) and not combine_scales.applies_to(add)
    everything = node_rewriter(None, name="anything")(lambda fgraph, node: None)
    assert everything.name == "anything" and everything.applies_to(mul)
    with pytest.raises(TypeError, match="tracks must list Ops or Op classes, got 'add'"):
        node_rewriter(["add"])


def test_in2out_removes_a_chain_and_keeps_values():
    x = MyType()("x")
    y = add(Scale(1.0)(Scale(1.0)(x)), Scale(3.0)(Scale(1.0)(x)))
    fgraph = FunctionGraph([x], [y])
    assert in2out(remove_scale_by_one).apply(fgraph) is True
    assert op_names(fgraph) == ["Scale{factor=3.0}", "Add"]
    fgraph.check_integrity()
    assert evaluate(fgraph.outputs, {fgraph.inputs[0]: 2.0}) == [8.0]
    # Nothing is left to rewrite.
    assert in2out(remove_scale_by_one).apply(fgraph) is False
    # The user's graph is not the one rewritten.
    assert isinstance(y.owner.inputs[0].owner.op, Scale)


def test_walk_orders_and_new_nodes_are_visited():
    x = MyType()("x")
    y = Scale(2.0)(Scale(3.0)(Scale(5.0)(x)))
    visits: dict[str, list[float]] = {"in_to_out": [], "out_to_in": []}
    for order in ("in_to_out", "out_to_in"):
        @node_rewriter([Scale], name="spy")
        def spy(fgraph, node, order=order):
            visits[order].append(node.op.factor)

        WalkingGraphRewriter(spy, order=order).apply(FunctionGraph([x], [y]))
    assert visits == {"in_to_out": [5.0, 3.0, 2.0], "out_to_in": [2.0, 3.0, 5.0]}
    # The node combine_scales creates is visited in the same pass and combined again.
    fgraph = FunctionGraph([x], [y])
    in2out(combine_scales).apply(fgraph)
    assert op_names(fgraph) == ["Scale{factor=30.0}"]
    fgraph = FunctionGraph([x], [y])
    out2in(combine_scales).apply(fgraph)
    assert op_names(fgraph) == ["Scale{factor=30.0}"]
    with pytest.raises(ValueError, match="order must be 'in_to_out' or 'out_to_in'"):
        WalkingGraphRewriter(spy, order="sideways")
    with pytest.raises(TypeError, match="is not a NodeRewriter"):
        in2out(lambda fgraph, node: None)


def test_several_rewriters_are_tried_in_turn():
    x = MyType()("x")
    fgraph = FunctionGraph([x], [Scale(4.0)(add(x, x))])
    in2out(remove_scale_by_one, add_self_to_scale, combine_scales).apply(fgraph)
    assert op_names(fgraph) == ["Scale{factor=8.0}"]
    assert evaluate(fgraph.outputs, {fgraph.inputs[0]: 1.5}) == [12.0]


def test_transform_results_are_checked():
    x = MyType()("x")
    node = Scale(1.0)(x).owner

    @node_rewriter([Scale])
    def too_many(fgraph, node):
        return [x, x]

    @node_rewriter([Scale])
    def not_a_variable(fgraph, node):
        return [1.0]

    @node_rewriter([Scale])
    def wrong_type(fgraph, node):
        return [OtherType()("z")]

    @node_rewriter([Scale])
    def a_string(fgraph, node):
        return "x"

    fgraph = FunctionGraph([x], [node.outputs[0]], clone=False)
    with pytest.raises(ValueError, match="too_many: returned 2 replacements for .* 1 outputs"):
        apply_node_rewriter(fgraph, too_many, node)
    with pytest.raises(TypeError, match="not_a_variable: the replacement of .* is 1.0"):
        apply_node_rewriter(fgraph, not_a_variable, node)
    with pytest.raises(TypeError, match="wrong_type: cannot replace .* by z of type OtherType"):
        apply_node_rewriter(fgraph, wrong_type, node)
    with pytest.raises(TypeError, match="a_string: transform returned 'x'"):
        apply_node_rewriter(fgraph, a_string, node)
    assert fgraph.apply_nodes == {node}


def test_more_specific_replacement_type_is_accepted_and_none_keeps_an_output():
    x = MyType()("x")
    y = Scale(2.0)(x)

    @node_rewriter([Scale])
    def to_positive_constant(fgraph, node):
        return [MyType(positive=True).make_constant(4.0)]

    fgraph = FunctionGraph([x], [y])
    assert apply_node_rewriter(fgraph, to_positive_constant, fgraph.outputs[0].owner)
    assert fgraph.outputs[0].type == MyType(positive=True) and fgraph.apply_nodes == set()

    @node_rewriter([Scale])
    def keep(fgraph, node):
        return [None]

    fgraph = FunctionGraph([x], [y])
    assert not apply_node_rewriter(fgraph, keep, fgraph.outputs[0].owner)


def test_a_vetoed_change_is_rolled_back():
    x = MyType()("x")
    fgraph = FunctionGraph([x], [add(x, x)])
    veto = Veto(Scale(2.0))
    fgraph.attach_feature(veto)
    history = RewriteHistory()
    fgraph.attach_feature(history)
    before = op_names(fgraph)
    assert in2out(add_self_to_scale).apply(fgraph) is False
    assert op_names(fgraph) == before and veto.calls == 1
    assert history.records == []
    fgraph.check_integrity()


def test_equilibrium_reaches_a_fixed_point():
    x = MyType()("x")
    y = Scale(1.0)(mul(Scale(2.0)(add(x, x)), Scale(0.5)(Scale(2.0)(x))))
    fgraph = FunctionGraph([x], [y])
    rewriter = EquilibriumGraphRewriter([remove_scale_by_one, combine_scales,
                                         add_self_to_scale])
    assert rewriter.apply(fgraph) is True
    # Scale(0.5)(Scale(2)(x)) -> Scale(1)(x) -> x; Scale(2)(x + x) -> Scale(2)(Scale(2)(x)) ->
    # Scale(4)(x): each rewrite enables the next.
    assert op_names(fgraph) == ["Scale{factor=4.0}", "Mul"]
    assert evaluate(fgraph.outputs, {fgraph.inputs[0]: 3.0}) == \
        evaluate([y], {x: 3.0}) == [36.0]
    assert rewriter.apply(fgraph) is False


def test_equilibrium_runs_graph_rewriters_until_they_stop():
    class CountDown(GraphRewriter):
        """Changes nothing but claims a change the first `rounds` times."""
        name = "count_down"

        def __init__(self, rounds):
            self.rounds = rounds

        def apply(self, fgraph):
            self.rounds -= 1
            return self.rounds >= 0

    count_down = CountDown(3)
    x = MyType()("x")
    EquilibriumGraphRewriter([count_down]).apply(FunctionGraph([x], [add(x, x)]))
    assert count_down.rounds == -1
    with pytest.raises(RewriteCycleError, match=r"count_down changed the graph 11 times"):
        EquilibriumGraphRewriter([CountDown(100)], max_use_ratio=10).apply(
            FunctionGraph([x], [add(x, x)]))
    with pytest.raises(TypeError, match="neither a NodeRewriter nor a GraphRewriter"):
        EquilibriumGraphRewriter([print])
    with pytest.raises(ValueError, match="max_use_ratio must be > 0"):
        EquilibriumGraphRewriter([count_down], max_use_ratio=0)


def test_equilibrium_bound_names_the_rewriters_of_a_cycle():
    @node_rewriter([Add])
    def add_to_mul(fgraph, node):
        return [mul(*node.inputs)]

    @node_rewriter([Mul])
    def mul_to_add(fgraph, node):
        return [add(*node.inputs)]

    x, z = MyType()("x"), MyType()("z")
    fgraph = FunctionGraph([x, z], [add(x, z)])
    with pytest.raises(RewriteCycleError,
                       match=r"did not converge.*more than max_use_ratio \(3\).*kept firing: "
                             r"add_to_mul \(\d+ times\), mul_to_add \(\d+ times\).*cycle"):
        EquilibriumGraphRewriter([add_to_mul, mul_to_add], max_use_ratio=3).apply(fgraph)
    # Every change went through replace_all: the graph is still consistent.
    fgraph.check_integrity()


def test_walk_bound_stops_a_rewriter_that_keeps_growing_the_graph():
    @node_rewriter([Scale])
    def wrap(fgraph, node):
        return [Scale(node.op.factor)(Scale(1.0)(node.inputs[0]))]

    x = MyType()("x")
    with pytest.raises(RewriteCycleError, match="wrap changed the graph 6 times"):
        in2out(wrap, max_use_ratio=5).apply(FunctionGraph([x], [Scale(2.0)(x)]))


def test_history_records_each_change():
    x = MyType()("x")
    fgraph = FunctionGraph([x], [Scale(3.0)(Scale(1.0)(add(x, x)))])
    history = RewriteHistory()
    fgraph.attach_feature(history)
    assert fgraph.rewrite_history is history
    old_add = fgraph.outputs[0].owner.inputs[0].owner.inputs[0].owner
    EquilibriumGraphRewriter([remove_scale_by_one, add_self_to_scale, combine_scales]).apply(
        fgraph)
    assert history.names() == ["add_self_to_scale", "remove_scale_by_one", "combine_scales"]
    first = history.records[0]
    assert first.node is old_add and first.old == tuple(old_add.outputs)
    assert isinstance(first.new[0].owner, Apply) and first.new[0].owner.op == Scale(2.0)
    text = str(history).splitlines()
    assert text[0].startswith("add_self_to_scale: Add(x, x): ")
    assert len(text) == 3
    with pytest.raises(ValueError, match="already has a rewrite history"):
        fgraph.attach_feature(RewriteHistory())
    fgraph.remove_feature(history)
    assert fgraph.rewrite_history is None


def test_sequential_graph_rewriter():
    x = MyType()("x")
    fgraph = FunctionGraph([x], [Scale(2.0)(Scale(1.0)(x))])
    sequence = SequentialGraphRewriter([in2out(combine_scales), in2out(remove_scale_by_one)],
                                       name="both")
    assert str(sequence) == "both"
    assert sequence(fgraph) is True
    assert op_names(fgraph) == ["Scale{factor=2.0}"]
    with pytest.raises(TypeError, match="is not a GraphRewriter"):
        SequentialGraphRewriter([combine_scales])


def test_a_walk_tries_on_each_node_exactly_the_rewriters_that_apply_to_it():
    """The walk looks its rewriters up by op type (_Dispatch): it must try the same ones, in
    the same order, as asking each rewriter's applies_to."""

    class Twice(Scale):
        """A subclass of a tracked class."""

    class LooseScale(Scale):
        """Equal to any Scale of its factor: an __eq__ of its own across types."""

        def __eq__(self, other):
            return isinstance(other, Scale) and other.factor == self.factor

        __hash__ = Scale.__hash__

    tried: list[tuple[str, str]] = []

    def spy(name, tracks):
        @node_rewriter(tracks, name=name)
        def rewriter(fgraph, node):
            tried.append((name, str(node.op)))
        return rewriter

    class OddFactors(NodeRewriter):
        """Overrides applies_to: asked for every node."""

        def applies_to(self, op):
            return isinstance(op, Scale) and op.factor % 2 == 1

        def transform(self, fgraph, node):
            tried.append(("odd", str(node.op)))

    rewriters = [spy("every", None), spy("scales", [Scale]), spy("one", [Scale(1.0)]),
                 spy("loose three", [LooseScale(3.0)]), OddFactors(), spy("adds", [add])]
    x = MyType()("x")
    y = add(Twice(1.0)(Scale(3.0)(Scale(1.0)(x))), Scale(2.0)(x))
    fgraph = FunctionGraph([x], [y])
    expected = [(str(r), str(node.op)) for node in fgraph.toposort() for r in rewriters
                if r.applies_to(node.op)]
    in2out(*rewriters).apply(fgraph)
    assert [(name.replace("OddFactors", "odd"), op) for name, op in expected] == tried
    assert ("loose three", "Scale{factor=3.0}") in tried
    # Op's equality holds within a type only: Twice(1) is not Scale(1), but it is a Scale.
    assert ("one", "Twice{factor=1.0}") not in tried and ("odd", "Twice{factor=1.0}") in tried
    assert not any(name == "one" and op == "Scale{factor=2.0}" for name, op in tried)
