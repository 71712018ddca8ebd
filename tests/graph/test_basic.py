"""Tests of sympile/graph/basic.py: Variable, Constant, Apply and the graph walks.

The graph layer knows nothing about tensors, so these tests (and the other tests of
sympile/graph, which import the helpers below) use a tiny Type of Python floats and a few ops.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import pytest

from sympile.graph.basic import (
    Apply,
    Constant,
    Variable,
    ancestors,
    applys_between,
    clone,
    clone_get_equiv,
    clone_replace,
    equal_computations,
    graph_inputs,
    io_toposort,
    is_in_ancestors,
    prioritized,
    toposort,
)
from sympile.graph.op import Op
from sympile.graph.type import Type

DEEP = 10_000


# -- test-only Type and Ops ---------------------------------------------------------------------

class MyType(Type):
    """Python floats; MyType(positive=True) holds only positive ones (a more specific Type)."""

    __props__ = ("positive",)

    def __init__(self, positive: bool = False):
        self.positive = positive

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        if isinstance(value, float):
            data = value
        elif strict:
            raise TypeError(f"MyType: expected a float, got {value!r}")
        elif isinstance(value, int) and not isinstance(value, bool):
            data = float(value)
        else:
            raise TypeError(f"MyType: expected a number, got {value!r}")
        if self.positive and not data > 0:
            raise TypeError(f"MyType: expected a positive float, got {data!r}")
        return data

    def is_super(self, other: Type) -> bool:
        return isinstance(other, MyType) and (not self.positive or other.positive)


class OtherType(Type):
    """A Type that MyType ops do not accept."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        return value


def as_my_variable(value: Any, op: Op) -> Variable:
    if isinstance(value, Variable):
        if not isinstance(value.type, MyType):
            raise TypeError(f"{op}: expected a MyType input, got {value.type}")
        return value
    return MyType(positive=value > 0).make_constant(value)


class BinaryOp(Op):
    """A binary op on MyType; the result is positive when both inputs are."""

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_my_variable(a, self), as_my_variable(b, self)
        positive = a.type.positive and b.type.positive
        return Apply(self, [a, b], [MyType(positive)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self.impl(*inputs)


class Add(BinaryOp):
    impl = staticmethod(lambda a, b: a + b)


class Mul(BinaryOp):
    impl = staticmethod(lambda a, b: a * b)


class Scale(Op):
    """x * factor; equal for equal factors."""

    __props__ = ("factor",)

    def __init__(self, factor: float):
        self.factor = factor

    def make_node(self, x: Any) -> Apply:
        x = as_my_variable(x, self)
        return Apply(self, [x], [MyType()()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * self.factor


class TwoOutputs(Op):
    """(x + 1, x - 1)."""

    def make_node(self, x: Any) -> Apply:
        x = as_my_variable(x, self)
        return Apply(self, [x], [MyType()(), MyType()()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + 1
        output_storage[1][0] = inputs[0] - 1


class TwoOutputsDefaultSecond(TwoOutputs):
    """TwoOutputs whose call returns the second output."""

    default_output = 1


add, mul, two_outputs = Add(), Mul(), TwoOutputs()


def evaluate(outputs: list[Variable], values: dict[Variable, float]) -> list[float]:
    """The values of `outputs` given the values of the graph's free inputs, by perform()."""
    storage: dict[Variable, float] = dict(values)
    for node in io_toposort(list(values), outputs):
        for variable in node.inputs:
            if isinstance(variable, Constant):
                storage[variable] = variable.data
        cells = [[None] for _ in node.outputs]
        node.op.perform(node, [storage[v] for v in node.inputs], cells)
        for output, cell in zip(node.outputs, cells):
            storage[output] = cell[0]
    return [v.data if isinstance(v, Constant) else storage[v] for v in outputs]


def assert_topological(order: list[Apply]) -> None:
    """Every node comes after the nodes computing its inputs, and appears once."""
    position = {id(node): i for i, node in enumerate(order)}
    assert len(position) == len(order), "a node appears twice"
    for i, node in enumerate(order):
        for variable in node.inputs:
            if variable.owner is not None and id(variable.owner) in position:
                assert position[id(variable.owner)] < i, f"{node} before its input {variable}"


def chain(x: Variable, length: int) -> Variable:
    """Scale(1)(Scale(1)(...(x))) with `length` nodes."""
    op = Scale(1.0)
    for _ in range(length):
        x = op(x)
    return x


def next_line_site() -> tuple[str, int]:
    """The caller's absolute file name and the number of the line after the call."""
    frame = inspect.currentframe().f_back
    return os.path.abspath(frame.f_code.co_filename), frame.f_lineno + 1


def site_of(trace: str) -> tuple[str, int]:
    """A 'file:line' trace as (absolute file name, line number)."""
    filename, _, number = trace.rpartition(":")
    return os.path.abspath(filename), int(number)


# -- Variable -----------------------------------------------------------------------------------

def test_variable_owner_index_and_name():
    x = MyType()("x")
    assert x.owner is None and x.index is None and x.name == "x" and str(x) == "x"
    out0, out1 = two_outputs(x)
    assert out0.owner is out1.owner and out0.owner.outputs == [out0, out1]
    assert (out0.index, out1.index) == (0, 1)
    assert out0.owner.inputs == [x]
    assert str(out0) == "TwoOutputs.0" and str(add(x, x)) == "Add.out"
    assert x.get_parents() == [] and out0.get_parents() == [out0.owner]
    assert MyType()().auto_name != MyType()().auto_name
    assert "MyType" in str(MyType()())


def test_variable_name_must_be_a_string():
    with pytest.raises(TypeError, match="name must be a string"):
        Variable(MyType(), name=3)


def test_trace_points_at_the_users_line():
    site = next_line_site()
    x = MyType()("x")
    assert site_of(x.tag.trace) == site
    assert x.creation_site() == x.tag.trace
    site = next_line_site()
    y = add(x, 1.0)
    assert site_of(y.tag.trace) == site
    site = next_line_site()
    first, second = two_outputs(x)
    assert site_of(first.tag.trace) == site and site_of(second.tag.trace) == site
    x.tag.trace = None
    assert x.creation_site() == "unknown location"


def test_variable_clone_keeps_type_name_and_tag():
    x = MyType(positive=True)("x")
    x.tag.note = "kept"
    y = add(x, x)
    for original in (x, y):
        copy = original.clone()
        assert copy is not original and type(copy) is type(original)
        assert copy.type == original.type and copy.name == original.name
        assert copy.owner is None and copy.index is None
        assert copy.tag.trace == original.tag.trace
    copy = x.clone()
    assert copy.tag.note == "kept"
    copy.tag.note = "changed"
    assert x.tag.note == "kept", "the clone's tag must be a copy"
    assert x.clone(name="z").name == "z" and x.name == "x"
    assert y.owner.outputs == [y], "cloning must not touch the original's node"


# -- Constant -----------------------------------------------------------------------------------

def test_constant_holds_filtered_data():
    c = MyType().make_constant(2, name="two")
    assert isinstance(c, Constant) and c.data == 2.0 and isinstance(c.data, float)
    assert c.value == 2.0 and c.owner is None and str(c) == "two"
    assert str(MyType().make_constant(1.5)) == "1.5"
    assert str(Constant(OtherType(), "a" * 40)) == "aaaaaaaaaa...aaaaa"
    with pytest.raises(TypeError, match="expected a number"):
        MyType().make_constant("two")
    with pytest.raises(TypeError, match="positive"):
        MyType(positive=True).make_constant(-1.0)


def test_constant_signature_and_equals():
    a, b = MyType().make_constant(2.0), MyType().make_constant(2)
    assert a is not b and a.signature() == b.signature() and a.equals(b)
    assert hash(a.signature()) == hash(b.signature())
    assert not a.equals(MyType().make_constant(3.0))
    assert not a.equals(MyType(positive=True).make_constant(2.0)), "different Types"
    assert not a.equals(MyType()("x")) and not a.equals(2.0)


def test_constant_clone():
    c = MyType().make_constant(2.0, name="c")
    c.tag.note = "kept"
    copy = c.clone()
    assert isinstance(copy, Constant) and copy is not c and copy.equals(c)
    assert copy.name == "c" and copy.tag.note == "kept" and copy.tag.trace == c.tag.trace
    assert c.clone(name="d").name == "d"


# -- Apply --------------------------------------------------------------------------------------

def test_apply_takes_ownership_of_its_outputs():
    x, y = MyType()("x"), MyType()("y")
    out0, out1 = MyType()(), MyType()()
    node = Apply(add, [x, y], [out0, out1])
    assert node.outputs == [out0, out1] and node.inputs == [x, y]
    assert (out0.owner, out0.index, out1.owner, out1.index) == (node, 0, node, 1)
    assert node.nin == 2 and node.nout == 2 and node.get_parents() == [x, y]
    assert str(node) == "Add(x, y)"


def test_apply_rejects_bad_outputs_without_side_effects():
    x = MyType()("x")
    taken = add(x, x)
    fresh = MyType()()
    with pytest.raises(ValueError, match="already belongs to the node"):
        Apply(add, [x], [fresh, taken])
    assert fresh.owner is None and taken.owner.outputs == [taken]
    with pytest.raises(ValueError, match="listed twice"):
        Apply(add, [x], [fresh, fresh])
    assert fresh.owner is None
    with pytest.raises(TypeError, match="output 0 is 1.0, expected a Variable"):
        Apply(add, [x], [1.0])
    with pytest.raises(TypeError, match="input 1 is 'y', expected a Variable"):
        Apply(add, [x, "y"], [fresh])
    assert fresh.owner is None
    with pytest.raises(TypeError, match="a constant cannot be computed"):
        Apply(add, [x], [MyType().make_constant(1.0)])


def test_apply_out():
    x = MyType()("x")
    node = add(x, x).owner
    assert node.out is node.outputs[0]
    with pytest.raises(AttributeError, match="2 outputs"):
        _ = two_outputs(x)[0].owner.out
    second = TwoOutputsDefaultSecond()(x)
    assert second.owner.out is second and second.index == 1


def test_apply_clone():
    x, y = MyType()("x"), MyType()("y")
    z = add(x, y, name="z")
    copy = z.owner.clone()
    assert copy is not z.owner and copy.op is add and copy.inputs == [x, y]
    assert copy.outputs[0] is not z and copy.outputs[0].name == "z"
    assert copy.outputs[0].owner is copy and z.owner.outputs == [z]


def test_clone_with_new_inputs_same_types():
    x, y, w = MyType()("x"), MyType()("y"), MyType()("w")
    z = add(x, y, name="z")
    z.tag.note = "kept"
    node = z.owner.clone_with_new_inputs([w, y])
    assert node.op is add and node.inputs == [w, y] and node.outputs[0] is not z
    assert node.outputs[0].name == "z" and node.outputs[0].tag.note == "kept"
    assert z.owner.inputs == [x, y], "the original node is untouched"


def test_clone_with_new_inputs_strict():
    x, y = MyType()("x"), MyType()("y")
    z = add(x, y, name="z")
    z.tag.note = "kept"
    positive = MyType(positive=True)
    # A more specific Type is accepted; make_node rebuilds the node, sharpening the output.
    node = z.owner.clone_with_new_inputs([positive("p"), positive("q")])
    assert node.outputs[0].type == positive
    assert node.outputs[0].name == "z" and node.outputs[0].tag.note == "kept"
    p = add(positive("p"), positive("q"))
    with pytest.raises(TypeError, match="input 0 has type MyType.positive=False.*does not accept"):
        p.owner.clone_with_new_inputs([x, positive("q")])
    with pytest.raises(TypeError, match="input 1 has type OtherType"):
        z.owner.clone_with_new_inputs([x, OtherType()()])
    with pytest.raises(ValueError, match="expected 2 inputs, got 1"):
        z.owner.clone_with_new_inputs([x])
    with pytest.raises(TypeError, match="input 0 is 1.0, expected a Variable"):
        z.owner.clone_with_new_inputs([1.0, y])


def test_clone_with_new_inputs_not_strict():
    positive = MyType(positive=True)
    p = add(positive("p"), positive("q"))
    x = MyType()("x")
    node = p.owner.clone_with_new_inputs([x, positive("q")], strict=False)
    assert node.inputs[0] is x and node.outputs[0].type == MyType()
    with pytest.raises(TypeError, match="Add: expected a MyType input, got OtherType"):
        p.owner.clone_with_new_inputs([OtherType()(), x], strict=False)


# -- walks --------------------------------------------------------------------------------------

def small_graph():
    """out = (x * y) + z, with m = x * y."""
    x, y, z = MyType()("x"), MyType()("y"), MyType()("z")
    m = mul(x, y, name="m")
    out = add(m, z, name="out")
    return x, y, z, m, out


def test_ancestors_order_and_blockers():
    x, y, z, m, out = small_graph()
    assert ancestors(out) == [out, m, x, y, z]
    assert ancestors([z, out]) == [z, out, m, x, y]
    assert ancestors(out, blockers=[m]) == [out, m, z]
    shared = add(m, m)
    assert ancestors(shared) == [shared, m, x, y], "a shared subgraph is listed once"


def test_graph_inputs():
    x, y, z, m, out = small_graph()
    assert graph_inputs(out) == [x, y, z]
    assert graph_inputs(out, blockers=[m]) == [m, z]
    c = MyType().make_constant(3.0)
    assert graph_inputs(add(out, c)) == [x, y, z, c]
    assert graph_inputs(x) == [x]


def test_io_toposort_orders_every_node_after_its_inputs():
    x, y, z, m, out = small_graph()
    first, second = two_outputs(out)
    result = add(mul(first, m), add(second, first))
    order = io_toposort([x, y, z], [result])
    assert_topological(order)
    assert len(order) == 6 and order[0] is m.owner
    assert toposort(result) == order and applys_between([x, y, z], [result]) == order
    assert io_toposort([x, y, z], [result]) == order, "deterministic"


class Early(Scale):
    """Scale, scheduled as early as its inputs allow (as a collective's start)."""

    schedule = -1


class Late(Scale):
    """Scale, scheduled only when nothing else can run (as a collective's wait)."""

    schedule = 1


def test_prioritized_runs_early_nodes_at_once_and_late_ones_last():
    x = MyType()("x")
    # Two chains from x; each "start" reads a link of the first chain, each "wait" a start.
    a1 = Scale(2.0)(x)
    a2 = Scale(3.0)(a1)
    a3 = Scale(4.0)(a2)
    b1 = Scale(5.0)(x)
    started_late, started_soon = Early(1.0)(a3), Early(2.0)(a1)
    waits = [Late(1.0)(started_late), Late(2.0)(started_soon)]
    outputs = [add(w, b1) for w in waits]
    order = io_toposort([x], outputs)
    assert_topological(order)
    assert prioritized(order) != order, "the hints change this graph's order"
    schedule = prioritized(order)
    assert_topological(schedule)
    assert sorted(map(id, schedule)) == sorted(map(id, order))
    names = [(type(n.op).__name__, getattr(n.op, "factor", None)) for n in schedule]
    # The start that needs one node comes right after it, then the one that needs three.
    assert names[:5] == [("Scale", 2.0), ("Early", 2.0), ("Scale", 3.0), ("Scale", 4.0),
                         ("Early", 1.0)]
    # The waits come after every node that does not depend on them (b1); what one wait
    # makes ready (its add) runs before the next wait.
    assert names[5] == ("Scale", 5.0)
    assert [name for name, _ in names[6:]] == ["Late", "Add", "Late", "Add"]


def test_prioritized_keeps_the_order_without_hints_and_honours_orderings():
    x, y, z, m, out = small_graph()
    first, second = two_outputs(out)
    result = add(mul(first, m), add(second, first))
    order = io_toposort([x, y, z], [result])
    assert prioritized(order) == order
    # An ordering that puts a late node before another keeps it there.
    late = Late(1.0)(x)
    early = Early(1.0)(y)
    final = add(late, early)
    order = io_toposort([x, y], [final], {early.owner: [late.owner]})
    schedule = prioritized(order, {early.owner: [late.owner]})
    assert schedule.index(late.owner) < schedule.index(early.owner)


def test_io_toposort_stops_at_inputs_and_lists_shared_nodes_once():
    x, y, z, m, out = small_graph()
    twice = add(out, out)
    order = io_toposort([x, y, z], [twice, out])
    assert order == [m.owner, out.owner, twice.owner]
    assert io_toposort([m, z], [twice]) == [out.owner, twice.owner]
    assert io_toposort([out], [out]) == []
    assert toposort(x) == []


def test_io_toposort_detects_cycles():
    _x, _y, _z, m, out = small_graph()
    m.owner.inputs[0] = out  # what only a broken rewrite does
    with pytest.raises(ValueError, match="cycle"):
        toposort(out)


def test_deep_chain_walks_do_not_recurse():
    x = MyType()("x")
    end = chain(x, DEEP)
    order = toposort(end)
    assert len(order) == DEEP and order[0].inputs == [x] and order[-1] is end.owner
    assert len(ancestors(end)) == DEEP + 1 and graph_inputs(end) == [x]
    new_inputs, new_outputs = clone([x], [end])
    assert len(toposort(new_outputs[0])) == DEEP and graph_inputs(new_outputs) == new_inputs
    assert equal_computations([end], new_outputs, [x], new_inputs)
    y = MyType()("y")
    replaced = clone_replace(end, {x: y})
    assert graph_inputs(replaced) == [y]
    assert is_in_ancestors(end.owner, order[0])


def test_clone_copies_everything_and_leaves_the_original():
    x, y, z, m, out = small_graph()
    c = MyType().make_constant(2.0)
    result = mul(out, c)
    (nx, ny, nz), (nresult,) = clone([x, y, z], [result])
    assert all(new is not old and new.name == old.name for new, old in
               [(nx, x), (ny, y), (nz, z)])
    assert nresult is not result and graph_inputs(nresult)[:3] == [nx, ny, nz]
    original_nodes = set(toposort(result))
    assert not original_nodes & set(toposort(nresult))
    assert toposort(result) == [m.owner, out.owner, result.owner]
    assert m.owner.inputs == [x, y]
    assert equal_computations([result], [nresult], [x, y, z], [nx, ny, nz])
    assert evaluate([nresult], {nx: 2.0, ny: 3.0, nz: 4.0}) == [20.0]
    assert graph_inputs(nresult)[3] is not c, "copy_orphans clones constants"
    assert graph_inputs(nresult)[3].equals(c)


def test_clone_copy_inputs_and_copy_orphans():
    x, y, z, _m, out = small_graph()
    c = MyType().make_constant(2.0)
    free = MyType()("free")
    result = add(mul(out, c), free)
    (nx, ny, nz), (nresult,) = clone([x, y, z], [result], copy_inputs=False, copy_orphans=False)
    assert (nx, ny, nz) == (x, y, z)
    assert graph_inputs(nresult) == [x, y, z, c, free]
    assert nresult is not result
    _, (nresult,) = clone([x, y, z], [result], copy_inputs=False, copy_orphans=True)
    new_c, new_free = graph_inputs(nresult)[3:]
    assert new_c is not c and new_c.equals(c) and new_free is not free and new_free.name == "free"
    (nx,), (same,) = clone([x], [x])
    assert nx is same and nx is not x
    _, (orphan,) = clone([], [free])
    assert orphan is not free and orphan.name == "free"


def test_clone_get_equiv_maps_variables_and_nodes_and_takes_a_memo():
    x, y, z, m, out = small_graph()
    equiv = clone_get_equiv([x, y, z], [out])
    assert set(equiv) == {x, y, z, m, out, m.owner, out.owner}
    assert equiv[out].owner is equiv[out.owner] and equiv[m].owner is equiv[m.owner]
    assert equiv[out.owner].inputs == [equiv[m], equiv[z]]
    w = MyType()("w")
    memo = {m: w}
    result = clone_get_equiv([x, y, z], [out], memo=memo)
    assert result is memo and memo[m] is w
    assert memo[out].owner.inputs == [w, memo[z]]
    assert m.owner not in memo, "the walk stops at pre-mapped variables"


def test_clone_get_equiv_rebuilds_nodes_when_a_type_changes():
    x, y, z, m, out = small_graph()
    positive = MyType(positive=True)
    equiv = clone_get_equiv([z], [out], copy_inputs=False,
                            memo={x: positive("p"), y: positive("q"), z: positive("r")})
    assert equiv[m].type == positive and equiv[out].type == positive


def test_clone_replace_an_input():
    x, y, z, m, out = small_graph()
    w = MyType()("w")
    new = clone_replace(out, {x: w})
    assert graph_inputs(new) == [w, y, z]
    assert evaluate([new], {w: 5.0, y: 2.0, z: 1.0}) == [11.0]
    assert graph_inputs(out) == [x, y, z] and m.owner.inputs == [x, y]


def test_clone_replace_an_intermediate():
    _x, _y, z, m, out = small_graph()
    w = MyType()("w")
    new = clone_replace([out], [(m, w)])
    assert isinstance(new, list) and graph_inputs(new) == [w, z]
    assert new[0].owner.inputs == [w, z] and new[0] is not out
    assert out.owner.inputs == [m, z]


def test_clone_replace_several_at_once_and_shares_inputs():
    x, y, z, _m, out = small_graph()
    c = MyType().make_constant(10.0)
    result = add(out, c)
    a, b = MyType()("a"), MyType()("b")
    new = clone_replace(result, {x: a, z: b})
    assert graph_inputs(new) == [a, y, b, c], "y and the constant are shared, not copied"
    assert evaluate([new], {a: 2.0, y: 3.0, b: 4.0}) == [20.0]
    assert evaluate([result], {x: 1.0, y: 3.0, z: 4.0}) == [17.0]


def test_clone_replace_a_variable_by_itself_or_nothing():
    x, y, z, m, out = small_graph()
    new = clone_replace(out, {m: m})
    assert new is not out and new.owner.inputs == [m, z]
    copy = clone_replace(out)
    assert copy is not out and copy.owner.inputs[0] is not m
    assert graph_inputs(copy) == [x, y, z]
    assert equal_computations([copy], [out])


def test_clone_replace_with_a_function_of_the_replaced_variable():
    x, y, z, _m, out = small_graph()
    shifted = add(x, 1.0)
    new = clone_replace(out, {x: shifted})
    assert new.owner.inputs[0].owner.inputs[0] is shifted
    assert shifted.owner.inputs[0] is x, "replaced once, not inside the replacement"
    assert evaluate([new], {x: 1.0, y: 3.0, z: 4.0}) == [10.0]


def test_clone_replace_an_output_and_type_changes():
    x, y, z, m, out = small_graph()
    w = MyType()("w")
    assert clone_replace(out, {out: w}) is w
    assert clone_replace([out, m], {out: w})[0] is w
    positive = MyType(positive=True)
    sharpened = clone_replace(out, {x: positive("p"), y: positive("q"), z: positive("r")})
    assert sharpened.type == positive and out.type == MyType()
    with pytest.raises(TypeError, match="Add: expected a MyType input"):
        clone_replace(out, {z: OtherType()()})


def test_clone_replace_rejects_non_variables():
    x, y, _z, _m, out = small_graph()
    with pytest.raises(TypeError, match="replacements must be Variable pairs"):
        clone_replace(out, {x: 1.0})
    with pytest.raises(TypeError, match="replacements must be Variable pairs"):
        clone_replace(out, {"x": y})
    with pytest.raises(TypeError, match="dict or .variable, replacement. pairs"):
        clone_replace(out, [x])
    with pytest.raises(TypeError, match="expected Variables"):
        clone_replace([out, 1.0], {x: y})


def test_equal_computations():
    x, y, z, _m, out = small_graph()
    assert equal_computations([out], [out])
    assert equal_computations([out], [add(mul(x, y), z)])
    assert not equal_computations([out], [add(mul(y, x), z)])
    assert not equal_computations([out], [mul(mul(x, y), z)])
    assert not equal_computations([out], [add(mul(x, y), MyType()("z"))])
    assert not equal_computations([out], [out, out])
    assert equal_computations([add(x, 2.0)], [add(x, 2)]), "equal constants"
    assert not equal_computations([add(x, 2.0)], [add(x, 3.0)])
    assert not equal_computations([add(x, 2.0)], [add(x, y)])
    assert not equal_computations([Scale(2.0)(x)], [Scale(3.0)(x)])
    assert equal_computations([Scale(2.0)(x)], [Scale(2.0)(x)])
    first, second = two_outputs(x)
    assert not equal_computations([first], [two_outputs(x)[1]])
    assert equal_computations([second], [two_outputs(x)[1]])


def test_equal_computations_with_input_maps_and_sharing():
    x, y, z, _m, out = small_graph()
    a, b, c = MyType()("a"), MyType()("b"), MyType()("c")
    assert equal_computations([out], [add(mul(a, b), c)], [x, y, z], [a, b, c])
    assert not equal_computations([out], [add(mul(b, a), c)], [x, y, z], [a, b, c])
    assert not equal_computations([out], [out], [x], [a]), "x stands for a, not for itself"
    assert not equal_computations([out], [out], [x], [])
    shared = mul(x, x)
    one_node = add(shared, shared)
    two_nodes = add(mul(x, x), mul(x, x))
    assert equal_computations([one_node], [two_nodes])
    assert equal_computations([two_nodes], [one_node])


def test_is_in_ancestors():
    x, y, _z, m, out = small_graph()
    later = add(out, out)
    assert is_in_ancestors(out.owner, m.owner)
    assert is_in_ancestors(out.owner, out.owner)
    assert is_in_ancestors(later.owner, m.owner)
    assert not is_in_ancestors(m.owner, out.owner)
    assert not is_in_ancestors(out.owner, mul(x, y).owner)
