"""Tests of sympile/graph/fgraph.py: FunctionGraph bookkeeping, replace, features."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from sympile.graph.basic import Apply, Constant, Variable, equal_computations, toposort
from sympile.graph.fgraph import (
    OUTPUT,
    Feature,
    FunctionGraph,
    InconsistencyError,
    MissingInputError,
)
from tests.graph.test_basic import (
    DEEP,
    MyType,
    OtherType,
    Scale,
    add,
    assert_topological,
    chain,
    evaluate,
    mul,
    next_line_site,
    site_of,
    two_outputs,
)


class Recorder(Feature):
    """Records every callback with its arguments."""

    def __init__(self):
        self.events: list[tuple] = []

    def on_attach(self, fgraph):
        self.events.append(("attach", fgraph))

    def on_detach(self, fgraph):
        self.events.append(("detach", fgraph))

    def on_import(self, fgraph, node, reason):
        self.events.append(("import", node, reason))

    def on_prune(self, fgraph, node, reason):
        self.events.append(("prune", node, reason))

    def on_change_input(self, fgraph, node, index, old, new, reason):
        self.events.append(("change", node, index, old, new, reason))

    def of_kind(self, kind: str) -> list[tuple]:
        return [event for event in self.events if event[0] == kind]


class Veto(Feature):
    """Rejects every graph in which `forbidden` computes something."""

    def __init__(self, forbidden: Any):
        self.forbidden = forbidden
        self.calls = 0

    def validate(self, fgraph):
        self.calls += 1
        if any(node.op == self.forbidden for node in fgraph.apply_nodes):
            raise InconsistencyError(f"{self.forbidden} is not allowed")


def snapshot(fgraph: FunctionGraph) -> tuple:
    """Everything a rolled-back change must restore (the order of a variable's clients is
    not part of it)."""
    return (list(fgraph.inputs), list(fgraph.outputs), set(fgraph.apply_nodes),
            set(fgraph.variables), {v: Counter(c) for v, c in fgraph.clients.items()},
            {node: list(node.inputs) for node in fgraph.apply_nodes})


def build():
    """The user's graph out = (x * y) + z and an fgraph of it (a clone, unless said)."""
    x, y, z = MyType()("x"), MyType()("y"), MyType()("z")
    m = mul(x, y, name="m")
    out = add(m, z, name="out")
    return x, y, z, m, out


def fgraph_of(*, clone: bool = False, features=None):
    x, y, z, m, out = build()
    fgraph = FunctionGraph([x, y, z], [out], features=features, clone=clone)
    fgraph.check_integrity()
    return fgraph, x, y, z, m, out


# -- construction -------------------------------------------------------------------------------

def test_clones_by_default_and_leaves_the_users_graph_alone():
    x, y, z, m, out = build()
    fgraph = FunctionGraph([x, y, z], [out])
    fgraph.check_integrity()
    assert not set(fgraph.inputs) & {x, y, z} and fgraph.outputs[0] is not out
    assert [v.name for v in fgraph.inputs] == ["x", "y", "z"]
    assert not fgraph.apply_nodes & {m.owner, out.owner}
    assert equal_computations(fgraph.outputs, [out], fgraph.inputs, [x, y, z])
    new_m = fgraph.outputs[0].owner.inputs[0]
    fgraph.replace(new_m, fgraph.inputs[0])
    fgraph.check_integrity()
    assert out.owner.inputs == [m, z] and m.owner.inputs == [x, y]
    assert toposort(out) == [m.owner, out.owner]


def test_clone_false_uses_the_given_variables():
    fgraph, x, y, z, m, out = fgraph_of()
    assert fgraph.inputs == [x, y, z] and fgraph.outputs == [out]
    assert fgraph.apply_nodes == {m.owner, out.owner}


def test_bookkeeping_after_import():
    fgraph, x, y, z, m, out = fgraph_of()
    assert fgraph.variables == {x, y, z, m, out}
    assert fgraph.clients[x] == [(m.owner, 0)] and fgraph.clients[y] == [(m.owner, 1)]
    assert fgraph.clients[m] == [(out.owner, 0)] and fgraph.clients[z] == [(out.owner, 1)]
    assert fgraph.clients[out] == [(OUTPUT, 0)] and OUTPUT == "output"
    assert fgraph.toposort() == [m.owner, out.owner]
    assert str(fgraph) == "FunctionGraph(Mul(x, y), Add(m, z))"


def test_clients_of_shared_outputs_inputs_and_constants():
    x, y = MyType()("x"), MyType()("y")
    c = MyType().make_constant(2.0)
    twice = add(x, x)
    scaled = mul(twice, c)
    unused = MyType()("unused")
    fgraph = FunctionGraph([x, y, unused], [scaled, twice, y, c, scaled], clone=False)
    fgraph.check_integrity()
    assert fgraph.clients[x] == [(twice.owner, 0), (twice.owner, 1)]
    assert fgraph.clients[twice] == [(scaled.owner, 0), (OUTPUT, 1)]
    assert fgraph.clients[scaled] == [(OUTPUT, 0), (OUTPUT, 4)]
    assert fgraph.clients[y] == [(OUTPUT, 2)] and fgraph.clients[unused] == []
    assert fgraph.clients[c] == [(scaled.owner, 1), (OUTPUT, 3)]
    assert c in fgraph.variables and unused in fgraph.variables


def test_constants_are_shared_by_the_clone():
    x = MyType()("x")
    c = MyType().make_constant(2.0)
    fgraph = FunctionGraph([x], [add(x, c)])
    assert fgraph.outputs[0].owner.inputs[1] is c


def test_bad_inputs_are_rejected():
    x, y, z, m, out = build()
    with pytest.raises(ValueError, match="input 0 .m. is computed by Mul; inputs must have no"):
        FunctionGraph([m, z], [out])
    with pytest.raises(ValueError, match="an input is listed twice"):
        FunctionGraph([x, y, z, x], [out])
    with pytest.raises(TypeError, match="input 1 .2.0. is a constant"):
        FunctionGraph([x, MyType().make_constant(2.0)], [out])
    with pytest.raises(TypeError, match="input 0 is 'x', expected a Variable"):
        FunctionGraph(["x"], [out])
    with pytest.raises(TypeError, match="output 0 is 1.0, expected a Variable"):
        FunctionGraph([x], [1.0])
    fgraph = FunctionGraph([x, y, z], [out], clone=False)
    with pytest.raises(ValueError, match="already in the graph"):
        fgraph.add_input(x)
    with pytest.raises(ValueError, match="inputs must have no owner"):
        fgraph.add_input(m)


def test_missing_input_error_names_the_variable_and_where_it_was_created():
    x = MyType()("x")
    site = next_line_site()
    hidden = MyType()("hidden")
    out = add(x, hidden)
    with pytest.raises(MissingInputError) as info:
        FunctionGraph([x], [out])
    message = str(info.value)
    assert "depends on hidden" in message and "MyType(positive=False)" in message
    assert info.value.variable is hidden
    created_at = message.split("created at ")[1].split(")")[0]
    assert site_of(created_at) == site
    assert isinstance(info.value, ValueError)
    with pytest.raises(MissingInputError, match="depends on hidden"):
        FunctionGraph([x], [hidden])


# -- replace ------------------------------------------------------------------------------------

def test_replace_an_input_use_with_another_input():
    fgraph, x, y, z, m, _out = fgraph_of()
    fgraph.replace(x, z, reason="test")
    fgraph.check_integrity()
    assert m.owner.inputs == [z, y] and fgraph.clients[x] == []
    assert x in fgraph.variables, "an unused input stays an input"
    assert evaluate(fgraph.outputs, {x: 1.0, y: 2.0, z: 3.0}) == [9.0]


def test_replace_checks_types_and_membership():
    fgraph, x, _y, _z, m, _out = fgraph_of()
    before = snapshot(fgraph)
    with pytest.raises(TypeError, match="cannot replace m of type MyType.positive=False. by o "
                                        "of type OtherType"):
        fgraph.replace(m, OtherType()("o"))
    with pytest.raises(TypeError, match="the replacement of m is 1.0, not a Variable"):
        fgraph.replace(m, 1.0)
    positive = MyType(positive=True)
    p = positive("p")
    p_graph = FunctionGraph([p], [add(p, p)], clone=False)
    with pytest.raises(TypeError, match="cannot replace p of type MyType.positive=True. by x"):
        p_graph.replace(p, x)
    with pytest.raises(ValueError, match="is not in this graph"):
        fgraph.replace(MyType()("stranger"), x)
    with pytest.raises(TypeError, match="expected .variable, replacement. pairs"):
        fgraph.replace_all([m])
    assert snapshot(fgraph) == before


def test_replace_with_a_more_specific_type():
    fgraph, _x, _y, z, m, out = fgraph_of()
    p = MyType(positive=True).make_constant(2.0)
    fgraph.replace(m, p)
    fgraph.check_integrity()
    assert out.owner.inputs == [p, z] and m.owner not in fgraph.apply_nodes


def test_replace_a_variable_by_itself_changes_nothing():
    recorder = Recorder()
    fgraph, _x, _y, _z, m, _out = fgraph_of(features=[recorder])
    before, events = snapshot(fgraph), len(recorder.events)
    fgraph.replace(m, m)
    assert snapshot(fgraph) == before and len(recorder.events) == events


def test_replace_with_a_new_subgraph_imports_its_nodes():
    recorder = Recorder()
    fgraph, x, y, z, m, _out = fgraph_of(features=[recorder])
    c = MyType().make_constant(10.0)
    new = add(mul(y, c), x)
    fgraph.replace(m, new, reason="rewrite")
    fgraph.check_integrity()
    assert {new.owner, new.owner.inputs[0].owner} <= fgraph.apply_nodes
    assert c in fgraph.variables and fgraph.clients[c] == [(new.owner.inputs[0].owner, 1)]
    imported = [event[1] for event in recorder.of_kind("import") if event[2] == "rewrite"]
    assert imported == [new.owner.inputs[0].owner, new.owner], "in topological order"
    assert evaluate(fgraph.outputs, {x: 1.0, y: 2.0, z: 3.0}) == [24.0]


def test_a_new_replacement_takes_the_replaced_variables_line():
    """A rewrite builds its replacement far from the user's code: the replacement then names
    the line of the variable it replaces in errors. A variable the graph had keeps its own."""
    fgraph, x, y, _z, m, _out = fgraph_of()
    new = add(y, x)
    assert new.tag.trace != m.tag.trace
    fgraph.replace(m, new)
    assert new.tag.trace == m.tag.trace
    fgraph, x, y, _z, m, _out = fgraph_of()
    own = y.tag.trace
    fgraph.replace(m, y)
    assert y.tag.trace == own


def test_replace_prunes_nodes_that_lose_all_clients():
    recorder = Recorder()
    x, y, z = MyType()("x"), MyType()("y"), MyType()("z")
    c = MyType().make_constant(3.0)
    inner = mul(x, c)
    middle = add(inner, y)
    out = add(middle, z)
    fgraph = FunctionGraph([x, y, z], [out], features=[recorder], clone=False)
    fgraph.replace(middle, x, reason="simplify")
    fgraph.check_integrity()
    assert fgraph.apply_nodes == {out.owner}
    assert fgraph.variables == {x, y, z, out}
    assert inner not in fgraph.clients and c not in fgraph.clients, "pruned with their nodes"
    pruned = [(event[1], event[2]) for event in recorder.of_kind("prune")]
    assert pruned == [(middle.owner, "simplify"), (inner.owner, "simplify")]


def test_replace_keeps_nodes_that_other_clients_still_use():
    x, y = MyType()("x"), MyType()("y")
    shared = mul(x, y)
    first, second = add(shared, x), add(shared, y)
    fgraph = FunctionGraph([x, y], [first, second], clone=False)
    fgraph.change_node_input(first.owner, 0, y)
    fgraph.check_integrity()
    assert shared.owner in fgraph.apply_nodes and fgraph.clients[shared] == [(second.owner, 0)]


def test_replace_one_output_of_a_multi_output_node():
    x = MyType()("x")
    first, second = two_outputs(x)
    out = add(first, second)
    fgraph = FunctionGraph([x], [out], clone=False)
    fgraph.replace(first, x)
    fgraph.check_integrity()
    assert first.owner in fgraph.apply_nodes, "its other output is still used"
    fgraph.replace(second, x)
    fgraph.check_integrity()
    assert fgraph.apply_nodes == {out.owner}


def test_replace_an_output():
    recorder = Recorder()
    fgraph, x, y, _z, m, out = fgraph_of(features=[recorder])
    fgraph.replace(out, m, reason="output")
    fgraph.check_integrity()
    assert fgraph.outputs == [m] and fgraph.clients[m] == [(OUTPUT, 0)]
    assert fgraph.apply_nodes == {m.owner} and out not in fgraph.variables
    assert recorder.of_kind("change") == [("change", OUTPUT, 0, out, m, "output")]
    fgraph.replace(m, x)
    fgraph.check_integrity()
    assert fgraph.outputs == [x] and fgraph.apply_nodes == set()
    assert fgraph.clients[x] == [(OUTPUT, 0)] and fgraph.clients[y] == []


def test_replace_a_variable_used_twice_by_one_node():
    x, y = MyType()("x"), MyType()("y")
    m = mul(x, y)
    out = add(m, m)
    fgraph = FunctionGraph([x, y], [out], clone=False)
    fgraph.replace(m, y)
    fgraph.check_integrity()
    assert out.owner.inputs == [y, y] and fgraph.clients[y] == [(out.owner, 0), (out.owner, 1)]
    assert m.owner not in fgraph.apply_nodes


def test_replace_by_a_function_of_the_replaced_variable():
    # x -> f(x): every former client of m uses f(m), and f itself keeps using m (no cycle).
    fgraph, x, y, z, m, out = fgraph_of()
    other = mul(m, z)
    fgraph.add_output(other)
    wrapped = Scale(2.0)(m)
    fgraph.replace(m, wrapped)
    fgraph.check_integrity()
    assert wrapped.owner.inputs == [m] and fgraph.clients[m] == [(wrapped.owner, 0)]
    assert out.owner.inputs[0] is wrapped and other.owner.inputs[0] is wrapped
    assert_topological(fgraph.toposort())
    assert evaluate(fgraph.outputs, {x: 1.0, y: 2.0, z: 3.0}) == [7.0, 12.0]


def test_replace_an_input_or_an_output_by_a_function_of_itself():
    fgraph, x, y, z, m, out = fgraph_of()
    shifted = add(x, 1.0)
    fgraph.replace(x, shifted)
    fgraph.check_integrity()
    assert m.owner.inputs[0] is shifted and shifted.owner.inputs[0] is x
    wrapped = Scale(3.0)(out)
    fgraph.replace(out, wrapped)
    fgraph.check_integrity()
    assert fgraph.outputs == [wrapped] and fgraph.clients[out] == [(wrapped.owner, 0)]
    assert evaluate(fgraph.outputs, {x: 1.0, y: 2.0, z: 3.0}) == [21.0]


def test_replace_by_a_variable_already_in_the_graph_merges():
    x, y = MyType()("x"), MyType()("y")
    first, second = mul(x, y), mul(x, y)
    out = add(first, second)
    fgraph = FunctionGraph([x, y], [out], clone=False)
    fgraph.replace(second, first, reason="merge")
    fgraph.check_integrity()
    assert out.owner.inputs == [first, first] and second.owner not in fgraph.apply_nodes
    assert len(fgraph.apply_nodes) == 2


def test_replace_with_a_missing_input_changes_nothing():
    fgraph, x, y, _z, m, _out = fgraph_of()
    before = snapshot(fgraph)
    hidden = MyType()("hidden")
    with pytest.raises(MissingInputError, match="depends on hidden"):
        fgraph.replace(m, add(x, mul(y, hidden)))
    assert snapshot(fgraph) == before
    fgraph.check_integrity()


def test_replace_all():
    fgraph, x, y, z, m, out = fgraph_of()
    other = add(x, y)
    fgraph.add_output(other)
    fgraph.replace_all([(m, z), (other, m)], reason="several")
    fgraph.check_integrity()
    assert out.owner.inputs == [z, z] and fgraph.outputs == [out, m]
    assert evaluate(fgraph.outputs, {x: 2.0, y: 3.0, z: 4.0}) == [8.0, 6.0]


def test_replace_all_applies_pairs_in_turn():
    fgraph, x, y, z, m, _out = fgraph_of()
    fgraph.replace_all([(x, y), (y, z)])
    fgraph.check_integrity()
    assert m.owner.inputs == [z, z]


def test_replace_all_skips_a_variable_an_earlier_pair_pruned():
    fgraph, x, y, _z, m, out = fgraph_of()
    fgraph.replace_all([(out, x), (m, y)])
    fgraph.check_integrity()
    assert fgraph.outputs == [x] and fgraph.apply_nodes == set()


def test_change_node_input():
    recorder = Recorder()
    fgraph, x, _y, z, m, out = fgraph_of(features=[recorder])
    fgraph.change_node_input(out.owner, 1, x, reason="direct")
    fgraph.check_integrity()
    assert out.owner.inputs == [m, x] and fgraph.clients[z] == []
    assert recorder.of_kind("change") == [("change", out.owner, 1, z, x, "direct")]
    fgraph.change_node_input(OUTPUT, 0, m)
    fgraph.check_integrity()
    assert fgraph.outputs == [m] and out.owner not in fgraph.apply_nodes
    with pytest.raises(ValueError, match="is not in this graph"):
        fgraph.change_node_input(out.owner, 0, x)
    with pytest.raises(TypeError, match="cannot replace"):
        fgraph.change_node_input(OUTPUT, 0, OtherType()())


# -- features -----------------------------------------------------------------------------------

def test_features_given_at_construction_see_every_import():
    recorder = Recorder()
    fgraph, _x, _y, _z, m, out = fgraph_of(features=[recorder])
    assert recorder.events[0] == ("attach", fgraph)
    assert recorder.of_kind("import") == [("import", m.owner, "init"),
                                          ("import", out.owner, "init")]
    assert fgraph.features == [recorder]


def test_attach_and_remove_feature():
    fgraph, x, y, _z, _m, _out = fgraph_of()
    recorder = Recorder()
    fgraph.attach_feature(recorder)
    fgraph.attach_feature(recorder)
    assert recorder.events == [("attach", fgraph)] and fgraph.features == [recorder]
    fgraph.remove_feature(recorder)
    assert recorder.events[-1] == ("detach", fgraph) and fgraph.features == []
    fgraph.replace(x, y)
    assert recorder.events[-1] == ("detach", fgraph), "a removed feature hears nothing"
    with pytest.raises(ValueError, match="is not attached"):
        fgraph.remove_feature(recorder)


def test_a_feature_that_fails_to_attach_is_not_attached():
    class Refuses(Feature):
        def on_attach(self, fgraph):
            raise InconsistencyError("not this graph")

    fgraph, *_ = fgraph_of()
    with pytest.raises(InconsistencyError, match="not this graph"):
        fgraph.attach_feature(Refuses())
    assert fgraph.features == []


def test_callbacks_get_the_right_arguments():
    recorder = Recorder()
    fgraph, x, _y, z, m, out = fgraph_of(features=[recorder])
    del recorder.events[:]
    new = mul(x, z)
    fgraph.replace(m, new, reason="swap")
    assert recorder.events == [
        ("import", new.owner, "swap"),
        ("prune", m.owner, "swap"),
        ("change", out.owner, 0, m, new, "swap"),
    ]


def test_a_feature_without_callbacks_is_fine():
    class Plain:
        """Not a Feature subclass: it has no callbacks at all."""

    fgraph, x, _y, _z, m, _out = fgraph_of(features=[Plain()])
    fgraph.replace(m, x)
    fgraph.check_integrity()


def test_veto_rolls_back_and_reraises():
    recorder, veto = Recorder(), Veto(Scale(2.0))
    fgraph, x, y, z, m, _out = fgraph_of(features=[recorder, veto])
    fgraph.add_output(mul(m, m))
    fgraph.check_integrity()
    before = snapshot(fgraph)
    del recorder.events[:]
    with pytest.raises(InconsistencyError, match="Scale.factor=2.0. is not allowed"):
        fgraph.replace_all([(m, Scale(2.0)(x)), (z, y)], reason="bad")
    assert snapshot(fgraph) == before
    fgraph.check_integrity()
    reasons = {event[-1] for event in recorder.events}
    assert reasons == {"bad", "revert bad"}
    fgraph.replace(m, Scale(3.0)(x))
    fgraph.check_integrity()
    assert veto.calls == 2
    fgraph.replace(x, Scale(2.0)(y), validate=False)
    fgraph.check_integrity()
    assert veto.calls == 2, "validate=False does not validate"
    assert any(node.op == Scale(2.0) for node in fgraph.apply_nodes)


def test_veto_of_an_output_replacement_that_pruned_the_graph_rolls_back():
    veto = Veto(Scale(2.0))
    fgraph, x, _y, _z, _m, out = fgraph_of(features=[veto])
    before = snapshot(fgraph)
    with pytest.raises(InconsistencyError):
        fgraph.replace(out, Scale(2.0)(x))
    assert snapshot(fgraph) == before
    fgraph.check_integrity()


def test_an_error_in_a_callback_rolls_back():
    class Fails(Feature):
        def on_change_input(self, fgraph, node, index, old, new, reason):
            if reason == "boom":
                raise RuntimeError("callback failed")

    fgraph, x, _y, _z, m, _out = fgraph_of(features=[Fails()])
    before = snapshot(fgraph)
    with pytest.raises(RuntimeError, match="callback failed"):
        fgraph.replace(m, x, reason="boom")
    assert snapshot(fgraph) == before
    fgraph.check_integrity()


# -- integrity, copies, deep graphs -------------------------------------------------------------

def test_check_integrity_catches_corruption():
    fgraph, x, y, z, m, out = fgraph_of()
    fgraph.clients[x].append((out.owner, 0))
    with pytest.raises(AssertionError, match="clients of x"):
        fgraph.check_integrity()
    fgraph, x, y, z, m, out = fgraph_of()
    fgraph.apply_nodes.add(add(x, y).owner)
    with pytest.raises(AssertionError, match="apply_nodes out of date"):
        fgraph.check_integrity()
    fgraph, x, y, z, m, out = fgraph_of()
    m.owner.inputs[0] = out
    with pytest.raises(AssertionError, match="cycle"):
        fgraph.check_integrity()
    fgraph, x, y, z, m, out = fgraph_of()
    fgraph.variables.discard(z)
    with pytest.raises(AssertionError, match="variables out of date"):
        fgraph.check_integrity()


def test_fgraph_clone_is_independent():
    fgraph, _x, _y, _z, _m, out = fgraph_of()
    copy = fgraph.clone()
    copy.check_integrity()
    assert not copy.apply_nodes & fgraph.apply_nodes
    assert equal_computations(copy.outputs, fgraph.outputs, copy.inputs, fgraph.inputs)
    copy.replace(copy.outputs[0], copy.inputs[0])
    assert fgraph.outputs == [out] and len(fgraph.apply_nodes) == 2


def test_deep_chain():
    x, y = MyType()("x"), MyType()("y")
    end = chain(x, DEEP)
    fgraph = FunctionGraph([x, y], [end])
    assert len(fgraph.apply_nodes) == DEEP and len(fgraph.toposort()) == DEEP
    first = next(node for node in fgraph.apply_nodes if node.inputs[0] is fgraph.inputs[0])
    fgraph.replace(fgraph.inputs[0], add(fgraph.inputs[0], fgraph.inputs[1]))
    assert first.inputs[0].owner.op == add
    fgraph.check_integrity()
    fgraph.replace(fgraph.outputs[0], fgraph.inputs[1])
    assert fgraph.apply_nodes == set() and fgraph.outputs == [fgraph.inputs[1]]
    fgraph.check_integrity()


def test_outputs_of_nodes_are_variables_of_the_graph():
    fgraph, _x, _y, _z, _m, _out = fgraph_of()
    for node in fgraph.apply_nodes:
        assert isinstance(node, Apply)
        assert all(isinstance(v, Variable) and v in fgraph.variables for v in node.outputs)
    assert not any(isinstance(v, Constant) for v in fgraph.inputs)


def test_toposort_is_kept_until_the_graph_or_the_orderings_change():
    fgraph, x, y, z, m, out = fgraph_of(clone=True)
    mul_node, add_node = fgraph.toposort()
    fgraph.toposort().reverse()  # a copy: the graph's order stays
    assert fgraph.toposort() == [mul_node, add_node]
    new_x = fgraph.inputs[0]
    scaled = Scale(2.0)(new_x)
    fgraph.replace(new_x, scaled)
    assert fgraph.toposort() == [scaled.owner, mul_node, add_node]

    class AddFirst(Feature):
        def orderings(self, fgraph):
            return {mul_node: [add_node]}

    two = FunctionGraph([x, z], [mul(x, x), add(z, z)], clone=False)
    mul_node, add_node = two.toposort()
    feature = AddFirst()
    two.attach_feature(feature)
    assert two.toposort() == [add_node, mul_node]
    two.remove_feature(feature)
    assert two.toposort() == [mul_node, add_node]
