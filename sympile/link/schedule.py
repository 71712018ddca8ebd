"""The lazy schedule both backends run: which nodes run, in which order, and which only once
a conditional knows its branch.

An op with `branch_inputs(node) -> (then positions, else positions)`
(sympile.ifelse.basic.IfElse) is a conditional: input 0 is a scalar condition (nonzero is
true), and it reads only the inputs of the branch that the condition selects. `lazy_schedule`
takes out of the main sequence the nodes that only one branch of a conditional needs and has
the conditional's step run them after the condition is known. The Python VM
(link/python/vm.py), the C program (link/c/codegen.py) and compile's update ordering
(compile/updates.py) all read this one schedule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sympile.graph.basic import Apply, Variable

__all__ = ["Step", "is_conditional", "lazy_schedule"]


@dataclass
class Step:
    """Run node `index` (a position in the toposorted nodes). For a conditional, first run
    then_steps if its condition is nonzero, else else_steps."""

    index: int
    then_steps: list[Step] = field(default_factory=list)
    else_steps: list[Step] = field(default_factory=list)


def is_conditional(node: Apply) -> bool:
    return callable(getattr(node.op, "branch_inputs", None))


def lazy_schedule(nodes: Sequence[Apply], outputs: Sequence[Variable],
                  orderings: Mapping[Apply, Sequence[Apply]] | None = None) -> list[Step]:
    """The steps that run `nodes` (toposorted, honouring `orderings`) for `outputs`, each
    node only when needed.

    A node belongs to the then branch of conditional C when it is needed only through C's
    then inputs: none of its outputs is in `outputs`, each use of them is a then input of C
    or a node of that branch, and each node that `orderings` ({node: nodes to run before
    it}, e.g. a DestroyHandler's) runs after it is of that branch too, or of C's else
    branch, or of the other branch of a conditional whose branch holds C (likewise for
    else). The two branches of one conditional never both run, so an ordering between them
    orders nothing. The branch's nodes run inside C's step, in their order, and nested
    conditionals are scheduled the same way inside a branch. Everything a branch reads from
    outside it, and every node ordered before one of the branch's, precedes C in `nodes`,
    so it has run (or is of the other branch, and never runs in this call).
    """
    clients: dict[Variable, list[tuple[Apply, int]]] = {}
    for node in nodes:
        for slot, variable in enumerate(node.inputs):
            clients.setdefault(variable, []).append((node, slot))
    successors: dict[Apply, list[Apply]] = {}
    for node, before in (orderings or {}).items():
        for predecessor in before:
            successors.setdefault(predecessor, []).append(node)
    position = {node: index for index, node in enumerate(nodes)}
    return _schedule_block(list(nodes), set(outputs), clients, successors, position, set())


def _schedule_block(block: list[Apply], escaping: set[Variable],
                    clients: dict[Variable, list[tuple[Apply, int]]],
                    successors: dict[Apply, list[Apply]],
                    position: dict[Apply, int], exclusive: set[Apply]) -> list[Step]:
    """The steps of `block`; `exclusive`: the nodes that never run when `block` does (those of
    the other branch of each conditional whose branch `block` is)."""
    in_branch: set[Apply] = set()
    branches: dict[Apply, tuple[list[Apply], list[Apply]]] = {}
    # Outermost first: a conditional inside another's branch is taken with that branch.
    for conditional in reversed(block):
        if conditional in in_branch or not is_conditional(conditional):
            continue
        before = block[:block.index(conditional)]
        then_nodes, else_nodes = _branch_nodes(conditional, before, escaping, clients,
                                               successors, exclusive)
        in_branch.update(then_nodes, else_nodes)
        branches[conditional] = (then_nodes, else_nodes)
    steps = []
    for node in block:
        if node in in_branch:
            continue
        step = Step(position[node])
        if node in branches:
            then_nodes, else_nodes = branches[node]
            step.then_steps = _schedule_block(then_nodes, escaping, clients, successors,
                                              position, exclusive | set(else_nodes))
            step.else_steps = _schedule_block(else_nodes, escaping, clients, successors,
                                              position, exclusive | set(then_nodes))
        steps.append(step)
    return steps


def _branch_nodes(conditional: Apply, before: list[Apply], escaping: set[Variable],
                  clients: dict[Variable, list[tuple[Apply, int]]],
                  successors: dict[Apply, list[Apply]],
                  exclusive: set[Apply]) -> tuple[list[Apply], list[Apply]]:
    """The nodes of `before` needed only through the then inputs of `conditional`, and those
    needed only through its else inputs, each in order; every ordered successor of a member
    is of its branch, of the other branch (never run with it) or `exclusive`. Clients and
    successors follow their producers, so one backward pass decides each node."""
    then_slots, else_slots = (set(slots) for slots in conditional.op.branch_inputs(conditional))
    then_members: set[Apply] = set()
    else_members: set[Apply] = set()
    for node in reversed(before):
        uses = [use for output in node.outputs for use in clients.get(output, [])]
        if not uses or any(output in escaping for output in node.outputs):
            continue
        if not all(successor in then_members or successor in else_members
                   or successor in exclusive for successor in successors.get(node, ())):
            continue
        for slots, members in ((then_slots, then_members), (else_slots, else_members)):
            if all((user is conditional and slot in slots) or user in members
                   for user, slot in uses):
                members.add(node)
                break
    return ([node for node in before if node in then_members],
            [node for node in before if node in else_members])
