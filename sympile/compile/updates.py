"""All-or-nothing updates: a call that fails changes no shared variable.

The VMs apply updates after the whole program ran, all together, so a failure anywhere
leaves the shared variables as they were, except where an inplace op writes a new value
straight over a shared variable's storage (Gemm_inplace on W, W * 2 + 1 in place, an
embedding's rows incremented in place): such a *commit* node changes the variable when it
runs. Each commit node is atomic on its own (its checks come before its first write), so
what must not happen is a failure after one commit node has written. function() arranges,
after the rewrites (protect_updates):

1. The commit nodes run after every node that does not depend on one (phase 1), in an order
   the UpdateOrder feature gives both backends' schedules. "Depends" counts the orderings
   of the graph's other features as well as its data: a node that the DestroyHandler must
   run after a commit node (it overwrites a value the commit node reads) depends on it.
2. Each commit node whose failure conditions are lengths that must agree (its op's
   length_constraints(node): elementwise ops, Gemm, Gemv, Ger) has them checked in phase 1,
   by a LengthsAgree node reading lengths known then (an inplace result has the length of
   what it overwrote): these cannot fail.
3. One other commit node (an indexed write, whose failure depends on index values) may
   remain: it runs first among the commit nodes, so when it fails nothing has been written.
   Any further one gets back its non-inplace form (it computes a new array; the update is
   applied at the end with the others), as does every commit node that a node other than a
   commit node depends on, and every commit node inside a lazy conditional's branch.

So fn(n_calls=N) that fails at call k has applied calls 1 .. k-1 and nothing of call k.
"""

from __future__ import annotations

from collections.abc import Sequence

from sympile.graph.basic import Apply, Variable, io_toposort
from sympile.graph.fgraph import Feature, FunctionGraph
from sympile.link.schedule import is_conditional, lazy_schedule
from sympile.tensor.inplace import base_form
from sympile.tensor.shape import LengthsAgree

__all__ = ["UpdateOrder", "protect_updates"]

def protect_updates(fgraph: FunctionGraph, shared_inputs: Sequence[Variable],
                    whole: bool = False) -> None:
    """Make `fgraph` (rewritten, with its DestroyHandler) update `shared_inputs` all or
    nothing (module docstring). whole: revert every commit node, so that each update
    replaces the stored value at the end of the call (the Python backend: numpy's loops let
    another thread run while an inplace op is half-way through a shared variable's array,
    and a function reading it there would see it torn)."""
    shared = {id(v) for v in shared_inputs}
    if not any(_commits(fgraph, shared)):
        return
    if whole:
        for node in _commits(fgraph, shared):
            _revert(fgraph, node)
        return
    # A commit node inside a lazy branch is reverted: ordering it after phase one would
    # take it out of its branch (lazy_schedule), running it when the branch should not run.
    in_branch = _lazy_branch_nodes(fgraph)
    for node in _commits(fgraph, shared):
        if node in in_branch:
            _revert(fgraph, node)
    # A commit node that a node other than a commit node depends on would let that node
    # fail after it wrote: revert it (one at a time: reverting changes the others' clients).
    while True:
        commits = _commits(fgraph, shared)
        late = _depending_on(fgraph, commits)
        blocked = [node for node in commits if any(d not in commits for d in late[node])]
        if not blocked:
            break
        _revert(fgraph, blocked[0])
    # Of the commit nodes whose checks are not lengths, one that depends on no commit node
    # may stay (it will run first); the others are reverted.
    commits = _commits(fgraph, shared)
    late = _depending_on(fgraph, commits)
    depends_on_commit = set().union(*late.values())
    unchecked = [node for node in commits if node.op.length_constraints(node) is None]
    first = next((node for node in unchecked if node not in depends_on_commit), None)
    for node in unchecked:
        if node is not first:
            _revert(fgraph, node)
    commits = _commits(fgraph, shared)
    for node in commits:
        if node is not first:
            _check_before(fgraph, node, set(commits))
    fgraph.attach_feature(UpdateOrder(_commits(fgraph, shared), first,
                                      _lazy_branch_nodes(fgraph)))


class UpdateOrder(Feature):
    """Orders each commit node after every node that depends on no commit node, and `first`
    (if any) before the other commit nodes. Nodes of lazy branches (`in_branch`) get no
    ordering: they run inside their conditional's step, which is ordered."""

    def __init__(self, commits: list[Apply], first: Apply | None, in_branch: set[Apply]):
        self.commits = commits
        self.first = first
        self.in_branch = in_branch

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        late = _depending_on(fgraph, self.commits, exclude=self)
        after_commit = set().union(*late.values()) | set(self.commits) | self.in_branch
        # In data order, not apply_nodes' (a set): the same graph gets the same order, hence
        # the same C main unit and its cache entry in every process.
        phase_one = [node for node in io_toposort(fgraph.inputs, fgraph.outputs)
                     if node not in after_commit]
        orderings = {}
        for node in self.commits:
            before = list(phase_one)
            if self.first is not None and node is not self.first:
                before.append(self.first)
            orderings[node] = before
        return orderings


def _lazy_branch_nodes(fgraph: FunctionGraph) -> set[Apply]:
    """The nodes that run inside a branch of a lazy conditional (lazy_schedule)."""
    nodes = fgraph.toposort()
    if not any(is_conditional(node) for node in nodes):
        return set()
    members: set[Apply] = set()

    def collect(steps, inside: bool) -> None:
        for step in steps:
            if inside:
                members.add(nodes[step.index])
            collect(step.then_steps, True)
            collect(step.else_steps, True)

    collect(lazy_schedule(nodes, fgraph.outputs, fgraph.orderings()), False)
    return members


def _commits(fgraph: FunctionGraph, shared: set[int]) -> list[Apply]:
    """The nodes that overwrite a shared variable's storage (or a view of it), in order."""
    if not shared:
        return []
    roots: dict[Variable, Variable] = {}
    return [node for node in fgraph.toposort() if node.op.destroy_map and any(
        id(_root(node.inputs[index], roots)) in shared
        for indices in node.op.destroy_map.values() for index in indices)]


def _root(variable: Variable, known: dict[Variable, Variable]) -> Variable:
    """The variable whose memory `variable` is: followed back through views and inplace
    results. `known` remembers the roots found, so that a long chain of views and inplace
    results is walked once."""
    path = []
    while variable not in known and variable.owner is not None:
        op = variable.owner.op
        source = (op.view_map.get(variable.index) or op.destroy_map.get(variable.index))
        if not source:
            break
        path.append(variable)
        variable = variable.owner.inputs[source[0]]
    root = known.get(variable, variable)
    for step in path:
        known[step] = root
    return root


def _depending_on(fgraph: FunctionGraph, nodes: list[Apply],
                  exclude: Feature | None = None) -> dict[Apply, set[Apply]]:
    """For each node of `nodes`, the nodes that must run after it (not itself): those that
    read its outputs, directly or not, and those that the orderings of fgraph's features
    (but `exclude`) put after it."""
    clients: dict[Apply, list[Apply]] = {}
    for node in fgraph.apply_nodes:
        for variable in node.inputs:
            if variable.owner is not None:
                clients.setdefault(variable.owner, []).append(node)
    for node, before in fgraph.orderings(exclude=exclude).items():
        for earlier in before:
            clients.setdefault(earlier, []).append(node)
    result = {}
    for node in nodes:
        seen: set[Apply] = set()
        stack = list(clients.get(node, ()))
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(clients.get(current, ()))
        result[node] = seen
    return result


def _length_source(variable: Variable, commits: set[Apply]) -> Variable:
    """A variable computed before any commit node with the shape of `variable`: through the
    commit nodes' inplace results back to what they overwrote."""
    while variable.owner in commits:
        variable = variable.owner.inputs[variable.owner.op.destroy_map[variable.index][0]]
    return variable


def _check_before(fgraph: FunctionGraph, node: Apply, commits: set[Apply]) -> None:
    """Put a LengthsAgree with `node`'s pairs on the overwritten input of the first commit
    node of `node`'s chain (the one overwriting a phase-one variable)."""
    pairs = node.op.length_constraints(node)
    if not pairs:
        return
    used = sorted({index for pair in pairs for index, _ in pair})
    sources = [_length_source(node.inputs[index], commits) for index in used]
    position = {index: slot for slot, index in enumerate(used, start=1)}
    head = node
    while True:
        destroyed = next(iter(head.op.destroy_map.values()))[0]
        owner = head.inputs[destroyed].owner
        if owner not in commits:
            break
        head = owner
    target = head.inputs[destroyed]
    check = LengthsAgree([((position[i], a), (position[j], b)) for (i, a), (j, b) in pairs],
                         str(node.op))(target, *sources)
    # An error names the user's line that built the update, not this module's.
    check.tag.trace = getattr(node.outputs[0].tag, "trace", None)
    fgraph.change_node_input(head, destroyed, check, reason="protect_updates")


def _revert(fgraph: FunctionGraph, node: Apply) -> None:
    """Replace `node` by its non-inplace form."""
    base = base_form(node.op)
    if base is None:
        raise TypeError(f"function: cannot make {node.op} leave shared variables untouched "
                        f"until the call succeeds (it has no non-inplace form)")
    new_node = base.make_node(*node.inputs)
    fgraph.replace_all(list(zip(node.outputs, new_node.outputs)), reason="protect_updates")
