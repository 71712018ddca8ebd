"""Random draw rewrites, in canonicalize_db (tags canonicalize, fast_run):

  local_unused_random_draw   RandomDraw(state, size, ...) whose sample nothing uses
                             -> its new state computed as state + [0, 1]

A RandomStreams draw's next state does not depend on what was drawn (philox.py), so a draw
kept only for its state update (updates=rng.updates() of a variable the outputs do not
use) costs an addition. MRG's next state depends on how many numbers each stream gave, and
is left alone. Random draws are never merged (MergeRewriter skips ops with is_random) nor
constant-folded (their do_constant_folding is False).
"""

from __future__ import annotations

import numpy as np

from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.tensor.random.op import RandomDraw
from sympile.tensor.rewriting.canonicalize import canonicalize_db
from sympile.tensor.variable import constant

__all__ = ["local_unused_random_draw"]


@node_rewriter([RandomDraw])
def local_unused_random_draw(fgraph: FunctionGraph, node):
    """RandomDraw whose sample is unused -> state + [0, 1] for its next state."""
    state, new_state, sample = node.inputs[0], node.outputs[0], node.outputs[1]
    if fgraph.clients.get(sample) or not fgraph.clients.get(new_state):
        return None
    return {new_state: state + constant(np.array([0, 1], np.uint64))}


canonicalize_db.register(local_unused_random_draw.name, local_unused_random_draw,
                         "canonicalize", "fast_run")
