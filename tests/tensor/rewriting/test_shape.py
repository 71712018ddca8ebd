"""Tests of ShapeFeature and the shape rewrites (sympile/tensor/rewriting/shape.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.compile.mode import get_mode
from sympile.graph.basic import Apply, Constant, ancestors, equal_computations
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.op import Op
from sympile.graph.rewriting.basic import in2out
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.rewriting import rewrite_db
from sympile.tensor.rewriting.shape import (
    ShapeFeature,
    ShapeRewritePass,
    local_shape_i_to_length,
    local_shape_to_lengths,
    local_subtensor_of_shape,
    local_useless_specify_shape_lengths,
    shape_feature,
)
from sympile.tensor.shape import MakeVector, Shape, ShapeI, SpecifyShape
from sympile.tensor.type import tensor, tensor_type
from tests.utils import arrays, shapes

FAST_RUN = get_mode("FAST_RUN")
WITHOUT_SHAPE = FAST_RUN.excluding("shape")


def op_types(function) -> list[type]:
    return [type(node.op) for node in function.maker.fgraph.toposort()]


def has_exp(function) -> bool:
    return any(isinstance(node.op, Elemwise) and node.op.scalar_op.name == "exp"
               for node in function.maker.fgraph.toposort())


def matrix(name: str = "x", dtype: str = "float64"):
    return tensor(dtype, (None, None), name=name)


def scalar(name: str, dtype: str = "int64"):
    return tensor(dtype, (), name=name)


class NoShapeOp(Op):
    """x + 1 without infer_shape (the feature must fall back to shape_i of its output)."""

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [tensor_type(x.type.dtype, (None,) * x.type.ndim)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + 1


def assert_int64_lengths(lengths, ndim: int) -> None:
    assert len(lengths) == ndim
    for length in lengths:
        assert length.type == tensor_type("int64", ())


# -- the feature --------------------------------------------------------------------------------

def test_feature_input_lengths_static_and_symbolic():
    x = tensor("float32", (3, None), name="x")
    fgraph = FunctionGraph([x], [T.exp(x)])
    feature = shape_feature(fgraph)
    assert fgraph.shape_feature is feature
    (x_in,) = fgraph.inputs
    first, second = feature.shape_of[x_in]
    assert isinstance(first, Constant) and int(first.data) == 3
    assert isinstance(second.owner.op, ShapeI) and second.owner.op.axis == 1
    assert second.owner.inputs[0] is x_in
    # The output's lengths come from Elemwise.infer_shape, i.e. from x's.
    out_lengths = feature.shape_of[fgraph.outputs[0]]
    assert_int64_lengths(out_lengths, 2)
    assert int(out_lengths[0].data) == 3
    assert equal_computations([out_lengths[1]], [second])


def test_feature_attached_twice_is_an_error():
    x = matrix()
    fgraph = FunctionGraph([x], [T.exp(x)], features=[ShapeFeature()])
    with pytest.raises(ValueError, match="already has a shape feature"):
        fgraph.attach_feature(ShapeFeature())


def test_feature_fallback_without_infer_shape():
    x = matrix()
    y = NoShapeOp()(x)
    fgraph = FunctionGraph([x], [T.exp(y)], features=[ShapeFeature()])
    (y_in,) = fgraph.outputs[0].owner.inputs
    lengths = fgraph.shape_feature.shape_of[y_in]
    assert_int64_lengths(lengths, 2)
    for axis, length in enumerate(lengths):
        assert isinstance(length.owner.op, ShapeI) and length.owner.op.axis == axis
        assert length.owner.inputs[0] is y_in


def test_feature_casts_and_keeps_static_lengths():
    x = matrix()
    n = scalar("n", "int32")
    r = T.reshape(x, (n, 4))
    fgraph = FunctionGraph([x, n], [r], features=[ShapeFeature()])
    lengths = fgraph.shape_feature.shape_of[fgraph.outputs[0]]
    assert_int64_lengths(lengths, 2)
    assert int(lengths[1].data) == 4


def test_feature_updates_on_change_input():
    x = matrix()
    y = T.exp(x)
    z = T.transpose(y)
    fgraph = FunctionGraph([x], [z], features=[ShapeFeature()])
    feature = fgraph.shape_feature
    (x_in,) = fgraph.inputs
    old = fgraph.outputs[0].owner.inputs[0]
    replacement = NoShapeOp()(x_in)
    fgraph.replace(old, replacement)
    assert old not in feature.shape_of
    lengths = feature.shape_of[fgraph.outputs[0]]
    # The transpose's lengths now come from the new input's (shape_i of it, swapped).
    assert [length.owner.inputs[0] for length in lengths] == [replacement, replacement]
    assert [length.owner.op.axis for length in lengths] == [1, 0]


def test_feature_detached_after_the_pass():
    x = matrix()
    function = sympile.function([x], T.shape(T.exp(x)))
    assert getattr(function.maker.fgraph, "shape_feature", None) is None
    assert not any(isinstance(f, ShapeFeature) for f in function.maker.fgraph.features)


# -- shape(x) and shape_i(x, i) ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_shape_of_computed_variable_skips_it(dtype):
    x = matrix(dtype=dtype)
    function = sympile.function([x], T.shape(T.exp(x)))
    assert not has_exp(function)
    assert Shape not in op_types(function)
    assert MakeVector in op_types(function)
    value = np.ones((2, 5), dtype=dtype)
    result = function(value)
    assert result.dtype == np.int64 and result.tolist() == [2, 5]
    kept = sympile.function([x], T.shape(T.exp(x)), mode=WITHOUT_SHAPE)
    assert has_exp(kept) and kept(value).tolist() == [2, 5]


def test_shape_i_of_computed_variable():
    x = matrix()
    function = sympile.function([x], T.exp(x).shape[0])
    assert op_types(function) == [ShapeI]
    assert function(np.zeros((4, 2))) == 4
    assert function(np.zeros((4, 2))).dtype == np.int64


def test_shape_of_static_shape_is_a_constant():
    x = tensor("float64", (3, 2), name="x")
    function = sympile.function([x], T.shape(T.exp(x)))
    assert op_types(function) == []
    assert function(np.zeros((3, 2))).tolist() == [3, 2]


def test_shape_of_scalar():
    s = scalar("s", "float64")
    function = sympile.function([s], T.shape(T.exp(s)))
    assert op_types(function) == []
    result = function(2.0)
    assert result.shape == (0,) and result.dtype == np.int64


def test_shape_of_graph_input_is_kept():
    # Its lengths are shape_i(x, i): they depend on x, so nothing is gained (and rewriting
    # shape_i(x, i) to itself would never end).
    x = matrix()
    function = sympile.function([x], [T.shape(x), x.shape[1] + 0])
    assert Shape in op_types(function)
    shape, second = function(np.zeros((2, 7)))
    assert shape.tolist() == [2, 7] and second == 7


def test_shape_through_op_without_infer_shape():
    x = matrix()
    y = NoShapeOp()(x)
    function = sympile.function([x], T.shape(T.exp(y)))
    assert not has_exp(function)
    assert NoShapeOp in op_types(function)
    assert function(np.zeros((3, 1))).tolist() == [3, 1]


def test_shape_of_reshape_with_symbolic_shape():
    x = matrix()
    n = scalar("n")
    function = sympile.function([x, n], T.shape(T.reshape(T.exp(x), (n, -1))))
    assert not has_exp(function)
    assert Shape not in op_types(function)
    value = np.zeros((2, 6))
    for length in (1, 2, 3, 4, 6, 12):
        assert tuple(function(value, length)) == value.reshape(length, -1).shape


def test_shape_of_join():
    x, y = matrix("x"), matrix("y")
    function = sympile.function([x, y], T.shape(T.join(0, T.exp(x), T.exp(y))))
    assert not has_exp(function)
    assert function(np.zeros((2, 3)), np.zeros((5, 3))).tolist() == [7, 3]


_CACHE: dict = {}


def _cached(key, build):
    """A compiled function built once for all the examples of a hypothesis test."""
    if key not in _CACHE:
        _CACHE[key] = build()
    return _CACHE[key]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_shape_of_subtensor_with_symbolic_bounds(data):
    x = matrix()
    start, stop, step = scalar("start"), scalar("stop"), scalar("step")
    function = _cached("subtensor", lambda: sympile.function(
        [x, start, stop, step], T.shape(T.exp(x)[start:stop:step, 1:])))
    assert not has_exp(function)
    value = data.draw(arrays("float64", shapes(min_dims=2, max_dims=2)))
    bounds = data.draw(st.tuples(st.integers(-6, 6), st.integers(-6, 6),
                                 st.integers(-3, 3).filter(bool)))
    expected = np.exp(value)[bounds[0]:bounds[1]:bounds[2], 1:].shape
    assert tuple(function(value, *bounds)) == expected


@given(arrays("float64", shapes(min_dims=1, max_dims=4)))
@settings(max_examples=20, deadline=None)
def test_shape_values_unchanged(value):
    x = tensor("float64", (None,) * value.ndim, name="x")
    out = T.shape(T.exp(T.transpose(x)) * 2)
    function = _cached(value.ndim, lambda: sympile.function([x], out))
    assert tuple(function(value)) == value.T.shape


def test_subtensor_of_make_vector_casts_to_its_dtype():
    a, b = scalar("a", "int32"), scalar("b", "int16")
    vector = MakeVector("int64")(a, b)
    fgraph = FunctionGraph([a, b], [vector[1], vector[-2]])
    in2out(local_subtensor_of_shape)(fgraph)
    fgraph.check_integrity()
    for output in fgraph.outputs:
        assert output.type == tensor_type("int64", ())
        assert not isinstance(output.owner.op, MakeVector)
    function = sympile.function([a, b], [vector[1], vector[-2]])
    first, second = function(3, 4)
    assert (first, second) == (4, 3) and first.dtype == np.int64


def test_no_cycle_and_types_exact_on_fgraph():
    x, n = matrix(), scalar("n")
    y = T.reshape(T.exp(x), (n, -1))
    outputs = [T.shape(y), y.shape[0], T.shape(x), x.shape[1], y]
    fgraph = FunctionGraph([x, n], outputs)
    types = [output.type for output in fgraph.outputs]
    rewriter = in2out(local_shape_to_lengths, local_shape_i_to_length, local_subtensor_of_shape)
    rewriter(fgraph)
    fgraph.check_integrity()
    assert [output.type for output in fgraph.outputs] == types
    # shape(x) and shape_i(x, 1) of the input stay; y's shape no longer uses y.
    assert isinstance(fgraph.outputs[2].owner.op, Shape)
    assert isinstance(fgraph.outputs[3].owner.op, ShapeI)
    y_in = fgraph.outputs[4]
    assert y_in not in ancestors(fgraph.outputs[:2])


# -- specify_shape ------------------------------------------------------------------------------

def test_specify_shape_with_known_lengths_removed():
    x = matrix()
    y = T.specify_shape(T.exp(x), (x.shape[0], None))
    function = sympile.function([x], y)
    assert SpecifyShape not in op_types(function)
    np.testing.assert_allclose(function(np.ones((2, 3))), np.exp(np.ones((2, 3))))
    kept = sympile.function([x], y, mode=WITHOUT_SHAPE)
    assert SpecifyShape in op_types(kept)


def test_specify_shape_with_unknown_length_kept():
    x, n = matrix(), scalar("n")
    function = sympile.function([x, n], T.specify_shape(T.exp(x), (n, None)))
    assert SpecifyShape in op_types(function)
    assert function(np.zeros((2, 2)), 2).shape == (2, 2)
    with pytest.raises(ValueError, match="specify_shape"):
        function(np.zeros((2, 2)), 3)


def test_specify_shape_static_result_more_precise_kept():
    # The result's type knows length 2, x's does not: x cannot replace it.
    x = matrix()
    fgraph = FunctionGraph([x], [T.specify_shape(T.exp(x), (2, None))])
    assert not in2out(local_useless_specify_shape_lengths)(fgraph)


def test_specify_shape_of_constant_length():
    x = matrix()
    y = T.specify_shape(T.specify_shape(T.exp(x), (2, None)), (2, None))
    function = sympile.function([x], y)
    assert op_types(function).count(SpecifyShape) == 1
    with pytest.raises(ValueError, match="specify_shape"):
        function(np.zeros((3, 2)))


# -- registration -------------------------------------------------------------------------------

def test_registered_in_rewrite_db():
    assert "shape" in rewrite_db
    assert {"shape", "canonicalize", "fast_run"} <= rewrite_db.tags_of("shape")
    names = rewrite_db.names()
    assert names.index("canonicalize") < names.index("shape")
    assert names.index("shape") < names.index("final_merge")


def test_pass_leaves_graph_without_shape_nodes_alone():
    x = matrix()
    fgraph = FunctionGraph([x], [T.exp(x)])
    rewriter = ShapeRewritePass(in2out(local_shape_to_lengths))
    assert not rewriter.apply(fgraph)
    assert getattr(fgraph, "shape_feature", None) is None


# -- useless alloc and reshape ------------------------------------------------------------------

_X = T.dmatrix("x")
_Y = T.dmatrix("y")
_V = T.dvector("v")
_STATIC = T.tensor("float64", shape=(2, 3), name="static")
_NO_REWRITE = sympile.compile.mode.Mode(rewriter=None)


@pytest.mark.parametrize("inputs, output", [
    ([_X], T.alloc(_X, _X.shape[0], _X.shape[1])),
    ([_STATIC], T.alloc(_STATIC, 2, 3)),
    ([_X], T.alloc(_X + 1, _X.shape[0], _X.shape[1])),
    ([_X], T.reshape(_X, _X.shape)),
    ([_X], T.reshape(_X, (_X.shape[0], -1))),
    ([_X], T.reshape(_X, (-1, _X.shape[1]))),
    ([_V], T.reshape(_V, (-1,))),
    ([_STATIC], T.reshape(_STATIC, (2, 3))),
], ids=["alloc", "alloc static", "alloc of sum", "reshape shape", "reshape -1 last",
        "reshape -1 first", "reshape vector", "reshape static"])
def test_useless_alloc_and_reshape_removed(inputs, output):
    f = sympile.function(inputs, output, mode=FAST_RUN.excluding("fusion"))
    assert not any(isinstance(node.op, (T.Alloc, T.Reshape)) for node in
                   f.maker.fgraph.apply_nodes)
    values = [np.arange(6.0).reshape((2, 3) if v.type.ndim == 2 else (6,)) for v in inputs]
    np.testing.assert_array_equal(f(*values), sympile.function(inputs, output,
                                                               mode=_NO_REWRITE)(*values))


@pytest.mark.parametrize("inputs, output", [
    ([_X], T.alloc(_X, _X.shape[1], _X.shape[0])),
    ([_X, _Y], T.alloc(_X, _Y.shape[0], _Y.shape[1])),
    ([_X], T.alloc(_X, 3, _X.shape[0], _X.shape[1])),
    ([_X], T.reshape(_X, (_X.shape[1], -1))),
    ([_X], T.reshape(_X, (-1, -1 + 0 * _X.shape[0]))),
    ([_X], T.reshape(_X, (_X.shape[1], _X.shape[0]))),
], ids=["alloc transposed", "alloc other lengths", "alloc more axes", "reshape transposed",
        "reshape two -1", "reshape swapped"])
def test_useful_alloc_and_reshape_kept(inputs, output):
    f = sympile.function(inputs, output, mode=FAST_RUN.excluding("fusion"))
    assert any(isinstance(node.op, (T.Alloc, T.Reshape)) for node in f.maker.fgraph.apply_nodes)


def test_alloc_of_a_more_precise_type_is_kept():
    # alloc(x, 2, 3) declares lengths x's type does not know: x alone would be less precise.
    f = sympile.function([_X], T.alloc(_X, 2, 3), mode=FAST_RUN.excluding("fusion"))
    assert any(isinstance(node.op, T.Alloc) for node in f.maker.fgraph.apply_nodes)
    with pytest.raises(ValueError, match="Alloc"):
        f(np.zeros((3, 3)))


def test_maximum_of_a_length_and_zero():
    f = sympile.function([_X], T.maximum(_X.shape[0], 0), mode=FAST_RUN.excluding("fusion"))
    assert op_types(f) == [ShapeI]
    assert f(np.zeros((4, 2))) == 4
    kept = sympile.function([_X], T.maximum(_X.shape[0], 3), mode=FAST_RUN.excluding("fusion"))
    assert kept(np.zeros((2, 2))) == 3


def test_arange_length_simplified():
    # sum(x) / arange(n).shape[0]: the length formula -((0 - n) // 1), clipped at 0, is n.
    n_vector = T.lvector("n")
    output = T.arange(n_vector.shape[0]).shape[0]
    f = sympile.function([n_vector], output, mode=FAST_RUN.excluding("fusion"))
    assert op_types(f) == [ShapeI]
    assert f(np.zeros(5, dtype="int64")) == 5
