"""The Scan Op: runs an inner graph once per step, feeding recurrent outputs back.

Outer inputs, in order: n_steps (int64 scalar); one array per (sequence, tap), already sliced
so that row t is the value that tap reads at step t; one initial buffer per recurrent output
(leading length = its largest lag, oldest first); the non-sequences. Outer outputs: one stacked
array (steps, ...) per recurrent output, then one per output not fed back. With an until
condition the loop stops after the step whose condition is true and the outputs hold the steps
that ran. A recurrent output given kept_steps k > 0 holds only its last min(k, steps run)
steps (its state lives in a circular buffer of max(lag + 1, k) rows; sympile.scan.memory).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from sympile.compile import Mode, Out, get_mode
from sympile.compile import function as compile_function
from sympile.graph.basic import Apply, Variable
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from sympile.scan.c_loop import CLoop, build_c_loop
from sympile.tensor.math import minimum
from sympile.tensor.type import TensorType, tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Scan"]


class Scan(Op):
    """Scan(inner_inputs, inner_outputs, n_sequence_inputs, recurrent_taps, n_plain_outputs,
    n_non_sequences, has_until). recurrent_taps: one tuple of negative taps per recurrent
    output. inner_outputs: recurrent outputs, plain outputs, then the until condition.
    truncate_gradient: -1, or k > 0 to backpropagate through at most the last k steps.
    kept_steps: per recurrent output, 0 (its outer output has every step) or k > 0 (only the
    last k steps: set by sympile.scan.memory where nothing reads the others, after any
    gradient was taken)."""

    __props__ = ("n_sequence_inputs", "recurrent_taps", "n_plain_outputs", "n_non_sequences",
                 "has_until", "name", "truncate_gradient", "kept_steps", "mode")

    def __init__(self, inner_inputs: list[Variable], inner_outputs: list[Variable],
                 n_sequence_inputs: int, recurrent_taps: tuple[tuple[int, ...], ...],
                 n_plain_outputs: int, n_non_sequences: int, has_until: bool,
                 name: str | None = None, truncate_gradient: int = -1,
                 kept_steps: tuple[int, ...] | None = None, mode: Any = None):
        self.inner_inputs = list(inner_inputs)
        self.inner_outputs = list(inner_outputs)
        self.n_sequence_inputs = n_sequence_inputs
        self.recurrent_taps = tuple(tuple(taps) for taps in recurrent_taps)
        self.n_plain_outputs = n_plain_outputs
        self.n_non_sequences = n_non_sequences
        self.has_until = has_until
        self.name = name
        if truncate_gradient != -1 and not (isinstance(truncate_gradient, int)
                                            and truncate_gradient > 0):
            raise ValueError(f"Scan: truncate_gradient must be -1 or a positive int, got "
                             f"{truncate_gradient!r}")
        self.truncate_gradient = truncate_gradient
        kept_steps = (0,) * len(self.recurrent_taps) if kept_steps is None else kept_steps
        if len(kept_steps) != len(self.recurrent_taps) or not all(
                isinstance(kept, int) and kept >= 0 for kept in kept_steps):
            raise ValueError(f"Scan: kept_steps must be one int >= 0 per recurrent output "
                             f"({len(self.recurrent_taps)}), got {kept_steps!r}")
        self.kept_steps = tuple(kept_steps)
        # The inner function's mode (a Mode or its name, as function() takes); None: the
        # outer function's.
        self.mode = mode
        if mode is not None:
            get_mode(mode)
        self._reset_caches()
        # The rows of past states each recurrent output's taps read, and the states' dtypes.
        self._lags = tuple(-min(taps) for taps in self.recurrent_taps)
        self._state_dtypes = tuple(np.dtype(output.type.dtype)
                                   for output in self.inner_outputs[:len(self.recurrent_taps)])
        expected = (n_sequence_inputs + sum(len(taps) for taps in self.recurrent_taps)
                    + n_non_sequences)
        if len(self.inner_inputs) != expected:
            raise ValueError(f"Scan: expected {expected} inner inputs, got "
                             f"{len(self.inner_inputs)}")
        expected = len(self.recurrent_taps) + n_plain_outputs + int(has_until)
        if len(self.inner_outputs) != expected:
            raise ValueError(f"Scan: expected {expected} inner outputs, got "
                             f"{len(self.inner_outputs)}")

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __str__(self) -> str:
        return f"Scan{{{self.name}}}" if self.name else "Scan"

    def _reset_caches(self) -> None:
        self._functions: dict[Any, Any] = {}
        # Per inner Function (by id): (the Function, its C loop), made on the first C loop.
        self._c_loops: dict[int, tuple[Any, CLoop]] = {}
        self._node_backends: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # node -> its inner Function, for perform's one lookup per call.
        self._node_functions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __getstate__(self):
        # The compiled inner functions are not pickled (they hold C modules); a loaded op
        # compiles them again on first use, as a new one does.
        return {name: value for name, value in self.__dict__.items()
                if name not in ("_functions", "_c_loops", "_node_backends", "_node_functions")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset_caches()

    def make_node(self, n_steps, *inputs):
        n_steps = as_tensor_variable(n_steps, op=str(self), argument="n_steps")
        if n_steps.type.ndim != 0 or n_steps.type.dtype not in ("int8", "int16", "int32",
                                                                  "int64", "uint8", "uint16",
                                                                  "uint32", "uint64"):
            raise TypeError(f"{self}: n_steps must be an integer scalar, got type "
                            f"{n_steps.type}")
        n_recurrent = len(self.recurrent_taps)
        expected = self.n_sequence_inputs + n_recurrent + self.n_non_sequences
        if len(inputs) != expected:
            raise ValueError(f"{self}: expected n_steps and {expected} inputs, got "
                             f"{len(inputs)}")
        inputs = [self._outer_input(value, index) for index, value in enumerate(inputs)]
        sequences = inputs[:self.n_sequence_inputs]
        initials = inputs[self.n_sequence_inputs:self.n_sequence_inputs + n_recurrent]
        non_sequences = inputs[self.n_sequence_inputs + n_recurrent:]
        inner_sequences = self.inner_inputs[:self.n_sequence_inputs]
        for index, (outer, inner) in enumerate(zip(sequences, inner_sequences)):
            _check_match(f"{self}: sequence input {index}", outer.type.dtype,
                         outer.type.ndim - 1, inner)
        inner_states = self.inner_outputs[:n_recurrent]
        for index, (outer, inner) in enumerate(zip(initials, inner_states)):
            _check_match(f"{self}: initial state {index}", outer.type.dtype,
                         outer.type.ndim - 1, inner)
        inner_non_sequences = self.inner_inputs[len(self.inner_inputs) - self.n_non_sequences:]
        for index, (outer, inner) in enumerate(zip(non_sequences, inner_non_sequences)):
            _check_match(f"{self}: non-sequence {index}", outer.type.dtype, outer.type.ndim,
                         inner)
        stacked = self.inner_outputs[:n_recurrent + self.n_plain_outputs]
        outputs = [tensor_type(inner.type.dtype, (None, *inner.type.shape))()
                   for inner in stacked]
        return Apply(self, [n_steps, *inputs], outputs)

    def _outer_input(self, value: Any, index: int) -> Variable:
        """Input `index` as a tensor; a non-sequence that is a variable of its inner input's
        Type (a device array the inner graph reads as one, sympile.gpu) as it is."""
        position = index - self.n_sequence_inputs - len(self.recurrent_taps)
        if isinstance(value, Variable) and not isinstance(value.type, TensorType) \
                and 0 <= position < self.n_non_sequences:
            inner = self.inner_inputs[len(self.inner_inputs) - self.n_non_sequences + position]
            if value.type == inner.type:
                return value
        return as_tensor_variable(value, op=str(self), argument=f"input {index}")

    def prepare_node(self, node: Apply, mode: Any, backend: str) -> None:
        """Called by Mode.link for each node of the graph being linked: run this node's inner
        graph with the same rewrites and on the same backend as the outer function, or as the
        op's own mode says."""
        self._node_backends[node] = self._own_key() or (mode.rewriter, backend)
        self._node_functions.pop(node, None)

    def _own_key(self) -> tuple[Any, str | None] | None:
        """(rewriter, backend) of the op's own mode; None where it has none."""
        if self.mode is None:
            return None
        own = get_mode(self.mode)
        return own.rewriter, own.backend

    def _compiled(self, node: Apply):
        """The inner Function for `node`: compiled once per (rewriter, backend) the outer
        functions using this op were linked with; config's default mode if never linked."""
        function = self._node_functions.get(node)
        if function is not None:
            return function
        function = self._function_for(self._node_backends.get(node) or self._own_key())
        self._node_functions[node] = function
        return function

    def _function_for(self, key: tuple[Any, str | None] | None):
        """The inner Function for the (rewriter, backend) `key` (None: config's mode)."""
        function = self._functions.get(key)
        if function is None:
            mode = None if key is None else Mode(key[0], backend=key[1])
            function = self._compile_inner(mode)
            # Its VM is read directly (run_steps), not through calls that switch backends.
            function.wait_compiled()
            self._functions[key] = function
        return function

    @property
    def fn(self):
        """Theano's Scan.fn: the inner Function most recently compiled for this op (of its
        own mode, or config's, if none has been yet)."""
        if self._functions:
            return next(reversed(self._functions.values()))
        return self._function_for(self._own_key())

    def _compile_inner(self, mode: Mode | None):
        """The inner Function. trust_input: perform hands over ndarrays (views,
        `[index, ...]`) of the exact dtypes, which make_node checked against the inner inputs.
        borrow: each result is copied into its row at once and dropped, so the backend may
        reuse its array."""
        return compile_function(self.inner_inputs,
                                [Out(output, borrow=True) for output in self.inner_outputs],
                                mode=mode, on_unused_input="ignore", trust_input=True)

    # Where the loop's arrays live: host ndarrays here; a device Scan (sympile.gpu.scan)
    # keeps its float ones on the device.
    def _empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return np.empty(shape, dtype=dtype)

    def _assign(self, target: Any, value: Any) -> None:
        target[...] = value

    def _step_value(self, value: Any) -> Any:
        """A non-sequence as each step receives it."""
        return value if type(value) is np.ndarray else np.asarray(value)

    def _loop_in_c(self, run) -> bool:
        return _runs_steps_in_c(run)

    def perform(self, node, inputs, output_storage):
        run = self._compiled(node)
        n_steps = int(inputs[0])
        if n_steps < 0:
            raise ValueError(f"{self}: n_steps must be >= 0, got {n_steps}")
        n_sequences, n_recurrent = self.n_sequence_inputs, len(self.recurrent_taps)
        sequences = inputs[1:1 + n_sequences]
        for index, sequence in enumerate(sequences):
            if sequence.shape[0] < n_steps:
                raise ValueError(f"{self}: sequence input {index} has {sequence.shape[0]} rows, "
                                 f"fewer than the {n_steps} steps")
        initials = inputs[1 + n_sequences:1 + n_sequences + n_recurrent]
        non_sequences = [self._step_value(value)
                         for value in inputs[1 + n_sequences + n_recurrent:]]
        lags = self._lags
        buffers = []
        for index, (initial, lag) in enumerate(zip(initials, lags)):
            if initial.shape[0] < lag:
                raise ValueError(f"{self}: initial state {index} has {initial.shape[0]} rows; "
                                 f"its taps {self.recurrent_taps[index]} need {lag}")
            buffer = self._empty((_buffer_rows(lag, n_steps, self.kept_steps[index]),
                                  *initial.shape[1:]), self._state_dtypes[index])
            if lag == 1:
                self._assign(buffer[0, ...], initial[-1])
            else:
                self._assign(buffer[:lag], initial[initial.shape[0] - lag:])
            buffers.append(buffer)
        if self._loop_in_c(run):
            steps_run, plain = self._run_steps_in_c(run, n_steps, sequences, buffers,
                                                    non_sequences)
        else:
            steps_run, plain = self._run_steps(run, n_steps, sequences, buffers, lags,
                                               non_sequences)
        for index, (buffer, lag) in enumerate(zip(buffers, lags)):
            kept = self.kept_steps[index]
            if kept == 0:
                # The buffer is this call's own: its rows can be handed out without a copy.
                output_storage[index][0] = buffer[lag:lag + steps_run]
            else:
                first = steps_run - min(kept, steps_run)
                rows = [(lag + step) % buffer.shape[0] for step in range(first, steps_run)]
                output_storage[index][0] = buffer[rows]
        for index in range(self.n_plain_outputs):
            output = node.outputs[n_recurrent + index]
            if plain[index] is None:
                inner = self.inner_outputs[n_recurrent + index]
                shape = tuple(0 if length is None else length for length in inner.type.shape)
                plain[index] = self._empty((0, *shape), output.type.dtype)
            output_storage[n_recurrent + index][0] = plain[index][:steps_run]

    def _run_steps(self, run, n_steps: int, sequences: list[np.ndarray],
                   buffers: list[np.ndarray], lags: list[int],
                   non_sequences: list[np.ndarray]) -> tuple[int, list[np.ndarray | None]]:
        """Run the loop, writing each recurrent state into its buffer's row; returns the
        number of steps run and the stacked plain outputs (None for one never computed)."""
        n_recurrent = len(self.recurrent_taps)
        plain: list[np.ndarray | None] = [None] * self.n_plain_outputs
        # Every step's argument views and destination rows are made before the loop, in
        # comprehensions: the loop itself only calls the inner function and copies results.
        columns = [[sequence[step, ...] for step in range(n_steps)] for sequence in sequences]
        destinations = []
        for buffer, lag, taps in zip(buffers, lags, self.recurrent_taps):
            # A circular buffer (kept_steps) has fewer rows than steps: rows wrap around.
            rows = [buffer[row % buffer.shape[0], ...] for row in range(lag + n_steps)]
            columns.extend(rows[lag + tap:lag + tap + n_steps] for tap in taps)
            destinations.append(rows[lag:])
        columns.extend([value] * n_steps for value in non_sequences)
        step_arguments = list(zip(*columns)) if columns else [()] * n_steps
        step_destinations = list(zip(*destinations)) if destinations else [()] * n_steps
        has_until = self.has_until
        steps_run = 0
        for step, (arguments, rows) in enumerate(zip(step_arguments, step_destinations)):
            results = run(*arguments)
            for row, value in zip(rows, results):
                self._assign(row, value)
            if self.n_plain_outputs:
                self._store_plain(plain, step, n_steps, results[n_recurrent:])
            steps_run = step + 1
            stop = has_until and bool(results[-1])
            # Drop the references before the next call, so that the backend can reuse them.
            del results
            if stop:
                break
        return steps_run, plain

    def _run_steps_in_c(self, run, n_steps: int, sequences: list[np.ndarray],
                        buffers: list[np.ndarray],
                        non_sequences: list[np.ndarray]) -> tuple[int, list[np.ndarray | None]]:
        """_run_steps as one call of the inner C program's run_steps: no Python per step."""
        if n_steps == 0:
            return 0, [None] * self.n_plain_outputs
        steps_run, allocated = self._c_loop(run).run(n_steps, sequences, buffers,
                                                     non_sequences)
        return steps_run, allocated[len(self.recurrent_taps):]

    def _c_loop(self, run) -> CLoop:
        """The C loop of the inner Function `run` (sympile.scan.c_loop), made once."""
        entry = self._c_loops.get(id(run))
        if entry is None or entry[0] is not run:
            entry = self._c_loops[id(run)] = (run, build_c_loop(self, run))
        return entry[1]

    def _store_plain(self, plain: list[np.ndarray | None], step: int, n_steps: int,
                     results: list[Any]) -> None:
        n_recurrent = len(self.recurrent_taps)
        for index in range(self.n_plain_outputs):
            value = results[index]
            if plain[index] is None:
                dtype = self.inner_outputs[n_recurrent + index].type.dtype
                plain[index] = self._empty((n_steps, *np.shape(value)), dtype)
            self._assign(plain[index][step, ...], value)

    def infer_shape(self, fgraph, node, input_shapes):
        """n_steps rows of each recurrent state's shape, and of each plain output's static
        per-step shape; not inferred with an until condition (the rows are the steps that ran)
        or when a plain output's per-step shape is not static."""
        if self.has_until:
            raise MethodNotDefined(f"{self}.infer_shape: the number of steps run is known only "
                                   f"after running")
        n_recurrent = len(self.recurrent_taps)
        n_steps = node.inputs[0]
        initial_shapes = input_shapes[1 + self.n_sequence_inputs:
                                      1 + self.n_sequence_inputs + n_recurrent]
        shapes = [(n_steps if kept == 0 else minimum(n_steps, kept), *shape[1:])
                  for shape, kept in zip(initial_shapes, self.kept_steps)]
        for inner in self.inner_outputs[n_recurrent:n_recurrent + self.n_plain_outputs]:
            if any(length is None for length in inner.type.shape):
                raise MethodNotDefined(f"{self}.infer_shape: output {inner} has no static "
                                       f"per-step shape")
            shapes.append((n_steps, *inner.type.shape))
        return shapes

    def _check_differentiable(self, what: str) -> None:
        # Backpropagation and tangents read every step of the forward states; a Scan that
        # keeps only its last steps (made by scan_keep_last_steps at compile time) has not
        # stored them.
        if any(self.kept_steps):
            raise NotImplementedError(
                f"{self}.{what}: this Scan keeps only the last steps of its recurrent outputs "
                f"(kept_steps={self.kept_steps}), made by a compile-time rewrite; take the "
                f"gradient of the graph before it is compiled")

    def do_constant_folding(self, fgraph, node) -> bool:
        # A loop over constants would run at compile time and store every step's value.
        return False


def _buffer_rows(lag: int, n_steps: int, kept: int) -> int:
    """Rows of a recurrent state's buffer: every step's after the lag initial rows, or for
    the last `kept` steps only, a circular buffer of the lag rows a step reads plus the one
    it writes (at least `kept`)."""
    if kept == 0:
        return lag + n_steps
    return min(lag + n_steps, max(lag + 1, kept))


def _runs_steps_in_c(function) -> bool:
    """Whether `function` (an inner Function) runs on a VM with a loop in C (run_steps)."""
    return hasattr(getattr(function, "_vm", None), "run_steps")


def _check_match(what: str, dtype: str, ndim: int, inner: Variable) -> None:
    if inner.type.dtype != dtype or inner.type.ndim != ndim:
        raise TypeError(f"{what}: outer dtype {dtype} with {ndim} dimension(s) per step does not "
                        f"match the inner graph's {inner.type.dtype} with {inner.type.ndim}")
