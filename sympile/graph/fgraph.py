"""FunctionGraph: a graph being compiled, with its clients, features and validated replace."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sympile.graph.basic import (
    Apply,
    Constant,
    Variable,
    clone_get_equiv,
    io_toposort,
    prioritized,
)

OUTPUT = "output"  # the client of a graph output: (OUTPUT, output index)


class InconsistencyError(Exception):
    """A feature vetoed a change (e.g. an inplace op would overwrite a needed value)."""


class MissingInputError(ValueError):
    """A graph needs a value that is neither a declared input nor a constant."""

    def __init__(self, variable: Variable):
        self.variable = variable
        super().__init__(
            f"the graph depends on {variable} (type {variable.type}, created at "
            f"{variable.creation_site()}), which is not among the inputs given to function() "
            f"and has no value; pass it as an input, use givens, or make it a shared variable")


class Feature:
    """Observer of a FunctionGraph. Every callback is optional.

    on_attach / on_detach    the feature was attached to / removed from fgraph
    on_import                node entered the graph (at construction, or through a replace)
    on_prune                 node left the graph (none of its outputs is used any more)
    on_change_input          input `index` of `node` (or output `index` when node is OUTPUT)
                             changed from `old` to `new`
    validate                 raise InconsistencyError to veto the last replace
    orderings                {node: [nodes that must run before it]} beyond the data
                             dependencies (a DestroyHandler puts the readers of a value
                             before the node that overwrites it); toposort honours them
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Called when the feature is attached to `fgraph`."""

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Called when the feature is removed from `fgraph`."""

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Called after `node` entered the graph."""

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Called after `node` left the graph."""

    def on_change_input(self, fgraph: FunctionGraph, node: Any, index: int, old: Variable,
                        new: Variable, reason: str | None) -> None:
        """Called after input `index` of `node` (output `index` if node is OUTPUT) changed."""

    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise InconsistencyError if the graph is not acceptable."""

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """{node: nodes that must run before it}, beyond the data dependencies."""
        return {}


def _orders(feature: Feature) -> bool:
    """Whether `feature` has orderings of its own (the base class's are empty)."""
    hook = getattr(feature, "orderings", None)
    return hook is not None and getattr(hook, "__func__", None) is not Feature.orderings


class FunctionGraph:
    """The subgraph from `inputs` to `outputs`, owned by a compilation.

    clients[v] lists (node, input index) for every use of v, with (OUTPUT, i) when v is
    output i. apply_nodes and variables hold exactly what computes the outputs from the
    inputs (with the inputs themselves, used or not). With clone=True (the default) the graph
    is copied first, so rewrites never touch the user's graph; constants are shared.
    Features given here are attached before the graph is built, so they see on_import for
    every node.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable],
                 features: Iterable[Feature] | None = None, clone: bool = True):
        inputs, outputs = list(inputs), list(outputs)
        for index, variable in enumerate(inputs):
            if not isinstance(variable, Variable):
                raise TypeError(f"FunctionGraph: input {index} is {variable!r}, expected a "
                                f"Variable")
            if variable.owner is not None:
                raise ValueError(f"FunctionGraph: input {index} ({variable}) is computed by "
                                 f"{variable.owner.op}; inputs must have no owner")
            if isinstance(variable, Constant):
                raise TypeError(f"FunctionGraph: input {index} ({variable}) is a constant; "
                                f"inputs must be symbolic variables")
        if len({id(v) for v in inputs}) != len(inputs):
            raise ValueError("FunctionGraph: an input is listed twice")
        for index, variable in enumerate(outputs):
            if not isinstance(variable, Variable):
                raise TypeError(f"FunctionGraph: output {index} is {variable!r}, expected a "
                                f"Variable")
        if clone:
            equiv = clone_get_equiv(inputs, outputs, copy_inputs=True, copy_orphans=False)
            inputs = [equiv[v] for v in inputs]
            outputs = [equiv[v] for v in outputs]
        self.inputs: list[Variable] = []
        self.outputs: list[Variable] = []
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        self.clients: dict[Variable, list[tuple[Any, int]]] = {}
        self._features: list[Feature] = []
        # toposort's answer until the graph or the features' orderings change.
        self._order: list[Apply] | None = None
        for feature in features or ():
            self.attach_feature(feature)
        for variable in inputs:
            self.add_input(variable)
        for variable in outputs:
            self.add_output(variable, reason="init")

    # -- building ---------------------------------------------------------------------------
    def add_input(self, variable: Variable) -> None:
        """Declare the ownerless `variable` an input of the graph."""
        if variable.owner is not None:
            raise ValueError(f"FunctionGraph.add_input: {variable} is computed by "
                             f"{variable.owner.op}; inputs must have no owner")
        if variable in self.variables:
            raise ValueError(f"FunctionGraph.add_input: {variable} is already in the graph")
        self.inputs.append(variable)
        self._order = None
        self._setup_variable(variable)

    def add_output(self, variable: Variable, reason: str | None = None) -> None:
        """Make `variable` a new output, importing what computes it."""
        self.import_var(variable, reason)
        self.outputs.append(variable)
        self._order = None
        self.clients[variable].append((OUTPUT, len(self.outputs) - 1))

    def _setup_variable(self, variable: Variable) -> None:
        if variable not in self.variables:
            self.variables.add(variable)
            self.clients[variable] = []

    def import_var(self, variable: Variable, reason: str | None = None) -> None:
        """Add `variable` and everything computing it that the graph does not hold yet.

        An ownerless variable must be an input or a Constant, else MissingInputError.
        """
        if variable in self.variables:
            return
        if variable.owner is not None:
            self.import_node(variable.owner, reason)
            return
        if not isinstance(variable, Constant):
            raise MissingInputError(variable)
        self._setup_variable(variable)

    def import_node(self, node: Apply, reason: str | None = None) -> None:
        """Add `node` and every node it depends on that the graph does not hold yet, in
        topological order, calling on_import for each. Nothing changes if an input is missing.
        """
        if node in self.apply_nodes:
            return
        # The new nodes: those reached from `node` without passing a variable already here.
        new_nodes = io_toposort(self._frontier(node), node.outputs)
        for new_node in new_nodes:
            for variable in new_node.inputs:
                if variable.owner is None and variable not in self.variables \
                        and not isinstance(variable, Constant):
                    raise MissingInputError(variable)
        self._order = None
        for new_node in new_nodes:
            self.apply_nodes.add(new_node)
            for output in new_node.outputs:
                self._setup_variable(output)
            for index, variable in enumerate(new_node.inputs):
                self._setup_variable(variable)
                self.clients[variable].append((new_node, index))
            self.execute_callbacks("on_import", new_node, reason)

    def _frontier(self, node: Apply) -> list[Variable]:
        """The variables already in the graph on which the new `node` depends directly or
        through other new nodes: where the import walk stops."""
        frontier: list[Variable] = []
        seen: set[int] = {id(node)}
        stack = [node]
        while stack:
            current = stack.pop()
            for variable in current.inputs:
                if variable in self.variables:
                    frontier.append(variable)
                elif variable.owner is not None and id(variable.owner) not in seen:
                    seen.add(id(variable.owner))
                    stack.append(variable.owner)
        return frontier

    def _remove_client(self, variable: Variable, client: tuple[Any, int],
                       reason: str | None) -> None:
        """Drop one use of `variable`; prune the nodes (and constants) left without any use,
        and what only they used."""
        pending = [(variable, client)]
        while pending:
            variable, client = pending.pop()
            clients = self.clients[variable]
            try:
                # Apply nodes compare by identity, so this removes exactly this use.
                clients.remove(client)
            except ValueError:
                raise ValueError(f"FunctionGraph: {client} is not a client of {variable}") \
                    from None
            if clients:
                continue
            node = variable.owner
            if node is None:
                # A constant nobody uses any more; an ownerless variable that is not a
                # constant is an input, which stays.
                if isinstance(variable, Constant):
                    self.variables.discard(variable)
                    del self.clients[variable]
                continue
            if node not in self.apply_nodes or any(self.clients[o] for o in node.outputs):
                continue
            self.apply_nodes.remove(node)
            self._order = None
            for output in node.outputs:
                self.variables.discard(output)
                del self.clients[output]
            self.execute_callbacks("on_prune", node, reason)
            pending.extend((parent, (node, index)) for index, parent in enumerate(node.inputs))

    # -- changing ---------------------------------------------------------------------------
    def change_node_input(self, node: Any, index: int, new_variable: Variable,
                          reason: str | None = None) -> None:
        """Make input `index` of `node` (output `index` if node is OUTPUT) `new_variable`,
        importing it if needed and pruning what the old variable leaves unused."""
        if isinstance(node, str) and node == OUTPUT:
            old = self.outputs[index]
        else:
            if node not in self.apply_nodes:
                raise ValueError(f"FunctionGraph.change_node_input: {node} is not in this "
                                 f"graph")
            old = node.inputs[index]
        check_replacement_type(old, new_variable)
        if old is new_variable:
            return
        # Import first: if the new variable cannot be imported, nothing has changed.
        self.import_var(new_variable, reason)
        if isinstance(node, str):
            self.outputs[index] = new_variable
        else:
            node.inputs[index] = new_variable
        self.clients[new_variable].append((node, index))
        self._order = None
        self._remove_client(old, (node, index), reason)
        self.execute_callbacks("on_change_input", node, index, old, new_variable, reason)

    def replace(self, variable: Variable, new_variable: Variable, reason: str | None = None,
                validate: bool = True) -> None:
        """Make every client of `variable` use `new_variable` instead (see replace_all)."""
        self.replace_all([(variable, new_variable)], reason, validate)

    def replace_all(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None,
                    validate: bool = True) -> None:
        """For each (variable, new_variable) in turn, make every client of `variable` use
        `new_variable`.

        new_variable must have the Type of variable or a more specific one (TypeError), and
        may depend on variable (x -> f(x): f keeps using x). Nodes left without clients are
        pruned. With validate, every feature's validate runs after the changes; if anything
        fails (InconsistencyError or another error), the graph is restored and the error
        raised.
        """
        pairs = list(pairs)
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"FunctionGraph.replace_all: expected (variable, replacement) "
                                f"pairs, got {pair!r}")
            variable, new_variable = pair
            if not isinstance(variable, Variable) or variable not in self.variables:
                raise ValueError(f"FunctionGraph.replace: {variable} is not in this graph")
            check_replacement_type(variable, new_variable)
        # What a rewrite has just built (the replacement and the new nodes under it) takes
        # the user's line of the variable it replaces, for the errors that name it (it was
        # built at the line calling function()).
        fresh = [(variable, built) for variable, new_variable in pairs
                 if getattr(variable.tag, "trace", None) is not None
                 for built in self._new_variables(new_variable)]
        done: list[tuple[Any, int, Variable]] = []
        try:
            for variable, new_variable in pairs:
                # The clients as they are now: the nodes that new_variable brings in may use
                # variable themselves, and must keep doing so.
                for node, index in list(self.clients.get(variable, ())):
                    # Recorded first: a change that failed before taking effect reverts as a
                    # no-op, one whose callback failed is undone.
                    done.append((node, index, variable))
                    self.change_node_input(node, index, new_variable, reason)
            if validate:
                self.validate()
        except Exception:
            self._revert(done, reason)
            raise
        for variable, new_variable in fresh:
            new_variable.tag.trace = variable.tag.trace

    def _new_variables(self, variable: Variable) -> list[Variable]:
        """`variable` and the outputs of the nodes computing it, not yet in this graph."""
        found, pending, seen = [], [variable], set()
        while pending:
            current = pending.pop()
            if current in self.variables or id(current) in seen:
                continue
            seen.add(id(current))
            if current.owner is None:
                if current is variable:
                    found.append(current)
                continue
            found.extend(current.owner.outputs)
            seen.update(id(output) for output in current.owner.outputs)
            pending.extend(current.owner.inputs)
        return found

    def _revert(self, done: list[tuple[Any, int, Variable]], reason: str | None) -> None:
        """Undo the changes of `done`, last first (each restores the state before it)."""
        revert_reason = f"revert {reason}" if reason else "revert"
        for node, index, variable in reversed(done):
            self.change_node_input(node, index, variable, revert_reason)

    # -- features ---------------------------------------------------------------------------
    def attach_feature(self, feature: Feature) -> None:
        """Attach `feature` (once) and call its on_attach, if it has one."""
        if any(f is feature for f in self._features):
            return
        self._features.append(feature)
        if _orders(feature):
            self._order = None
        on_attach = getattr(feature, "on_attach", None)
        try:
            if on_attach is not None:
                on_attach(self)
        except Exception:
            self._features.remove(feature)
            raise

    def remove_feature(self, feature: Feature) -> None:
        """Detach `feature` and call its on_detach, if it has one."""
        for position, attached in enumerate(self._features):
            if attached is feature:
                del self._features[position]
                break
        else:
            raise ValueError(f"FunctionGraph.remove_feature: {feature!r} is not attached")
        if _orders(feature):
            self._order = None
        on_detach = getattr(feature, "on_detach", None)
        if on_detach is not None:
            on_detach(self)

    @property
    def features(self) -> list[Feature]:
        return list(self._features)

    def execute_callbacks(self, name: str, *args: Any) -> None:
        """Call `feature.name(self, *args)` on every feature that has the callback."""
        for feature in self._features:
            callback = getattr(feature, name, None)
            if callback is not None:
                callback(self, *args)

    def validate(self) -> None:
        """Run every feature's validate (InconsistencyError if one rejects the graph)."""
        for feature in self._features:
            validate = getattr(feature, "validate", None)
            if validate is not None:
                validate(self)

    # -- queries ----------------------------------------------------------------------------
    def toposort(self) -> list[Apply]:
        """The nodes, each after the nodes it depends on and after those that the features'
        orderings put before it, nodes whose op asks (Op.schedule) as early or as late as
        that allows. ValueError if the orderings make a cycle. Kept until the graph changes
        (the features' orderings follow from it)."""
        if self._order is None:
            orderings = self.orderings()
            order = io_toposort(self.inputs, self.outputs, orderings)
            if any(node.op.schedule for node in order):
                order = prioritized(order, orderings)
            self._order = order
        return list(self._order)

    def orderings(self, exclude: Feature | None = None) -> dict[Apply, list[Apply]]:
        """{node: nodes that must run before it} beyond the data dependencies, from every
        feature's orderings hook but `exclude`'s (a feature whose orderings build on the
        others')."""
        merged: dict[Apply, list[Apply]] = {}
        for feature in self._features:
            hook = getattr(feature, "orderings", None)
            if hook is None or feature is exclude:
                continue
            for node, before in hook(self).items():
                merged.setdefault(node, []).extend(before)
        return merged

    def check_integrity(self) -> None:
        """Raise AssertionError if nodes, variables and clients disagree with the graph's
        structure (a debugging aid; DEBUG mode runs it between passes)."""
        try:
            nodes = io_toposort(self.inputs, self.outputs)
        except ValueError as error:
            raise AssertionError(str(error)) from None
        assert set(nodes) == self.apply_nodes, \
            f"apply_nodes out of date: missing {set(nodes) - self.apply_nodes}, extra " \
            f"{self.apply_nodes - set(nodes)}"
        expected: dict[Variable, list[tuple[Any, int]]] = {v: [] for v in self.inputs}
        for node in nodes:
            for index, output in enumerate(node.outputs):
                assert output.owner is node and output.index == index, \
                    f"output {index} of {node} does not point back at it"
                expected.setdefault(output, [])
            for index, variable in enumerate(node.inputs):
                if variable.owner is None:
                    assert variable in self.inputs or isinstance(variable, Constant), \
                        f"{variable} is used by {node} but is neither an input nor a constant"
                expected.setdefault(variable, []).append((node, index))
        for index, variable in enumerate(self.outputs):
            expected.setdefault(variable, []).append((OUTPUT, index))
        assert set(expected) == self.variables, \
            f"variables out of date: missing {set(expected) - self.variables}, extra " \
            f"{self.variables - set(expected)}"
        assert set(self.clients) == self.variables, "clients has keys that are not variables"
        for variable, uses in expected.items():
            actual = self.clients[variable]
            assert Counter(actual) == Counter(uses), \
                f"clients of {variable} are {actual}, expected {uses}"

    def clone(self) -> FunctionGraph:
        """An independent copy of this graph (without its features)."""
        return FunctionGraph(self.inputs, self.outputs, clone=True)

    def __str__(self) -> str:
        nodes = ", ".join(str(node) for node in self.toposort())
        return f"FunctionGraph({nodes})"


def check_replacement_type(old: Variable, new: Variable) -> None:
    """TypeError unless `new` may stand for `old`: a Variable of old's Type or a more
    specific one."""
    if not isinstance(new, Variable):
        raise TypeError(f"replace: the replacement of {old} is {new!r}, not a Variable")
    if old.type != new.type and not old.type.is_super(new.type):
        raise TypeError(f"replace: cannot replace {old} of type {old.type} by {new} of type "
                        f"{new.type}")
