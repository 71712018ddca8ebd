"""Rewrites of ifelse (sympile.ifelse), in canonicalize_db (tags canonicalize, ifelse,
fast_run), so that they meet the constants that folding makes:

    ifelse(constant c, a, b)                -> a if c is nonzero, else b
    ifelse(c, a, a)                         -> a
    ifelse(not c, a, b)                     -> ifelse(c, b, a)
    ifelse(c, ifelse(c, a, b), d)           -> ifelse(c, a, d)   (and in the else branch)
    op(ifelse(c, a1, b1), ifelse(c, a2, b2), x)
                                            -> ifelse(c, op(a1, a2, x), op(b1, b2, x))
                                               for op an Elemwise, DimShuffle or CAReduce
    ifelse(c, a1, b1), ifelse(c, a2, b2)    -> one ifelse(c, [a1, a2], [b1, b2])
    ifelse outputs nothing uses             -> no longer computed

Laziness is kept: what a rule moves into a branch runs only when that branch is taken, and
the rules that make one conditional of two (lifting, merging) do so only where neither was
already inside the branch of another conditional (unconditional_nodes), so that nothing
that used to be skipped comes to run on every call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sympile import scalar
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import OUTPUT, FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.ifelse.basic import IfElse
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.reduction import CAReduce
from sympile.tensor.rewriting.canonicalize import canonicalize_db

__all__ = [
    "LIFTED_OPS",
    "local_ifelse_constant_condition",
    "local_ifelse_lift",
    "local_ifelse_merge",
    "local_ifelse_negated_condition",
    "local_ifelse_nested_same_condition",
    "local_ifelse_remove_unused_outputs",
    "local_ifelse_same_branches",
    "unconditional_nodes",
    "unconditional_siblings",
]

# The ops an ifelse is lifted through: elementwise arithmetic (which then meets the
# constants of each branch: ifelse(c, g, ones) * y -> ifelse(c, g * y, y)), the broadcasting
# dimshuffles around it and reductions. PyTensor's list also has Dot, Reshape, Subtensor and
# others; here those would only move work around without exposing a simplification.
LIFTED_OPS = (Elemwise, DimShuffle, CAReduce)


def unconditional_nodes(fgraph: FunctionGraph) -> set[Apply]:
    """The nodes of fgraph that run on every call: those reached from the graph's outputs
    through inputs other than the branch inputs of a conditional (an op with branch_inputs,
    sympile.link.python.vm). A node outside this set may run only when some branch is taken,
    so a rewrite that makes it part of an unconditional node would make it run always."""
    reached: set[Apply] = set()
    stack = [variable.owner for variable in fgraph.outputs if variable.owner is not None]
    while stack:
        node = stack.pop()
        if node in reached:
            continue
        reached.add(node)
        branch_inputs = getattr(node.op, "branch_inputs", None)
        branch_slots: set[int] = set()
        if callable(branch_inputs):
            then_slots, else_slots = branch_inputs(node)
            branch_slots = set(then_slots) | set(else_slots)
        stack.extend(variable.owner for slot, variable in enumerate(node.inputs)
                     if slot not in branch_slots and variable.owner is not None)
    return reached


def unconditional_siblings(fgraph: FunctionGraph, node: Apply,
                           op_type: type) -> list[Apply]:
    """The other nodes of `op_type` whose first input is node's first input (a condition,
    a scan's n_steps), when node and they run on every call (unconditional_nodes): the
    candidates of a merge that must not make a branch's work run always."""
    first = node.inputs[0]
    others = [client for client, slot in fgraph.clients.get(first, ())
              if slot == 0 and client is not OUTPUT and client is not node
              and isinstance(client.op, op_type)]
    if not others:
        return []
    unconditional = unconditional_nodes(fgraph)
    if node not in unconditional:
        return []
    return [other for other in others if other in unconditional]


def _depends_on(variables: Sequence[Variable], nodes: Sequence[Apply]) -> bool:
    """True if any of `variables` is computed from an output of one of `nodes`."""
    targets = set(nodes)
    seen: set[Apply] = set()
    stack = [variable.owner for variable in variables if variable.owner is not None]
    while stack:
        node = stack.pop()
        if node in targets:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(variable.owner for variable in node.inputs if variable.owner is not None)
    return False


def _branches(node: Apply) -> tuple[list[Variable], list[Variable]]:
    then_slots, else_slots = node.op.branch_inputs(node)
    return [node.inputs[slot] for slot in then_slots], [node.inputs[slot] for slot in else_slots]


def _is_used(fgraph: FunctionGraph, variable: Variable) -> bool:
    return bool(fgraph.clients.get(variable))


def _ifelse(condition: Variable, then_values: list[Variable], else_values: list[Variable],
            name: str | None) -> list[Variable]:
    outputs = IfElse(len(then_values), as_view=True, name=name)(condition, *then_values,
                                                                *else_values)
    return outputs if isinstance(outputs, list) else [outputs]


def _fits(old: Sequence[Variable], new: Sequence[Variable]) -> bool:
    return all(o.type.is_super(n.type) for o, n in zip(old, new))


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


def _is_zero(variable: Variable) -> bool:
    if not isinstance(variable, Constant):
        return False
    data = np.asarray(variable.data)
    return data.size == 1 and data.dtype.kind in "biuf" and bool(data.reshape(()) == 0)


def _truth(condition: Variable) -> tuple[Variable, bool]:
    """(c, negated): `condition` is true exactly when c is nonzero (negated False) or zero
    (negated True), looking through logical_not(c), invert(c) of a bool c, eq(c, 0) and
    neq(c, 0), each of which is nonzero exactly when c is zero (nonzero for neq), nan
    included."""
    negated = False
    while condition.owner is not None and isinstance(condition.owner.op, Elemwise):
        scalar_op = condition.owner.op.scalar_op
        inputs = condition.owner.inputs
        if scalar_op == scalar.logical_not or (scalar_op == scalar.invert
                                               and inputs[0].type.dtype == "bool"):
            condition, negated = inputs[0], not negated
        elif scalar_op in (scalar.eq, scalar.neq) and any(map(_is_zero, inputs)):
            others = [variable for variable in inputs if not _is_zero(variable)]
            if len(others) != 1:
                return condition, negated
            condition = others[0]
            negated = negated != (scalar_op == scalar.eq)
        else:
            break
    return condition, negated


@node_rewriter([IfElse])
def local_ifelse_negated_condition(fgraph, node):
    """ifelse(not c, a, b) -> ifelse(c, b, a), with `not c` any of logical_not(c),
    invert(c) for a bool c, eq(c, 0); and ifelse(neq(c, 0), a, b) -> ifelse(c, a, b)."""
    condition, negated = _truth(node.inputs[0])
    if condition is node.inputs[0]:
        return None
    then_values, else_values = _branches(node)
    if negated:
        then_values, else_values = else_values, then_values
    return _ifelse(condition, then_values, else_values, node.op.name)


@node_rewriter([IfElse])
def local_ifelse_nested_same_condition(fgraph, node):
    """ifelse(c, ifelse(c, a, b), d) -> ifelse(c, a, d) and ifelse(c, d, ifelse(c, a, b))
    -> ifelse(c, d, b): inside a branch the condition is known."""
    condition = node.inputs[0]

    def known(value: Variable, taken: int) -> Variable:
        owner = value.owner
        if owner is None or not isinstance(owner.op, IfElse) or owner.inputs[0] is not condition:
            return value
        return _branches(owner)[taken][owner.outputs.index(value)]

    then_values, else_values = _branches(node)
    new_then = [known(value, 0) for value in then_values]
    new_else = [known(value, 1) for value in else_values]
    if all(new is old for new, old in zip(new_then + new_else, then_values + else_values)):
        return None
    outputs = _ifelse(condition, new_then, new_else, node.op.name)
    return outputs if _fits(node.outputs, outputs) else None


@node_rewriter([IfElse])
def local_ifelse_remove_unused_outputs(fgraph, node):
    """ifelse(c, [a1, a2], [b1, b2]) with the second output unused -> ifelse(c, a1, b1): the
    branch values of unused outputs are no longer computed."""
    used = [index for index, output in enumerate(node.outputs) if _is_used(fgraph, output)]
    if not used or len(used) == len(node.outputs):
        return None
    then_values, else_values = _branches(node)
    outputs = _ifelse(node.inputs[0], [then_values[i] for i in used],
                      [else_values[i] for i in used], node.op.name)
    return {node.outputs[index]: output for index, output in zip(used, outputs)}


def _same_broadcasting(value: Variable, like: Variable) -> bool:
    return all((length == 1) == (like_length == 1)
               for length, like_length in zip(value.type.shape, like.type.shape))


@node_rewriter(list(LIFTED_OPS))
def local_ifelse_lift(fgraph, node):
    """op(ifelse(c, a1, b1), ifelse(c, a2, b2), x) -> ifelse(c, op(a1, a2, x), op(b1, b2, x))
    for op in LIFTED_OPS, when every ifelse it reads has condition c and op's node is the only
    client of the ifelse outputs it reads: op then runs in the branch taken only, where it
    may simplify (ifelse(c, g, ones) * y -> ifelse(c, g * y, y)). The other used outputs
    of those ifelse nodes become outputs of the new one."""
    if node.op.destroy_map:
        return None
    conditionals = list({variable.owner: None for variable in node.inputs
                         if variable.owner is not None
                         and isinstance(variable.owner.op, IfElse)})
    if not conditionals:
        return None
    condition = conditionals[0].inputs[0]
    if any(conditional.inputs[0] is not condition for conditional in conditionals):
        return None
    then_inputs, else_inputs = [], []
    for variable in node.inputs:
        owner = variable.owner
        if owner not in conditionals:
            then_inputs.append(variable)
            else_inputs.append(variable)
            continue
        if any(client is not node for client, _ in fgraph.clients[variable]):
            return None
        index = owner.outputs.index(variable)
        then_values, else_values = _branches(owner)
        then_value, else_value = then_values[index], else_values[index]
        # Elemwise broadcasts only axes of static length 1: a branch value that has one
        # where the ifelse output does not would broadcast where the original raised.
        if not (_same_broadcasting(then_value, variable)
                and _same_broadcasting(else_value, variable)):
            return None
        then_inputs.append(then_value)
        else_inputs.append(else_value)
    # The new node reads the conditionals' inputs and node's others: none may be computed
    # from the conditionals' outputs that it replaces.
    other_inputs = [variable for variable in node.inputs if variable.owner not in conditionals]
    if len(conditionals) > 1 or other_inputs:
        read = [value for conditional in conditionals for value in conditional.inputs[1:]]
        if _depends_on(read + other_inputs, conditionals):
            return None
    try:
        then_outputs = node.op.make_node(*then_inputs).outputs
        else_outputs = node.op.make_node(*else_inputs).outputs
    except (TypeError, ValueError):
        # The branch values' static shapes do not fit together: that branch always raised.
        return None
    kept = [(conditional, index) for conditional in conditionals
            for index, output in enumerate(conditional.outputs)
            if _is_used(fgraph, output)
            and any(client is not node for client, _ in fgraph.clients[output])]
    if kept and len(conditionals) > 1:
        # The new node runs whenever any of the conditionals would, and computes the kept
        # outputs' values: only where all of them run on every call anyway.
        unconditional = unconditional_nodes(fgraph)
        if any(conditional not in unconditional for conditional in conditionals):
            return None
    kept_then = [_branches(conditional)[0][index] for conditional, index in kept]
    kept_else = [_branches(conditional)[1][index] for conditional, index in kept]
    outputs = _ifelse(condition, kept_then + list(then_outputs), kept_else + list(else_outputs),
                      conditionals[0].op.name)
    old = [conditional.outputs[index] for conditional, index in kept] + list(node.outputs)
    if not _fits(old, outputs):
        return None
    return dict(zip(old, outputs))


@node_rewriter([IfElse])
def local_ifelse_merge(fgraph, node):
    """ifelse(c, a1, b1), ifelse(c, a2, b2) -> ifelse(c, [a1, a2], [b1, b2]): one conditional,
    so that what both then branches (or both else branches) read runs in that branch only.
    Only for two nodes that run on every call, neither computed from the other."""
    condition = node.inputs[0]
    for other in unconditional_siblings(fgraph, node, IfElse):
        if _depends_on(node.inputs[1:], [other]) or _depends_on(other.inputs[1:], [node]):
            continue
        then_values, else_values = _branches(node)
        other_then, other_else = _branches(other)
        outputs = _ifelse(condition, then_values + other_then, else_values + other_else,
                          node.op.name or other.op.name)
        old = node.outputs + other.outputs
        return {variable: new for variable, new in zip(old, outputs)
                if _is_used(fgraph, variable)}
    return None


for _rule in (local_ifelse_constant_condition, local_ifelse_same_branches,
              local_ifelse_negated_condition, local_ifelse_nested_same_condition,
              local_ifelse_remove_unused_outputs, local_ifelse_lift, local_ifelse_merge):
    canonicalize_db.register(_rule.name, _rule, "canonicalize", "ifelse", "fast_run")
