"""scan(): Theano's symbolic loop builder, on top of the Scan Op (sympile.scan.op).

    result, updates = scan(fn=lambda prior, A: prior * A, outputs_info=T.ones_like(A),
                           non_sequences=A, n_steps=k)

fn receives, in order: the tap slices of each sequence (in the order of its taps), the past
taps of each recurrent output (in the order of its taps), then the non-sequences. It returns
its outputs (one variable or a list), optionally an updates dict / list of (shared, value)
pairs, and optionally `until(condition)`, in any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Constant, Variable, clone_replace, graph_inputs
from sympile.graph.op import test_value_of
from sympile.ifelse.basic import ifelse
from sympile.scan.op import Scan
from sympile.tensor.math import minimum, neq
from sympile.tensor.shape import expand_dims
from sympile.tensor.sharedvar import SharedVariable
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["scan", "until"]

_INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


class until:
    """Returned by a scan's fn: stop after the step whose `condition` (a bool or numeric
    scalar; a number is true where it is nonzero, as Theano's) is true."""

    def __init__(self, condition: Any):
        condition = as_tensor_variable(condition, op="until", argument="condition")
        if condition.type.ndim != 0 or not (condition.type.dtype == "bool"
                                            or condition.type.dtype in _INTEGER_DTYPES
                                            or condition.type.dtype.startswith("float")):
            raise TypeError(f"until: the condition must be a bool or numeric scalar, got "
                            f"{condition} of type {condition.type}")
        if condition.type.dtype.startswith("float"):
            condition = neq(condition, 0)
        self.condition = condition


def _first_step_test_value(inner: Variable, outer: Variable, row: int) -> None:
    """config.compute_test_value: give a step variable the test value of its first step
    (row `row` of the outer value, from its end when negative)."""
    if config.compute_test_value == "off":
        return
    value = test_value_of(outer)
    if isinstance(value, np.ndarray) and value.ndim and len(value) > (row if row >= 0
                                                                      else -row - 1):
        inner.tag.test_value = value[row]


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, strict=False,
         return_list=False):
    """Repeat `fn` over the leading axis of `sequences` (or `n_steps` times), feeding the outputs
    listed in `outputs_info` back to it. Returns (outputs, updates): the outputs stacked over the
    steps (one variable, or a list when there are several or return_list=True; None when fn
    has none) and a dict shared variable -> its value after the last step, for function().
    truncate_gradient=k > 0 backpropagates through the last k steps only (sympile.scan.gradient).
    mode: the mode (a Mode or its name) the loop's body is compiled with, also in the loops
    of its gradients; None: the mode of the function that runs it."""
    if truncate_gradient != -1 and (not isinstance(truncate_gradient, int)
                                    or isinstance(truncate_gradient, bool)
                                    or truncate_gradient <= 0):
        raise ValueError(f"scan: truncate_gradient must be -1 (full backpropagation through "
                         f"time) or a positive int of steps, got {truncate_gradient!r}")
    sequence_specs = [_sequence_spec(spec, index)
                      for index, spec in enumerate(_as_list(sequences))]
    non_sequences = [_as_variable(value, f"non_sequences[{index}]")
                     for index, value in enumerate(_as_list(non_sequences))]
    # An empty outputs_info is None (Theano's), not a list that fn's outputs must match.
    output_specs = [_output_spec(spec, index) for index, spec in enumerate(_as_list(outputs_info))]
    if not output_specs:
        outputs_info = None

    outer_sequences, inner_sequences, lengths = [], [], []
    for index, (sequence, taps) in enumerate(sequence_specs):
        if go_backwards:
            sequence = sequence[::-1]
        # As Theano's: step t reads row t + tap, and t runs over the rows that tap 0 would
        # read too (taps [-1] alone give one step fewer than the rows).
        low, high = min(*taps, 0), max(*taps, 0)
        static_length = sequence.type.shape[0]
        if static_length is not None and static_length <= high - low:
            raise ValueError(f"scan: sequences[{index}] has {static_length} rows, too few for "
                             f"its taps {list(taps)}")
        for tap in taps:
            start, stop_back = tap - low, high - tap
            if stop_back:
                outer_sequences.append(sequence[start:sequence.shape[0] - stop_back])
            else:
                outer_sequences.append(sequence[start:] if start else sequence)
            inner_sequences.append(tensor_type(sequence.type.dtype, sequence.type.shape[1:])(
                name=_label(sequence, f"[t{tap:+d}]")))
            # Theano's test values: the step's row of the first step.
            _first_step_test_value(inner_sequences[-1], outer_sequences[-1], 0)
        lengths.append(outer_sequences[-1].shape[0])

    n_steps_variable = _n_steps(n_steps, lengths)

    recurrent = [(index, spec) for index, spec in enumerate(output_specs) if spec is not None]
    inner_states, outer_initials = [], []
    for index, (initial, taps) in recurrent:
        step_ndim = initial.type.ndim if taps == (-1,) else initial.type.ndim - 1
        if step_ndim < 0:
            raise TypeError(f"scan: outputs_info[{index}] with taps {list(taps)} needs an initial "
                            f"value with a leading axis of past steps, got {initial.type}")
        static_rows = initial.type.shape[0] if taps != (-1,) else 1
        if static_rows is not None and static_rows < -min(taps):
            raise ValueError(f"scan: outputs_info[{index}] has {static_rows} initial rows; its "
                             f"taps {list(taps)} need {-min(taps)}")
        outer_initials.append(expand_dims(initial, 0) if taps == (-1,) else initial)
        inner_states.append([tensor_type(initial.type.dtype, (None,) * step_ndim)(
            name=_label(initial, f"[t{tap:+d}]")) for tap in taps])
        for tap, inner in zip(taps, inner_states[-1]):
            _first_step_test_value(inner, outer_initials[-1], tap)

    inner_non_sequences = [value.type(name=_label(value, "")) for value in non_sequences]
    # As in Theano, fn receives the non-sequences themselves (so that it can differentiate
    # through them, as the tutorial's Jacobian by scan does); they are replaced by inner
    # variables in what fn returns.
    arguments = [*inner_sequences, *[v for taps in inner_states for v in taps],
                 *non_sequences]
    outputs, updates, condition = _parse_result(fn(*arguments))
    _add_default_updates(updates, [*outputs, *([condition] if condition is not None else [])])

    if outputs_info is None:
        output_specs = [None] * len(outputs)
        recurrent = []
    elif len(outputs) != len(output_specs):
        raise ValueError(f"scan: fn returned {len(outputs)} output(s) but outputs_info has "
                         f"{len(output_specs)} entries")
    for position, (index, _) in enumerate(recurrent):
        output = outputs[index]
        step_type = inner_states[position][0].type
        if output.type.dtype != step_type.dtype or output.type.ndim != step_type.ndim:
            raise TypeError(f"scan: fn's output {index} is {output.type.dtype} with "
                            f"{output.type.ndim} dimension(s) but outputs_info[{index}] gives "
                            f"{step_type.dtype} with {step_type.ndim}: they must match (cast "
                            f"the initial value or the output)")

    # Shared variables updated by fn become recurrent states with tap -1; the others, and any
    # other outer variable fn uses, become implicit non-sequences.
    update_pairs = list(updates.items())
    update_inner = []
    for shared, value in update_pairs:
        if value.type.dtype != shared.type.dtype or value.type.ndim != shared.type.ndim:
            raise TypeError(f"scan: the update of shared variable {shared} has type "
                            f"{value.type}, expected {shared.type}")
        update_inner.append(tensor_type(shared.type.dtype, (None,) * shared.type.ndim)(
            name=_label(shared, "[t-1]")))
    update_values = [value for _, value in update_pairs]
    given = {id(v) for v in arguments}
    replacements = {shared: inner for (shared, _), inner in zip(update_pairs, update_inner)}
    for outer, inner in zip(non_sequences, inner_non_sequences):
        replacements.setdefault(outer, inner)
    implicit = []
    roots = [*outputs, *update_values, *([condition] if condition is not None else [])]
    for variable in graph_inputs(roots, blockers=non_sequences):
        if id(variable) in given or isinstance(variable, Constant) or variable in replacements:
            continue
        if strict:
            raise ValueError(f"scan: fn uses {variable}, which it was not given (strict=True: "
                             f"pass it in sequences or non_sequences)")
        implicit.append(variable)
        replacements[variable] = variable.type(name=_label(variable, ""))
    if replacements:
        roots = clone_replace(roots, replacements)
    outputs = roots[:len(outputs)]
    update_values = roots[len(outputs):len(outputs) + len(update_values)]
    condition = roots[-1] if condition is not None else None

    recurrent_indices = [index for index, _ in recurrent]
    plain_indices = [index for index in range(len(outputs)) if index not in recurrent_indices]
    recurrent_taps = [taps for _, (_, taps) in recurrent] + [(-1,)] * len(update_pairs)
    inner_inputs = [*inner_sequences, *[v for taps in inner_states for v in taps],
                    *update_inner, *inner_non_sequences,
                    *[replacements[variable] for variable in implicit]]
    inner_outputs = [*[outputs[i] for i in recurrent_indices], *update_values,
                     *[outputs[i] for i in plain_indices],
                     *([condition] if condition is not None else [])]
    op = Scan(inner_inputs, inner_outputs, n_sequence_inputs=len(inner_sequences),
              recurrent_taps=tuple(recurrent_taps), n_plain_outputs=len(plain_indices),
              n_non_sequences=len(non_sequences) + len(implicit),
              has_until=condition is not None, name=name, truncate_gradient=truncate_gradient,
              mode=mode)
    update_initials = [expand_dims(shared, 0) for shared, _ in update_pairs]
    results = op(n_steps_variable, *outer_sequences, *outer_initials, *update_initials,
                 *non_sequences, *implicit)
    results = results if isinstance(results, list) else [results]
    n_recurrent = len(recurrent_indices)
    stacked: list[Variable | None] = [None] * len(outputs)
    for position, index in enumerate(recurrent_indices):
        stacked[index] = results[position]
    for position, index in enumerate(plain_indices):
        stacked[index] = results[n_recurrent + len(update_pairs) + position]
    # After zero steps a shared variable keeps its value.
    new_values = {shared: ifelse(results[n_recurrent + position].shape[0] > 0,
                                 results[n_recurrent + position][-1], shared)
                  for position, (shared, _) in enumerate(update_pairs)}
    if len(stacked) == 1 and not return_list:
        return stacked[0], new_values
    if not stacked and not return_list:
        return None, new_values
    return stacked, new_values


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_variable(value: Any, argument: str) -> Variable:
    if isinstance(value, Variable) and not hasattr(value.type, "ndim"):
        raise TypeError(f"scan: {argument} must be a tensor, got {value} of type {value.type}")
    return as_tensor_variable(value, op="scan", argument=argument)


def _label(variable: Variable, suffix: str) -> str | None:
    return f"{variable.name}{suffix}" if variable.name else None


def _taps(taps: Any, argument: str) -> tuple[int, ...]:
    taps = tuple(taps) if isinstance(taps, (list, tuple)) else (taps,)
    if not taps or not all(isinstance(t, int) and not isinstance(t, bool) for t in taps):
        raise TypeError(f"scan: {argument} taps must be a non-empty list of ints, got {taps!r}")
    if len(set(taps)) != len(taps):
        raise ValueError(f"scan: {argument} taps {list(taps)} repeat a tap")
    return taps


def _sequence_spec(spec: Any, index: int) -> tuple[Variable, tuple[int, ...]]:
    argument = f"sequences[{index}]"
    if isinstance(spec, dict):
        if "input" not in spec:
            raise ValueError(f"scan: {argument} is a dict without 'input'")
        taps = _taps(spec.get("taps", [0]), argument)
        spec = spec["input"]
    else:
        taps = (0,)
    sequence = _as_variable(spec, argument)
    if sequence.type.ndim == 0:
        raise TypeError(f"scan: {argument} must have a leading axis to iterate over, got a "
                        f"scalar {sequence}")
    return sequence, taps


def _output_spec(spec: Any, index: int) -> tuple[Variable, tuple[int, ...]] | None:
    """(initial value, past taps), or None for an output not fed back."""
    argument = f"outputs_info[{index}]"
    if spec is None:
        return None
    if isinstance(spec, dict):
        if spec.get("initial") is None:
            if spec.get("taps"):
                raise ValueError(f"scan: {argument} has taps but no initial value")
            return None
        taps = _taps(spec.get("taps", [-1]), argument)
        spec = spec["initial"]
    else:
        taps = (-1,)
    if any(tap >= 0 for tap in taps):
        raise ValueError(f"scan: {argument} taps must be negative (past steps), got {list(taps)}")
    return _as_variable(spec, argument), taps


def _n_steps(n_steps: Any, lengths: list[Variable]) -> Variable:
    if n_steps is None:
        if not lengths:
            raise ValueError("scan: give sequences or n_steps")
        result = lengths[0]
        for length in lengths[1:]:
            result = minimum(result, length)
        return result
    if isinstance(n_steps, int) and not isinstance(n_steps, bool) and n_steps < 0:
        raise ValueError(f"scan: n_steps must be >= 0, got {n_steps}")
    n_steps = as_tensor_variable(n_steps, op="scan", argument="n_steps")
    if n_steps.type.ndim != 0 or n_steps.type.dtype not in _INTEGER_DTYPES:
        raise TypeError(f"scan: n_steps must be an integer scalar, got {n_steps} of type "
                        f"{n_steps.type}")
    if isinstance(n_steps, Constant) and int(n_steps.data) < 0:
        raise ValueError(f"scan: n_steps must be >= 0, got {int(n_steps.data)}")
    return n_steps


def _add_default_updates(updates: dict, roots: list[Variable]) -> None:
    """As in Theano: a shared variable of fn's graph that has a default_update (a random
    stream's state) and that fn does not update is updated by it at every step, so a random
    variable drawn in fn draws anew at each step and scan returns the state's update."""
    pending = [*roots, *updates.values()]
    while pending:
        found = [variable for variable in graph_inputs(pending)
                 if isinstance(variable, SharedVariable) and variable not in updates
                 and variable.default_update is not None]
        for variable in found:
            updates[variable] = variable.default_update
        pending = [variable.default_update for variable in found]


def _is_update_pairs(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(pair, (list, tuple)) and len(pair) == 2
                    and isinstance(pair[0], SharedVariable) for pair in value))


def _parse_result(result: Any) -> tuple[list[Variable], dict, Variable | None]:
    """fn's outputs, updates and until condition, from any of Theano's return forms."""
    if isinstance(result, (list, tuple)) and not _is_update_pairs(result):
        parts = list(result)
    else:
        parts = [result]
    outputs: list[Variable] = []
    updates: dict = {}
    condition = None
    for part in parts:
        if isinstance(part, until):
            condition = part.condition
        elif isinstance(part, dict):
            updates.update(part)
        elif _is_update_pairs(part):
            updates.update(dict(part))
        elif isinstance(part, (list, tuple)):
            outputs.extend(part)
        elif part is not None:
            outputs.append(part)
    outputs = [_as_variable(output, f"fn's output {index}") for index, output in enumerate(outputs)]
    for shared in updates:
        if not isinstance(shared, SharedVariable):
            raise TypeError(f"scan: fn's updates must be keyed by shared variables, got {shared}")
    updates = {shared: _as_variable(value, f"update of {shared}")
               for shared, value in updates.items()}
    return outputs, updates, condition
