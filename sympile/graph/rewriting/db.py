"""Rewrite databases: rewriters registered by name with tags, selected by queries.

A database may declare phases, the named steps of a pipeline in the order they run; a
rewriter registers into a phase by name and runs after the phases before it (entries of one
phase in registration order). A query selects the entries whose name or tags meet `include`,
carry every `require` tag and none of the `exclude` tags (a name counts as a tag, so one
rewriter can be included or excluded by name). Entries that are databases themselves are
queried with the same query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sympile.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    Rewriter,
    SequentialGraphRewriter,
    in2out,
)


def _tag_tuple(tags: str | Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(tags, str):
        tags = (tags,)
    tags = tuple(tags)
    for tag in tags:
        if not isinstance(tag, str):
            raise TypeError(f"RewriteQuery: {what} must be strings, got {tag!r}")
    return tags


@dataclass(frozen=True)
class RewriteQuery:
    """Which entries of a database to select (see the module docstring)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    require: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "include", _tag_tuple(self.include, "include tags"))
        object.__setattr__(self, "exclude", _tag_tuple(self.exclude, "exclude tags"))
        object.__setattr__(self, "require", _tag_tuple(self.require, "require tags"))

    def including(self, *tags: str) -> RewriteQuery:
        return RewriteQuery(self.include + tags, self.exclude, self.require)

    def excluding(self, *tags: str) -> RewriteQuery:
        return RewriteQuery(self.include, self.exclude + tags, self.require)

    def requiring(self, *tags: str) -> RewriteQuery:
        return RewriteQuery(self.include, self.exclude, self.require + tags)

    def selects(self, name: str, tags: frozenset[str]) -> bool:
        """True if an entry called `name` with `tags` is selected."""
        labels = tags | {name}
        return bool(labels.intersection(self.include)) \
            and labels.issuperset(self.require) \
            and not labels.intersection(self.exclude)


@dataclass(frozen=True)
class Phase:
    """A named step of a pipeline: where it runs (`position`, ascending) and what it is for."""

    name: str
    position: float
    purpose: str


@dataclass
class _Entry:
    name: str
    rewriter: Any
    tags: frozenset[str]
    position: float
    order: int = field(default=0)
    phase: str | None = None


class RewriteDatabase:
    """Rewriters (NodeRewriters, GraphRewriters or other databases) by name, with tags and a
    position (a phase's, or a number). query() returns a SequentialGraphRewriter of the
    selected entries in position order (ties in registration order); a NodeRewriter entry
    runs as an in_to_out walk."""

    def __init__(self, name: str = "rewrite_db", phases: Sequence[Phase] = ()):
        self.name = name
        self.phases = {phase.name: phase for phase in phases}
        self._entries: dict[str, _Entry] = {}

    def register(self, name: str, rewriter: Any, *tags: str, phase: str | None = None,
                 position: float | None = None) -> Any:
        """Add `rewriter` as `name` with `tags`; returns the rewriter (for decorators).

        phase names the step it belongs to (one of the database's phases); position, a number,
        places it between them (default: after every entry so far). Give one or neither.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"{self.name}.register: the name must be a non-empty string, got "
                            f"{name!r}")
        if name in self._entries:
            raise ValueError(f"{self.name}.register: a rewriter named {name!r} is already "
                             f"registered")
        if not isinstance(rewriter, (Rewriter, RewriteDatabase)):
            raise TypeError(f"{self.name}.register: {name!r} is {rewriter!r}; expected a "
                            f"NodeRewriter, a GraphRewriter or a RewriteDatabase")
        tags = _tag_tuple(tags, "tags")
        if phase is not None:
            if position is not None:
                raise TypeError(f"{self.name}.register: {name!r} has phase={phase!r} and "
                                f"position={position!r}; give one of them")
            if phase not in self.phases:
                raise ValueError(f"{self.name}.register: {name!r} names the phase {phase!r}; "
                                 f"expected one of {', '.join(self.phases) or 'none'}")
            position = self.phases[phase].position
        elif position is None:
            position = max((e.position for e in self._entries.values()), default=0) + 1
        self._entries[name] = _Entry(name, rewriter, frozenset(tags), position,
                                     len(self._entries), phase)
        return rewriter

    def unregister(self, name: str) -> Any:
        """Remove the entry `name` (KeyError if there is none); returns its rewriter."""
        if name not in self._entries:
            raise KeyError(f"{self.name}.unregister: no rewriter named {name!r}")
        return self._entries.pop(name).rewriter

    def __getitem__(self, name: str) -> Any:
        try:
            return self._entries[name].rewriter
        except KeyError:
            raise KeyError(f"{self.name}: no rewriter named {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> list[str]:
        """The registered names, in position order."""
        return [entry.name for entry in self._sorted()]

    def pipeline(self) -> list[tuple[Phase | None, list[str]]]:
        """The entries in the order they run, grouped by phase: (phase, names) per phase that
        has entries, (None, [name]) for an entry placed by a number."""
        groups: list[tuple[Phase | None, list[str]]] = []
        for entry in self._sorted():
            phase = self.phases.get(entry.phase) if entry.phase else None
            if phase is not None and groups and groups[-1][0] is phase:
                groups[-1][1].append(entry.name)
            else:
                groups.append((phase, [entry.name]))
        return groups

    def describe(self) -> str:
        """The pipeline as text: one line per phase with its entries and its purpose."""
        return "\n".join(
            f"{phase.name if phase else '(position)':<18} {', '.join(names)}"
            + (f": {phase.purpose}" if phase else "")
            for phase, names in self.pipeline())

    def tags_of(self, name: str) -> frozenset[str]:
        if name not in self._entries:
            raise KeyError(f"{self.name}: no rewriter named {name!r}")
        return self._entries[name].tags

    def _sorted(self) -> list[_Entry]:
        return sorted(self._entries.values(), key=lambda e: (e.position, e.order))

    def _select(self, query: RewriteQuery) -> list[tuple[str, Any]]:
        """The selected entries, databases already turned into their query's rewriter."""
        selected = []
        for entry in self._sorted():
            if not query.selects(entry.name, entry.tags):
                continue
            rewriter = entry.rewriter
            if isinstance(rewriter, RewriteDatabase):
                rewriter = rewriter.query_rewriter(query)
            selected.append((entry.name, rewriter))
        return selected

    def query_rewriter(self, query: RewriteQuery) -> GraphRewriter:
        """The GraphRewriter that `query` selects."""
        steps = []
        for name, rewriter in self._select(query):
            steps.append(in2out(rewriter, name=name) if isinstance(rewriter, NodeRewriter)
                         else rewriter)
        return SequentialGraphRewriter(steps, name=self.name)

    def query(self, include: Sequence[str] | RewriteQuery = (), exclude: Sequence[str] = (),
              require: Sequence[str] = ()) -> GraphRewriter:
        """The GraphRewriter of the entries that have a tag (or name) in include, every tag of
        require and none of exclude; or of a RewriteQuery given whole (Theano's
        optdb.query(OPT_FAST_RUN))."""
        if isinstance(include, RewriteQuery):
            if exclude or require:
                raise TypeError(f"{self.name}.query: a RewriteQuery is given whole; exclude "
                                f"and require go into it")
            return self.query_rewriter(include)
        return self.query_rewriter(RewriteQuery(tuple(include), tuple(exclude),
                                                tuple(require)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {', '.join(self.names())}>"


class EquilibriumDatabase(RewriteDatabase):
    """A database whose query is one EquilibriumGraphRewriter of the selected entries (node
    rewriters and graph rewriters applied together until nothing changes)."""

    def __init__(self, name: str = "equilibrium_db", max_use_ratio: float = 10.0):
        super().__init__(name)
        self.max_use_ratio = max_use_ratio

    def query_rewriter(self, query: RewriteQuery) -> GraphRewriter:
        return EquilibriumGraphRewriter([rewriter for _, rewriter in self._select(query)],
                                        max_use_ratio=self.max_use_ratio, name=self.name)
