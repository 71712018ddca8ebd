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
  scan_push_out_sequence_gather
                              W[i_t] with i_t an integer sequence and W a non-sequence -> one
                              W[I] over every step before the loop, read as a new sequence
  scan_push_out_add           a state that only sums, s_t = s_{t-1} + f_t, read outside only at
                              its last step -> f_t's per-step ingredients as plain outputs and
                              s0 + the sum over the steps computed once after the loop (one
                              dot for outer products and matrix products, one scatter-add for
                              increments of rows, a sum over axis 0 otherwise)

Each rewrite builds a new Scan node (Scan ops are compared by identity) from a ScanParts
description of the old one's outer and inner variables.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sympile import scalar
from sympile.graph.basic import (
    Apply,
    Constant,
    Variable,
    ancestors,
    clone_replace,
    equal_computations,
    io_toposort,
)
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.scan.op import Scan
from sympile.tensor.blas.basic import Dot, dot
from sympile.tensor.blas.gemm import Ger
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.reduction import sum as reduce_sum
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.rewriting.matching import is_zeros
from sympile.tensor.shape import ShapeI, reshape
from sympile.tensor.subtensor import (
    ARRAY,
    SCALAR,
    AdvancedIncSubtensor,
    IncSubtensor,
    IndexSlice,
    Subtensor,
)
from sympile.tensor.type import tensor_type

__all__ = [
    "scan_db",
    "scan_push_out_add",
    "scan_push_out_invariants",
    "scan_push_out_sequence_dot",
    "scan_push_out_sequence_gather",
    "scan_remove_unused_inputs",
    "scan_remove_unused_outputs",
]



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
                      truncate_gradient=op.truncate_gradient, mode=op.mode)
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


@node_rewriter([Scan])
def scan_push_out_sequence_gather(fgraph, node):
    """W[i_t] inside the loop, i_t an integer scalar sequence read at tap 0 of outer I and W a
    non-sequence -> W[I[:n_steps]] before the loop (one gather of every step's row, e.g. an
    RNN's input embedding), whose rows are a new sequence. An index out of range raises
    before the loop instead of at its step."""
    parts = ScanParts.of(node)
    outer_of_sequence = {id(inner): outer for outer, inner in parts.sequences}
    outer_of_non_sequence = {id(inner): outer for outer, inner in parts.non_sequences}
    for inner_node in _inner_nodes(parts):
        if not isinstance(inner_node.op, Subtensor) or inner_node.op.idx_list != (SCALAR,):
            continue
        table, index = inner_node.inputs
        if id(table) not in outer_of_non_sequence or id(index) not in outer_of_sequence:
            continue
        rows = outer_of_non_sequence[id(table)][outer_of_sequence[id(index)][:node.inputs[0]]]
        inner_row = inner_node.outputs[0]
        new_input = inner_row.type(name=inner_row.name)
        parts.replace_inner({inner_row: new_input})
        parts.sequences.append((rows, new_input))
        return parts.build()
    return None


# -- scan_push_out_add --------------------------------------------------------------------------

def _is_full_slice(entry: object) -> bool:
    return isinstance(entry, IndexSlice) and entry.start in (None, 0) and entry.stop is None \
        and entry.step in (None, 1)


def _is_last_index(index: Variable, stacked: Variable) -> bool:
    """True when `index`, as a graph, is stacked.shape[0] - 1 (its length the shape rules
    found: n_steps, without an until condition)."""
    node = stacked.owner
    candidates = [ShapeI(0)(stacked), stacked.shape[0]]
    if not node.op.has_until:
        candidates.append(node.inputs[0])
    return any(equal_computations([index], [candidate - 1]) for candidate in candidates)


def _last_step_readers(fgraph: FunctionGraph, stacked: Variable) -> list[Variable] | None:
    """The outputs of the nodes that read `stacked` (a Scan output), when each reads only its
    last row: stacked[-1] or stacked[stacked.shape[0] - 1], whole slices after it. None when
    anything else uses it."""
    readers = []
    for client, position in fgraph.clients.get(stacked, []):
        if isinstance(client, str) or not isinstance(client.op, Subtensor) or position != 0:
            return None
        first, *rest = client.op.idx_list
        if not all(_is_full_slice(entry) for entry in rest):
            return None
        if first != -1 and not (first == SCALAR and _is_last_index(client.inputs[1], stacked)):
            return None
        readers.append(client.outputs[0])
    return readers or None


def _column_vector(variable: Variable) -> Variable | None:
    """v when variable is v[:, None] for a vector v."""
    owner = variable.owner
    if owner is not None and isinstance(owner.op, DimShuffle) and owner.op.new_order == (0, "x"):
        return owner.inputs[0]
    return None


def _row_vector(variable: Variable) -> Variable | None:
    """v when variable is v[None, :] for a vector v."""
    owner = variable.owner
    if owner is not None and isinstance(owner.op, DimShuffle) and owner.op.new_order == ("x", 0):
        return owner.inputs[0]
    return None


class _StepSums:
    """Builds, for one Scan node, outer expressions of the sum over the steps of inner
    expressions: `stacked(v)` is the outer (steps, ...) array of an inner variable's values at
    every step (the outer sequence itself, a plain output already there, or a new one: a
    marker in new_plain that the new node's output replaces), `outer(v)` the outer value
    of an inner variable that does not depend on the loop (None if it does)."""

    def __init__(self, parts: ScanParts):
        self.parts = parts
        self.n_steps = parts.node.inputs[0]
        self.invariant = _invariant_variables(parts, _inner_nodes(parts))
        self.new_plain: list[tuple[Variable, Variable]] = []

    def outer(self, inner: Variable) -> Variable | None:
        if isinstance(inner, Constant):
            return inner
        if id(inner) not in self.invariant:
            return None
        outer_of = {inner: outer for outer, inner in self.parts.non_sequences}
        return clone_replace([inner], outer_of)[0]

    def stacked(self, inner: Variable) -> Variable:
        # With an until condition the steps that ran are known only from a stacked output.
        if self.parts.condition is None:
            for outer, sequence in self.parts.sequences:
                if sequence is inner:
                    return outer[:self.n_steps]
        for plain_inner, stacked in [*self.parts.plain, *self.new_plain]:
            if plain_inner is inner:
                return stacked
        marker = tensor_type(inner.type.dtype, (None, *inner.type.shape))(name=inner.name)
        self.new_plain.append((inner, marker))
        return marker

    def general(self, term: Variable) -> Variable:
        """sum_t term_t: the stacked values summed over axis 0."""
        return reduce_sum(self.stacked(term), axis=0, dtype=term.type.dtype)

    def dot(self, left: Variable, right: Variable) -> Variable:
        """sum_t dot(left_t, right_t): one dot after the loop. A factor that does not depend
        on the loop multiplies the sum of the other; otherwise the steps are laid side by side
        along the summed axis (an outer product of columns a_t and rows b_t: dot(A.T, B))."""
        left_outer, right_outer = self.outer(left), self.outer(right)
        if left_outer is not None:
            return dot(left_outer, self.general(right))
        if right_outer is not None:
            return dot(self.general(left), right_outer)
        column, row = _column_vector(left), _row_vector(right)
        if column is not None and row is not None:
            return dot(self.stacked(column).T, self.stacked(row))
        lefts, rights = self.stacked(left), self.stacked(right)
        if left.type.ndim == 2:
            # (steps, n, k) -> (n, steps * k): column t * k + j is step t's column j.
            lefts = reshape(lefts.dimshuffle(1, 0, 2),
                            (lefts.shape[1], lefts.shape[0] * lefts.shape[2]))
        else:
            lefts = lefts.flatten()
        if right.type.ndim == 2:
            rights = reshape(rights, (rights.shape[0] * rights.shape[1], rights.shape[2]))
        else:
            rights = rights.flatten()
        return dot(lefts, rights)

    def scatter(self, base: Variable, op: IncSubtensor | AdvancedIncSubtensor, value: Variable,
                index: Variable) -> Variable | None:
        """base (outer) plus sum_t inc_subtensor(zeros[index_t], value_t), for a row index (a
        scalar, or a vector of rows) and whole slices after it: one scatter-add of every
        step's values at every step's rows (numpy.add.at, so rows that repeat accumulate).
        None for other indices."""
        first, *rest = op.idx_list
        if not all(_is_full_slice(entry) for entry in rest):
            return None
        index_outer = self.outer(index)
        if index_outer is not None:
            # The same rows at every step: the sum of the values goes there once.
            return type(op)(op.idx_list)(base, self.general(value), index_outer)
        region_ndim = base.type.ndim - 1 + index.type.ndim
        scatter_op = AdvancedIncSubtensor((ARRAY, *rest))
        if first == SCALAR and index.type.ndim == 0:
            values = self.stacked(value)
            missing = region_ndim - value.type.ndim
            if missing:
                values = values.dimshuffle(0, *["x"] * missing, *range(1, values.type.ndim))
            return scatter_op(base, values, self.stacked(index))
        if first == ARRAY and index.type.ndim == 1 and value.type.ndim == region_ndim \
                and 1 not in value.type.shape:
            values = self.stacked(value)
            lengths = [values.shape[axis] for axis in range(2, values.type.ndim)]
            values = reshape(values, (values.shape[0] * values.shape[1], *lengths))
            return scatter_op(base, values, self.stacked(index).flatten())
        return None

    def increment(self, base: Variable, written: Variable) -> Variable | None:
        """base plus sum_t written_t, for written_t = inc_subtensor(zeros[index_t], y_t) with
        zeros that do not depend on the loop; None for other terms."""
        owner = written.owner
        if owner is None or not isinstance(owner.op, (IncSubtensor, AdvancedIncSubtensor)) \
                or owner.op.destroy_map:
            return None
        zeros, value, *index_inputs = owner.inputs
        zeros_outer = self.outer(zeros)
        if zeros_outer is None or not is_zeros(zeros_outer) or len(index_inputs) != 1:
            return None
        op = owner.op
        if isinstance(op, AdvancedIncSubtensor):
            if op.set_instead_of_inc or op.ignore_duplicates:
                return None
        elif op.set_instead_of_inc:
            # A basic index selects every element once: setting zeros adds the values.
            op = IncSubtensor(op.idx_list)
        scattered = self.scatter(zeros_outer, op, value, index_inputs[0])
        return None if scattered is None else base + scattered


def _state_sum(sums: _StepSums, state: Recurrent, last_initial: Variable) -> Variable | None:
    """The state's value after the last step, as an outer expression, when its update is
    s_prev + f_t (either order), inc_subtensor(s_prev[index_t], y_t) or ger(s_prev, alpha_t,
    a_t, b_t); None for other updates."""
    (previous,) = state.inner_taps
    update = state.inner_output
    owner = update.owner
    dtype = update.type.dtype
    if owner is None or owner.op.destroy_map:
        return None
    if isinstance(owner.op, Elemwise) and owner.op.scalar_op == scalar.add \
            and len(owner.inputs) == 2 and previous in owner.inputs:
        term = owner.inputs[1] if owner.inputs[0] is previous else owner.inputs[0]
        if term.type.dtype != dtype:
            return None
        term_owner = term.owner
        if term_owner is not None and isinstance(term_owner.op, Dot):
            return last_initial + sums.dot(*term_owner.inputs)
        if term_owner is not None and isinstance(term_owner.op, Elemwise) \
                and term_owner.op.scalar_op == scalar.mul and len(term_owner.inputs) == 2 \
                and not term_owner.op.inplace_pattern:
            # outer(a, b) is a[:, None] * b[None, :].
            for left, right in (term_owner.inputs, term_owner.inputs[::-1]):
                if _column_vector(left) is not None and _row_vector(right) is not None:
                    return last_initial + sums.dot(left, right)
        incremented = sums.increment(last_initial, term)
        if incremented is not None:
            return incremented
        return last_initial + sums.general(term)
    if isinstance(owner.op, (IncSubtensor, AdvancedIncSubtensor)) \
            and owner.inputs[0] is previous and not owner.op.set_instead_of_inc \
            and not getattr(owner.op, "ignore_duplicates", False) and len(owner.inputs) == 3:
        return sums.scatter(last_initial, owner.op, owner.inputs[1], owner.inputs[2])
    if isinstance(owner.op, Ger) and owner.inputs[0] is previous:
        _, alpha, left, right = owner.inputs
        alpha_outer = sums.outer(alpha)
        if alpha_outer is not None:
            return last_initial + alpha_outer * sums.dot(left.dimshuffle(0, "x"),
                                                         right.dimshuffle("x", 0))
        scaled = (alpha * left).dimshuffle(0, "x")
        return last_initial + sums.dot(scaled, right.dimshuffle("x", 0))
    return None


@node_rewriter([Scan])
def scan_push_out_add(fgraph, node):
    """A recurrent state s with the single tap -1 whose update is s_prev + f_t (f_t not
    reading s_prev: s_prev is used once, by the update), inc_subtensor(s_prev[i_t], y_t) or
    ger(s_prev, alpha_t, a_t, b_t), whose outer output is read only at its last step
    (s[-1]) -> no longer a state: f_t's per-step ingredients become plain outputs (or are read
    from the outer sequences) and s[-1] becomes s0[-1] + the sum over the steps, computed
    once after the loop:
      f_t = dot(x_t, y_t)                         -> one dot of the stacked operands
      f_t = outer(a_t, b_t)                       -> dot(A.T, B)
      f_t = inc_subtensor(zeros[i_t], y_t)        -> advanced_inc_subtensor1(zeros, Y, I)
      any other f_t                               -> F.sum(axis=0)
    With an until condition the stacked ingredients hold the steps that ran. The sums are
    taken in another order than the loop's; with no steps, s[-1] raises where the result may
    not (s0[-1], or an error of the sum's shapes)."""
    parts = ScanParts.of(node)
    uses = Counter(id(variable) for inner_node in _inner_nodes(parts)
                   for variable in inner_node.inputs)
    uses.update(id(variable) for variable in parts.inner_outputs())
    for state in parts.recurrent:
        if state.taps != (-1,) or uses[id(state.inner_taps[0])] != 1 \
                or uses[id(state.inner_output)] != 1:
            continue
        readers = _last_step_readers(fgraph, state.outer_output)
        if readers is None:
            continue
        sums = _StepSums(parts)
        total = _state_sum(sums, state, state.initial[-1])
        if total is None or total.type.dtype != state.inner_output.type.dtype \
                or any(reader.type.convert_variable(total) is None for reader in readers):
            continue
        parts.recurrent = [other for other in parts.recurrent if other is not state]
        parts.plain.extend(sums.new_plain)
        replacements = parts.build()
        stacked = {marker: replacements.pop(marker) for _, marker in sums.new_plain}
        (total,) = clone_replace([total], {**replacements, **stacked})
        replacements.update((reader, total) for reader in readers)
        return replacements
    return None


scan_db = EquilibriumDatabase("scan_db")
for _rule in (scan_remove_unused_outputs, scan_remove_unused_inputs, scan_push_out_invariants,
              scan_push_out_sequence_dot, scan_push_out_sequence_gather, scan_push_out_add):
    scan_db.register(_rule.name, _rule, "scan", "fast_run")
rewrite_db.register("scan", scan_db, "scan", "fast_run", phase="scan")
