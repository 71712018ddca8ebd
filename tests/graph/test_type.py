"""Tests of sympile/graph/type.py: the filter contract, variables and constants of a Type,
equality, is_super and convert_variable."""

from __future__ import annotations

import pytest

from sympile.graph.basic import Constant, Variable
from sympile.graph.type import Type
from tests.graph.test_basic import MyType, OtherType


class MyVariable(Variable):
    """A Variable subclass, to check that a Type builds its own variable class."""


class MyConstant(Constant):
    """A Constant subclass, likewise."""


class SubclassedType(MyType):
    variable_type = MyVariable
    constant_type = MyConstant


def test_filter_contract():
    general, positive = MyType(), MyType(positive=True)
    assert general.filter(2.5) == 2.5
    assert general.filter(2) == 2.0 and isinstance(general.filter(2), float)
    with pytest.raises(TypeError, match="expected a float, got 2"):
        general.filter(2, strict=True)
    with pytest.raises(TypeError, match="expected a number, got 'a'"):
        general.filter("a")
    with pytest.raises(TypeError, match="expected a positive float"):
        positive.filter(-1.0)
    assert general.is_valid_value(1.0) and not general.is_valid_value(1)
    assert not positive.is_valid_value(-1.0)


def test_base_type_filter_is_abstract():
    with pytest.raises(NotImplementedError, match="Type.filter"):
        Type().filter(1.0)


def test_make_variable_and_call():
    general = MyType()
    x = general.make_variable("x")
    assert type(x) is Variable and x.type is general and x.owner is None and x.name == "x"
    y = general("y")
    assert type(y) is Variable and y.type is general and y.name == "y" and y is not x
    assert general().name is None
    subclassed = SubclassedType()
    assert type(subclassed("v")) is MyVariable
    assert type(subclassed.make_constant(1.0)) is MyConstant


def test_make_constant():
    c = MyType().make_constant(3, name="three")
    assert type(c) is Constant and c.data == 3.0 and c.name == "three" and c.type == MyType()


def test_equality_and_hash_by_props():
    assert MyType() == MyType() and hash(MyType()) == hash(MyType())
    assert MyType() != MyType(positive=True)
    assert MyType() != OtherType() and OtherType() == OtherType()
    assert SubclassedType() != MyType(), "a subclass is a different Type"
    assert len({MyType(), MyType(), MyType(positive=True)}) == 2
    assert str(MyType()) == "MyType(positive=False)" and str(OtherType()) == "OtherType"


def test_is_super():
    general, positive = MyType(), MyType(positive=True)
    assert general.is_super(general) and general.is_super(MyType())
    assert general.is_super(positive) and not positive.is_super(general)
    assert not general.is_super(OtherType())
    assert OtherType().is_super(OtherType()), "the default is equality"
    assert not OtherType().is_super(general)


def test_convert_variable():
    general, positive = MyType(), MyType(positive=True)
    x, p = general("x"), positive("p")
    assert general.convert_variable(x) is x
    assert general.convert_variable(p) is p, "a more specific Type needs no conversion"
    assert positive.convert_variable(x) is None
    assert general.convert_variable(OtherType()()) is None
    assert OtherType().convert_variable(OtherType()("o")).name == "o"


def test_value_comparisons_and_signature():
    general = MyType()
    assert general.values_eq(1.0, 1.0) and not general.values_eq(1.0, 2.0)
    assert general.values_eq_approx(1.0, 1.0) and not general.values_eq_approx(1.0, 1.5)
    assert general.data_signature(2.0) == 2.0
