"""Tests of sympile/graph/op.py: equality by __props__, printing, calling an op."""

from __future__ import annotations

import pytest

from sympile.graph.basic import Apply, Variable
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from tests.graph.test_basic import (
    Add,
    Mul,
    MyType,
    Scale,
    TwoOutputs,
    TwoOutputsDefaultSecond,
    next_line_site,
    site_of,
)


class Shift(Op):
    """An op with two props, to check that both take part in equality."""

    __props__ = ("amount", "axis")

    def __init__(self, amount, axis):
        self.amount = amount
        self.axis = axis


def test_props_equality_and_hashing():
    assert Scale(2.0) == Scale(2.0) and hash(Scale(2.0)) == hash(Scale(2.0))
    assert Scale(2.0) != Scale(3.0)
    assert Shift(1, 0) == Shift(1, 0) and Shift(1, 0) != Shift(1, 1) != Shift(2, 1)
    assert len({Scale(2.0), Scale(2.0), Scale(3.0)}) == 2
    cache = {Shift(1, (0, 1)): "cached"}
    assert cache[Shift(1, (0, 1))] == "cached"


def test_ops_of_different_classes_differ():
    assert Add() == Add() and hash(Add()) == hash(Add())
    assert Add() != Mul(), "same (empty) props, different class"
    assert TwoOutputs() != TwoOutputsDefaultSecond(), "a subclass is a different op"
    assert Scale(2.0) != 2.0


def test_unhashable_props_are_reported():
    with pytest.raises(TypeError, match=r"Shift: the props \['axis'\] are unhashable"):
        hash(Shift(1, [0, 1]))


def test_str():
    assert str(Add()) == "Add" and repr(Add()) == "Add"
    assert str(Scale(2.0)) == "Scale{factor=2.0}"
    assert str(Shift(1, (0,))) == "Shift{amount=1, axis=(0,)}"


def test_call_returns_the_single_output():
    x = MyType()("x")
    z = Add()(x, 1.0)
    assert isinstance(z, Variable) and z.owner.op == Add() and z.owner.inputs[0] is x
    assert z.owner.inputs[1].data == 1.0


def test_call_returns_a_list_of_outputs_or_the_default_output():
    x = MyType()("x")
    outputs = TwoOutputs()(x)
    assert isinstance(outputs, list) and len(outputs) == 2
    assert outputs[0].owner is outputs[1].owner and outputs[0].index == 0
    default = TwoOutputsDefaultSecond()(x)
    assert isinstance(default, Variable) and default.index == 1
    assert len(default.owner.outputs) == 2


def test_call_name():
    x = MyType()("x")
    assert Add()(x, x, name="z").name == "z"
    first, second = TwoOutputs()(x, name="pair")
    assert (first.name, second.name) == ("pair_0", "pair_1")
    default = TwoOutputsDefaultSecond()(x, name="d")
    assert default.name == "d" and default.owner.outputs[0].name is None
    assert Add()(x, x).name is None


def test_call_sets_the_trace_to_the_callers_line():
    x = MyType()("x")
    site = next_line_site()
    z = Scale(2.0)(x)
    assert site_of(z.tag.trace) == site


def test_call_checks_make_node_and_default_output():
    class NotANode(Op):
        def make_node(self, x):
            return x

    class BadDefault(TwoOutputs):
        default_output = 2

    x = MyType()("x")
    with pytest.raises(TypeError, match="NotANode.make_node returned x, expected an Apply"):
        NotANode()(x)
    with pytest.raises(ValueError, match="BadDefault: default_output 2 is not an output index"):
        BadDefault()(x)


def test_make_node_errors_reach_the_caller():
    with pytest.raises(TypeError, match="Add: expected a MyType input"):
        Add()(MyType()("x"), Variable(object()))


def test_optional_parts_of_the_contract():
    op, x = Op(), MyType()("x")
    node = Apply(op, [x], [MyType()()])
    for call in (lambda: op.make_node(x), lambda: op.perform(node, [1.0], [[None]]),
                 lambda: op.infer_shape(None, node, [()]), lambda: op.L_op([x], [x], [x]),
                 lambda: op.R_op([x], [x])):
        with pytest.raises(MethodNotDefined, match=r"Op\.\w+"):
            call()
    assert issubclass(MethodNotDefined, NotImplementedError)
    assert op.c_code(node, {}) is None and op.do_constant_folding(None, node) is True
    assert op.view_map == {} and op.destroy_map == {} and op.default_output is None


def test_perform_writes_output_storage():
    x = MyType()("x")
    node = TwoOutputs()(x)[0].owner
    storage = [[None], [None]]
    node.op.perform(node, [3.0], storage)
    assert storage == [[4.0], [2.0]]
