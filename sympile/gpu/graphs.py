"""A function's device work replayed as one CUDA Graph per call (the paper's asynchronous
calls: a step's kernels enqueued at once, no Python between them).

A function compiled for a device runs its first call as compiled (kernels are built, the
memory pool is warmed). From its second call, GraphedSteps runs its nodes in three parts, in
topological order:

- before: the nodes that depend on no body node, run (perform) at every call: host
  arithmetic on the inputs, views of device data at host indices (a minibatch's rows),
  transfers in;
- body: the device nodes (every output a device array, not a transfer in) that depend on
  no "after" node: captured once (Runtime.capture), then replayed as one launch. A device
  scan's whole loop is captured with its step's launches, unrolled (its host inputs, the
  number of steps among them, are checked as any other's; an `until` condition, read on
  the host, keeps it out);
- after: the nodes that read a body result: run after the replay (transfers out, host work
  on them).

The body reads what "before" made on the device from buffers of its own (staging), which
each call fills (a transfer in writes its host value straight there, and skips the write
when a small value has not changed). A host value a body node reads (a length, an index) is
the one captured: each call checks it, and where it changed while the staged shapes did
not (a value that varies per call, as a minibatch's index), the node leaves the body and
the step is captured again. A new shape, or a shared variable whose array was replaced
(set_value), makes a new capture too; after RECAPTURES captures the function runs as
compiled.

The body's new values of device shared variables are written into the variables' own
arrays by a second captured graph, the commit, launched once the "after" nodes ran. A kernel
that reports errors (an index out of range) writes a flag of the step (step_flags.cu), and
the commit's copies (step_commit.cu) write nothing once a flag is set; the host reads the
flags at the end of a call, before it applies the other updates, so a failed call changes
nothing. fn(n_calls=N) replays its steps without reading the flags in between (the paper's
asynchronous calls: the host runs ahead of the device) and reports the first failed step's
error at the end, with the shared variables as the steps before it left them: the device
skipped the later commits, and the host undoes the host updates it made from the failed
step on (the device counts the steps and records the failed one's number).

A lazy conditional (ifelse; every scan gradient has one) is decided before the capture: the
nodes its condition needs run first (host work outside its branches, or the function is not
replayed), and the step captures the branch taken; a call that takes another branch makes a
new capture.

What a replay keeps: every array the step's kernels read or write lives as long as the
function (as torch's graph pools), so allow_gc frees nothing of the body.
"""

from __future__ import annotations

import copy
import functools
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sympile.compile.function import VM_WRAPPERS
from sympile.config import config
from sympile.gpu.basic import GpuArrayType, GpuFromHost
from sympile.gpu.runtime import CaptureError, Runtime, StepCapture, kernel_error, runtime
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.ccode import c_file
from sympile.graph.fgraph import FunctionGraph
from sympile.link.c.linker import CVM
from sympile.link.python.vm import PythonVM, UpdatingRuns, apply_updates, raise_with_node
from sympile.link.schedule import is_conditional, lazy_schedule
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, cuda_kernel

__all__ = ["GraphedSteps", "graphs_for", "step_commit_kernel", "step_flags_kernel"]

# Captures a function may make before it runs as compiled for good.
RECAPTURES = 4
# The largest host value (in elements) a body node may read: each call compares it.
GUARDED_SIZE = 64
_BEFORE, _BODY, _AFTER = "before", "body", "after"
@functools.cache
def step_flags_kernel() -> CudaKernel:
    parameters = ["const npy_int64 slots", "const npy_int64 check", "int *const flags"]
    return cuda_kernel("step_flags", parameters, c_file(__file__, "step_flags.cu"), (), False)


@functools.cache
def step_commit_kernel(word: str) -> CudaKernel:
    """The guarded copy of n words of type `word` (npy_uint32 or npy_uint8)."""
    parameters = ["const npy_int64 n", f"{word} *const target", f"const {word} *const source",
                  "const int *const flags"]
    return cuda_kernel("step_commit", parameters, c_file(__file__, "step_commit.cu"), (),
                       False)


@dataclass
class _Plan:
    before: list[Apply]
    body: list[Apply]
    after: list[Apply]
    # Device values the body reads from "before" nodes or explicit inputs.
    staged: list[Variable]
    # Shared device inputs the body reads in place.
    shared: list[Variable]


@dataclass
class _Step:
    """One capture and what each replay of it checks, fills and restores."""

    decisions: tuple[bool, ...]  # the conditionals' branches it runs
    plan: _Plan
    body: StepCapture
    commit: StepCapture | None
    # (variable, staging buffer, host input of a skipped transfer or None).
    staged: list[tuple[Variable, Any, Variable | None]]
    skipped: set[Apply]
    # (node, host input, captured value).
    guards: list[tuple[Apply, Variable, Any]]
    # (cell of a shared input, its captured array): read in place or written by the commit.
    shared: list[tuple[list[Any], Any]]
    body_values: list[tuple[list[Any], Any]]
    # Updates applied on the host: (target cell, source cell, copy?); a value of the body is
    # copied (the next replay overwrites it).
    host_updates: list[tuple[list[Any], list[Any], bool]]
    after_for_updates: list[Apply]
    last_written: dict[Variable, Any] = field(default_factory=dict)
    replays: int = 0


class GraphedSteps(UpdatingRuns):
    """The VM of a function with device work: `inner` (the backend's VM) runs its first call
    and every call once replays stop paying; the others replay captured steps (see the
    module's docstring). `input_cells`: the cells of fgraph's inputs, the first `n_explicit`
    of them the explicit inputs."""

    def __init__(self, inner: Any, input_cells: list[list[Any]], n_explicit: int,
                 device: Runtime):
        self.inner = inner
        self.fgraph = fgraph = inner.fgraph
        self.storage = inner.storage
        self.output_storage = inner.output_storage
        self.nodes = inner.nodes
        self.device = device
        self._lock = threading.Lock()
        self._input_copies = [(self.storage[v], cell) for v, cell
                              in zip(fgraph.inputs, input_cells) if self.storage[v] is not cell]
        self._given = dict(zip(fgraph.inputs, input_cells))
        self._explicit = set(fgraph.inputs[:n_explicit])
        self._cell_variables = {id(cell): v for v, cell in self.storage.items()}
        self._excluded: set[Apply] = set()
        self._plans: dict[tuple[bool, ...], _Plan] = {}
        # Lazy conditionals: each call runs the nodes their conditions need first, then
        # the nodes of the branches taken (the decisions), as the lazy schedule does.
        self._conditionals = [node for node in self.nodes if is_conditional(node)]
        self._schedule = lazy_schedule(self.nodes, fgraph.outputs, fgraph.orderings()) \
            if self._conditionals else []
        self._deciding = self._deciding_nodes()
        self._deciding_set = set(self._deciding or ())
        self._step: _Step | None = None
        self._calls = 0
        self._captures = 0
        self._reporting = 0
        self.gave_up = self._deciding is None
        self.replays = 0
        # Replays whose flags the host has not read: (replay number, the host update targets'
        # values before it); the step they are of.
        self._unread: list[tuple[int, list[tuple[list[Any], Any]]]] = []
        self._unread_step: _Step | None = None

    def __getattr__(self, name: str) -> Any:
        # What else a caller asks of the VM (build_times, node_profile, ...) is the inner's.
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)

    def set_updates(self, updates: list[tuple[list[Any], list[Any], bool]]) -> None:
        super().set_updates(updates)
        self.inner.set_updates(updates)
        self._step = None

    def set_call(self, input_cells: list[list[Any]],
                 outputs: list[tuple[list[Any], bool, bool]], single: bool) -> None:
        super().set_call(input_cells, outputs, single)
        self.inner.set_call(input_cells, outputs, single)

    def __call__(self) -> None:
        self._run_step(outputs=True, apply=False)

    # -- calls ------------------------------------------------------------------------------
    def call(self, values: tuple) -> Any:
        with self._lock:
            if self.gave_up:
                return self.inner.call(values)
            for cell, value in zip(self._call_inputs, values):
                cell[0] = value
            self._run_step(outputs=True, apply=True)
            # A device output of a replay is the step's own array: the caller gets a copy.
            replayed = self._step is not None
            results = [copy_value(self.device, cell[0]) if copy_needed or replayed
                       and self.device.is_device_array(cell[0]) else cell[0]
                       for cell, copy_needed, _ in self._call_outputs]
            return self._hand_out(results)

    def run(self, n_calls: int = 1) -> None:
        with self._lock:
            for _ in range(n_calls):
                if self.gave_up:
                    self.inner.run(1)
                else:
                    self._run_step(outputs=False, apply=True)
            self._read_flags()

    def _run_step(self, outputs: bool, apply: bool) -> None:
        """The program once; its updates too when `apply`. With outputs=False, the "after"
        nodes that only outputs need are left out of a replay."""
        self._calls += 1
        for own, given in self._input_copies:
            own[0] = given[0]
        device = self.device
        start = device.reporting_launches
        if self._calls == 1:
            self.inner()
        else:
            decisions = self._decide()
            plan = self._plan(decisions)
            step = self._step
            if step is not None and step.decisions != decisions:
                self._drop_step()
                step = None
            deciding = self._deciding_set
            self._perform(node for node in plan.before if node not in deciding
                          and (step is None or node not in step.skipped))
            if step is not None and not self._holds(step):
                self._perform(step.skipped)
                self._drop_step()
                step = None
            # A node that left the body this call (a guard failed) is not yet run as a
            # "before" node: this call runs as compiled, the next one captures.
            if step is None and not self.gave_up and self._plan(decisions) is plan:
                step = self._step = self._capture(plan, decisions)
            if step is not None:
                self._replay(step, outputs, apply)
                return
            self._read_flags()
            self._perform(plan.body)
            self._perform(plan.after)
        self._reporting = device.reporting_launches - start
        if apply:
            apply_updates(self.updates, functools.partial(copy_value, device))

    def _drop_step(self) -> None:
        """Forget the captured step, once its last replay is done (its arrays go back to the
        pool, which may hand them to the next capture)."""
        self._read_flags()
        if self._step is not None:
            self.device.release(self._step.body)
        self._step = None

    # -- the parts ----------------------------------------------------------------------------
    def _perform(self, nodes) -> None:
        storage = self.storage
        for node in nodes:
            values = [storage[v][0] for v in node.inputs]
            try:
                node.op.perform(node, values, [storage[v] for v in node.outputs])
            except Exception as error:
                raise_with_node(node, values, error)

    def _capturable(self, node: Apply) -> bool:
        return (node not in self._excluded and not isinstance(node.op, GpuFromHost)
                and all(isinstance(v.type, GpuArrayType) for v in node.outputs))

    def _deciding_nodes(self) -> list[Apply] | None:
        """The nodes the conditionals' conditions need, in order: host work outside every
        branch (None where a condition needs device work or a branch's node: such a
        function is not replayed)."""
        if not self._conditionals:
            return []
        top = {self.nodes[step.index] for step in self._schedule}
        needed = _ancestors([node.inputs[0] for node in self._conditionals])
        if any(node not in top or self._capturable(node) for node in needed):
            return None
        return [node for node in self.nodes if node in needed]

    def _decide(self) -> tuple[bool, ...]:
        """Run the nodes the conditions need; each conditional's decision."""
        self._perform(self._deciding)
        return tuple(bool(self.storage[node.inputs[0]][0]) for node in self._conditionals)

    def _active(self, decisions: tuple[bool, ...]) -> list[Apply]:
        """The nodes that run for `decisions`, in the lazy schedule's order."""
        if not self._conditionals:
            return self.nodes
        taken = dict(zip(self._conditionals, decisions))

        def flatten(steps):
            for step in steps:
                node = self.nodes[step.index]
                if node in taken:
                    yield from flatten(step.then_steps if taken[node] else step.else_steps)
                yield node

        return list(flatten(self._schedule))

    def _plan(self, decisions: tuple[bool, ...]) -> _Plan:
        plan = self._plans.get(decisions)
        if plan is not None:
            return plan
        nodes = self._active(decisions)
        kinds: dict[Apply, str] = {}
        for node in nodes:
            # A conditional reads the values of its branch taken only.
            depends = {kinds.get(v.owner) for v in node.inputs if v.owner is not None}
            if _AFTER in depends:
                kinds[node] = _AFTER
            elif self._capturable(node):
                kinds[node] = _BODY
            else:
                kinds[node] = _AFTER if _BODY in depends else _BEFORE
        body = [node for node in nodes if kinds[node] == _BODY]
        read = list(dict.fromkeys(v for node in body for v in node.inputs
                                  if isinstance(v.type, GpuArrayType)
                                  and not isinstance(v, Constant)
                                  and (v.owner is None or kinds.get(v.owner) == _BEFORE)))
        plan = self._plans[decisions] = _Plan(
            [node for node in nodes if kinds[node] == _BEFORE], body,
            [node for node in nodes if kinds[node] == _AFTER],
            [v for v in read if v.owner is not None or v in self._explicit],
            [v for v in read if v.owner is None and v not in self._explicit])
        return plan

    def _exclude(self, node: Apply) -> None:
        self._excluded.add(node)
        self._plans.clear()

    def _holds(self, step: _Step) -> bool:
        """Whether `step` may replay this call: the staged values have the captured shapes
        and dtypes, the shared variables the captured arrays, the guarded host values the
        captured values (a node whose value changed alone leaves the body)."""
        storage = self.storage
        shapes_hold = True
        for variable, buffer, host in step.staged:
            value = storage[host if host is not None else variable][0]
            if (getattr(value, "shape", None) != buffer.shape
                    or np.dtype(value.dtype) != np.dtype(buffer.dtype)):
                shapes_hold = False
        if not shapes_hold or any(cell[0] is not array for cell, array in step.shared):
            return False
        for node, variable, value in step.guards:
            if not _same(storage[variable][0], value):
                self._exclude(node)
                return False
        return True

    def _capture(self, plan: _Plan, decisions: tuple[bool, ...]) -> _Step | None:
        """Capture the body and the commit of this call's values; None where it does not
        pay or cannot be done (the body then runs node by node this call)."""
        storage, device = self.storage, self.device
        guards = []
        for node in plan.body:
            for variable in node.inputs:
                if isinstance(variable.type, GpuArrayType) or isinstance(variable, Constant):
                    continue
                value = storage[variable][0]
                if np.size(value) > GUARDED_SIZE:
                    self._exclude(node)
                    return None
                guards.append((node, variable, np.array(value, copy=True)
                               if isinstance(value, np.ndarray) else value))
        if len(plan.body) < 2 or self._captures >= RECAPTURES:
            self.gave_up = self._captures >= RECAPTURES or not plan.body
            return None
        self._captures += 1
        staged, skipped = [], set()
        originals = [(storage[v], storage[v][0]) for v in plan.staged]
        for variable in plan.staged:
            owner = variable.owner
            value = storage[variable][0]
            host = None
            if (owner is not None and isinstance(owner.op, GpuFromHost)
                    and variable not in self.fgraph.outputs
                    and all(client in plan.body for client, _ in self.fgraph.clients[variable])):
                host = owner.inputs[0]
                skipped.add(owner)
            buffer = device.empty(value.shape, np.dtype(value.dtype).name)
            staged.append((variable, buffer, host))
            storage[variable][0] = buffer
        capacity = 2 * self._reporting + 4 if self._reporting else 0
        flags = step_flags_kernel()
        for kernel in (flags, step_commit_kernel("npy_uint32"), step_commit_kernel("npy_uint8")):
            device.load(kernel)
        try:
            with device.capture(capacity) as body:
                if capacity:
                    device.launch(flags, capacity, [capacity, 0, body.flags])
                for node in plan.body:
                    body.node = node
                    self._perform((node,))
                body.node = None
                if body.slots:
                    device.launch(flags, 1, [len(body.slots), 1, body.flags])
            commit, committed, host_updates = self._capture_commit(plan, body)
        except CaptureError:
            # The node that could not be captured leaves the body (none: the commit's).
            if body.node is not None:
                self._exclude(body.node)
            commit = False
        finally:
            # The staged values, which each replay copies into the buffers.
            _restore(originals)
        if commit is False:
            return None
        shared = [(self._given[v], storage[v][0]) for v in plan.shared]
        shared += [(target, target[0]) for target, _ in committed
                   if all(target is not cell for cell, _ in shared)]
        needed = _ancestors([self._cell_variables[id(source)] for _, source, _
                             in host_updates])
        return _Step(decisions, plan, body, commit, staged, skipped, guards, shared,
                     [(storage[v], storage[v][0]) for node in plan.body for v in node.outputs],
                     host_updates, [node for node in plan.after if node in needed])

    def _capture_commit(self, plan: _Plan, body: StepCapture):
        """(the commit graph, the updates it writes, the updates left to the host): the
        graph None when the body computes no update, False when a value read after the body
        shares memory with an array the commit writes (it would read the new value)."""
        storage, device = self.storage, self.device
        body_variables = {v for node in plan.body for v in node.outputs}
        committed, host_updates = [], []
        for target, source, copy_needed in self.updates:
            variable = self._cell_variables[id(source)]
            old, new = target[0], source[0]
            if variable in body_variables and device.is_device_array(old) \
                    and old.shape == new.shape and old.dtype == new.dtype \
                    and _c_contiguous(old) and old is not new:
                committed.append((target, source))
            else:
                host_updates.append((target, source, variable in body_variables
                                     or copy_needed))
        if not committed:
            return None, committed, host_updates
        written = [device.extent(target[0]) for target, _ in committed]
        read_after = [storage[v][0] for node in plan.after for v in node.inputs]
        read_after += [cell[0] for cell in self.output_storage]
        read_after += [source[0] for _, source, _ in host_updates]
        read_after += [source[0] for _, source in committed]
        for value in read_after:
            if device.is_device_array(value):
                start, end = device.extent(value)
                for (low, high), (_, source) in zip(written, committed):
                    if start < high and low < end and value is not source[0]:
                        self.gave_up = True
                        return False, committed, host_updates
        with device.capture(0) as commit:
            for target, source in committed:
                new = device.contiguous(source[0])
                size = new.size * new.dtype.itemsize
                word, n = ("npy_uint32", size // 4) if size % 4 == 0 else ("npy_uint8", size)
                device.launch(step_commit_kernel(word), n, [n, target[0], new, body.flags])
        return commit, committed, host_updates

    def _replay(self, step: _Step, outputs: bool, apply: bool) -> None:
        storage, device = self.storage, self.device
        for variable, buffer, host in step.staged:
            if host is None:
                device.assign(buffer, storage[variable][0])
                continue
            value = storage[host][0]
            if np.size(value) <= GUARDED_SIZE:
                last = step.last_written.get(variable)
                if last is not None and _same(value, last):
                    continue
                step.last_written[variable] = np.array(value, copy=True)
            device.write(buffer, np.asarray(value))
        device.replay(step.body)
        self.replays += 1
        step.replays += 1
        for cell, value in step.body_values:
            cell[0] = value
        if step.body.slots:
            self._unread_step = step
            self._unread.append((step.replays, [(target, target[0]) for target, _, _
                                                in step.host_updates] if apply else []))
            # A call reads the flags (it waits for its outputs anyway) before the "after"
            # nodes read results an error made wrong; fn(n_calls)'s steps run on unread.
            if outputs:
                self._read_flags()
        self._perform(step.plan.after if outputs else step.after_for_updates)
        if step.commit is not None:
            device.replay(step.commit)
        if apply:
            apply_updates(step.host_updates, functools.partial(copy_value, device))

    def _read_flags(self) -> None:
        """Read the flags of the replays not yet read, if any; where one failed, raise its
        error with the host updates of it and of the replays after it undone (the device
        skipped their commits): the state the step before it left. The body's nodes run
        again one by one, as compiled, so that a failing one raises its own message (which
        axis, which index); the kernel's error where they do not fail (the failed step was
        an earlier one)."""
        step, unread = self._unread_step, self._unread
        if step is None:
            return
        self._unread_step, self._unread = None, []
        device, flags = self.device, step.body.flags
        codes = device.to_host(flags[0:3])
        if not codes[0]:
            return
        device.write(flags[0:3], np.zeros(3, np.int32))
        for number, before in reversed(unread):
            if number < codes[2]:
                break
            for target, value in before:
                target[0] = value
        self._perform(step.skipped)
        self._perform(step.plan.body)
        kernel, node = step.body.slots[int(codes[0]) - 1]
        raise_with_node(node, [self.storage[v][0] for v in node.inputs],
                        kernel_error(kernel, int(codes[1])))


def copy_value(device: Runtime, value: Any) -> Any:
    """A copy of `value` (a device array's on the device)."""
    return device.copy(value) if device.is_device_array(value) else copy.copy(value)


def _restore(cells: list[tuple[list[Any], Any]]) -> None:
    for cell, value in cells:
        cell[0] = value


def _same(value: Any, captured: Any) -> bool:
    """Whether a host value is the captured one, bit for bit (a small array or a scalar)."""
    if isinstance(captured, np.ndarray | np.generic) or isinstance(value, np.ndarray | np.generic):
        value, captured = np.asarray(value), np.asarray(captured)
        return (value.dtype == captured.dtype and value.shape == captured.shape
                and value.tobytes() == captured.tobytes())
    return type(value) is type(captured) and value == captured


def _c_contiguous(value: Any) -> bool:
    stride = value.dtype.itemsize
    for length, step in zip(reversed(value.shape), reversed(value.strides)):
        if length != 1 and step != stride:
            return False
        stride *= length
    return True


def _ancestors(variables: list[Variable]) -> set[Apply]:
    nodes: set[Apply] = set()
    pending = [v.owner for v in variables if v.owner is not None]
    while pending:
        node = pending.pop()
        if node not in nodes:
            nodes.add(node)
            pending.extend(v.owner for v in node.inputs if v.owner is not None)
    return nodes


def graphs_for(fgraph: FunctionGraph, profiled: bool):
    """The VM wrapper (GraphedSteps) of a function of `fgraph` when it has device work to
    replay (config.gpu_graphs, not profiled, one device, the C or Python backend's VM),
    else None."""
    if not config.gpu_graphs or profiled:
        return None
    contexts = {v.type.context for node in fgraph.apply_nodes for v in node.outputs
                if isinstance(v.type, GpuArrayType)}
    if len(contexts) != 1:
        return None
    device = runtime(contexts.pop())

    def wrap(vm: Any, cells: list[list[Any]], n_explicit: int) -> Any:
        # The modes that watch each node (MonitorMode, NanGuardMode, DebugMode) run theirs.
        if type(vm) not in (CVM, PythonVM):
            return vm
        return GraphedSteps(vm, cells, n_explicit, device)

    return wrap


VM_WRAPPERS.append(graphs_for)
