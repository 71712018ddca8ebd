"""Inplace rewrites: a node whose op has an overwriting form gets it when the graph's
DestroyHandler allows (sympile.graph.rewriting.destroyhandler), so its result reuses the
memory of an input nobody needs any more.

  elemwise(x, y)            -> elemwise_inplace(x, y)    output over x (or y): an input of the
                                                          output's dtype and static shape
  gemm / gemv / ger(z, ...) -> Gemm/Gemv/Ger_inplace     over z (y, a)
  (advanced_)inc/set_subtensor(x, y, ...) -> ..._inplace over x

Registered in rewrite_db as 'inplace' (tags inplace and fast_run) in the inplace phase, after
every other pass (fusion, BLAS and the final merge, whose rules match the overwriting ops
not at all or less well). Each is a graph rewriter visiting the nodes in topological order
and trying the inputs of a node in turn: the first change the handler accepts is kept, a
vetoed one is rolled back and the next input tried. function() lets them overwrite the
inputs declared In(..., mutable=True) and the shared variables that have an update;
get_mode("FAST_RUN").excluding("inplace") compiles without them.
"""

from __future__ import annotations

from sympile.graph.basic import Apply, ancestors
from sympile.graph.fgraph import FunctionGraph, InconsistencyError
from sympile.graph.op import Op
from sympile.graph.rewriting.basic import GraphRewriter, record_rewrite
from sympile.graph.rewriting.db import RewriteDatabase
from sympile.graph.rewriting.destroyhandler import DestroyHandler, destroy_handler_of
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.inplace import inplace_form
from sympile.tensor.rewriting.basic import rewrite_db

__all__ = ["InplaceElemwiseRewriter", "InplaceOpRewriter", "inplace_db"]



def _try_replace(fgraph: FunctionGraph, name: str, node: Apply, op: Op) -> Apply | None:
    """Replace `node` by `op` applied to its inputs; the new node, or None if a feature
    vetoed the change (the graph is then as it was)."""
    new_node = op.make_node(*node.inputs)
    pairs = [(old, new) for old, new in zip(node.outputs, new_node.outputs)
             if old in fgraph.variables]
    if not pairs:
        return None
    try:
        fgraph.replace_all(pairs, reason=name)
    except InconsistencyError:
        return None
    record_rewrite(fgraph, name, node, [old for old, _ in pairs], [new for _, new in pairs])
    return new_node


class InplaceElemwiseRewriter(GraphRewriter):
    """elemwise(..., x, ...) -> the same Elemwise with inplace_pattern ((output, x's index),):
    for each output in turn, the first input of the output's dtype and static shape (so of its
    run-time shape) that the DestroyHandler lets it overwrite, trying first the inputs that
    only the nodes it depends on read besides it."""

    def __init__(self, name: str = "inplace_elemwise"):
        self.name = name

    def apply(self, fgraph: FunctionGraph) -> bool:
        handler = destroy_handler_of(fgraph)
        changed = False
        for node in fgraph.toposort():
            if node in fgraph.apply_nodes and isinstance(node.op, Elemwise) \
                    and not node.op.inplace_pattern:
                changed = self._rewrite(fgraph, handler, node) or changed
        return changed

    def _rewrite(self, fgraph: FunctionGraph, handler: DestroyHandler, node: Apply) -> bool:
        op = node.op
        pattern: tuple[tuple[int, int], ...] = ()
        for output_index, output in enumerate(node.outputs):
            taken = {input_index for _, input_index in pattern}
            for input_index in _by_other_readers(fgraph, node):
                variable = node.inputs[input_index]
                if input_index in taken or variable.type != output.type \
                        or not handler.may_destroy(node, input_index):
                    continue
                candidate = Elemwise(op.scalar_op, pattern + ((output_index, input_index),),
                                     op.name)
                new_node = _try_replace(fgraph, self.name, node, candidate)
                if new_node is not None:
                    node = new_node
                    pattern = candidate.inplace_pattern
                    break
        return bool(pattern)


def _by_other_readers(fgraph: FunctionGraph, node: Apply) -> list[int]:
    """node's input indexes, first those that only node and nodes it depends on read:
    overwriting one of them orders nothing new. Overwriting a value that other nodes read
    must run after them all, which can force an update that would have been written in
    place to be computed anew (sympile.compile.updates)."""
    upstream: set[Apply] | None = None

    def read_elsewhere(index: int) -> bool:
        nonlocal upstream
        others = [client for client, _ in fgraph.clients[node.inputs[index]]
                  if client is not node]
        if not others:
            return False
        if upstream is None:
            upstream = {v.owner for v in ancestors(node.inputs) if v.owner is not None}
        return any(client not in upstream for client in others)
    return sorted(range(len(node.inputs)), key=read_elsewhere)


class InplaceOpRewriter(GraphRewriter):
    """op(x, ...) -> its overwriting form (sympile.tensor.inplace.inplace_form) over x, for
    Gemm, Gemv, Ger, IncSubtensor and AdvancedIncSubtensor, when the DestroyHandler allows."""

    def __init__(self, name: str = "inplace_ops"):
        self.name = name

    def apply(self, fgraph: FunctionGraph) -> bool:
        handler = destroy_handler_of(fgraph)
        changed = False
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or node.op.destroy_map:
                continue
            op = inplace_form(node.op)
            if op is None or not handler.may_destroy(node, 0):
                continue
            changed = _try_replace(fgraph, self.name, node, op) is not None or changed
        return changed


inplace_db = RewriteDatabase("inplace_db")
# The BLAS updates first: their output is usually the larger array, and an elementwise node
# reading z would otherwise take it.
inplace_db.register("inplace_ops", InplaceOpRewriter(), "inplace", "fast_run")
inplace_db.register("inplace_elemwise", InplaceElemwiseRewriter(), "inplace",
                    "fast_run")

rewrite_db.register("inplace", inplace_db, "inplace", "fast_run", phase="inplace")
