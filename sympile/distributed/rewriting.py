"""The collectives' rewrite, in specialize_db (tags specialize, fast_run, distributed):

split_all_reduce   AllReduce(op)(x, ...) -> AllReduceWait(op)(AllReduceStart(op)(x, ...), x, ...)

The start runs as soon as its inputs are computed and the wait only when nothing else can
(their ops' schedule), so that the rest of the function (the backward pass of the layers
below, in data-parallel training) runs while the collective is in flight.
"""

from __future__ import annotations

from sympile.distributed.collectives import AllReduce, AllReduceStart, AllReduceWait
from sympile.graph.basic import Apply
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.tensor.rewriting.specialize import specialize_db


@node_rewriter([AllReduce])
def split_all_reduce(fgraph: FunctionGraph, node: Apply):
    """AllReduce -> AllReduceWait(AllReduceStart(...), ...) (see the module docstring)."""
    token = AllReduceStart(node.op.op)(*node.inputs)
    reduced = AllReduceWait(node.op.op)(token, *node.inputs)
    return [reduced] if len(node.inputs) == 1 else list(reduced)


specialize_db.register(split_all_reduce.name, split_all_reduce, "specialize", "fast_run",
                       "distributed")
