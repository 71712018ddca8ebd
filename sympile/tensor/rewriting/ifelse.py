"""Rewrites of ifelse (sympile.ifelse), in canonicalize_db (tags canonicalize, ifelse,
fast_run), so that they meet the constants that folding makes:

    ifelse(constant c, a, b) -> a if c is nonzero, else b
    ifelse(c, a, a)          -> a
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Constant
from sympile.graph.rewriting.basic import node_rewriter
from sympile.ifelse import IfElse
from sympile.tensor.rewriting.canonicalize import canonicalize_db

__all__ = ["local_ifelse_constant_condition", "local_ifelse_same_branches"]


@node_rewriter([IfElse])
def local_ifelse_constant_condition(fgraph, node):
    """ifelse(c, then, else) with c a constant -> then if c is nonzero, else else."""
    condition = node.inputs[0]
    if not isinstance(condition, Constant):
        return None
    then_slots, else_slots = node.op.branch_inputs(node)
    slots = then_slots if bool(np.asarray(condition.data)) else else_slots
    return [node.inputs[slot] for slot in slots]


@node_rewriter([IfElse])
def local_ifelse_same_branches(fgraph, node):
    """ifelse(c, a, a) -> a, for each output whose then and else values are one variable."""
    then_slots, else_slots = node.op.branch_inputs(node)
    # An output already replaced has no clients left: replacing it again would not converge.
    replacements = [node.inputs[then_slot]
                    if node.inputs[then_slot] is node.inputs[else_slot]
                    and fgraph.clients.get(output) else None
                    for output, then_slot, else_slot in zip(node.outputs, then_slots, else_slots)]
    return replacements if any(r is not None for r in replacements) else None


for _rule in (local_ifelse_constant_condition, local_ifelse_same_branches):
    canonicalize_db.register(_rule.name, _rule, "canonicalize", "ifelse", "fast_run")
