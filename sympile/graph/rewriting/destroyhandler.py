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

    mutable_inputs: inputs of the graph that nodes may overwrite. Attaching sets
    `fgraph.destroy_handler` to the handler.
    """

    def __init__(self, mutable_inputs: Iterable[Variable] = ()):
        self.mutable_inputs: list[Variable] = list(mutable_inputs)
        self.fgraph: FunctionGraph | None = None
        self.destroyers: set[Apply] = set()
        # The orderings of the graph as it was last analysed; None after any change.
        self._orderings: dict[Apply, list[Apply]] | None = None

    # -- feature callbacks ------------------------------------------------------------------
    def on_attach(self, fgraph: FunctionGraph) -> None:
        if self.fgraph is not None:
            raise ValueError("DestroyHandler: already attached to a graph")
        if getattr(fgraph, "destroy_handler", None) is not None:
            raise ValueError("DestroyHandler: the graph already has a destroy handler")
        self.fgraph = fgraph
        fgraph.destroy_handler = self
        self.destroyers = {node for node in fgraph.apply_nodes if node.op.destroy_map}
        self._orderings = None

    def on_detach(self, fgraph: FunctionGraph) -> None:
        fgraph.destroy_handler = None
        self.fgraph = None
        self.destroyers = set()
        self._orderings = None

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        if node.op.destroy_map:
            self.destroyers.add(node)
        self._orderings = None

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        self.destroyers.discard(node)
        self._orderings = None

    def on_change_input(self, fgraph: FunctionGraph, node: Any, index: int, old: Variable,
                        new: Variable, reason: str | None) -> None:
        self._orderings = None

    def validate(self, fgraph: FunctionGraph) -> None:
        """InconsistencyError unless the graph keeps every rule of the module docstring."""
        orderings = self.orderings(fgraph)
        if not orderings:
            return
        try:
            io_toposort(fgraph.inputs, fgraph.outputs, orderings)
        except ValueError:
            self._orderings = None
            raise InconsistencyError(
                "DestroyHandler: a node overwrites a value that a node depending on it still "
                "reads (the readers cannot all run before it)") from None

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """{destroyer: the other readers of what it destroys}; InconsistencyError if a
        destroyed value is protected, an output, or destroyed twice."""
        if not self.destroyers:
            return {}
        if self._orderings is None:
            self._orderings = _Analysis(fgraph, self.mutable_inputs).orderings()
        return self._orderings

    # -- queries ----------------------------------------------------------------------------
    def may_destroy(self, node: Apply, index: int) -> bool:
        """Whether `node` (in the graph) could overwrite its input `index`: the rules of the
        module docstring except the ordering one, which validate checks on the change."""
        fgraph = self._attached("may_destroy")
        if not 0 <= index < len(node.inputs):
            raise ValueError(f"DestroyHandler.may_destroy: {node} has no input {index}")
        analysis = _Analysis(fgraph, self.mutable_inputs)
        try:
            analysis.check_target(node, index, node.inputs[index], {})
        except InconsistencyError:
            return False
        # Another node destroying the same memory.
        for other in self.destroyers:
            if other is node:
                continue
            for other_index in _destroyed_indexes(other):
                if analysis.bases(other.inputs[other_index]) & analysis.bases(
                        node.inputs[index]):
                    return False
        return True

    def destroyed_inputs(self) -> list[Variable]:
        """The graph inputs whose memory some node overwrites, in input order."""
        fgraph = self._attached("destroyed_inputs")
        if not self.destroyers:
            return []
        analysis = _Analysis(fgraph, self.mutable_inputs)
        destroyed: set[Variable] = set()
        for node in self.destroyers:
            for index in _destroyed_indexes(node):
                destroyed |= analysis.bases(node.inputs[index])
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


class _Analysis:
    """The views of one state of a graph, and the rules checked on it."""

    def __init__(self, fgraph: FunctionGraph, mutable_inputs: Iterable[Variable]):
        self.fgraph = fgraph
        self.mutable = set(mutable_inputs)
        self.view_of: dict[Variable, list[Variable]] = {}
        self.viewers: dict[Variable, list[Variable]] = {}
        # Deterministic order: the nodes in data order.
        self.nodes = io_toposort(fgraph.inputs, fgraph.outputs)
        self._input_index = {variable: index for index, variable in enumerate(fgraph.inputs)}
        self._node_index = {node: index for index, node in enumerate(self.nodes)}
        for node in self.nodes:
            for output_index, input_indexes in node.op.view_map.items():
                output = node.outputs[output_index]
                for input_index in input_indexes:
                    viewed = node.inputs[input_index]
                    self.view_of.setdefault(output, []).append(viewed)
                    self.viewers.setdefault(viewed, []).append(output)

    def bases(self, variable: Variable) -> set[Variable]:
        """The variables owning the memory `variable` may share (itself if not a view)."""
        result: set[Variable] = set()
        pending = [variable]
        seen: set[Variable] = set()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            viewed = self.view_of.get(current)
            if viewed:
                pending.extend(viewed)
            else:
                result.add(current)
        return result

    def family(self, base: Variable) -> list[Variable]:
        """`base` and every variable viewing it, directly or through other views."""
        result = [base]
        seen = {base}
        position = 0
        while position < len(result):
            for viewer in self.viewers.get(result[position], ()):
                if viewer not in seen:
                    seen.add(viewer)
                    result.append(viewer)
            position += 1
        return result

    def check_target(self, node: Apply, index: int, target: Variable,
                     destroyed_by: dict[Variable, tuple[Apply, int]]) -> list[Apply]:
        """The other readers of what `node` overwrites through input `index` (`target`);
        InconsistencyError if a rule forbids it. destroyed_by maps each base seen so far to
        its destroyer, and gets target's bases."""
        readers: list[Apply] = []
        for base in sorted(self.bases(target), key=self._position):
            what = f"{node.op} overwrites input {index} ({target})"
            if isinstance(base, Constant):
                raise InconsistencyError(f"DestroyHandler: {what}, the memory of constant "
                                         f"{base}")
            if base.owner is None and base not in self.mutable:
                raise InconsistencyError(f"DestroyHandler: {what}, the memory of graph input "
                                         f"{base}, which the caller owns")
            previous = destroyed_by.setdefault(base, (node, index))
            if previous != (node, index):
                raise InconsistencyError(f"DestroyHandler: {what}, whose memory "
                                         f"{previous[0].op} overwrites too")
            for variable in self.family(base):
                for client, position in self.fgraph.clients.get(variable, ()):
                    if isinstance(client, str) and client == OUTPUT:
                        raise InconsistencyError(f"DestroyHandler: {what}, which graph output "
                                                 f"{position} ({variable}) returns")
                    if client is node:
                        if variable is target and position == index:
                            continue
                        raise InconsistencyError(f"DestroyHandler: {what} while reading the "
                                                 f"same memory through input {position}")
                    if client not in readers:
                        readers.append(client)
        return readers

    def orderings(self) -> dict[Apply, list[Apply]]:
        """{destroyer: readers to run first}, checking every rule but the ordering one."""
        destroyed_by: dict[Variable, tuple[Apply, int]] = {}
        result: dict[Apply, list[Apply]] = {}
        for node in self.nodes:
            if not node.op.destroy_map:
                continue
            readers: list[Apply] = []
            for index in _destroyed_indexes(node):
                for reader in self.check_target(node, index, node.inputs[index],
                                                destroyed_by):
                    if reader not in readers:
                        readers.append(reader)
            if readers:
                result[node] = readers
        return result

    def _position(self, variable: Variable) -> tuple[int, int]:
        """A deterministic sort key: graph inputs first, in order, then by first use."""
        if variable in self._input_index:
            return (0, self._input_index[variable])
        return (1, self._node_index.get(variable.owner, 0))
