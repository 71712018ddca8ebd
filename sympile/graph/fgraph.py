"""FunctionGraph: a graph being compiled, with its clients, features and validated replace."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sympile.graph.basic import Apply, Constant, Variable, clone_get_equiv, io_toposort

OUTPUT = "output"  # the client of a graph output: (OUTPUT, output index)


class InconsistencyError(Exception):
    """A feature vetoed a change (e.g. an inplace op would overwrite a needed value)."""


class Feature:
    """Observer of a FunctionGraph. Every callback is optional."""

    def on_attach(self, fgraph: FunctionGraph) -> None: ...
    def on_detach(self, fgraph: FunctionGraph) -> None: ...
    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None: ...
    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None: ...
    def on_change_input(self, fgraph: FunctionGraph, node: Any, index: int, old: Variable,
                        new: Variable, reason: str | None) -> None: ...
    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise InconsistencyError if the graph is not acceptable."""


class FunctionGraph:
    """The subgraph from `inputs` to `outputs`, owned by a compilation.

    clients[v] lists (node, input index) for every use of v, with (OUTPUT, i) for output i.
    With clone=True (the default) the graph is copied first, so rewrites never touch the
    user's graph.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable],
                 features: Iterable[Feature] | None = None, clone: bool = True):
        inputs, outputs = list(inputs), list(outputs)
        if clone:
            equiv = clone_get_equiv(inputs, outputs, copy_inputs=True, copy_orphans=False)
            inputs = [equiv[v] for v in inputs]
            outputs = [equiv[v] for v in outputs]
        for variable in inputs:
            if variable.owner is not None:
                raise ValueError(f"FunctionGraph: input {variable} is computed by "
                                 f"{variable.owner.op}; inputs must have no owner")
        if len(set(map(id, inputs))) != len(inputs):
            raise ValueError("FunctionGraph: an input is listed twice")
        self.inputs: list[Variable] = []
        self.outputs: list[Variable] = []
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        self.clients: dict[Variable, list[tuple[Any, int]]] = {}
        self._features: list[Feature] = []
        for variable in inputs:
            self.add_input(variable)
        for variable in outputs:
            self.add_output(variable)
        for feature in features or ():
            self.attach_feature(feature)

    # -- building ---------------------------------------------------------------------------
    def add_input(self, variable: Variable) -> None:
        self.inputs.append(variable)
        self._setup_variable(variable)

    def add_output(self, variable: Variable, reason: str | None = None) -> None:
        self.outputs.append(variable)
        self.import_var(variable, reason)
        self.clients[variable].append((OUTPUT, len(self.outputs) - 1))

    def _setup_variable(self, variable: Variable) -> None:
        if variable not in self.variables:
            self.variables.add(variable)
            self.clients.setdefault(variable, [])

    def import_var(self, variable: Variable, reason: str | None = None) -> None:
        if variable.owner is not None and variable.owner not in self.apply_nodes:
            self.import_node(variable.owner, reason)
        elif variable.owner is None and variable not in self.variables:
            if not isinstance(variable, Constant) and variable not in self.inputs:
                raise MissingInputError(variable)
            self._setup_variable(variable)

    def import_node(self, node: Apply, reason: str | None = None) -> None:
        """Add `node` and every node it depends on that is not in the graph yet."""
        known = {id(v) for v in self.variables}
        new_nodes = io_toposort([v for v in self.variables if id(v) in known], node.outputs)
        for new_node in new_nodes:
            if new_node in self.apply_nodes:
                continue
            for variable in new_node.inputs:
                if variable.owner is None and variable not in self.variables:
                    if not isinstance(variable, Constant):
                        raise MissingInputError(variable)
                    self._setup_variable(variable)
            self.apply_nodes.add(new_node)
            for output in new_node.outputs:
                self._setup_variable(output)
            for index, variable in enumerate(new_node.inputs):
                self._setup_variable(variable)
                self.clients[variable].append((new_node, index))
            self.execute_callbacks("on_import", new_node, reason)

    def _remove_client(self, variable: Variable, client: tuple[Any, int],
                       reason: str | None) -> None:
        """Drop one use of `variable`; prune nodes that no longer have any client."""
        pending = [(variable, client)]
        while pending:
            variable, client = pending.pop()
            self.clients[variable].remove(client)
            if self.clients[variable] or variable in self.inputs:
                continue
            node = variable.owner
            if node is None:
                if isinstance(variable, Constant):
                    self.variables.discard(variable)
                    del self.clients[variable]
                continue
            if any(self.clients.get(output) for output in node.outputs):
                continue
            if node not in self.apply_nodes:
                continue
            self.apply_nodes.remove(node)
            for output in node.outputs:
                self.variables.discard(output)
                self.clients.pop(output, None)
            self.execute_callbacks("on_prune", node, reason)
            for index, parent in enumerate(node.inputs):
                pending.append((parent, (node, index)))

    # -- changing ---------------------------------------------------------------------------
    def change_node_input(self, node: Any, index: int, new_variable: Variable,
                          reason: str | None = None) -> None:
        """Make input `index` of `node` (or output `index` if node is OUTPUT) `new_variable`."""
        if node == OUTPUT:
            old = self.outputs[index]
            check_replacement_type(old, new_variable)
            self.outputs[index] = new_variable
        else:
            old = node.inputs[index]
            check_replacement_type(old, new_variable)
            node.inputs[index] = new_variable
        if old is new_variable:
            return
        self.import_var(new_variable, reason)
        self.clients[new_variable].append((node, index))
        self._remove_client(old, (node, index), reason)
        self.execute_callbacks("on_change_input", node, index, old, new_variable, reason)

    def replace(self, variable: Variable, new_variable: Variable, reason: str | None = None,
                validate: bool = True) -> None:
        """Make every client of `variable` use `new_variable` instead.

        The Types must agree; features may veto the change (InconsistencyError), in which case
        the graph is restored and the error raised.
        """
        if variable not in self.variables:
            raise ValueError(f"FunctionGraph.replace: {variable} is not in this graph")
        check_replacement_type(variable, new_variable)
        self.replace_all([(variable, new_variable)], reason, validate)

    def replace_all(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None,
                    validate: bool = True) -> None:
        done: list[tuple[Any, int, Variable, Variable]] = []
        for variable, new_variable in pairs:
            check_replacement_type(variable, new_variable)
            for node, index in list(self.clients.get(variable, ())):
                self.change_node_input(node, index, new_variable, reason)
                done.append((node, index, variable, new_variable))
        if validate:
            try:
                self.validate()
            except InconsistencyError:
                for node, index, variable, _ in reversed(done):
                    self.change_node_input(node, index, variable, f"revert {reason}")
                raise

    # -- features ---------------------------------------------------------------------------
    def attach_feature(self, feature: Feature) -> None:
        if feature in self._features:
            return
        self._features.append(feature)
        feature.on_attach(self)

    def remove_feature(self, feature: Feature) -> None:
        self._features.remove(feature)
        feature.on_detach(self)

    @property
    def features(self) -> list[Feature]:
        return list(self._features)

    def execute_callbacks(self, name: str, *args: Any) -> None:
        for feature in self._features:
            callback = getattr(feature, name, None)
            if callback is not None:
                callback(self, *args)

    def validate(self) -> None:
        for feature in self._features:
            feature.validate(self)

    # -- queries ----------------------------------------------------------------------------
    def toposort(self) -> list[Apply]:
        return io_toposort(self.inputs, self.outputs)

    def check_integrity(self) -> None:
        """Raise AssertionError if clients, nodes and variables disagree (a debugging aid)."""
        reachable = set(io_toposort(self.inputs, self.outputs))
        assert reachable == self.apply_nodes, "apply_nodes out of date"
        for node in self.apply_nodes:
            for index, variable in enumerate(node.inputs):
                assert (node, index) in self.clients[variable], f"missing client of {variable}"
        for index, variable in enumerate(self.outputs):
            assert (OUTPUT, index) in self.clients[variable], f"missing output client {index}"

    def clone(self) -> FunctionGraph:
        return FunctionGraph(self.inputs, self.outputs, clone=True)

    def __str__(self):
        nodes = ", ".join(str(node) for node in self.toposort())
        return f"FunctionGraph({nodes})"


class MissingInputError(ValueError):
    """A graph needs a value that is neither a declared input nor a constant."""

    def __init__(self, variable: Variable):
        self.variable = variable
        super().__init__(
            f"the graph depends on {variable} (type {variable.type}, created at "
            f"{variable.creation_site()}), which is not among the inputs given to function() "
            f"and has no value; pass it as an input, use givens, or make it a shared variable")


def check_replacement_type(old: Variable, new: Variable) -> None:
    if not isinstance(new, Variable):
        raise TypeError(f"replace: {new!r} is not a Variable")
    if old.type != new.type and not old.type.is_super(new.type):
        raise TypeError(f"replace: cannot replace {old} of type {old.type} by {new} of type "
                        f"{new.type}")
