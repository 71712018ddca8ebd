"""The rewrite engine: node rewriters, the passes that apply them, and the rewrite history.

A NodeRewriter looks at one Apply node and proposes replacements for its outputs; a
GraphRewriter changes a whole FunctionGraph. Every change goes through
FunctionGraph.replace_all, so features validate it and a vetoed change is rolled back. The
engine knows nothing about tensors.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sympile.config import config
from sympile.graph.basic import Apply, Variable
from sympile.graph.fgraph import Feature, FunctionGraph, InconsistencyError
from sympile.graph.op import Op

# What NodeRewriter.transform returns: one replacement per output (None keeps that output),
# a dict {old variable: new variable}, or None / False for "no change".
Replacements = Sequence[Variable | None] | dict[Variable, Variable] | None


class RewriteCycleError(RuntimeError):
    """Rewriting did not reach a fixed point within its bound (rewriters undo each other)."""


class RewriteErrorWarning(UserWarning):
    """A rewrite raised and was skipped on a node (config.on_opt_error='warn')."""


# -- history ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RewriteRecord:
    """One change: rewriter `name` replaced the variables `old` (outputs of `node`, or
    constants when node is None) by `new`."""

    name: str
    node: Apply | None
    old: tuple[Variable, ...]
    new: tuple[Variable, ...]

    def __str__(self) -> str:
        changes = ", ".join(f"{o} -> {n}" for o, n in zip(self.old, self.new))
        if self.node is None:
            return f"{self.name}: {changes}"
        return f"{self.name}: {self.node}: {changes}"


class RewriteHistory(Feature):
    """Records every change a rewriter makes to the graph it is attached to.

    Attaching it sets `fgraph.rewrite_history` to it; rewriters record through
    `record_rewrite` when it is present. `records` lists the changes in order, `str(history)`
    shows one per line.
    """

    def __init__(self):
        self.records: list[RewriteRecord] = []

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "rewrite_history", None) is not None:
            raise ValueError("RewriteHistory: the graph already has a rewrite history")
        fgraph.rewrite_history = self

    def on_detach(self, fgraph: FunctionGraph) -> None:
        fgraph.rewrite_history = None

    def record(self, name: str, node: Apply | None, old: Sequence[Variable],
               new: Sequence[Variable]) -> None:
        self.records.append(RewriteRecord(name, node, tuple(old), tuple(new)))

    def names(self) -> list[str]:
        """The names of the rewriters that changed the graph, in order (repeated)."""
        return [record.name for record in self.records]

    def __str__(self) -> str:
        return "\n".join(str(record) for record in self.records)


def record_rewrite(fgraph: FunctionGraph, name: str, node: Apply | None,
                   old: Sequence[Variable], new: Sequence[Variable]) -> None:
    """Add a record to fgraph's RewriteHistory, if it has one."""
    history = getattr(fgraph, "rewrite_history", None)
    if history is not None:
        history.record(name, node, old, new)


# -- rewriters ----------------------------------------------------------------------------------

class Rewriter:
    """Base of every rewriter: a name (for history, errors and databases)."""

    name: str = ""

    def __str__(self) -> str:
        return self.name or type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


class NodeRewriter(Rewriter):
    """Proposes replacements for the outputs of one node.

    tracks(): the ops (instances, matched by equality) or op classes (matched by isinstance)
    whose nodes transform may rewrite; None means every node.
    transform(fgraph, node): a list with one replacement per output (None: keep it), a dict
    {old variable: new variable}, or None when the node is left alone.
    """

    def tracks(self) -> Sequence[Op | type] | None:
        return None

    def transform(self, fgraph: FunctionGraph, node: Apply) -> Replacements:
        raise NotImplementedError(f"{type(self).__name__}.transform")

    def applies_to(self, op: Op) -> bool:
        """True if this rewriter tracks `op`."""
        tracked = self.tracks()
        if tracked is None:
            return True
        return any(isinstance(op, entry) if isinstance(entry, type) else op == entry
                   for entry in tracked)


class FromFunctionNodeRewriter(NodeRewriter):
    """A NodeRewriter made of a function `(fgraph, node) -> replacements` (see node_rewriter)."""

    def __init__(self, function: Callable[[FunctionGraph, Apply], Replacements],
                 tracked: Sequence[Op | type] | None, name: str | None = None):
        self.function = function
        self._tracked = None if tracked is None else tuple(tracked)
        self.name = name or function.__name__
        self.__doc__ = function.__doc__

    def tracks(self) -> Sequence[Op | type] | None:
        return self._tracked

    def transform(self, fgraph: FunctionGraph, node: Apply) -> Replacements:
        return self.function(fgraph, node)

    def __call__(self, fgraph: FunctionGraph, node: Apply) -> Replacements:
        return self.function(fgraph, node)


def node_rewriter(tracks: Sequence[Op | type] | None, name: str | None = None):
    """Decorator: `@node_rewriter([op_or_op_class, ...])` turns `def f(fgraph, node)` into a
    NodeRewriter named f (or `name`) whose docstring is f's (its pattern). tracks=None: every
    node."""
    if tracks is not None:
        tracks = list(tracks)
        for entry in tracks:
            if not (isinstance(entry, Op) or (isinstance(entry, type) and issubclass(entry, Op))):
                raise TypeError(f"node_rewriter: tracks must list Ops or Op classes, got "
                                f"{entry!r}")

    def decorate(function: Callable[[FunctionGraph, Apply], Replacements]) -> NodeRewriter:
        return FromFunctionNodeRewriter(function, tracks, name)

    return decorate


def _replacement_pairs(rewriter: NodeRewriter, node: Apply,
                       result: Any) -> list[tuple[Variable, Variable]]:
    """The (old, new) pairs that `result` (a transform's answer) asks for."""
    if isinstance(result, dict):
        pairs = list(result.items())
    elif isinstance(result, (list, tuple)):
        if len(result) != len(node.outputs):
            raise ValueError(f"rewriter {rewriter}: returned {len(result)} replacements for "
                             f"{node}, which has {len(node.outputs)} outputs")
        pairs = [(old, new) for old, new in zip(node.outputs, result) if new is not None]
    else:
        raise TypeError(f"rewriter {rewriter}: transform returned {result!r}; expected a list "
                        f"of replacements, a dict or None")
    checked = []
    for old, new in pairs:
        if not isinstance(new, Variable):
            raise TypeError(f"rewriter {rewriter}: the replacement of {old} is {new!r}, not a "
                            f"Variable")
        if new is old:
            continue
        converted = old.type.convert_variable(new)
        if converted is None:
            raise TypeError(f"rewriter {rewriter}: cannot replace {old} of type {old.type} by "
                            f"{new} of type {new.type}")
        checked.append((old, converted))
    return checked


def apply_node_rewriter(fgraph: FunctionGraph, rewriter: NodeRewriter, node: Apply) -> bool:
    """Apply `rewriter` to `node`; True if the graph changed.

    The replacements go through fgraph.replace_all with validation; a change a feature
    vetoes (InconsistencyError) is rolled back and counts as no change. A replacement of an
    incompatible Type is a bug of the rewriter: TypeError naming it. An exception the
    rewriter raises goes up, or with config.on_opt_error 'warn' or 'ignore' leaves the node
    as it is (with a RewriteErrorWarning for 'warn').
    """
    try:
        result = rewriter.transform(fgraph, node)
    except Exception as error:
        if config.on_opt_error == "raise":
            raise
        if config.on_opt_error == "warn":
            warnings.warn(f"rewrite {rewriter} raised on {node}: {type(error).__name__}: "
                          f"{error}; the node is left as it is (config.on_opt_error='warn')",
                          RewriteErrorWarning, stacklevel=2)
        return False
    if result is None or result is False:
        return False
    pairs = _replacement_pairs(rewriter, node, result)
    # Outputs that nothing uses any more need no replacement (replace_all rejects them).
    pairs = [(old, new) for old, new in pairs if old in fgraph.variables]
    if not pairs:
        return False
    try:
        fgraph.replace_all(pairs, reason=str(rewriter))
    except InconsistencyError:
        return False
    record_rewrite(fgraph, str(rewriter), node, [old for old, _ in pairs],
                   [new for _, new in pairs])
    return True


class GraphRewriter(Rewriter):
    """Rewrites a whole FunctionGraph in place. apply(fgraph) returns True if it changed
    anything; calling the rewriter, or optimize(fgraph) (Theano's name), is the same as
    apply (so it can be a Mode's rewriter)."""

    def apply(self, fgraph: FunctionGraph) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def __call__(self, fgraph: FunctionGraph) -> bool:
        return self.apply(fgraph)

    def optimize(self, fgraph: FunctionGraph) -> bool:
        return self.apply(fgraph)


class SequentialGraphRewriter(GraphRewriter):
    """Applies its graph rewriters once each, in order."""

    def __init__(self, rewriters: Iterable[GraphRewriter], name: str | None = None):
        self.rewriters = list(rewriters)
        for rewriter in self.rewriters:
            if not isinstance(rewriter, GraphRewriter):
                raise TypeError(f"SequentialGraphRewriter: {rewriter!r} is not a GraphRewriter")
        self.name = name or f"sequence({', '.join(map(str, self.rewriters))})"

    def apply(self, fgraph: FunctionGraph) -> bool:
        changed = False
        for rewriter in self.rewriters:
            changed = bool(rewriter.apply(fgraph)) or changed
        return changed


class _NewNodes(Feature):
    """Collects the nodes imported and pruned while a walk runs."""

    def __init__(self):
        self.imported: list[Apply] = []

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        self.imported.append(node)


class _UseCounter:
    """How often each rewriter changed the graph, against the bound max_use_ratio x the
    number of nodes the graph had when rewriting began."""

    def __init__(self, owner: str, max_use_ratio: float, n_nodes: int):
        self.owner = owner
        self.max_use_ratio = max_use_ratio
        self.limit = max_use_ratio * max(n_nodes, 1)
        self.counts: dict[str, int] = {}
        self.recent: dict[str, int] = {}

    def count(self, rewriter: Rewriter) -> None:
        name = str(rewriter)
        self.counts[name] = self.counts.get(name, 0) + 1
        self.recent[name] = self.recent.get(name, 0) + 1
        if self.counts[name] > self.limit:
            firing = ", ".join(f"{n} ({c} times)" for n, c in self.recent.items())
            raise RewriteCycleError(
                f"{self.owner}: rewriting did not converge: {name} changed the graph "
                f"{self.counts[name]} times, more than max_use_ratio ({self.max_use_ratio}) "
                f"x the {int(self.limit / self.max_use_ratio)} nodes of the graph; the "
                f"rewriters that kept firing: {firing}. They probably undo each other (a "
                f"cycle); exclude one of them")

    def new_round(self) -> None:
        self.recent = {}


_ASK = object()


class _Dispatch:
    """The rewriters that may apply to an op, in their order, found once per op type: a walk
    asks for every node, and asking each rewriter's applies_to costs more than the rewriters
    that do apply (thousands of calls for a training step's graph).

    Per op type, each rewriter is kept with None (it applies to every op of that type), the
    op instances it tracks that an op of the type may equal (the op must equal one of them),
    or _ASK: its class overrides applies_to, which is asked every time. A rewriter's tracks()
    is read once (Theano's contract: what a rewriter tracks does not change)."""

    def __init__(self, rewriters: Sequence[NodeRewriter]):
        self.rewriters = rewriters
        self.tracked = [_ASK if type(rewriter).applies_to is not NodeRewriter.applies_to
                        else rewriter.tracks() for rewriter in rewriters]
        self.by_type: dict[type, list[tuple[NodeRewriter, Any]]] = {}

    def _candidates(self, op_type: type) -> list[tuple[NodeRewriter, Any]]:
        plain_eq = op_type.__eq__ is Op.__eq__
        candidates = []
        for rewriter, tracked in zip(self.rewriters, self.tracked):
            if tracked is _ASK:
                candidates.append((rewriter, _ASK))
            elif tracked is None or any(isinstance(entry, type) and issubclass(op_type, entry)
                                        for entry in tracked):
                candidates.append((rewriter, None))
            else:
                # Op.__eq__ holds only between ops of one type; other __eq__s may say anything.
                instances = tuple(entry for entry in tracked if not isinstance(entry, type)
                                  and (type(entry) is op_type or not plain_eq
                                       or type(entry).__eq__ is not Op.__eq__))
                if instances:
                    candidates.append((rewriter, instances))
        return candidates

    def rewriters_for(self, op: Op):
        """The rewriters that apply to `op`, in order."""
        candidates = self.by_type.get(type(op))
        if candidates is None:
            candidates = self.by_type[type(op)] = self._candidates(type(op))
        for rewriter, instances in candidates:
            if instances is None:
                yield rewriter
            elif instances is _ASK:
                if rewriter.applies_to(op):
                    yield rewriter
            elif any(op == instance for instance in instances):
                yield rewriter


def _dispatch(rewriters: tuple[NodeRewriter, ...]) -> _Dispatch:
    """The _Dispatch of `rewriters`, kept for the walks of every function (a mode's query
    makes new graph rewriters per function, of the same node rewriters) where they can be
    hashed."""
    try:
        return _kept_dispatch(rewriters)
    except TypeError:
        return _Dispatch(rewriters)


@functools.lru_cache(maxsize=256)
def _kept_dispatch(rewriters: tuple[NodeRewriter, ...]) -> _Dispatch:
    return _Dispatch(rewriters)


def _walk(fgraph: FunctionGraph, dispatch: _Dispatch, order: str,
          counter: _UseCounter) -> bool:
    """One pass over the nodes of fgraph in `order`, trying the rewriters on each node in turn
    until one changes it. Nodes the pass creates are visited too, right after the change."""
    nodes = fgraph.toposort()
    if order == "out_to_in":
        nodes.reverse()
    pending = list(reversed(nodes))  # popped from the end
    tracker = _NewNodes()
    fgraph.attach_feature(tracker)
    changed = False
    try:
        while pending:
            node = pending.pop()
            if node not in fgraph.apply_nodes:
                continue
            for rewriter in dispatch.rewriters_for(node.op):
                tracker.imported.clear()
                if apply_node_rewriter(fgraph, rewriter, node):
                    changed = True
                    counter.count(rewriter)
                    new_nodes = list(tracker.imported)
                    if order == "out_to_in":
                        new_nodes.reverse()
                    pending.extend(reversed(new_nodes))
                    if node in fgraph.apply_nodes:
                        # Some outputs are still used: the others rewriters may rewrite it.
                        pending.append(node)
                    break
    finally:
        fgraph.remove_feature(tracker)
    return changed


def _as_node_rewriters(rewriters: Iterable[Any], owner: str) -> list[NodeRewriter]:
    result = list(rewriters)
    for rewriter in result:
        if not isinstance(rewriter, NodeRewriter):
            raise TypeError(f"{owner}: {rewriter!r} is not a NodeRewriter")
    return result


class WalkingGraphRewriter(GraphRewriter):
    """One pass over the graph applying node rewriters: order 'in_to_out' visits each node
    after the nodes computing its inputs, 'out_to_in' before them. On each node the rewriters
    are tried in turn until one changes it; the nodes a change creates are visited next.

    max_use_ratio bounds the changes a rewriter may make (x the number of nodes) so that a
    rewriter that keeps rebuilding what it rewrites raises RewriteCycleError.
    """

    def __init__(self, rewriters: NodeRewriter | Iterable[NodeRewriter],
                 order: str = "in_to_out", max_use_ratio: float = 10.0,
                 name: str | None = None):
        if order not in ("in_to_out", "out_to_in"):
            raise ValueError(f"WalkingGraphRewriter: order must be 'in_to_out' or 'out_to_in', "
                             f"got {order!r}")
        if isinstance(rewriters, NodeRewriter):
            rewriters = [rewriters]
        self.rewriters = _as_node_rewriters(rewriters, "WalkingGraphRewriter")
        self.order = order
        self.max_use_ratio = max_use_ratio
        self.name = name or f"{order}({', '.join(map(str, self.rewriters))})"

    def apply(self, fgraph: FunctionGraph) -> bool:
        counter = _UseCounter(str(self), self.max_use_ratio, len(fgraph.apply_nodes))
        return _walk(fgraph, _dispatch(tuple(self.rewriters)), self.order, counter)


def in2out(*rewriters: NodeRewriter, name: str | None = None,
           max_use_ratio: float = 10.0) -> WalkingGraphRewriter:
    """A WalkingGraphRewriter applying `rewriters` from the inputs to the outputs."""
    return WalkingGraphRewriter(rewriters, "in_to_out", max_use_ratio, name)


def out2in(*rewriters: NodeRewriter, name: str | None = None,
           max_use_ratio: float = 10.0) -> WalkingGraphRewriter:
    """A WalkingGraphRewriter applying `rewriters` from the outputs to the inputs."""
    return WalkingGraphRewriter(rewriters, "out_to_in", max_use_ratio, name)


class EquilibriumGraphRewriter(GraphRewriter):
    """Applies its rewriters until none changes the graph: each round runs the graph
    rewriters once, then walks the graph in_to_out with the node rewriters.

    Each rewriter may change the graph at most max_use_ratio x (the number of nodes when
    rewriting began) times; past that, RewriteCycleError names the rewriters that were still
    firing in the last round (they undo each other).
    """

    def __init__(self, rewriters: Iterable[NodeRewriter | GraphRewriter],
                 max_use_ratio: float = 10.0, name: str | None = None):
        rewriters = list(rewriters)
        for rewriter in rewriters:
            if not isinstance(rewriter, (NodeRewriter, GraphRewriter)):
                raise TypeError(f"EquilibriumGraphRewriter: {rewriter!r} is neither a "
                                f"NodeRewriter nor a GraphRewriter")
        if not max_use_ratio > 0:
            raise ValueError(f"EquilibriumGraphRewriter: max_use_ratio must be > 0, got "
                             f"{max_use_ratio!r}")
        self.node_rewriters = [r for r in rewriters if isinstance(r, NodeRewriter)]
        self.graph_rewriters = [r for r in rewriters if isinstance(r, GraphRewriter)]
        self.max_use_ratio = max_use_ratio
        self.name = name or f"equilibrium({', '.join(map(str, rewriters))})"

    def apply(self, fgraph: FunctionGraph) -> bool:
        counter = _UseCounter(str(self), self.max_use_ratio, len(fgraph.apply_nodes))
        changed_at_all = False
        while True:
            counter.new_round()
            changed = False
            for rewriter in self.graph_rewriters:
                if rewriter.apply(fgraph):
                    changed = True
                    counter.count(rewriter)
            if self.node_rewriters:
                changed = _walk(fgraph, _dispatch(tuple(self.node_rewriters)), "in_to_out",
                                counter) or changed
            if not changed:
                return changed_at_all
            changed_at_all = True
