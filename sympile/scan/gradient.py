"""Derivatives through the Scan Op (sympile.scan.op): its L_op and R_op.

L_op is backpropagation through time as a second Scan that runs over the steps in reverse.
Its sequences are the forward sequences, the forward state at every tap (the initial rows and
the forward outputs joined), the forward outputs themselves (so that a derivative which reads
a step's result, as tanh's does, does not recompute the step) and the output gradients, all
reversed; its non-sequences are the forward non-sequences. At the step for forward step t, the
cotangent of state r's output at t is its output gradient at t plus what the later steps sent
back to it through their taps. A state whose taps reach back `lag` rows carries `lag` pending
sums (_Carries); the last carries are the gradient of the initial rows, each non-sequence's
gradient is accumulated in a state, and each sequence tap's per-step gradient is a plain
output (the outer Subtensor gradients then sum overlapping taps into the sequence's rows).
Gradients are disconnected exactly where no output gradient reaches an input.

truncate_gradient=k (Theano's semantics): the reverse scan runs over the last k forward steps
only, so earlier sequence rows get zero gradient, non-sequences sum k steps, and the initial
rows get a gradient only when the loop ran at most k steps. The scans built here differentiate
fully (truncate_gradient=-1): a gradient of the truncated gradient is exact.

R_op is forward mode: a Scan that runs the forward inner graph and, alongside, its R-operator,
carrying one tangent state per state (same taps) and reading tangent sequences and
non-sequences.
"""

from __future__ import annotations

from collections.abc import Sequence

from sympile.config import config
from sympile.gradient import Rop, grad
from sympile.graph.basic import Variable, clone_replace, equal_computations, graph_inputs
from sympile.graph.gradient_types import disconnected_type, is_disconnected, is_null
from sympile.graph.op import fill_test_values
from sympile.graph.utils import bind_methods
from sympile.ifelse.basic import ifelse
from sympile.scan.op import Scan
from sympile.tensor.basic import join, stack, zeros_like
from sympile.tensor.math import cast, gt, le, logical_and, minimum
from sympile.tensor.shape.ops import declared_like, expand_dims
from sympile.tensor.subtensor import set_subtensor
from sympile.tensor.type import is_discrete, tensor_type

__all__ = ["scan_l_op", "scan_r_op"]


class _Layout:
    """Where each kind of input and output of one Scan op sits, outer and inner."""

    def __init__(self, op: Scan):
        self.n_sequences = op.n_sequence_inputs
        self.taps = op.recurrent_taps
        self.n_recurrent = len(op.recurrent_taps)
        self.lags = [-min(taps) for taps in op.recurrent_taps]
        self.n_plain = op.n_plain_outputs
        self.n_non_sequences = op.n_non_sequences

    def split_outer(self, inputs: Sequence[Variable]):
        """n_steps, sequences, initial buffers, non-sequences."""
        start = 1 + self.n_sequences
        return (inputs[0], list(inputs[1:start]),
                list(inputs[start:start + self.n_recurrent]),
                list(inputs[start + self.n_recurrent:]))

    def split_inner(self, inner_inputs: Sequence[Variable]):
        """Sequence slices, the tap variables of each state (in tap order), non-sequences."""
        sequences = list(inner_inputs[:self.n_sequences])
        position = self.n_sequences
        taps = []
        for state_taps in self.taps:
            taps.append(list(inner_inputs[position:position + len(state_taps)]))
            position += len(state_taps)
        return sequences, taps, list(inner_inputs[position:])


def _cloned_inner(op: Scan) -> tuple[list[Variable], list[Variable]]:
    """A copy of the op's inner graph with fresh inner inputs, so that the derived scans never
    share Apply nodes with the forward one."""
    inputs = [variable.type(name=variable.name) for variable in op.inner_inputs]
    outputs = clone_replace(list(op.inner_outputs), dict(zip(op.inner_inputs, inputs)))
    return inputs, list(outputs)


def _fresh_like(variable: Variable, name: str | None = None) -> Variable:
    """A new inner variable of the dtype and ndim of `variable`, lengths left open."""
    return tensor_type(variable.type.dtype, (None,) * variable.type.ndim)(name=name)


def _sum(parts: Sequence[Variable | None]) -> Variable | None:
    present = [part for part in parts if part is not None]
    if not present:
        return None
    total = present[0]
    for part in present[1:]:
        total = total + part
    return total


def _vector_jacobian(inner_outputs: Sequence[Variable], cotangents: dict[int, Variable],
                     wrt: Sequence[Variable]) -> dict[int, Variable | None]:
    """{id(w): the gradient of sum_i <cotangents[i], inner_outputs[i]> with respect to w, or
    None where it does not depend on w} for w in wrt."""
    known: dict[Variable, Variable] = {}
    for index, cotangent in cotangents.items():
        output = inner_outputs[index]
        cotangent = declared_like(cotangent, output)
        # An inner variable returned as two outputs gets the sum of their cotangents.
        known[output] = known[output] + cotangent if output in known else cotangent
    if not known or not wrt:
        return {id(variable): None for variable in wrt}
    gradients = grad(None, list(wrt), known_grads=known, disconnected_inputs="ignore",
                     return_disconnected="none", null_gradients="return")
    return {id(variable): gradient for variable, gradient in zip(wrt, gradients)}


def _rows_are_steps(sequence: Variable, steps: Variable) -> bool:
    """True when `steps` is, as a graph, sequence.shape[0]: the rows are exactly the steps."""
    return equal_computations([steps], [sequence.shape[0]])


class _Carries:
    """The pending cotangent sums of one state in the reverse scan.

    The forward step t writes buffer row lag + t and reads rows lag + t + tap. After the
    reverse step for t, carry d (0 <= d < lag) holds what steps t, t+1, ... sent back to
    row t + d, the rows that step t - 1 and earlier still have to finish: carry d is
    carry d - 1 of the step before plus this step's gradient at tap d - lag, and carry lag - 1
    completes the cotangent of row lag + t - 1, the state the step for t - 1 produced.
    Carry d exists (is not identically zero) when some tap is <= d - lag.
    """

    def __init__(self, taps: Sequence[int], dtype: str, ndim: int, tapped: Sequence[bool]):
        self.lag = -min(taps)
        self.taps = list(taps)
        earliest = min((tap for tap, has in zip(taps, tapped) if has), default=None)
        self.inputs: list[Variable | None] = [
            tensor_type(dtype, (None,) * ndim)(name=f"carry[{d}]")
            if earliest is not None and earliest <= d - self.lag else None
            for d in range(self.lag)]

    def next_values(self, tap_gradients: Sequence[Variable | None]) -> list[Variable | None]:
        by_row = {self.lag + tap: gradient for tap, gradient in zip(self.taps, tap_gradients)}
        return [_sum([self.inputs[d - 1] if d else None, by_row.get(d)])
                for d in range(self.lag)]


def _without_test_values(function):
    """Scan's derivative graphs are built over inner placeholders, which have no test values
    (config.compute_test_value): built with the flag off, then the outer results' test
    values computed."""
    def wrapped(*args, **kwargs):
        with config.change_flags(compute_test_value="off"):
            results = function(*args, **kwargs)
        fill_test_values(results)  # the outer graph's, from the outer inputs' test values
        return results
    wrapped.__name__, wrapped.__doc__ = function.__name__, function.__doc__
    return wrapped


@_without_test_values
def scan_l_op(op: Scan, inputs: list[Variable], outputs: list[Variable],
              output_grads: list[Variable]) -> list[Variable]:
    """Backpropagation through time (module docstring). Returns one gradient per outer input:
    n_steps and discrete inputs are disconnected, as is an input no output gradient reaches."""
    layout = _Layout(op)
    n_steps, sequences, initials, non_sequences = layout.split_outer(inputs)
    inner_inputs, inner_outputs = _cloned_inner(op)
    inner_sequences, inner_taps, inner_non_sequences = layout.split_inner(inner_inputs)
    n_recurrent, n_stacked = layout.n_recurrent, layout.n_recurrent + layout.n_plain
    given = [not is_disconnected(output_grads[index]) and not is_discrete(outputs[index])
             for index in range(n_stacked)]
    wrt = [variable for variable in inner_inputs if not is_discrete(variable)]

    # Which states receive a cotangent: those with an output gradient, and those whose taps
    # some received cotangent reaches (which grows the set: iterate to the fixed point).
    fed_back = given[:n_recurrent]
    while True:
        probes = {index: _fresh_like(inner_outputs[index])
                  for index in range(n_stacked) if given[index] or
                  (index < n_recurrent and fed_back[index])}
        gradients = _vector_jacobian(inner_outputs, probes, wrt)
        grown = [fed_back[r] or any(gradients.get(id(tap)) is not None for tap in inner_taps[r])
                 for r in range(n_recurrent)]
        if grown == fed_back:
            break
        fed_back = grown

    carries = [_Carries(layout.taps[r], outputs[r].type.dtype, outputs[r].type.ndim - 1,
                        [gradients.get(id(tap)) is not None for tap in inner_taps[r]])
               for r in range(n_recurrent)]
    output_grad_inputs = [_fresh_like(outputs[index][0], name=f"output_grad[{index}]")
                          if given[index] else None for index in range(n_stacked)]
    cotangents = {}
    for index in range(n_stacked):
        carried = carries[index].inputs[-1] if index < n_recurrent else None
        cotangent = _sum([output_grad_inputs[index], carried])
        if cotangent is not None:
            cotangents[index] = cotangent
    gradients = _vector_jacobian(inner_outputs, cotangents, wrt)
    nulls = [gradient for gradient in gradients.values() if is_null(gradient)]
    if nulls:
        return [disconnected_type(), *[nulls[0]] * (len(inputs) - 1)]

    carry_outputs = [carry.next_values([gradients.get(id(tap)) for tap in inner_taps[r]])
                     for r, carry in enumerate(carries)]
    accumulators = [_fresh_like(variable, name=f"accumulated_grad[{index}]")
                    if gradients.get(id(variable)) is not None else None
                    for index, variable in enumerate(inner_non_sequences)]
    sequence_grads = [gradients.get(id(variable)) for variable in inner_sequences]

    steps = outputs[0].shape[0] if op.has_until else n_steps
    truncated = op.truncate_gradient != -1
    grad_steps = minimum(steps, op.truncate_gradient) if truncated else steps

    def reversed_rows(sequence: Variable) -> Variable:
        if _rows_are_steps(sequence, steps):
            return sequence[::-1]
        return sequence[:steps][::-1]

    # The reverse scan's inner inputs paired with what feeds them from outside.
    sequence_pairs: list[tuple[Variable, Variable]] = []
    for inner, outer in zip(inner_sequences, sequences):
        sequence_pairs.append((inner, reversed_rows(outer)))
    for r in range(n_recurrent):
        lag = layout.lags[r]
        initial = initials[r]
        if initial.type.shape[0] != lag:
            initial = initial[initial.shape[0] - lag:]
        buffer = join(0, initial, outputs[r])
        for tap, inner in zip(layout.taps[r], inner_taps[r]):
            sequence_pairs.append((inner, buffer[lag + tap:lag + tap + steps][::-1]))
    for index, inner in enumerate(output_grad_inputs):
        if inner is not None:
            sequence_pairs.append((inner, cast(output_grads[index], outputs[index].type.dtype)
                                   [::-1]))
    state_pairs: list[tuple[Variable, Variable, Variable]] = []
    for r, carry in enumerate(carries):
        for inner, following in zip(carry.inputs, carry_outputs[r]):
            if inner is not None:
                state_pairs.append((inner, following, zeros_like(initials[r][:1])))
    for index, inner in enumerate(accumulators):
        if inner is not None:
            state_pairs.append((inner, inner + gradients[id(inner_non_sequences[index])],
                                expand_dims(zeros_like(non_sequences[index]), 0)))
    plain_outputs = [gradient for gradient in sequence_grads if gradient is not None]
    if not state_pairs and not plain_outputs:
        return [disconnected_type() for _ in inputs]
    reverse_outputs = [following for _, following, _ in state_pairs] + plain_outputs
    # Where the gradient reads a step's result (tanh's derivative reads tanh's output), the
    # reverse scan reads the forward output's row instead of recomputing the step.
    stored = {}
    for index, inner in enumerate(inner_outputs[:n_stacked]):
        if inner.owner is not None and inner not in stored and not is_discrete(inner):
            stored[inner] = _fresh_like(inner, name=f"forward_output[{index}]")
            sequence_pairs.append((stored[inner], outputs[index][::-1]))
    reverse_outputs = list(clone_replace(reverse_outputs, stored))
    state_pairs = [(inner, following, initial) for (inner, _, initial), following
                   in zip(state_pairs, reverse_outputs)]
    used = {id(variable) for variable in graph_inputs(reverse_outputs)}
    sequence_pairs = [pair for pair in sequence_pairs if id(pair[0]) in used]
    non_sequence_pairs = [(inner, outer) for inner, outer in zip(inner_non_sequences,
                                                                 non_sequences)
                          if id(inner) in used]
    reverse = Scan([*[inner for inner, _ in sequence_pairs],
                    *[inner for inner, _, _ in state_pairs],
                    *[inner for inner, _ in non_sequence_pairs]],
                   reverse_outputs, n_sequence_inputs=len(sequence_pairs),
                   recurrent_taps=((-1,),) * len(state_pairs),
                   n_plain_outputs=len(plain_outputs), n_non_sequences=len(non_sequence_pairs),
                   has_until=False, name=f"grad_of_{op.name or 'scan'}", mode=op.mode)
    results = reverse(grad_steps, *[outer for _, outer in sequence_pairs],
                      *[initial for _, _, initial in state_pairs],
                      *[outer for _, outer in non_sequence_pairs])
    results = results if isinstance(results, list) else [results]
    state_results = iter(results[:len(state_pairs)])
    plain_results = iter(results[len(state_pairs):])

    # The gradients are guarded by lazy ifelses: a reverse scan of zero steps has no last row,
    # and its plain outputs' per-step shape is unknown. The last carries reach the initial
    # rows only when the reverse scan ran every forward step.
    ran = gt(grad_steps, 0)
    reached = logical_and(ran, le(steps, op.truncate_gradient)) if truncated else ran
    reached_pairs: list[tuple[Variable, Variable]] = []
    for r, carry in enumerate(carries):
        for inner in carry.inputs:
            if inner is not None:
                reached_pairs.append((next(state_results)[-1], zeros_like(initials[r][0])))
    ran_pairs = [(next(state_results)[-1], zeros_like(non_sequences[index]))
                 for index, inner in enumerate(accumulators) if inner is not None]
    for outer, gradient in zip(sequences, sequence_grads):
        if gradient is None:
            continue
        rows = next(plain_results)[::-1]
        if not truncated and _rows_are_steps(outer, steps):
            ran_pairs.append((rows, zeros_like(outer)))
        else:
            ran_pairs.append((set_subtensor(zeros_like(outer)[steps - grad_steps:steps], rows),
                              zeros_like(outer)))
    if truncated:
        chosen = iter([*_choose(reached, reached_pairs), *_choose(ran, ran_pairs)])
    else:
        chosen = iter(_choose(ran, reached_pairs + ran_pairs))

    initial_results = [_initial_gradient(initials[r], [next(chosen) if inner is not None
                                                       else None for inner in carry.inputs])
                       for r, carry in enumerate(carries)]
    non_sequence_results = [next(chosen) if inner is not None else disconnected_type()
                            for inner in accumulators]
    sequence_results = [next(chosen) if gradient is not None else disconnected_type()
                        for gradient in sequence_grads]
    return [disconnected_type(), *sequence_results, *initial_results, *non_sequence_results]


def _choose(condition: Variable, pairs: list[tuple[Variable, Variable]]) -> list[Variable]:
    """ifelse(condition, then values, else values) over (then, else) pairs, as one lazy node."""
    if not pairs:
        return []
    return list(ifelse(condition, [then for then, _ in pairs], [other for _, other in pairs]))


def _initial_gradient(initial: Variable, rows: list[Variable | None]) -> Variable:
    """The gradient of an initial buffer whose last len(rows) rows got `rows` (None: zero)."""
    if all(row is None for row in rows):
        return disconnected_type()
    lag = len(rows)
    rows = [zeros_like(initial[0]) if row is None else row for row in rows]
    stacked = expand_dims(rows[0], 0) if lag == 1 else stack(rows)
    if initial.type.shape[0] == lag:
        return stacked
    return set_subtensor(zeros_like(initial)[initial.shape[0] - lag:], stacked)


@_without_test_values
def scan_r_op(op: Scan, inputs: list[Variable],
              eval_points: list[Variable | None]) -> list[Variable | None]:
    """Forward mode (module docstring): one tangent per outer output, None for an output that
    depends on no input with a tangent."""
    layout = _Layout(op)
    n_steps, sequences, initials, non_sequences = layout.split_outer(inputs)
    _, sequence_points, initial_points, non_sequence_points = layout.split_outer(eval_points)
    inner_inputs, inner_outputs = _cloned_inner(op)
    inner_sequences, inner_taps, inner_non_sequences = layout.split_inner(inner_inputs)
    n_recurrent, n_plain = layout.n_recurrent, layout.n_plain

    def tangent_of(outer: Variable, point: Variable | None) -> Variable | None:
        if point is None or is_discrete(outer):
            return None
        return cast(point, outer.type.dtype)

    sequence_points = [tangent_of(s, p) for s, p in zip(sequences, sequence_points)]
    initial_points = [tangent_of(s, p) for s, p in zip(initials, initial_points)]
    non_sequence_points = [tangent_of(s, p) for s, p in zip(non_sequences, non_sequence_points)]
    sequence_tangents = [_fresh_like(inner) if point is not None else None
                         for inner, point in zip(inner_sequences, sequence_points)]
    non_sequence_tangents = [_fresh_like(inner) if point is not None else None
                             for inner, point in zip(inner_non_sequences, non_sequence_points)]
    stacked_outputs = inner_outputs[:n_recurrent + n_plain]

    # A state carries a tangent when its initial rows have one or its step's output gets one
    # from the other tangents (which grows the set: iterate to the fixed point).
    carried = [point is not None for point in initial_points]
    while True:
        tap_tangents = [[_fresh_like(tap) for tap in inner_taps[r]] if carried[r] else None
                        for r in range(n_recurrent)]
        pairs = [(inner, tangent) for inner, tangent in
                 [*zip(inner_sequences, sequence_tangents),
                  *[(tap, tangent) for r in range(n_recurrent) if carried[r]
                    for tap, tangent in zip(inner_taps[r], tap_tangents[r])],
                  *zip(inner_non_sequences, non_sequence_tangents)]
                 if tangent is not None]
        if pairs:
            output_tangents = Rop(stacked_outputs, [inner for inner, _ in pairs],
                                  [tangent for _, tangent in pairs],
                                  disconnected_outputs="ignore", return_disconnected="none")
        else:
            output_tangents = [None] * len(stacked_outputs)
        output_tangents = [None if tangent is None or is_discrete(output) else tangent
                           for output, tangent in zip(stacked_outputs, output_tangents)]
        grown = [carried[r] or output_tangents[r] is not None for r in range(n_recurrent)]
        if grown == carried:
            break
        carried = grown
    if not any(tangent is not None for tangent in output_tangents):
        return [None] * len(stacked_outputs)

    state_tangent_outputs = [
        (tangent if tangent is not None else zeros_like(stacked_outputs[r]))
        for r, tangent in enumerate(output_tangents[:n_recurrent]) if carried[r]]
    plain_tangent_outputs = [tangent for tangent in output_tangents[n_recurrent:]
                             if tangent is not None]
    tangent_taps = [taps for r, taps in enumerate(layout.taps) if carried[r]]
    present_sequence_tangents = [t for t in sequence_tangents if t is not None]
    present_non_sequence_tangents = [t for t in non_sequence_tangents if t is not None]
    inner = [*inner_sequences, *present_sequence_tangents,
             *[tap for taps in inner_taps for tap in taps],
             *[tap for r in range(n_recurrent) if carried[r] for tap in tap_tangents[r]],
             *inner_non_sequences, *present_non_sequence_tangents]
    outer = [*sequences, *[p for p in sequence_points if p is not None],
             *initials,
             *[point if point is not None else zeros_like(initials[r])
               for r, point in enumerate(initial_points) if carried[r]],
             *non_sequences, *[p for p in non_sequence_points if p is not None]]
    condition = inner_outputs[n_recurrent + n_plain:]
    forward = Scan(inner, [*inner_outputs[:n_recurrent], *state_tangent_outputs,
                           *inner_outputs[n_recurrent:n_recurrent + n_plain],
                           *plain_tangent_outputs, *condition],
                   n_sequence_inputs=len(inner_sequences) + len(present_sequence_tangents),
                   recurrent_taps=(*layout.taps, *tangent_taps),
                   n_plain_outputs=n_plain + len(plain_tangent_outputs),
                   n_non_sequences=len(inner_non_sequences) + len(present_non_sequence_tangents),
                   has_until=op.has_until, name=f"rop_of_{op.name or 'scan'}", mode=op.mode)
    results = forward(n_steps, *outer)
    results = results if isinstance(results, list) else [results]
    # Outputs: the states, their tangents, the plain outputs, their tangents.
    n_carried = len(tangent_taps)
    state_results = iter(results[n_recurrent:n_recurrent + n_carried])
    plain_results = iter(results[n_recurrent + n_carried + n_plain:])
    tangents: list[Variable | None] = [next(state_results) if carried[r] else None
                                       for r in range(n_recurrent)]
    tangents += [next(plain_results) if tangent is not None else None
                 for tangent in output_tangents[n_recurrent:]]
    return tangents


class _ScanDerivatives:
    """Scan's L_op and R_op, bound onto Scan: they build Scans, so they live above op.py."""

    def L_op(self, inputs, outputs, output_grads):
        """Backpropagation through time: another Scan over the steps in reverse."""
        self._check_differentiable("L_op")
        return scan_l_op(self, inputs, outputs, output_grads)

    def R_op(self, inputs, eval_points):
        """Forward mode: a Scan carrying the tangents alongside the states."""
        self._check_differentiable("R_op")
        return scan_r_op(self, inputs, eval_points)


bind_methods(Scan, _ScanDerivatives)
