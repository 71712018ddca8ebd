"""The C backend's VM: builds (or loads from the cache) the module of a FunctionGraph and runs
its Program. Same interface as the Python backend's PythonVM."""

from __future__ import annotations

import copy
import os
import sys
import threading
import time
from concurrent.futures import Future
from types import ModuleType
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.link.c.cmodule import load_module, module_is_cached
from sympile.link.c.codegen import plan_module
from sympile.link.python.vm import raise_with_node


class CVM:
    """Runs `fgraph` as one compiled C module; `input_storage` gives the cells of its inputs.

    run(n_calls) runs the program n_calls times inside C, applying the updates given to
    set_updates between runs (not after the last: Function does that, as with PythonVM).
    `build_times` splits the link time into codegen, C compile and load (seconds).
    build_in_background() makes one whose module compiles on another thread.
    """

    def __init__(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
                 profile: bool = False):
        self._plan(fgraph, input_storage, profile)
        self._link(self._load_module(progress=True))

    def _plan(self, fgraph: FunctionGraph, input_storage: list[list[Any]],
              profile: bool) -> None:
        """The cells of every variable and the module's C source (codegen)."""
        start = time.perf_counter()
        self.fgraph = fgraph
        self.nodes = fgraph.toposort()
        self.storage: dict[Variable, list[Any]] = dict(zip(fgraph.inputs, input_storage))
        # In the order the nodes read them, then the outputs (fgraph.variables is a set): the
        # same graph gets the same cells, hence the same main unit and its cache entry.
        read = [v for node in self.nodes for v in node.inputs] + list(fgraph.outputs)
        constants = list(dict.fromkeys(
            v for v in read if isinstance(v, Constant) and v not in self.storage))
        for constant in constants:
            self.storage[constant] = [_constant_value(constant)]
        outputs = [v for node in self.nodes for v in node.outputs]
        for variable in outputs:
            self.storage.setdefault(variable, [None])
        self.variables = list(fgraph.inputs) + constants + outputs
        self.output_storage = [self.storage[v] for v in fgraph.outputs]
        self.plan = plan_module(self.variables, self.nodes, fgraph.outputs,
                                fgraph.orderings())
        self.profiling = profile
        self.build_times = {"codegen": time.perf_counter() - start}

    def _module_arguments(self) -> tuple:
        # Every unit is built with -fopenmp when OpenMP is on, used or not, so that a unit's
        # cache entry serves every module.
        return (self.plan.source, config.openmp or self.plan.openmp,
                tuple(config.cxxflags.split()), tuple(self.plan.units))

    def _load_module(self, progress: bool) -> ModuleType:
        return load_module(*self._module_arguments(), progress=progress)

    def _link(self, module: ModuleType) -> None:
        """Run on `module` (the planned source, compiled)."""
        self.module = module
        build = getattr(module, "__sympile_build__", {})
        self.build_times.update(compile=build.get("compile_s", 0.0),
                                load=build.get("load_s", 0.0),
                                cache_hit=build.get("cache_hit", False))
        self.thunks = tuple(_perform_thunk(plan.node, self.storage)
                            for plan in self.plan.nodes if plan.code is None)
        self._cells = tuple(self.storage[v] for v in self.variables)
        self._position = {id(cell): i for i, cell in enumerate(self._cells)}
        self._call_spec: tuple | None = None
        self.set_updates([])

    @property
    def fallback_nodes(self):
        """The nodes that run their perform() (no C code), in order."""
        return self.plan.fallback_nodes

    def set_updates(self, updates: list[tuple[list[Any], list[Any], bool]]) -> None:
        """updates: (target cell, cell of the new value, copy the value?) for each update."""
        entries = tuple((target, self._position[id(source)], bool(copy_needed))
                        for target, source, copy_needed in updates)
        self.program = self.module.Program(self._cells, self.thunks, entries, copy.copy,
                                           self.profiling)
        self._program_call = self.program.call
        if self._call_spec is not None:
            self.program.set_call(*self._call_spec)

    def set_call(self, input_cells: list[list[Any]],
                 outputs: list[tuple[list[Any], bool, bool]], single: bool) -> None:
        """What call() stores and returns: outputs are (cell, copy the value?, empty the
        cell afterwards?) triples."""
        self._call_spec = (tuple(self._position[id(cell)] for cell in input_cells),
                           tuple((self._position[id(cell)], bool(copy_needed), bool(clear))
                                 for cell, copy_needed, clear in outputs),
                           bool(single))
        self.program.set_call(*self._call_spec)

    def call(self, values: tuple) -> Any:
        """One call inside C: store `values` in the input cells, run, take the outputs, apply
        the updates, empty the cells of the outputs handed out."""
        try:
            return self._program_call(values)
        except Exception as error:
            self._reraise(error)

    def __call__(self) -> None:
        try:
            self.program.run_once()
        except Exception as error:
            self._reraise(error)

    def run(self, n_calls: int = 1) -> None:
        """Run the program and apply the updates, n_calls times, inside C."""
        try:
            self.program.run(n_calls)
        except Exception as error:
            self._reraise(error)

    def prepare_steps(self, inputs: list[tuple[list[Any], int, str, int]],
                      outputs: list[tuple[list[Any], int | np.dtype, int]],
                      condition: list[Any] | None = None) -> Any:
        """A plan for run_steps: how a Scan's loop feeds this program and reads it back.

        inputs: (cell, source, kind, first row): at step k the cell holds the array
        arrays[source] of the run_steps call itself (kind "fixed"), its row first + k
        ("sequence"), or its row (first + k) modulo its length ("state": a state buffer,
        circular when shorter than the loop). outputs: (cell, destination, first row):
        after each run the cell's value is copied into row (first + k) modulo the length of
        arrays[destination], or, for a destination given as a dtype, into row k of a buffer
        of that dtype allocated after step 0 with n_steps rows of step 0's shape.
        condition: a cell whose truth, read after each step, stops the loop.
        An output cell that a node of the graph fills is emptied after each step when another
        cell holds its value too (an in-place op's output): the op that made the value then
        finds it held by its own cell alone and reuses it at the next step."""
        position = self._position
        kinds = {"fixed": 0, "sequence": 1, "state": 2}
        input_entries = tuple((position[id(cell)], source, kinds[kind], first_row)
                              for cell, source, kind, first_row in inputs)
        output_entries = tuple(
            (position[id(cell)], destination if isinstance(destination, int) else -1,
             -1 if isinstance(destination, int) else np.dtype(destination).num, first_row,
             self._node_fills(cell))
            for cell, destination, first_row in outputs)
        condition_cell = -1 if condition is None else position[id(condition)]
        return self.program.prepare_steps(input_entries, output_entries, condition_cell,
                                          condition is not None
                                          and self._node_fills(condition))

    def run_steps(self, plan: Any, n_steps: int,
                  arrays: tuple[Any, ...]) -> tuple[int, list[np.ndarray | None]]:
        """Run the program up to n_steps times inside C (a Scan's loop) as `plan`
        (prepare_steps) says, applying the updates after each run. Returns the number of
        steps run and, per output, the buffer allocated for it (None for the others)."""
        try:
            return self.program.run_steps(plan, n_steps, arrays)
        except Exception as error:
            self._reraise(error)

    def _node_fills(self, cell: list[Any]) -> bool:
        """Whether a node of the graph computes the value of `cell` (not an input or a
        constant)."""
        return self.variables[self._position[id(cell)]].owner is not None

    def node_profile(self) -> list[tuple[float, int]]:
        """(seconds, calls) of each node in self.nodes, when built with profile=True."""
        return self.program.profile()

    def _reraise(self, error: Exception):
        failed = self.program.failed_node
        if failed >= 0:
            node = self.nodes[failed]
            raise_with_node(node, [self.storage[v][0] for v in node.inputs], error)
        bad = self.program.bad_input
        if bad >= 0:
            variable = self.variables[bad]
            value = self.storage[variable][0]
            got = (f"an array of dtype {value.dtype} and shape {value.shape}"
                   if isinstance(value, np.ndarray) else f"{type(value).__name__} {value!r:.60}")
            if variable.owner is not None:
                raise TypeError(f"{variable.owner.op}.perform gave {got} for output "
                                f"{variable.index}, expected {variable.type}; the variable "
                                f"was created at {variable.creation_site()}") from None
            raise TypeError(f"input {variable} (created at {variable.creation_site()}): "
                            f"expected {variable.type}, got {got}") from None
        raise error


def build_in_background(fgraph: FunctionGraph, input_storage: list[list[Any]]
                        ) -> CVM | Future:
    """The CVM of `fgraph` at once when its module needs no compiling (loaded in this
    process, or in the disk cache); else a Future of it, whose module compiles on a thread of
    its own (silently: the caller is running meanwhile), with the compiler's error as the
    Future's exception. The planning (codegen) runs here, on the caller's thread: it reads
    the ops, which the caller's other VM may be running. The thread is not a daemon, so that
    the cache still gets the module when the program ends first."""
    vm = CVM.__new__(CVM)
    vm._plan(fgraph, input_storage, profile=False)
    if module_is_cached(*vm._module_arguments()):
        vm._link(vm._load_module(progress=False))
        return vm
    built: Future = Future()

    def compile_and_link() -> None:
        _lower_priority()
        try:
            vm._link(vm._load_module(progress=False))
        except BaseException as error:  # handed to whoever waits for the module
            built.set_exception(error)
        else:
            built.set_result(vm)

    threading.Thread(target=compile_and_link, name="sympile-compile").start()
    return built


# The niceness of a background build: the caller's calls, which run meanwhile, come first.
BACKGROUND_NICENESS = 10


def _lower_priority() -> None:
    """Lower the calling thread's scheduling priority, and so that of the threads and
    compiler processes it starts (Linux: niceness is per thread and inherited); elsewhere a
    thread's priority cannot be set apart from its process's, and it is left as it is."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICENESS)
        except OSError:
            pass  # a sandbox that forbids it: the build runs at normal priority


def _constant_value(constant: Constant) -> Any:
    """An array constant's value as an array of its dtype (C code reads it as one)."""
    data = constant.data
    if constant.type.is_ndarray and not (
            isinstance(data, np.ndarray) and data.dtype == constant.type.dtype):
        data = np.asarray(data, dtype=constant.type.dtype)
        data.setflags(write=False)
    return data


def _perform_thunk(node, storage):
    perform = node.op.perform
    input_cells = [storage[v] for v in node.inputs]
    output_cells = [storage[v] for v in node.outputs]

    def thunk():
        values = [cell[0] for cell in input_cells]
        try:
            perform(node, values, output_cells)
        except Exception as error:
            raise_with_node(node, values, error)

    return thunk
