"""Merging scans, in scan_db (tags scan, fast_run; see sympile.scan.rewriting):

  scan_merge  two Scan nodes with the same n_steps, neither computed from the other's
              outputs, both without until or with the same until condition -> one Scan whose
              inner graph is the union of theirs

One loop instead of two: half the per-step overhead, an outer sequence both read (the same
variable: the same taps and direction, as scan() slices and reverses before the loop) is
passed and read once, and later rewrites see both bodies together. Sequences that only one
reads are merged too: n_steps alone sets the number of steps (sympile.scan.op).
"""

from __future__ import annotations

from sympile.graph.basic import Apply, Constant, Variable, ancestors
from sympile.graph.rewriting.basic import node_rewriter
from sympile.ifelse.rewriting import unconditional_siblings
from sympile.scan.op import Scan
from sympile.scan.rewriting import ScanParts, scan_db

__all__ = ["scan_merge"]


def _reads_outputs_of(node: Apply, other: Apply) -> bool:
    """True if an input of `node` is computed from an output of `other`."""
    produced = {id(output) for output in other.outputs}
    return any(id(variable) in produced for variable in ancestors(node.inputs))


def _same_computation(first: Variable, second: Variable, memo: dict[tuple[int, int], bool]
                      ) -> bool:
    """True if first and second are the same variable, equal constants, or the same output of
    nodes with equal ops whose inputs are the same computations."""
    if first is second:
        return True
    key = (id(first), id(second))
    if key in memo:
        return memo[key]
    if isinstance(first, Constant) or isinstance(second, Constant):
        same = isinstance(first, Constant) and isinstance(second, Constant) \
            and first.signature() == second.signature()
    elif first.owner is None or second.owner is None:
        same = False
    else:
        a, b = first.owner, second.owner
        same = a.op == b.op and a.outputs.index(first) == b.outputs.index(second) \
            and len(a.inputs) == len(b.inputs) \
            and all(_same_computation(x, y, memo) for x, y in zip(a.inputs, b.inputs))
    memo[key] = same
    return same


def _shared_or_fresh(pairs: list[tuple[Variable, Variable]],
                     known: list[tuple[Variable, Variable]],
                     substitutions: dict[Variable, Variable]) -> list[tuple[Variable, Variable]]:
    """The (outer, inner) pairs of the second scan to add to the first's `known` ones: an
    outer variable the first already passes is read through the first's inner input, every
    other gets a fresh inner input (the two ops may share inner variables, as clones do).
    `substitutions` gets second inner -> merged inner."""
    inner_of = {id(outer): inner for outer, inner in known}
    added = []
    for outer, inner in pairs:
        shared = inner_of.get(id(outer))
        if shared is not None and shared.type == inner.type:
            substitutions[inner] = shared
            continue
        fresh = inner.type(name=inner.name)
        substitutions[inner] = fresh
        inner_of[id(outer)] = fresh
        added.append((outer, fresh))
    return added


def _merged(first: Apply, second: Apply) -> ScanParts | None:
    """first's ScanParts extended with second's sequences, states, outputs and
    non-sequences; None if their until conditions differ."""
    parts, others = ScanParts.of(first), ScanParts.of(second)
    substitutions: dict[Variable, Variable] = {}
    sequences = _shared_or_fresh(others.sequences, parts.sequences, substitutions)
    non_sequences = _shared_or_fresh(others.non_sequences, parts.non_sequences, substitutions)
    for state in others.recurrent:
        fresh_taps = [tap.type(name=tap.name) for tap in state.inner_taps]
        substitutions.update(zip(state.inner_taps, fresh_taps))
        state.inner_taps = fresh_taps
    others.replace_inner(substitutions)
    if parts.condition is not None \
            and not _same_computation(parts.condition, others.condition, {}):
        return None
    parts.sequences = parts.sequences + sequences
    parts.recurrent = parts.recurrent + others.recurrent
    parts.plain = parts.plain + others.plain
    parts.non_sequences = parts.non_sequences + non_sequences
    return parts


@node_rewriter([Scan])
def scan_merge(fgraph, node):
    """Scan_a(n, ...), Scan_b(n, ...) -> Scan_ab(n, ...) computing the outputs of both: the
    same n_steps variable, neither reading the other's outputs, the same has_until (with
    conditions that compute the same from the same outer inputs) and truncate_gradient.
    Only for scans that run on every call: merging one that runs in a branch of an ifelse
    only with one that does not would run it always."""
    for other in unconditional_siblings(fgraph, node, Scan):
        if other.op.has_until != node.op.has_until \
                or other.op.truncate_gradient != node.op.truncate_gradient \
                or _reads_outputs_of(node, other) or _reads_outputs_of(other, node):
            continue
        parts = _merged(node, other)
        if parts is not None:
            return parts.build()
    return None


scan_db.register(scan_merge.name, scan_merge, "scan", "fast_run")
