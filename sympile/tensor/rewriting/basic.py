"""The first rules: the merge pass and constant folding, and the database modes query.

PIPELINE, the phases of rewrite_db in the order they run (every rule module registers into
one by name), and this module's entries:
  merge              merge                   merge, fast_compile, fast_run
  constant_folding   local_constant_folding  constant_folding, fast_run (an in_to_out walk)
  final_merge        final_merge             merge, fast_run (merges the folded constants)
"""

from __future__ import annotations

import math
from typing import Any

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph, InconsistencyError
from sympile.graph.rewriting.basic import GraphRewriter, node_rewriter, record_rewrite
from sympile.graph.rewriting.db import Phase, RewriteDatabase
from sympile.tensor.type import TensorType, tensor_type

# Constant folding never creates a constant of more elements than this: a constant lives as
# long as the compiled function (and in every copy of it), while computing a large array
# at each call costs no more than the copy a returned constant needs anyway.
MAX_FOLDED_SIZE = 1_000_000


class MergeRewriter(GraphRewriter):
    """Merges what computes the same thing, until nothing is left to merge: constants with
    equal signatures (same Type and value) become one, then nodes with equal ops and the same
    inputs become one (their outputs replaced by the first node's).

    Nodes whose op destroys an input are never merged (each overwrites its own copy), nor
    random draws (is_random: two draws are two draws, even of one state). Two
    graph outputs may become one variable; function() still returns separate arrays.
    """

    def __init__(self, name: str = "merge"):
        self.name = name

    def apply(self, fgraph: FunctionGraph) -> bool:
        changed = False
        while True:
            merged = self._merge_constants(fgraph)
            merged = self._merge_nodes(fgraph) or merged
            if not merged:
                return changed
            changed = True

    def _merge_constants(self, fgraph: FunctionGraph) -> bool:
        changed = False
        first_of: dict[Any, Constant] = {}
        for constant in _constants(fgraph):
            first = first_of.setdefault(constant.signature(), constant)
            if first is constant or constant not in fgraph.variables:
                continue
            if _replace(fgraph, self.name, None, [(constant, first)]):
                changed = True
        return changed

    def _merge_nodes(self, fgraph: FunctionGraph) -> bool:
        changed = False
        first_of: dict[tuple, Apply] = {}
        # Topological order: a node's inputs are merged before the node is looked at, so one
        # pass merges whole duplicated subgraphs.
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or node.op.destroy_map or node.op.is_random:
                continue
            key = (node.op, tuple(id(v) for v in node.inputs))
            first = first_of.get(key)
            if first is None or first not in fgraph.apply_nodes:
                # The node kept in first_of keeps its inputs alive, so their ids stay unique.
                first_of[key] = node
                continue
            pairs = [(old, new) for old, new in zip(node.outputs, first.outputs)
                     if old in fgraph.variables]
            if any(not old.type.is_super(new.type) for old, new in pairs):
                # The first node's outputs are less precise: keep both rather than lose
                # static information.
                continue
            if _replace(fgraph, self.name, node, pairs):
                changed = True
        return changed


def _constants(fgraph: FunctionGraph) -> list[Constant]:
    """The constants of fgraph in a deterministic order (first use in topological order)."""
    seen: set[int] = set()
    result: list[Constant] = []
    for variable in [v for node in fgraph.toposort() for v in node.inputs] + fgraph.outputs:
        if isinstance(variable, Constant) and id(variable) not in seen:
            seen.add(id(variable))
            result.append(variable)
    return result


def _replace(fgraph: FunctionGraph, name: str, node: Apply | None,
             pairs: list[tuple[Variable, Variable]]) -> bool:
    """Replace `pairs` in fgraph and record it; False if a feature vetoed it."""
    if not pairs:
        return False
    try:
        fgraph.replace_all(pairs, reason=name)
    except InconsistencyError:
        return False
    record_rewrite(fgraph, name, node, [old for old, _ in pairs], [new for _, new in pairs])
    return True


def _static_size(variable: Variable) -> int | None:
    shape = variable.type.shape
    return None if None in shape else math.prod(shape)


@node_rewriter(None)
def local_constant_folding(fgraph: FunctionGraph, node: Apply):
    """op(c1, ..., cn) -> constant(op.perform(c1, ..., cn)) when every input is a constant.

    Skipped when: the node has no inputs; an output is not a tensor; the op's
    do_constant_folding declines; a result would hold more than MAX_FOLDED_SIZE elements
    (checked on the static shape before computing, and on the result); perform raises (the
    error then happens when the function runs, as without folding) or gives a value that is
    not exactly of the output's Type. The folded constant is a read-only copy with the
    result's full static shape.
    """
    if not node.inputs or not all(isinstance(v, Constant) for v in node.inputs):
        return None
    if not all(isinstance(output.type, TensorType) for output in node.outputs):
        return None
    if not node.op.do_constant_folding(fgraph, node):
        return None
    for output in node.outputs:
        size = _static_size(output)
        if size is not None and size > MAX_FOLDED_SIZE:
            return None
    storage: list[list[Any]] = [[None] for _ in node.outputs]
    try:
        node.op.perform(node, [v.data for v in node.inputs], storage)
    except Exception:
        return None
    replacements = []
    for output, (value,) in zip(node.outputs, storage):
        try:
            value = output.type.filter(value, strict=True)
        except (TypeError, ValueError):
            return None
        if value.size > MAX_FOLDED_SIZE:
            return None
        replacements.append(tensor_type(output.type.dtype, value.shape).make_constant(value))
    return replacements


# The rewrite pipeline: its phases in the order they run. Each rule module registers its
# rewriters into a phase by name; docs/architecture.md shows the same table and
# tests/tensor/rewriting/test_pipeline.py checks that the two agree. The positions are
# Theano-style numbers, so that a user's rewriter can still be placed between two phases.
PIPELINE = (
    Phase("merge", 0, "one node for identical subgraphs and equal constants"),
    Phase("inline", 0.1, "OpFromGraph(inline=True) replaced by its graph (builders.py)"),
    Phase("canonicalize", 0.5, "one normal form for the algebra (x * 1, x + 0, --x, "
          "constants gathered) with the rules other families add (canonicalize.py)"),
    Phase("shape", 0.6, "shapes computed from the inputs' shapes, not from the tensors "
          "(shape.py)"),
    Phase("constant_folding", 1, "nodes of constants computed at compile time"),
    Phase("scan", 1.2, "loop-invariant work moved out of scans, scans merged, the steps a "
          "scan keeps (scan/rewriting.py)"),
    Phase("after_scan", 1.3, "the zero rules again on what the scan phase leaves (zeros.py)"),
    Phase("stabilize", 1.5, "numerically stable forms: log1p, expm1, log-sum-exp, softplus, "
          "the fused cross-entropies (stabilize.py, nnet.py)"),
    Phase("specialize", 2, "cheaper forms of the same values: x ** 2 -> x * x, -1 * x -> -x "
          "(specialize.py)"),
    Phase("blas", 40, "products and the sums around them as Gemm, Gemv and Ger (blas.py)"),
    Phase("fusion", 49, "elementwise trees as one loop, then a reduction of one as a "
          "FusedCAReduce, and sum((x - x.mean())**2) read once (fusion.py)"),
    Phase("gpu", 60, "nodes with a GPU implementation moved to the device, transfers at the "
          "edges, when compiling for one (sympile/gpu/placement.py)"),
    Phase("final_merge", 100, "merge again what the phases made identical"),
    Phase("inplace", 110, "ops that overwrite an input no one reads after them (inplace.py)"),
)

rewrite_db = RewriteDatabase("rewrite_db", PIPELINE)
rewrite_db.register("merge", MergeRewriter("merge"), "merge", "fast_compile", "fast_run",
                    phase="merge")
rewrite_db.register("local_constant_folding", local_constant_folding, "constant_folding",
                    "fast_run", phase="constant_folding")
rewrite_db.register("final_merge", MergeRewriter("final_merge"), "merge", "fast_run",
                    phase="final_merge")
