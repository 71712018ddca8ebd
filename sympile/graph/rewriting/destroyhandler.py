"""DestroyHandler: the FunctionGraph feature that keeps inplace operations safe.

An op that overwrites an input declares it in its destroy_map ({output: [input]}); an op whose
output shares the memory of an input declares it in its view_map. Following view_map edges
up from a variable gives its bases (the variables that own the memory, normally one); the
family of a base is the base and every variable that views it, directly or through views of
views. A node that destroys input i overwrites the memory of every base of that input, so
every other use of the family must be done before it runs.

The handler accepts a graph only if, for every destroyed input of every node N:

- no base is a constant, or a graph input other than the `mutable_inputs` (function()
  passes the inputs declared In(..., mutable=True) and the shared variables that have an
  update, whose old value is dead after the call);
- no base is destroyed by another node, or through another input of N;
- no member of the family is a graph output (the caller reads it after the call) or read by
  N through another input;
- every other node reading a member of the family can run before N: the handler adds those
  orderings (fgraph.toposort honours them) and rejects a change that makes them a cycle.

validate() raises InconsistencyError naming the node and the reason, so FunctionGraph
rolls back a replace that would break a rule. may_destroy(node, index) answers the same
question for a node before it is made inplace, without the cycle check.

Validation is incremental, so that compiling grows about linearly with the graph (a pass
such as the inplace one validates once per node it changes). The handler keeps each
destroyer's readers and a topological position for every node, the order of the graph as
last validated. A change marks the bases of the variables whose uses it changed; the next
validation recomputes only the destroyers of the families of those bases, places the new
nodes between what they read and what reads them, and checks only the new data edges and
the recomputed orderings against the positions. Positions that hold prove the graph
acyclic; when one does not, a full topological sort with every ordering decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sympile.graph.basic import Apply, Constant, Variable, io_toposort
from sympile.graph.fgraph import OUTPUT, Feature, FunctionGraph, InconsistencyError

__all__ = ["DestroyHandler", "destroy_handler_of"]


class DestroyHandler(Feature):
    """Vets every change of the graph it is attached to (see the module docstring) and orders
    the readers of a destroyed value before its destroyer.

    mutable_inputs: inputs of the graph that nodes may overwrite (a list; assign a new one
    to change them). Attaching sets `fgraph.destroy_handler` to the handler.
    """

    def __init__(self, mutable_inputs: Iterable[Variable] = ()):
        self.fgraph: FunctionGraph | None = None
        self.destroyers: set[Apply] = set()
        self._forget()
        self.mutable_inputs = list(mutable_inputs)

    @property
    def mutable_inputs(self) -> list[Variable]:
        return list(self._mutable_inputs)

    @mutable_inputs.setter
    def mutable_inputs(self, variables: Iterable[Variable]) -> None:
        self._mutable_inputs = list(variables)
        self._mutable = set(self._mutable_inputs)
        self._records_stale = True

    def _forget(self) -> None:
        """Drop every incremental record: the next query analyses the whole graph."""
        # {destroyer: the other readers of what it overwrites}, for those that have some.
        self._readers: dict[Apply, list[Apply]] = {}
        self._records_stale = True
        # Bases whose family changed since the readers were last brought up to date, and
        # destroyers not analysed yet (ordered sets, so that errors are deterministic).
        self._dirty_bases: dict[Variable, None] = {}
        self._pending: dict[Apply, None] = {}
        # Destroyers analysed since the positions last proved the graph acyclic.
        self._unchecked: dict[Apply, None] = {}
        # A topological position of each node as last validated, None before the first
        # validation; the nodes imported and those whose inputs changed since.
        self._position: dict[Apply, float] | None = None
        self._new: dict[Apply, None] = {}
        self._touched: dict[Apply, None] = {}

    # -- feature callbacks ------------------------------------------------------------------
    def on_attach(self, fgraph: FunctionGraph) -> None:
        if self.fgraph is not None:
            raise ValueError("DestroyHandler: already attached to a graph")
        if getattr(fgraph, "destroy_handler", None) is not None:
            raise ValueError("DestroyHandler: the graph already has a destroy handler")
        self.fgraph = fgraph
        fgraph.destroy_handler = self
        self.destroyers = {node for node in fgraph.apply_nodes if node.op.destroy_map}
        self._forget()

    def on_detach(self, fgraph: FunctionGraph) -> None:
        fgraph.destroy_handler = None
        self.fgraph = None
        self.destroyers = set()
        self._forget()

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        if node.op.destroy_map:
            self.destroyers.add(node)
            self._pending[node] = None
        self._mark(node.inputs)
        if self._position is not None:
            self._new[node] = None

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        self.destroyers.discard(node)
        for record in (self._readers, self._pending, self._unchecked, self._new,
                       self._touched):
            record.pop(node, None)
        if self._position is not None:
            self._position.pop(node, None)
        self._mark(node.inputs)

    def on_change_input(self, fgraph: FunctionGraph, node: Any, index: int, old: Variable,
                        new: Variable, reason: str | None) -> None:
        self._mark((old, new))
        if isinstance(node, Apply):
            if node.op.destroy_map:
                self._pending[node] = None
            if self._position is not None:
                self._touched[node] = None

    def _mark(self, variables: Iterable[Variable]) -> None:
        """The uses of `variables` changed: the destroyers of their families need a look."""
        if self._records_stale:
            return
        for variable in variables:
            for base in _bases(variable):
                self._dirty_bases[base] = None

    # -- validation -------------------------------------------------------------------------
    def validate(self, fgraph: FunctionGraph) -> None:
        """InconsistencyError unless the graph keeps every rule of the module docstring."""
        if not self.destroyers:
            self._forget()
            self._records_stale = False
            return
        self._refresh()
        if self._position is None or not self._positions_hold():
            self._sort_all(fgraph)
        self._unchecked.clear()
        self._new.clear()
        self._touched.clear()

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """{destroyer: the other readers of what it destroys}; InconsistencyError if a
        destroyed value is protected, an output, or destroyed twice."""
        if not self.destroyers:
            return {}
        self._refresh()
        return dict(self._readers)

    def _refresh(self) -> None:
        """Bring the readers of every destroyer up to date, analysing only those the changes
        since the last refresh may concern (every destroyer after attaching or an error)."""
        fgraph = self._attached("validate")
        if self._records_stale:
            targets = dict.fromkeys(node for node in io_toposort(fgraph.inputs, fgraph.outputs)
                                    if node in self.destroyers)
            self._readers = {}
        else:
            targets = dict(self._pending)
            for base in self._dirty_bases:
                for variable in _family(fgraph, base):
                    for client, position in fgraph.clients.get(variable, ()):
                        if isinstance(client, Apply) and position in _destroyed_indexes(client):
                            targets[client] = None
        try:
            for node in targets:
                if node not in self.destroyers:
                    continue
                readers: list[Apply] = []
                for index in _destroyed_indexes(node):
                    for reader in _check_target(fgraph, self._mutable, node, index):
                        if reader not in readers:
                            readers.append(reader)
                if readers:
                    self._readers[node] = readers
                else:
                    self._readers.pop(node, None)
                self._unchecked[node] = None
            self._records_stale = False
        except InconsistencyError:
            # Analysed again from scratch next time: the graph is about to be rolled back.
            self._records_stale = True
            raise
        finally:
            self._dirty_bases.clear()
            self._pending.clear()

    def _positions_hold(self) -> bool:
        """Place the new nodes and check every edge a change since the last validation may
        have added; True proves the graph (with its orderings) acyclic."""
        fgraph = self.fgraph
        position = self._position
        new = [node for node in _toposort_among(self._new) if node in fgraph.apply_nodes]
        # The latest each new node may sit: before its clients, old ones and new ones.
        latest: dict[Apply, float] = {}
        for node in reversed(new):
            bound = float("inf")
            for output in node.outputs:
                for client, _ in fgraph.clients.get(output, ()):
                    if isinstance(client, Apply):
                        bound = min(bound, latest[client] if client in latest
                                    else position.get(client, float("-inf")))
            latest[node] = bound
        for node in new:
            earliest = max((position.get(variable.owner, float("inf"))
                            for variable in node.inputs if variable.owner is not None),
                           default=float("-inf"))
            place = _between(earliest, latest[node])
            if place is None:
                return False
            position[node] = place
        for node in self._touched:
            place = position.get(node)
            if place is None or any(
                    variable.owner is not None
                    and not position.get(variable.owner, float("inf")) < place
                    for variable in node.inputs):
                return False
        for node in self._unchecked:
            place = position[node]
            if any(not position.get(reader, float("inf")) < place
                   for reader in self._readers.get(node, ())):
                return False
        return True

    def _sort_all(self, fgraph: FunctionGraph) -> None:
        """Positions from a topological sort of the whole graph with every ordering;
        InconsistencyError if the orderings make a cycle."""
        try:
            order = io_toposort(fgraph.inputs, fgraph.outputs, self._readers)
        except ValueError:
            # The rollback removes the new nodes; the old positions stay right for the rest.
            raise InconsistencyError(
                "DestroyHandler: a node overwrites a value that a node depending on it still "
                "reads (the readers cannot all run before it)") from None
        self._position = {node: float(index) for index, node in enumerate(order)}

    # -- queries ----------------------------------------------------------------------------
    def may_destroy(self, node: Apply, index: int) -> bool:
        """Whether `node` (in the graph) could overwrite its input `index`: the rules of the
        module docstring except the ordering one, which validate checks on the change."""
        fgraph = self._attached("may_destroy")
        if not 0 <= index < len(node.inputs):
            raise ValueError(f"DestroyHandler.may_destroy: {node} has no input {index}")
        try:
            _check_target(fgraph, self._mutable, node, index)
        except InconsistencyError:
            return False
        return True

    def destroyed_inputs(self) -> list[Variable]:
        """The graph inputs whose memory some node overwrites, in input order."""
        fgraph = self._attached("destroyed_inputs")
        destroyed: set[Variable] = set()
        for node in self.destroyers:
            for index in _destroyed_indexes(node):
                destroyed.update(_bases(node.inputs[index]))
        return [variable for variable in fgraph.inputs if variable in destroyed]

    def _attached(self, method: str) -> FunctionGraph:
        if self.fgraph is None:
            raise ValueError(f"DestroyHandler.{method}: the handler is not attached to a graph")
        return self.fgraph


def destroy_handler_of(fgraph: FunctionGraph) -> DestroyHandler:
    """fgraph's DestroyHandler, attaching one (every input protected) if it has none."""
    handler = getattr(fgraph, "destroy_handler", None)
    if handler is None:
        handler = DestroyHandler()
        fgraph.attach_feature(handler)
    return handler


def _destroyed_indexes(node: Apply) -> list[int]:
    return [index for indexes in node.op.destroy_map.values() for index in indexes]


def _bases(variable: Variable) -> list[Variable]:
    """The variables owning the memory `variable` may share (itself if not a view), in the
    order a walk up the view_map edges meets them."""
    result: list[Variable] = []
    pending = [variable]
    seen: set[Variable] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        owner = current.owner
        viewed = owner.op.view_map.get(owner.outputs.index(current)) if owner is not None \
            else None
        if viewed:
            pending.extend(owner.inputs[index] for index in reversed(viewed))
        else:
            result.append(current)
    return result


def _family(fgraph: FunctionGraph, base: Variable) -> list[Variable]:
    """`base` and every variable of the graph viewing it, directly or through other views."""
    result = [base]
    seen = {base}
    position = 0
    while position < len(result):
        for client, index in fgraph.clients.get(result[position], ()):
            if not isinstance(client, Apply):
                continue
            for output_index, viewed in client.op.view_map.items():
                viewer = client.outputs[output_index]
                if index in viewed and viewer not in seen:
                    seen.add(viewer)
                    result.append(viewer)
        position += 1
    return result


def _check_target(fgraph: FunctionGraph, mutable: set[Variable], node: Apply,
                  index: int) -> list[Apply]:
    """The other readers of what `node` overwrites through its input `index`;
    InconsistencyError if a rule of the module docstring forbids it."""
    target = node.inputs[index]
    what = f"{node.op} overwrites input {index} ({target})"
    readers: list[Apply] = []
    for base in _bases(target):
        if isinstance(base, Constant):
            raise InconsistencyError(f"DestroyHandler: {what}, the memory of constant {base}")
        if base.owner is None and base not in mutable:
            raise InconsistencyError(f"DestroyHandler: {what}, the memory of graph input "
                                     f"{base}, which the caller owns")
        for variable in _family(fgraph, base):
            for client, position in fgraph.clients.get(variable, ()):
                if isinstance(client, str) and client == OUTPUT:
                    raise InconsistencyError(f"DestroyHandler: {what}, which graph output "
                                             f"{position} ({variable}) returns")
                if client is node:
                    if variable is target and position == index:
                        continue
                    raise InconsistencyError(f"DestroyHandler: {what} while reading the "
                                             f"same memory through input {position}")
                if position in _destroyed_indexes(client):
                    raise InconsistencyError(f"DestroyHandler: {what}, whose memory "
                                             f"{client.op} overwrites too")
                if client not in readers:
                    readers.append(client)
    return readers


def _toposort_among(nodes: dict[Apply, None]) -> list[Apply]:
    """`nodes` ordered so that each comes after those of them it reads."""
    order: list[Apply] = []
    done: set[Apply] = set()
    for start in nodes:
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in done:
                continue
            done.add(node)
            stack.append((node, True))
            stack.extend((variable.owner, False) for variable in reversed(node.inputs)
                         if variable.owner in nodes and variable.owner not in done)
    return order


def _between(low: float, high: float) -> float | None:
    """A number strictly between low and high (either may be infinite), None if none is
    representable."""
    if low == float("-inf"):
        place = 0.0 if high == float("inf") else high - 1.0
    elif high == float("inf"):
        place = low + 1.0
    else:
        place = low + (high - low) / 2
    return place if low < place < high else None
