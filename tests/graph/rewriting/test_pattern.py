"""Tests of sympile/graph/rewriting/pattern.py: rewrites written as input and output patterns.

Graph-layer tests: the small float Type and ops of tests/graph/test_basic.py, no tensors.
"""

from __future__ import annotations

import pytest

from sympile.graph.basic import Constant
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import RewriteHistory, in2out
from sympile.graph.rewriting.pattern import PatternNodeRewriter, pattern_to_str
from tests.graph.test_basic import (
    Add,
    MyType,
    Scale,
    TwoOutputsDefaultSecond,
    add,
    evaluate,
    mul,
    two_outputs,
)


def is_one(variable) -> bool:
    return isinstance(variable, Constant) and variable.data == 1.0


mul_by_one = PatternNodeRewriter((mul, "x", {"pattern": "one", "constraint": is_one}), "x",
                                 name="mul_by_one")
add_self = PatternNodeRewriter((add, "x", "x"), (Scale(2.0), "x"), name="add_self")
distribute = PatternNodeRewriter((mul, (add, "x", "y"), "z"),
                                 (add, (mul, "x", "z"), (mul, "y", "z")))


def rewrite(rewriter, inputs, outputs):
    fgraph = FunctionGraph(inputs, outputs, features=[RewriteHistory()])
    in2out(rewriter)(fgraph)
    return fgraph


def test_name_tracks_and_docstring():
    assert mul_by_one.name == "mul_by_one" and str(mul_by_one) == "mul_by_one"
    assert mul_by_one.tracks() == [mul]
    assert distribute.name == "Mul(Add(x, y), z) -> Add(Mul(x, z), Mul(y, z))"
    assert distribute.__doc__ == distribute.name
    assert pattern_to_str((Scale, {"pattern": "x", "constraint": is_one})) == "Scale(x)"


def test_constraint_binds_a_constant():
    x = MyType()("x")
    fgraph = rewrite(mul_by_one, [x], [mul(x, 1.0), mul(x, 2.0)])
    kept, scaled = fgraph.outputs
    assert kept is fgraph.inputs[0]
    assert scaled.owner.op == mul  # the constraint refused the constant 2
    assert fgraph.rewrite_history.names() == ["mul_by_one"]


def test_repeated_name_must_bind_the_same_variable():
    x, y = MyType()("x"), MyType()("y")
    fgraph = rewrite(add_self, [x, y], [add(x, x), add(x, y)])
    doubled, summed = fgraph.outputs
    assert doubled.owner.op == Scale(2.0) and doubled.owner.inputs == [fgraph.inputs[0]]
    assert summed.owner.op == add
    assert evaluate(fgraph.outputs, {fgraph.inputs[0]: 3.0, fgraph.inputs[1]: 4.0}) == [6.0, 7.0]


def test_nested_patterns_build_the_output_by_calling_the_ops():
    x, y, z = MyType()("x"), MyType()("y"), MyType()("z")
    fgraph = rewrite(distribute, [x, y, z], [mul(add(x, y), z)])
    (output,) = fgraph.outputs
    assert output.owner.op == add
    assert [node.op for node in fgraph.toposort()].count(mul) == 2
    values = dict(zip(fgraph.inputs, [2.0, 3.0, 5.0]))
    assert evaluate(fgraph.outputs, values) == [25.0]
    # The sum alone is not a product: no match.
    assert distribute.match(None, add(x, y)) is None


def test_op_classes_and_constants_in_patterns():
    x = MyType()("x")
    two = MyType(positive=True).make_constant(2.0)
    merge_scales = PatternNodeRewriter((Scale, (Scale, "x")), (mul, "x", 4.0))
    assert merge_scales.tracks() == [Scale]
    bindings = merge_scales.match(None, Scale(3.0)(Scale(5.0)(x)))
    assert bindings == {"x": x}
    times_two = PatternNodeRewriter((mul, "x", two), (add, "x", "x"))
    assert times_two.match(None, mul(x, 2.0)) == {"x": x}
    assert times_two.match(None, mul(x, 3.0)) is None


def test_inner_matches_with_other_clients_are_kept_unless_allowed():
    x, y, z = MyType()("x"), MyType()("y"), MyType()("z")
    total = add(x, y)
    outputs = [mul(total, z), total]
    fgraph = rewrite(distribute, [x, y, z], outputs)
    assert fgraph.outputs[0].owner.op == mul  # add(x, y) is also an output
    shared = PatternNodeRewriter(distribute.in_patterns, distribute.out_pattern,
                                 allow_multiple_clients=True)
    fgraph = rewrite(shared, [x, y, z], outputs)
    assert fgraph.outputs[0].owner.op == add
    values = dict(zip(fgraph.inputs, [2.0, 3.0, 5.0]))
    assert evaluate(fgraph.outputs, values) == [25.0, 5.0]


def test_a_replacement_of_a_less_precise_type_is_skipped():
    positive = MyType(positive=True)("p")
    # add of positives is positive; Scale's output is not known to be.
    fgraph = rewrite(add_self, [positive], [add(positive, positive)])
    assert fgraph.outputs[0].owner.op == add
    assert fgraph.rewrite_history.names() == []


def test_only_the_output_a_call_returns_is_matched():
    x, y = MyType()("x"), MyType()("y")
    first, second = two_outputs(x)
    rewriter = PatternNodeRewriter((add, (type(two_outputs), "x"), "y"), "y")
    assert rewriter.match(None, add(first, y)) == {"x": x, "y": y}
    assert rewriter.match(None, add(second, y)) is None
    # An op whose call returns its second output: the pattern stands for that one.
    default_second = TwoOutputsDefaultSecond()
    returned = default_second(x)
    rewriter = PatternNodeRewriter((default_second, "x"), "x")
    assert rewriter.match(None, returned) == {"x": x}
    assert rewriter.match(None, returned.owner.outputs[0]) is None
    fgraph = FunctionGraph([x], [returned])
    replacements = rewriter.transform(fgraph, fgraph.outputs[0].owner)
    assert replacements == [None, fgraph.inputs[0]]


def test_bad_patterns():
    with pytest.raises(TypeError, match="input pattern 0 must be a tuple"):
        PatternNodeRewriter("x", "x")
    with pytest.raises(TypeError, match="input pattern 1 must be a tuple"):
        PatternNodeRewriter([(add, "x", "y"), {"pattern": "x", "constraint": is_one}], "x")
    with pytest.raises(ValueError, match="the list of input patterns is empty"):
        PatternNodeRewriter([], "x")
    with pytest.raises(ValueError, match="'y' is not bound by the input pattern"):
        PatternNodeRewriter([(add, "x", "y"), (mul, "x", "x")], "y")
    with pytest.raises(TypeError, match="may have a 'name' string"):
        PatternNodeRewriter((add, {"pattern": "x", "constraint": is_one, "name": 3}, "y"), "y")
    with pytest.raises(TypeError, match="a tuple pattern must start with an Op or an Op class"):
        PatternNodeRewriter((add, ("x",)), "x")
    with pytest.raises(TypeError, match="a dict pattern must be"):
        PatternNodeRewriter((add, {"pattern": "x"}, "y"), "x")
    with pytest.raises(TypeError, match="3.0 is not a pattern"):
        PatternNodeRewriter((add, "x", 3.0), "x")
    with pytest.raises(ValueError, match="'z' is not bound by the input pattern"):
        PatternNodeRewriter((add, "x", "y"), (add, "x", "z"))
    with pytest.raises(TypeError, match="must start with an Op instance or a function"):
        PatternNodeRewriter((add, "x", "y"), (Add, "x", "y"))
    with pytest.raises(TypeError, match="constraints belong in the input pattern"):
        PatternNodeRewriter((add, "x", "y"), (add, "x", {"pattern": "y", "constraint": is_one}))
    with pytest.raises(TypeError, match="the output pattern must be a pattern variable"):
        PatternNodeRewriter((add, "x", "y"), 2.0)
    with pytest.raises(ValueError, match="a pattern variable needs a name"):
        PatternNodeRewriter((add, "", "y"), "y")
    x = MyType()("x")
    not_a_variable = PatternNodeRewriter((add, "x", "y"), (lambda a, b: 3.0, "x", "y"),
                                         name="broken")
    fgraph = FunctionGraph([x], [add(x, x)])
    with pytest.raises(TypeError, match=r"rewriter broken: <lambda>\(x, y\) built 3.0"):
        not_a_variable.transform(fgraph, fgraph.outputs[0].owner)


def test_alternatives_the_first_that_matches_is_rewritten():
    x, y = MyType()("x"), MyType()("y")
    one = Constant(MyType(), 1.0)
    times_one = PatternNodeRewriter(
        [(mul, "x", {"pattern": "one", "constraint": is_one}),
         (mul, {"pattern": "one", "constraint": is_one}, "x")], "x", name="times_one")
    assert times_one.tracks() == [mul]
    assert times_one.match(None, mul(x, one))["x"] is x
    assert times_one.match(None, mul(one, y))["x"] is y
    assert times_one.match(None, mul(x, y)) is None
    assert times_one.__doc__ == "Mul(x, one) | Mul(one, x) -> x"


def test_a_named_constraint_binds_what_it_matched_and_may_top_the_pattern():
    x, y = MyType()("x"), MyType()("y")
    inner = add(x, y)
    named = PatternNodeRewriter(
        {"pattern": (mul, {"pattern": (add, "x", "y"), "constraint": lambda v: True,
                           "name": "total"}, "z"), "constraint": lambda v: v.name != "keep"},
        (add, "total", "z"), allow_multiple_clients=True)
    assert named.tracks() == [mul]
    bindings = named.match(None, mul(inner, x))
    assert bindings["total"] is inner and bindings["z"] is x
    kept = mul(inner, x)
    kept.name = "keep"
    assert named.match(None, kept) is None


def test_adapt_fits_the_replacement_or_refuses_it():
    x = MyType()("x")
    seen = []

    def refuse(replacement, matched):
        seen.append((replacement, matched))

    doubled = add(x, x)
    refused = PatternNodeRewriter((add, "x", "x"), (Scale(2.0), "x"), adapt=refuse)
    fgraph = FunctionGraph([x], [doubled])
    assert refused.transform(fgraph, fgraph.outputs[0].owner) is None
    assert seen and seen[0][1] is fgraph.outputs[0]
    kept = PatternNodeRewriter((add, "x", "x"), (Scale(2.0), "x"),
                               adapt=lambda replacement, matched: replacement)
    (replacement,) = kept.transform(fgraph, fgraph.outputs[0].owner)
    assert replacement.owner.op == Scale(2.0)
