"""Rewrites of the Scan Op, in scan_db (registered in rewrite_db as 'scan', tags scan and
fast_run, after canonicalize and constant folding, before stabilize):

  scan_remove_unused_outputs  an outer output nothing uses is no longer computed, with the
                              inner work only it needed (a recurrent state stays while another
                              kept output reads its past values)
  scan_remove_unused_inputs   a sequence or non-sequence the inner graph does not read is no
                              longer passed in
  scan_push_out_invariants    inner nodes that depend only on non-sequences and constants are
                              computed once before the loop and passed in as new non-sequences
  scan_push_out_sequence_dot  dot(x_t, W) with x_t a sequence (one vector per step) and W a
                              non-sequence -> one dot(X, W) over every step before the loop,
                              read as a new sequence

Each rewrite builds a new Scan node (Scan ops are compared by identity) from a ScanParts
description of the old one's outer and inner variables.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sympile.graph.basic import Apply, Constant, Variable, ancestors, clone_replace, io_toposort
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.scan.op import Scan
from sympile.tensor.blas import Dot, dot
from sympile.tensor.rewriting.basic import rewrite_db

__all__ = [
    "SCAN_POSITION",
    "scan_db",
    "scan_push_out_invariants",
    "scan_push_out_sequence_dot",
    "scan_remove_unused_inputs",
    "scan_remove_unused_outputs",
]

SCAN_POSITION = 1.2


@dataclass
class Recurrent:
    """A recurrent state: its outer initial buffer, taps, inner tap inputs, inner output and
    the outer output that stacks its steps."""

    initial: Variable
    taps: tuple[int, ...]
    inner_taps: list[Variable]
    inner_output: Variable
    outer_output: Variable


@dataclass
class ScanParts:
    """A Scan node taken apart: (outer, inner) pairs of sequences and non-sequences, the
    recurrent states, (inner output, outer output) pairs of plain outputs, the until
    condition."""

    node: Apply
    sequences: list[tuple[Variable, Variable]]
    recurrent: list[Recurrent]
    plain: list[tuple[Variable, Variable]]
    non_sequences: list[tuple[Variable, Variable]]
    condition: Variable | None
    replaced: dict[Variable, Variable] = field(default_factory=dict)

    @classmethod
    def of(cls, node: Apply) -> ScanParts:
        op: Scan = node.op
        n_sequences, n_recurrent = op.n_sequence_inputs, len(op.recurrent_taps)
        outer = node.inputs[1:]
        inner_inputs = op.inner_inputs
        sequences = list(zip(outer[:n_sequences], inner_inputs[:n_sequences]))
        recurrent, position = [], n_sequences
        for index, taps in enumerate(op.recurrent_taps):
            recurrent.append(Recurrent(outer[n_sequences + index], taps,
                                       inner_inputs[position:position + len(taps)],
                                       op.inner_outputs[index], node.outputs[index]))
            position += len(taps)
        plain = [(op.inner_outputs[n_recurrent + index], node.outputs[n_recurrent + index])
                 for index in range(op.n_plain_outputs)]
        non_sequences = list(zip(outer[n_sequences + n_recurrent:], inner_inputs[position:]))
        condition = op.inner_outputs[-1] if op.has_until else None
        return cls(node, sequences, recurrent, plain, non_sequences, condition)

    def inner_outputs(self) -> list[Variable]:
        return [*(state.inner_output for state in self.recurrent),
                *(inner for inner, _ in self.plain),
                *([self.condition] if self.condition is not None else [])]

    def build(self) -> dict[Variable, Variable]:
        """The new Scan node's outputs, keyed by the old node's outputs they replace."""
        op: Scan = self.node.op
        inner_inputs = [*(inner for _, inner in self.sequences),
                        *(tap for state in self.recurrent for tap in state.inner_taps),
                        *(inner for _, inner in self.non_sequences)]
        new_op = Scan(inner_inputs, self.inner_outputs(),
                      n_sequence_inputs=len(self.sequences),
                      recurrent_taps=tuple(state.taps for state in self.recurrent),
                      n_plain_outputs=len(self.plain), n_non_sequences=len(self.non_sequences),
                      has_until=op.has_until, name=op.name,
                      truncate_gradient=op.truncate_gradient)
        outputs = new_op(self.node.inputs[0], *(outer for outer, _ in self.sequences),
                         *(state.initial for state in self.recurrent),
                         *(outer for outer, _ in self.non_sequences))
        outputs = outputs if isinstance(outputs, list) else [outputs]
        old_outputs = [*(state.outer_output for state in self.recurrent),
                       *(outer for _, outer in self.plain)]
        return dict(zip(old_outputs, outputs))

    def replace_inner(self, replacements: dict[Variable, Variable]) -> None:
        """Substitute variables of the inner graph in every inner output."""
        new_outputs = clone_replace(self.inner_outputs(), replacements)
        for state, new in zip(self.recurrent, new_outputs):
            state.inner_output = new
        plain_outputs = new_outputs[len(self.recurrent):len(self.recurrent) + len(self.plain)]
        self.plain = [(new, outer) for new, (_, outer) in zip(plain_outputs, self.plain)]
        if self.condition is not None:
            self.condition = new_outputs[-1]


def _is_used(fgraph: FunctionGraph, variable: Variable) -> bool:
    return bool(fgraph.clients.get(variable))


@node_rewriter([Scan])
def scan_remove_unused_outputs(fgraph, node):
    """Scan(...) -> a Scan without the outer outputs nothing uses, and without their inner
    computation; a recurrent state another kept output (or the until condition) reads through
    its taps is kept."""
    parts = ScanParts.of(node)
    kept_plain = [(inner, outer) for inner, outer in parts.plain if _is_used(fgraph, outer)]
    kept_recurrent = [state for state in parts.recurrent if _is_used(fgraph, state.outer_output)]
    while True:
        roots = [*(state.inner_output for state in kept_recurrent),
                 *(inner for inner, _ in kept_plain),
                 *([parts.condition] if parts.condition is not None else [])]
        read = {id(variable) for variable in ancestors(roots)} if roots else set()
        needed = [state for state in parts.recurrent if state in kept_recurrent
                  or any(id(tap) in read for tap in state.inner_taps)]
        if len(needed) == len(kept_recurrent):
            break
        kept_recurrent = needed
    if len(kept_plain) == len(parts.plain) and len(kept_recurrent) == len(parts.recurrent):
        return None
    if not kept_plain and not kept_recurrent:
        return None
    parts.plain = kept_plain
    parts.recurrent = kept_recurrent
    return parts.build()


@node_rewriter([Scan])
def scan_remove_unused_inputs(fgraph, node):
    """Scan(..., sequence or non-sequence the inner graph does not read, ...) -> a Scan
    without it. Sequences set the number of steps only through n_steps, an input of its own,
    so dropping one does not change how many steps run."""
    parts = ScanParts.of(node)
    read = {id(variable) for variable in ancestors(parts.inner_outputs())}
    sequences = [pair for pair in parts.sequences if id(pair[1]) in read]
    non_sequences = [pair for pair in parts.non_sequences if id(pair[1]) in read]
    if len(sequences) == len(parts.sequences) and \
            len(non_sequences) == len(parts.non_sequences):
        return None
    parts.sequences, parts.non_sequences = sequences, non_sequences
    return parts.build()


def _inner_nodes(parts: ScanParts) -> list[Apply]:
    inner_inputs = [*(inner for _, inner in parts.sequences),
                    *(tap for state in parts.recurrent for tap in state.inner_taps),
                    *(inner for _, inner in parts.non_sequences)]
    return io_toposort(inner_inputs, parts.inner_outputs())


def _invariant_variables(parts: ScanParts, nodes: list[Apply]) -> set[int]:
    """ids of the inner variables that depend only on non-sequences and constants."""
    invariant = {id(inner) for _, inner in parts.non_sequences}
    for node in nodes:
        if getattr(node.op, "destroy_map", None):
            continue
        if all(id(variable) in invariant or isinstance(variable, Constant)
               for variable in node.inputs):
            invariant.update(id(output) for output in node.outputs)
    return invariant


@node_rewriter([Scan])
def scan_push_out_invariants(fgraph, node):
    """Inner nodes whose inputs are non-sequences, constants or other such nodes' outputs ->
    computed once before the loop on the outer non-sequences, each result the loop reads
    passed in as a new non-sequence."""
    parts = ScanParts.of(node)
    nodes = _inner_nodes(parts)
    invariant = _invariant_variables(parts, nodes)
    roots = parts.inner_outputs()
    # The invariant results the loop reads: inputs of variant nodes, or inner outputs.
    boundary: list[Variable] = []
    for inner_node in nodes:
        if all(id(output) in invariant for output in inner_node.outputs):
            continue
        boundary.extend(variable for variable in inner_node.inputs
                        if variable.owner is not None and id(variable) in invariant)
    boundary.extend(variable for variable in roots
                    if variable.owner is not None and id(variable) in invariant)
    unique = list({id(variable): variable for variable in boundary}.values())
    if not unique:
        return None
    outer_of = {inner: outer for outer, inner in parts.non_sequences}
    outer_values = clone_replace(unique, outer_of)
    new_inputs = [variable.type(name=variable.name) for variable in unique]
    parts.replace_inner(dict(zip(unique, new_inputs)))
    parts.non_sequences.extend(zip(outer_values, new_inputs))
    return parts.build()


@node_rewriter([Scan])
def scan_push_out_sequence_dot(fgraph, node):
    """dot(x_t, W) inside the loop, x_t a vector sequence read at tap 0 of outer X and W a
    non-sequence -> dot(X[:n_steps], W) before the loop (one matrix product instead of one
    vector product per step), whose rows are a new sequence."""
    parts = ScanParts.of(node)
    outer_of_sequence = {id(inner): outer for outer, inner in parts.sequences}
    outer_of_non_sequence = {id(inner): outer for outer, inner in parts.non_sequences}
    for inner_node in _inner_nodes(parts):
        if not isinstance(inner_node.op, Dot):
            continue
        left, right = inner_node.inputs
        if id(left) not in outer_of_sequence or id(right) not in outer_of_non_sequence \
                or left.type.ndim != 1 or right.type.ndim != 2:
            continue
        sequence = outer_of_sequence[id(left)][:node.inputs[0]]
        product = dot(sequence, outer_of_non_sequence[id(right)])
        inner_product = inner_node.outputs[0]
        new_input = inner_product.type(name=inner_product.name)
        parts.replace_inner({inner_product: new_input})
        parts.sequences.append((product, new_input))
        return parts.build()
    return None


scan_db = EquilibriumDatabase("scan_db")
for _rule in (scan_remove_unused_outputs, scan_remove_unused_inputs, scan_push_out_invariants,
              scan_push_out_sequence_dot):
    scan_db.register(_rule.name, _rule, "scan", "fast_run")
rewrite_db.register("scan", scan_db, "scan", "fast_run", position=SCAN_POSITION)
