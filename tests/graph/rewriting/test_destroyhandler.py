"""Tests of sympile/graph/rewriting/destroyhandler.py: each rule of the DestroyHandler on small
graphs (protected inputs, constants, outputs, double destroys, a node reading what it
overwrites, views of views), the orderings it adds and that toposort follows, and the
rollback of a replace it vetoes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile.tensor as T
from sympile.graph.basic import Constant, io_toposort
from sympile.graph.fgraph import FunctionGraph, InconsistencyError
from sympile.graph.rewriting.destroyhandler import DestroyHandler, destroy_handler_of
from sympile.scalar import basic as scalar
from sympile.tensor.elemwise import Elemwise

exp_inplace = Elemwise(scalar.exp, ((0, 0),))
add_inplace = Elemwise(scalar.add, ((0, 0),))


def graph(inputs, outputs, mutable=()):
    """A FunctionGraph of the variables themselves (no clone), with a DestroyHandler letting
    the `mutable` inputs be overwritten."""
    handler = DestroyHandler(mutable)
    fgraph = FunctionGraph(inputs, outputs, clone=False)
    fgraph.attach_feature(handler)
    return fgraph, handler


def test_attach_sets_the_graphs_handler_once():
    x = T.dvector("x")
    fgraph, handler = graph([x], [T.exp(x)])
    assert fgraph.destroy_handler is handler
    assert destroy_handler_of(fgraph) is handler
    with pytest.raises(ValueError, match="already has a destroy handler"):
        fgraph.attach_feature(DestroyHandler())
    other = FunctionGraph([x], [T.exp(x)], clone=False)
    with pytest.raises(ValueError, match="already attached"):
        other.attach_feature(handler)
    fgraph.remove_feature(handler)
    assert fgraph.destroy_handler is None


def test_destroy_handler_of_attaches_one_protecting_every_input():
    x = T.dvector("x")
    fgraph = FunctionGraph([x], [T.exp(x)], clone=False)
    handler = destroy_handler_of(fgraph)
    assert fgraph.destroy_handler is handler and handler.mutable_inputs == []


def test_an_input_is_protected_unless_mutable():
    x = T.dvector("x")
    output = exp_inplace(x)
    fgraph, handler = graph([x], [output])
    with pytest.raises(InconsistencyError, match="graph input x, which the caller owns"):
        handler.validate(fgraph)
    assert not handler.may_destroy(output.owner, 0)
    fgraph, handler = graph([x], [output], mutable=[x])
    handler.validate(fgraph)
    assert handler.may_destroy(output.owner, 0)
    assert handler.destroyed_inputs() == [x]


def test_a_constant_is_never_destroyed():
    constant = T.as_tensor_variable([1.0, 2.0])
    assert isinstance(constant, Constant)
    x = T.dvector("x")
    output = add_inplace(constant, x)
    fgraph, handler = graph([x], [output], mutable=[x])
    with pytest.raises(InconsistencyError, match="memory of constant"):
        handler.validate(fgraph)


def test_a_graph_output_is_never_destroyed():
    x = T.dvector("x")
    intermediate = T.exp(x)
    output = exp_inplace(intermediate)
    fgraph, handler = graph([x], [output, intermediate])
    with pytest.raises(InconsistencyError, match="graph output 1"):
        handler.validate(fgraph)
    assert not handler.may_destroy(output.owner, 0)


def test_a_mutable_input_that_is_an_output_is_not_destroyed():
    x = T.dvector("x")
    output = exp_inplace(x)
    fgraph, handler = graph([x], [output, x], mutable=[x])
    with pytest.raises(InconsistencyError, match="graph output 1"):
        handler.validate(fgraph)


def test_the_reader_runs_before_the_destroyer():
    x = T.dvector("x")
    intermediate = T.exp(x)
    destroyed = exp_inplace(intermediate)
    reader = T.sin(intermediate)
    # The destroyer's output comes first: data order alone would run it first.
    fgraph, handler = graph([x], [destroyed, reader])
    handler.validate(fgraph)
    assert handler.orderings(fgraph) == {destroyed.owner: [reader.owner]}
    order = fgraph.toposort()
    assert order.index(reader.owner) < order.index(destroyed.owner)


def test_a_reader_that_needs_the_destroyers_result_makes_a_cycle():
    x = T.dvector("x")
    intermediate = T.exp(x)
    destroyed = exp_inplace(intermediate)
    # Reads intermediate and destroyed: it must run both before and after the destroyer.
    both = intermediate + destroyed
    fgraph, handler = graph([x], [both])
    with pytest.raises(InconsistencyError, match="cannot all run before it"):
        handler.validate(fgraph)


def test_two_destroyers_of_one_value_are_refused():
    x = T.dvector("x")
    intermediate = T.exp(x)
    first, second = exp_inplace(intermediate), exp_inplace(intermediate)
    fgraph, handler = graph([x], [first, second])
    with pytest.raises(InconsistencyError, match="overwrites too"):
        handler.validate(fgraph)
    assert not handler.may_destroy(second.owner, 0)


def test_a_node_reading_what_it_overwrites_through_another_input_is_refused():
    x = T.dvector("x")
    intermediate = T.exp(x)
    output = add_inplace(intermediate, intermediate)
    fgraph, handler = graph([x], [output])
    with pytest.raises(InconsistencyError, match="through input 1"):
        handler.validate(fgraph)
    view = intermediate[::-1]
    output = add_inplace(intermediate, view)
    fgraph, handler = graph([x], [output])
    with pytest.raises(InconsistencyError, match="through input 1"):
        handler.validate(fgraph)


def test_views_of_views_share_their_base():
    x = T.dmatrix("x")
    base = T.exp(x)
    view = base.dimshuffle(1, 0)[1:]
    destroyed = exp_inplace(view)
    reader = base.sum()
    fgraph, handler = graph([x], [destroyed, reader])
    handler.validate(fgraph)
    order = fgraph.toposort()
    assert order.index(reader.owner) < order.index(destroyed.owner)
    # The base returned to the caller, or a view of the protected input, is refused.
    fgraph, handler = graph([x], [destroyed, base])
    with pytest.raises(InconsistencyError, match="graph output 1"):
        handler.validate(fgraph)
    input_view = x.dimshuffle(1, 0)[1:]
    fgraph, handler = graph([x], [exp_inplace(input_view)])
    with pytest.raises(InconsistencyError, match="graph input x"):
        handler.validate(fgraph)
    fgraph, handler = graph([x], [exp_inplace(input_view)], mutable=[x])
    handler.validate(fgraph)


def test_a_vetoed_replace_leaves_the_graph_as_it_was():
    x = T.dvector("x")
    intermediate = T.exp(x)
    plain = T.exp(intermediate)
    fgraph, handler = graph([x], [plain, intermediate])
    before = fgraph.toposort()
    with pytest.raises(InconsistencyError):
        fgraph.replace(plain, exp_inplace(intermediate))
    assert fgraph.toposort() == before
    assert fgraph.outputs == [plain, intermediate]
    assert handler.destroyers == set()
    fgraph.check_integrity()


def test_an_accepted_replace_is_tracked_and_its_pruning_forgotten():
    x = T.dvector("x")
    intermediate = T.exp(x)
    plain = T.exp(intermediate)
    fgraph, handler = graph([x], [plain])
    replacement = exp_inplace(intermediate)
    fgraph.replace(plain, replacement)
    assert handler.destroyers == {replacement.owner}
    fgraph.replace(replacement, T.sin(intermediate))
    assert handler.destroyers == set()
    assert handler.orderings(fgraph) == {}


def test_may_destroy_rejects_a_bad_index_and_an_unattached_handler():
    x = T.dvector("x")
    output = T.exp(T.exp(x))
    _, handler = graph([x], [output])
    assert handler.may_destroy(output.owner, 0)
    with pytest.raises(ValueError, match="has no input 3"):
        handler.may_destroy(output.owner, 3)
    with pytest.raises(ValueError, match="not attached"):
        DestroyHandler().may_destroy(output.owner, 0)


# -- incremental validation ---------------------------------------------------------------

class _FullAnalysis(DestroyHandler):
    """The reference: analyses the whole graph at every validation."""

    def validate(self, fgraph):
        self._forget()
        super().validate(fgraph)


def _build(recipe, handler_class):
    """A graph over x (mutable) and y (protected) from `recipe`: (op, first, second) steps
    applying exp, add or a reversing view to earlier variables; its outputs are the last
    variable and, when the recipe says so, one more."""
    x, y = T.dvector("x"), T.dvector("y")
    variables = [x, y]
    for kind, first, second in recipe["steps"]:
        a, b = variables[first % len(variables)], variables[second % len(variables)]
        variables.append(T.exp(a) if kind == 0 else a + b if kind == 1 else a[::-1])
    outputs = [variables[-1]]
    extra = variables[recipe["extra"] % len(variables)]
    if recipe["extra"] % 3 == 0 and extra.owner is not None and extra is not outputs[0]:
        outputs.append(extra)
    fgraph = FunctionGraph([x, y], outputs, clone=False)
    fgraph.attach_feature(handler_class([x]))
    return fgraph


def _try_inplace(fgraph, node_index, input_index):
    """Make the node_index-th elementwise node (data order) overwrite one of its inputs;
    whether the graph accepted it (None: no such change to try)."""
    nodes = [node for node in io_toposort(fgraph.inputs, fgraph.outputs)
             if isinstance(node.op, Elemwise) and not node.op.inplace_pattern]
    if not nodes:
        return None
    node = nodes[node_index % len(nodes)]
    index = input_index % len(node.inputs)
    candidate = Elemwise(node.op.scalar_op, ((0, index),))(*node.inputs)
    try:
        fgraph.replace(node.outputs[0], candidate)
    except InconsistencyError:
        return False
    return True


def _orderings_by_position(fgraph, handler):
    position = {node: index for index, node in enumerate(io_toposort(fgraph.inputs,
                                                                     fgraph.outputs))}
    return {position[node]: sorted(position[reader] for reader in readers)
            for node, readers in handler.orderings(fgraph).items()}


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({
    "steps": st.lists(st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(0, 30)),
                      min_size=1, max_size=14),
    "extra": st.integers(0, 30),
    "changes": st.lists(st.tuples(st.integers(0, 30), st.integers(0, 1)), max_size=12)}))
def test_incremental_validation_decides_as_a_full_analysis(recipe):
    fgraph = _build(recipe, DestroyHandler)
    reference_graph = _build(recipe, _FullAnalysis)
    for node_index, input_index in recipe["changes"]:
        accepted = _try_inplace(fgraph, node_index, input_index)
        assert accepted == _try_inplace(reference_graph, node_index, input_index)
        assert _orderings_by_position(fgraph, fgraph.destroy_handler) == \
            _orderings_by_position(reference_graph, reference_graph.destroy_handler)
        order = fgraph.toposort()
        for node, readers in fgraph.destroy_handler.orderings(fgraph).items():
            assert all(order.index(reader) < order.index(node) for reader in readers)
    fgraph.check_integrity()


def test_a_long_chain_made_inplace_is_sorted_whole_a_bounded_number_of_times(monkeypatch):
    """Each change is validated against the kept positions: the inplace pass over a chain
    of n nodes does not sort the whole graph once per node (quadratic compile time)."""
    from sympile.graph.rewriting import destroyhandler
    from sympile.tensor.rewriting.inplace import InplaceElemwiseRewriter

    x = T.dvector("x")
    y = x
    for step in range(400):
        y = T.exp(y)[::-1] if step % 2 else T.sin(y)
    fgraph = FunctionGraph([x], [y])
    fgraph.attach_feature(DestroyHandler())
    whole_sorts = []
    sort = destroyhandler.io_toposort

    def counting(inputs, outputs, orderings=None):
        order = sort(inputs, outputs, orderings)
        if len(order) > 300:
            whole_sorts.append(len(order))
        return order

    monkeypatch.setattr(destroyhandler, "io_toposort", counting)
    InplaceElemwiseRewriter().apply(fgraph)
    made_inplace = [node for node in fgraph.apply_nodes
                    if isinstance(node.op, Elemwise) and node.op.inplace_pattern]
    assert len(made_inplace) == 399  # all but the first, whose input x is protected
    assert len(whole_sorts) <= 3
