"""Shape inference on a whole graph (ShapeFeature) and the rewrites that use it.

ShapeFeature keeps, for every tensor variable of a FunctionGraph, its shape as a tuple of
int64 0-d tensors: constants where the length is known when the graph is built, shape_i(x, i)
for a graph input x, and for a node's outputs what the op's infer_shape gives from the shapes
of its inputs (shape_i(output, i) when the op cannot say). These length graphs live outside
the FunctionGraph until a rewrite imports one.

The rewrites (shape_db, an EquilibriumDatabase registered in rewrite_db as 'shape', tags
shape, canonicalize, fast_run, in the shape phase, right after canonicalize):

  local_shape_to_lengths     shape(x)            -> make_vector(lengths of x)
  local_shape_i_to_length    shape_i(x, i)       -> length i of x
  local_subtensor_of_shape   shape(x)[i]         -> shape_i(x, i)
                             make_vector(*s)[i]  -> s[i]        (i a constant integer)
  local_useless_specify_shape_lengths
                             specify_shape(x, s) -> x when every given length is one the
                                                    feature already knows x has
  local_useless_alloc        alloc(x, *s)        -> x when s are x's own lengths
  local_useless_reshape      reshape(x, s)       -> x when s is shape(x) or x's own lengths
  local_maximum_of_length    maximum(shape_i(x, i), c <= 0) -> shape_i(x, i)

A length is used only when it does not depend on x (computing it then never computes x, and
replacing a shape of x by it cannot create a cycle), and when every node it would bring into
the graph computes integers or booleans of at most one dimension (shape arithmetic, never
a tensor's values that the graph no longer computes). As in Theano, the rewritten shape skips the
run-time checks of the ops it no longer runs: shape(reshape(x, (5,))) gives [5] even when x
does not have 5 elements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable, equal_computations
from sympile.graph.fgraph import OUTPUT, Feature, FunctionGraph
from sympile.graph.rewriting.basic import GraphRewriter, NodeRewriter, node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase, RewriteQuery
from sympile.scalar import basic as scalar
from sympile.tensor import math
from sympile.tensor.basic import Alloc
from sympile.tensor.elemwise.ops import Elemwise, is_elemwise_of
from sympile.tensor.rewriting.basic import MergeRewriter, local_constant_folding, rewrite_db
from sympile.tensor.rewriting.canonicalize import (
    local_add_zero,
    local_int_div_by_one,
    local_neg_of_sub,
    local_sub_zero,
    local_switch_same_branches,
)
from sympile.tensor.shape import MakeVector, Reshape, Shape, ShapeI, SpecifyShape, shape_i
from sympile.tensor.subtensor import SCALAR, Subtensor
from sympile.tensor.type import TensorType
from sympile.tensor.variable import constant

__all__ = [
    "ShapeDatabase",
    "ShapeFeature",
    "ShapeRewritePass",
    "local_maximum_of_length",
    "local_shape_i_to_length",
    "local_shape_to_lengths",
    "local_subtensor_of_shape",
    "local_useless_alloc",
    "local_useless_reshape",
    "local_useless_specify_shape_lengths",
    "shape_db",
    "shape_feature",
]

_INTEGER_KINDS = "iu"
# What the nodes a length brings into the graph may compute: integers and the booleans of
# comparisons (reshape's -1 test), never floating-point or complex values.
_SHAPE_ARITHMETIC_KINDS = "biu"


def _int64_constant(value: int) -> Variable:
    return constant(np.int64(value))


def _static_value(length: Variable) -> int | None:
    """The value of a length that is a constant, else None."""
    if isinstance(length, Constant):
        return int(np.asarray(length.data))
    return None


class ShapeFeature(Feature):
    """Keeps `shape_of[v]`, a tuple of int64 0-d tensors, for every tensor variable v of the
    graph it is attached to (see the module docstring). Attaching it sets
    `fgraph.shape_feature`; shapes are computed when a node is imported and recomputed for
    a node's outputs when one of its inputs changes. `shape_tuple(v)` gives the shape of any
    tensor variable, computing it (and its ancestors') when needed.
    """

    def __init__(self):
        self.shape_of: dict[Variable, tuple[Variable, ...]] = {}
        self.fgraph: FunctionGraph | None = None

    # -- callbacks --------------------------------------------------------------------------
    def on_attach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "shape_feature", None) is not None:
            raise ValueError("ShapeFeature: the graph already has a shape feature")
        fgraph.shape_feature = self
        self.fgraph = fgraph
        for variable in fgraph.inputs:
            self.shape_tuple(variable)
        for node in fgraph.toposort():
            self._set_outputs(node)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        fgraph.shape_feature = None
        self.fgraph = None
        self.shape_of = {}

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        self._set_outputs(node)

    def on_change_input(self, fgraph: FunctionGraph, node: Any, index: int, old: Variable,
                        new: Variable, reason: str | None) -> None:
        if isinstance(node, str) and node == OUTPUT:
            return
        self._set_outputs(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        for output in node.outputs:
            self.shape_of.pop(output, None)

    # -- shapes -----------------------------------------------------------------------------
    def shape_tuple(self, variable: Variable) -> tuple[Variable, ...] | None:
        """The lengths of `variable` (None if it is not a tensor)."""
        if not isinstance(variable.type, TensorType):
            return None
        known = self.shape_of.get(variable)
        if known is not None:
            return known
        if variable.owner is None:
            lengths = tuple(shape_i(variable, axis) for axis in range(variable.type.ndim))
            self.shape_of[variable] = lengths
            return lengths
        self._set_outputs(variable.owner)
        return self.shape_of[variable]

    def _set_outputs(self, node: Apply) -> None:
        """Compute and store the shapes of node's tensor outputs from its op's infer_shape."""
        input_shapes = [self.shape_tuple(variable) for variable in node.inputs]
        try:
            inferred = node.op.infer_shape(self.fgraph, node, input_shapes)
        except Exception:
            # the outputs' shape_i then, rather than a compilation that breaks.
            inferred = None
        if inferred is not None and len(inferred) != len(node.outputs):
            inferred = None
        for position, output in enumerate(node.outputs):
            if not isinstance(output.type, TensorType):
                continue
            lengths = None if inferred is None else inferred[position]
            self.shape_of[output] = self._normalized(output, lengths)

    def _normalized(self, output: Variable, lengths: Sequence[Any] | None) \
            -> tuple[Variable, ...]:
        """`lengths` as int64 0-d tensors, the static lengths of output's type taking
        precedence; shape_i(output, i) for a length infer_shape did not give properly."""
        ndim = output.type.ndim
        if lengths is None or len(lengths) != ndim:
            lengths = [None] * ndim
        result = []
        for axis, (static, length) in enumerate(zip(output.type.shape, lengths)):
            if static is not None:
                result.append(_int64_constant(static))
                continue
            converted = self._as_length(length)
            result.append(ShapeI(axis)(output) if converted is None else converted)
        return tuple(result)

    @staticmethod
    def _as_length(length: Any) -> Variable | None:
        """An inferred length as an int64 0-d tensor, or None if it is not an integer."""
        if isinstance(length, (bool, np.bool_)):
            return None
        if isinstance(length, (int, np.integer)):
            return _int64_constant(int(length))
        if not isinstance(length, Variable) or not isinstance(length.type, TensorType):
            return None
        if length.type.ndim != 0 or np.dtype(length.type.dtype).kind not in _INTEGER_KINDS:
            return None
        if isinstance(length, Constant):
            return _int64_constant(int(np.asarray(length.data)))
        return length if length.type.dtype == "int64" else math.cast(length, "int64")


def shape_feature(fgraph: FunctionGraph) -> ShapeFeature:
    """The ShapeFeature of fgraph, attached now if it has none."""
    feature = getattr(fgraph, "shape_feature", None)
    if feature is None:
        feature = ShapeFeature()
        fgraph.attach_feature(feature)
    return feature


def _usable(fgraph: FunctionGraph, lengths: Sequence[Variable],
            forbidden: Sequence[Variable]) -> bool:
    """True if the graphs of `lengths` depend on none of `forbidden` and every node they
    would add to fgraph computes only integer or boolean tensors of at most one dimension."""
    blocked = {id(v) for v in forbidden}
    seen: set[int] = set()
    stack = list(lengths)
    while stack:
        variable = stack.pop()
        if id(variable) in seen:
            continue
        seen.add(id(variable))
        if id(variable) in blocked:
            return False
        node = variable.owner
        if node is None:
            if not isinstance(variable, Constant) and variable not in fgraph.variables:
                return False
            continue
        if variable not in fgraph.variables:
            for output in node.outputs:
                if not isinstance(output.type, TensorType) or output.type.ndim > 1 \
                        or np.dtype(output.type.dtype).kind not in _SHAPE_ARITHMETIC_KINDS:
                    return False
        stack.extend(node.inputs)
    return True


# -- rewrites -----------------------------------------------------------------------------------

@node_rewriter([Shape])
def local_shape_to_lengths(fgraph: FunctionGraph, node: Apply):
    """shape(x) -> make_vector(lengths of x) (a constant when all are known), when the
    lengths do not depend on x."""
    (x,) = node.inputs
    lengths = shape_feature(fgraph).shape_tuple(x)
    if lengths is None or not _usable(fgraph, lengths, [x, node.outputs[0]]):
        return None
    values = [_static_value(length) for length in lengths]
    if all(value is not None for value in values):
        return [constant(np.array(values, dtype="int64"))]
    return [MakeVector("int64")(*lengths)]


@node_rewriter([ShapeI])
def local_shape_i_to_length(fgraph: FunctionGraph, node: Apply):
    """shape_i(x, i) -> length i of x, when it does not depend on x."""
    (x,) = node.inputs
    lengths = shape_feature(fgraph).shape_tuple(x)
    if lengths is None:
        return None
    length = lengths[node.op.axis]
    if not _usable(fgraph, [length], [x, node.outputs[0]]):
        return None
    return [length]


@node_rewriter([Subtensor])
def local_subtensor_of_shape(fgraph: FunctionGraph, node: Apply):
    """shape(x)[i] -> shape_i(x, i) and make_vector(*s)[i] -> s[i] (cast to the vector's
    dtype), for a constant integer i (x.shape[0] becomes the length alone)."""
    vector = node.inputs[0]
    if len(node.op.idx_list) != 1 or vector.owner is None:
        return None
    (entry,) = node.op.idx_list
    if isinstance(entry, int) and not isinstance(entry, bool):
        index = entry
    elif entry == SCALAR and isinstance(node.inputs[1], Constant):
        index = int(np.asarray(node.inputs[1].data))
    else:
        return None
    source = vector.owner
    if isinstance(source.op, Shape):
        # Subtensor.make_node has checked the index against the vector's static length.
        (x,) = source.inputs
        return [shape_i(x, index % x.type.ndim)]
    if isinstance(source.op, MakeVector):
        return [math.cast(source.inputs[index], node.outputs[0].type.dtype)]
    return None


def _same_length(known: Variable, given: Variable) -> bool:
    """True if the two lengths are equal whatever the inputs' values: equal constants, or
    graphs computing the same thing."""
    known_value, given_value = _static_value(known), _static_value(given)
    if known_value is not None or given_value is not None:
        return known_value is not None and known_value == given_value
    if given.type.dtype != known.type.dtype:
        return False
    return equal_computations([known], [given])


@node_rewriter([SpecifyShape])
def local_useless_specify_shape_lengths(fgraph: FunctionGraph, node: Apply):
    """specify_shape(x, shape) -> x when each given length is None or equal (as a constant
    or as the same computation) to the length the feature knows for x, and x's type is as
    precise as the result's."""
    x, *given = node.inputs
    if not node.outputs[0].type.is_super(x.type):
        return None
    lengths = shape_feature(fgraph).shape_tuple(x)
    if lengths is None:
        return None
    for known, length in zip(lengths, given):
        if _static_value(length) == -1:
            continue
        if not _same_length(known, length):
            return None
    return [x]


def _has_lengths(fgraph: FunctionGraph, x: Variable, lengths: Sequence[Variable]) -> bool:
    """True if `lengths` are, one by one, the lengths the feature knows x has."""
    known = shape_feature(fgraph).shape_tuple(x)
    return known is not None and len(known) == len(lengths) \
        and all(_same_length(own, length) for own, length in zip(known, lengths))


@node_rewriter([Alloc])
def local_useless_alloc(fgraph: FunctionGraph, node: Apply):
    """alloc(x, *lengths) -> x when x has those lengths already (the same number of axes,
    each length equal as a constant or as the same computation) and x's type is as precise
    as the result's: nothing is broadcast, the copy is all the node does."""
    x, *lengths = node.inputs
    if not node.outputs[0].type.is_super(x.type) or not _has_lengths(fgraph, x, lengths):
        return None
    return [x]


@node_rewriter([Reshape])
def local_useless_reshape(fgraph: FunctionGraph, node: Apply):
    """reshape(x, s) -> x when s is shape(x), or a vector of x's own lengths (one entry may be
    -1 when all the others match, as may the only entry of a vector's reshape)."""
    x, shape = node.inputs
    if x.type.ndim != node.op.ndim or not node.outputs[0].type.is_super(x.type):
        return None
    source = shape.owner
    if source is not None and isinstance(source.op, Shape) and source.inputs[0] is x:
        return [x]
    if source is None or not isinstance(source.op, MakeVector):
        if isinstance(shape, Constant):
            entries = [constant(np.int64(value)) for value in np.asarray(shape.data)]
        else:
            return None
    else:
        entries = list(source.inputs)
    known = shape_feature(fgraph).shape_tuple(x)
    unmatched = [position for position, (own, entry) in enumerate(zip(known, entries))
                 if not _same_length(own, math.cast(entry, "int64")
                                     if entry.type.dtype != "int64" else entry)]
    if len(unmatched) > 1:
        return None
    if unmatched and _static_value(entries[unmatched[0]]) != -1:
        return None
    return [x]


@node_rewriter([Elemwise])
def local_maximum_of_length(fgraph: FunctionGraph, node: Apply):
    """maximum(shape_i(x, i), c) and maximum(c, shape_i(x, i)) -> shape_i(x, i) for a
    constant c <= 0: a length is never negative (arange's length builds these)."""
    if not is_elemwise_of(node.outputs[0], scalar.maximum):
        return None
    for length, other in (node.inputs, node.inputs[::-1]):
        if length.owner is not None and isinstance(length.owner.op, ShapeI) \
                and isinstance(other, Constant) and np.all(np.asarray(other.data) <= 0) \
                and node.outputs[0].type == length.type:
            return [length]
    return None


SHAPE_RULES: tuple[NodeRewriter, ...] = (
    local_shape_to_lengths, local_shape_i_to_length, local_subtensor_of_shape,
    local_useless_specify_shape_lengths, local_useless_alloc, local_useless_reshape,
    local_maximum_of_length,
)


class ShapeRewritePass(GraphRewriter):
    """Runs the shape rules until none changes the graph, with a ShapeFeature attached for
    the pass (and removed after it, if the pass attached it). A graph without shape,
    shape_i, specify_shape, alloc or reshape nodes is left alone at once."""

    def __init__(self, rewriter: GraphRewriter, name: str = "shape"):
        self.rewriter = rewriter
        self.name = name

    def apply(self, fgraph: FunctionGraph) -> bool:
        if not any(isinstance(node.op, (Shape, ShapeI, SpecifyShape, Alloc, Reshape))
                   for node in fgraph.apply_nodes):
            return False
        attached = getattr(fgraph, "shape_feature", None) is None
        feature = shape_feature(fgraph)
        try:
            return bool(self.rewriter.apply(fgraph))
        finally:
            if attached:
                fgraph.remove_feature(feature)


class ShapeDatabase(EquilibriumDatabase):
    """An EquilibriumDatabase whose query runs inside a ShapeRewritePass."""

    def query_rewriter(self, query: RewriteQuery) -> GraphRewriter:
        return ShapeRewritePass(super().query_rewriter(query), name=self.name)


shape_db = ShapeDatabase("shape")
for _rule in SHAPE_RULES:
    shape_db.register(_rule.name, _rule, "shape", "canonicalize", "fast_run")
# The lengths this pass brings in (arange's: -((0 - n) // 1), clipped at 0) are simplified
# by these integer rules of canonicalize, which ran before them.
for _rule in (local_int_div_by_one, local_neg_of_sub, local_sub_zero, local_add_zero,
              local_switch_same_branches, local_constant_folding):
    shape_db.register(_rule.name, _rule, "shape", "canonicalize", "fast_run")
del _rule
shape_db.register("merge", MergeRewriter("merge"), "shape", "merge", "fast_run")

rewrite_db.register("shape", shape_db, "shape", "canonicalize", "fast_run",
                    phase="shape")
