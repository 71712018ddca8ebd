"""function(): compile a graph into a callable, with shared variables, updates and givens."""

from __future__ import annotations

import copy
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, wait
from typing import Any

import numpy as np

from sympile.cache import CompileError
from sympile.compile.mode import Mode, get_mode
from sympile.compile.profiling import ProfileStats, print_at_exit
from sympile.compile.shared import SharedVariable
from sympile.compile.updates import protect_updates
from sympile.config import config
from sympile.graph.basic import Constant, Variable, clone_replace, graph_inputs
from sympile.graph.fgraph import FunctionGraph, InconsistencyError, MissingInputError
from sympile.graph.rewriting.destroyhandler import DestroyHandler
from sympile.graph.utils import bind_methods
from sympile.link.c.linker import CVM
from sympile.tensor.shape import specify_shape
from sympile.tensor.type import TensorType
from sympile.tensor.variable import as_tensor_variable


class UnusedInputError(ValueError):
    """An explicit input does not contribute to any output or update."""


class In:
    """An input specification: the variable, its keyword name and a default value.

    mutable=True lets the function overwrite the array passed for this input (an inplace op
    may reuse its memory): the caller gives up that array's contents. A default value is
    never overwritten (each call gets a copy of it).
    """

    def __init__(self, variable: Variable, name: str | None = None, value: Any = None,
                 strict: bool = False, allow_downcast: bool | None = None,
                 borrow: bool = False, mutable: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"In: expected a Variable, got {variable!r}")
        if not isinstance(mutable, bool):
            raise TypeError(f"In: mutable must be True or False, got {mutable!r}")
        self.variable = variable
        self.name = name if name is not None else variable.name
        self.value = value
        self.has_default = value is not None
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.borrow = borrow
        self.mutable = mutable


def Param(variable: Variable, default: Any = None, name: str | None = None,
          mutable: bool = False, strict: bool = False, allow_downcast: bool | None = None,
          borrow: bool = False) -> In:
    """Theano's older name of In, with `default` for In's `value`."""
    return In(variable, name=name, value=default, strict=strict,
              allow_downcast=allow_downcast, borrow=borrow, mutable=mutable)


class Out:
    """An output specification. borrow=True returns the function's internal buffer, which the
    next call may overwrite (faster; copy it if you keep it). device_array=True returns a
    device array (a GPU output) as it is, not copied to a numpy array."""

    def __init__(self, variable: Variable, borrow: bool = False, device_array: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"Out: expected a Variable, got {variable!r}")
        self.variable = variable
        self.borrow = borrow
        self.device_array = device_array


def function(inputs: Sequence[Variable | In] | None = None, outputs: Any = None,
             mode: str | Mode | None = None, updates: Any = None, givens: Any = None,
             no_default_updates: bool | Sequence[SharedVariable] = False,
             accept_inplace: bool = False,
             name: str | None = None, rebuild_strict: bool = True,
             allow_input_downcast: bool | None = None, profile: Any = None,
             on_unused_input: str | None = None, trust_input: bool = False,
             return_device_arrays: bool = False) -> Function:
    """Compile `outputs` (a Variable, a list, or a dict name -> Variable) as a function of
    `inputs`.

    updates: pairs (shared variable, new value expression), applied together after the
    outputs are computed. givens: pairs (variable, replacement) substituted in the graph
    before compiling. Shared variables that the graph uses are implicit inputs; one with a
    `default_update` (a random stream's state) is also updated by it, unless `updates` names
    it or `no_default_updates` is True or lists it.

    Inplace rewrites may overwrite the inputs declared In(..., mutable=True) and the storage
    of the shared variables that have an update (their old value is dead after the call),
    never another input, a constant or a value the caller receives. accept_inplace: allow
    `outputs` to contain ops that overwrite a value themselves (by default a TypeError); the
    inputs they overwrite are then mutable.

    Outputs that are device arrays (sympile.gpu) are returned as numpy arrays, unless
    return_device_arrays=True (or Out(..., device_array=True) for one output).
    """
    if inputs is None:
        inputs = []
    if isinstance(inputs, (Variable, In)) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"function: inputs must be a list or tuple of Variables, got "
                        f"{type(inputs).__name__}")
    on_unused_input = on_unused_input or config.on_unused_input
    if on_unused_input not in ("raise", "warn", "ignore"):
        raise ValueError(f"function: on_unused_input must be 'raise', 'warn' or 'ignore', got "
                         f"{on_unused_input!r}")
    specs = [spec if isinstance(spec, In) else In(spec) if isinstance(spec, Variable)
             else _bad_input(spec, index) for index, spec in enumerate(inputs)]
    for index, spec in enumerate(specs):
        _check_explicit_input(spec.variable, index)
    if len({id(s.variable) for s in specs}) != len(specs):
        raise ValueError("function: an input variable is listed twice")

    output_specs, output_keys, single = _normalize_outputs(outputs)
    output_specs = [_placed_output(spec, return_device_arrays or spec.device_array)
                    for spec in output_specs]
    explicit_updates = normalize_updates(updates)
    given_pairs = _normalize_givens(givens, specs)

    # Explicit inputs that are computed variables cut the graph there: substitute fresh inputs.
    substitutions = dict(given_pairs)
    explicit = []
    for spec in specs:
        variable = spec.variable
        if variable.owner is not None:
            fresh = variable.type.make_variable(variable.name)
            fresh.tag.trace = variable.tag.trace
            substitutions[variable] = fresh
            variable = fresh
        explicit.append(variable)

    update_pairs = explicit_updates + default_updates(
        [o.variable for o in output_specs] + [value for _, value in explicit_updates],
        explicit_updates, substitutions, no_default_updates)
    roots = [o.variable for o in output_specs] + [value for _, value in update_pairs]
    computed = clone_replace(roots, substitutions) if substitutions else list(roots)
    output_variables = computed[:len(output_specs)]
    update_values = computed[len(output_specs):]

    needed = graph_inputs(computed)
    needed_ids = {id(v) for v in needed}
    for spec, variable in zip(specs, explicit):
        if id(variable) not in needed_ids:
            advice = ("pass on_unused_input='ignore' or 'warn' to allow this"
                      if on_unused_input == "raise" else
                      "pass on_unused_input='ignore' to silence this warning")
            message = (f"function: input {spec.name or variable} (created at "
                       f"{spec.variable.creation_site()}) is not used to compute any output "
                       f"or update; {advice}")
            if on_unused_input == "raise":
                raise UnusedInputError(message)
            if on_unused_input == "warn":
                warnings.warn(message, stacklevel=2)
    explicit_ids = {id(v) for v in explicit}
    shared_inputs = []
    for variable in needed:
        if id(variable) in explicit_ids or isinstance(variable, Constant):
            continue
        if isinstance(variable, SharedVariable):
            shared_inputs.append(variable)
        else:
            raise MissingInputError(variable)
    for shared_variable, _ in update_pairs:
        if id(shared_variable) not in {id(v) for v in shared_inputs}:
            shared_inputs.append(shared_variable)

    fgraph = FunctionGraph(explicit + shared_inputs, output_variables + update_values)
    _attach_destroy_handler(fgraph, specs, len(explicit), shared_inputs,
                            {id(s) for s, _ in update_pairs}, accept_inplace)
    mode = get_mode(mode)
    start = time.perf_counter()
    # Test values are for the graphs the user builds, not for the rewrites' nodes.
    with config.change_flags(compute_test_value="off"):
        mode.rewrite(fgraph)
        protect_updates(fgraph, fgraph.inputs[len(explicit):],
                        whole=mode.runs_python_vm_for(fgraph))
    by_mode = getattr(mode, "profiles", None)  # a ProfileMode profiles its functions
    if profile is None and (config.profile or by_mode is not None):
        profile = True
        stats = ProfileStats(name, time.perf_counter() - start)
        if by_mode is not None:
            by_mode.append(stats)
        else:
            print_at_exit(stats)
    else:
        stats = ProfileStats(name, time.perf_counter() - start) if profile else None
    function_class = _ProfiledFunction if profile else Function
    compiled = function_class(fgraph, mode, specs, output_specs, output_keys, single,
                              shared_inputs, [s for s, _ in update_pairs], name,
                              allow_input_downcast, trust_input, stats)
    compiled._arguments = dict(inputs=inputs, outputs=outputs, mode=mode,
                               updates=explicit_updates, givens=given_pairs,
                               no_default_updates=no_default_updates, name=name,
                               allow_input_downcast=allow_input_downcast,
                               on_unused_input=on_unused_input, profile=profile)
    return compiled


def default_updates(roots: list[Variable], explicit_updates: list[tuple[SharedVariable, Variable]],
                     substitutions: dict, no_default_updates: Any) -> list[tuple[Any, Variable]]:
    """The (shared variable, its default_update) pairs of the shared variables that `roots`
    use (after the substitutions of givens and of explicit inputs), that no explicit update
    targets and that `no_default_updates` (True: all; a list: those) does not exclude. A
    default update's own shared variables are followed too (a random state's update uses
    only that state, but a user's may use others)."""
    if no_default_updates is True:
        return []
    if no_default_updates is False or no_default_updates is None:
        excluded: set[int] = set()
    elif isinstance(no_default_updates, (list, tuple, set)) and all(
            isinstance(v, SharedVariable) for v in no_default_updates):
        excluded = {id(v) for v in no_default_updates}
    else:
        raise TypeError(f"function: no_default_updates must be True, False or a list of shared "
                        f"variables, got {no_default_updates!r}")
    done = {id(target) for target, _ in explicit_updates} | excluded
    replaced = {id(key): value for key, value in substitutions.items()}
    found: list[tuple[Any, Variable]] = []
    pending = list(roots)
    while pending:
        reached = graph_inputs(pending, blockers=list(substitutions))
        pending = []
        for variable in reached:
            if id(variable) in replaced:
                pending.append(replaced.pop(id(variable)))
            elif (isinstance(variable, SharedVariable) and id(variable) not in done
                  and variable.default_update is not None):
                done.add(id(variable))
                (pair,) = normalize_updates([(variable, variable.default_update)])
                found.append(pair)
                pending.append(pair[1])
    return found


def _attach_destroy_handler(fgraph: FunctionGraph, specs: list[In], n_explicit: int,
                            shared_inputs: list[SharedVariable], updated: set[int],
                            accept_inplace: bool) -> None:
    """Give `fgraph` its DestroyHandler: the mutable explicit inputs and the updated shared
    variables may be overwritten (fgraph.inputs are copies of the variables given)."""
    mutable = [fgraph.inputs[index] for index, spec in enumerate(specs) if spec.mutable]
    mutable += [fgraph.inputs[n_explicit + index] for index, variable
                in enumerate(shared_inputs) if id(variable) in updated]
    handler = DestroyHandler(mutable)
    fgraph.attach_feature(handler)
    if handler.destroyers:
        if not accept_inplace:
            names = ", ".join(sorted({str(node.op) for node in handler.destroyers}))
            raise TypeError(f"function: the graph contains ops that overwrite an input "
                            f"({names}); pass accept_inplace=True to compile it")
        # As in Theano: the inputs that the given ops overwrite are the caller's to lose.
        handler.mutable_inputs += [variable for variable in handler.destroyed_inputs()
                                   if variable not in handler.mutable_inputs]
    try:
        handler.validate(fgraph)
    except InconsistencyError as error:
        raise TypeError(f"function: the graph's inplace ops are unsafe: {error}") from None


def _interim_graph(fgraph: FunctionGraph, n_explicit: int) -> FunctionGraph:
    """A copy of the rewritten `fgraph` for the Python backend to run while its C compiles:
    with its DestroyHandler (the inplace ops' orderings), each update replacing the stored
    value whole as the Python backend does (protect_updates; the inputs after the
    `n_explicit` explicit ones are the shared variables)."""
    interim = fgraph.clone()
    position = {variable: index for index, variable in enumerate(fgraph.inputs)}
    handler = DestroyHandler([interim.inputs[position[variable]]
                              for variable in fgraph.destroy_handler.mutable_inputs])
    interim.attach_feature(handler)
    protect_updates(interim, interim.inputs[n_explicit:], whole=True)
    return interim


def _bad_input(spec: Any, index: int):
    raise TypeError(f"function: input {index} is {spec!r}; expected a Variable or an In")


def _check_explicit_input(variable: Variable, index: int) -> None:
    if isinstance(variable, SharedVariable):
        raise TypeError(f"function: input {index} ({variable}) is a shared variable; shared "
                        f"variables are implicit inputs and cannot be listed explicitly "
                        f"(use givens to replace one)")
    if isinstance(variable, Constant):
        raise TypeError(f"function: input {index} ({variable}) is a constant; inputs must be "
                        f"symbolic variables")


def _normalize_outputs(outputs: Any) -> tuple[list[Out], list[Any] | None, bool]:
    if outputs is None:
        return [], None, False
    if isinstance(outputs, dict):
        keys = list(outputs)
        specs = [_as_out(outputs[k], k) for k in keys]
        return specs, keys, False
    if isinstance(outputs, (list, tuple)):
        return [_as_out(o, i) for i, o in enumerate(outputs)], None, False
    return [_as_out(outputs, 0)], None, True


def _placed_output(spec: Out, on_device: bool) -> Out:
    """`spec` with its variable where the function returns it: a device array output is
    copied to the host (Theano's `_as_TensorVariable` hook) unless `on_device`; with
    `on_device`, a host output computed for a GPU is kept there (the `_as_device_variable`
    that sympile.gpu binds onto tensors)."""
    variable = spec.variable
    if not on_device and not isinstance(variable.type, TensorType) \
            and hasattr(variable, "_as_TensorVariable"):
        return Out(variable._as_TensorVariable(), spec.borrow)
    if on_device and isinstance(variable.type, TensorType) \
            and hasattr(variable, "_as_device_variable"):
        return Out(variable._as_device_variable(), spec.borrow, device_array=True)
    return spec


def _as_out(output: Any, key: Any) -> Out:
    if isinstance(output, Out):
        return output
    if isinstance(output, Variable):
        return Out(output)
    try:
        return Out(as_tensor_variable(output))
    except TypeError:
        raise TypeError(f"function: output {key!r} is {output!r}; expected a Variable") from None


def _pairs(value: Any, what: str) -> list[tuple[Any, Any]]:
    if value is None:
        return []
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, Iterable) and not isinstance(value, (str, Variable)):
        pairs = list(value)
        for pair in pairs:
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                raise TypeError(f"function: each of {what} must be a pair, got {pair!r}")
        return [tuple(p) for p in pairs]
    raise TypeError(f"function: {what} must be a dict or a list of pairs, got "
                    f"{type(value).__name__}")


def normalize_updates(updates: Any) -> list[tuple[SharedVariable, Variable]]:
    result = []
    seen: set[int] = set()
    for target, expression in _pairs(updates, "updates"):
        if not isinstance(target, SharedVariable):
            raise TypeError(f"function: the target of an update must be a shared variable, got "
                            f"{target!r}")
        if id(target) in seen:
            raise ValueError(f"function: shared variable {target} is updated twice")
        seen.add(id(target))
        if not isinstance(target.type, TensorType):
            # A shared value of another type (a sparse matrix, a device array): the update
            # has its type, or one the type converts without computing (a host tensor moved
            # to the device).
            if isinstance(expression, Variable):
                expression = target.type.convert_variable(expression) or expression
            if not isinstance(expression, Variable) or expression.type != target.type:
                described = expression.type if isinstance(expression, Variable) \
                    else repr(expression)
                raise TypeError(f"function: the update of shared variable {target} "
                                f"({target.type}) must be a variable of that type, got "
                                f"{described}")
            result.append((target, expression))
            continue
        try:
            value = as_tensor_variable(expression)
        except TypeError as error:
            raise TypeError(f"function: update of {target}: {error}") from None
        if value.type != target.type:
            if value.type.dtype != target.type.dtype or value.type.ndim != target.type.ndim:
                raise TypeError(
                    f"function: the update of shared variable {target} ({target.type}) has "
                    f"type {value.type}; an update must have the shared variable's dtype and "
                    f"number of dimensions (cast it, e.g. expression.astype('{target.dtype}'))")
            if not target.type.is_super(value.type):
                # Checked when the update is computed.
                value = specify_shape(value, target.type.shape)
        result.append((target, value))
    return result


def _normalize_givens(givens: Any, specs: list[In]) -> list[tuple[Variable, Variable]]:
    explicit = {id(s.variable) for s in specs}
    result = []
    for target, replacement in _pairs(givens, "givens"):
        if not isinstance(target, Variable):
            raise TypeError(f"function: givens keys must be Variables, got {target!r}")
        if id(target) in explicit:
            raise ValueError(f"function: {target} is both an explicit input and replaced by "
                             f"givens")
        try:
            replacement = as_tensor_variable(replacement) if not isinstance(
                replacement, Variable) else replacement
        except TypeError as error:
            raise TypeError(f"function: givens replacement for {target}: {error}") from None
        if replacement.type != target.type:
            converted = target.type.convert_variable(replacement)
            if converted is None:
                raise TypeError(f"function: givens replaces {target} ({target.type}) by "
                                f"{replacement} of another type ({replacement.type})")
            replacement = converted
        result.append((target, replacement))
    return result


def _display_name(variable: Variable) -> str:
    """A variable's name, or its expression cut short where it has none."""
    text = variable.name or str(variable)
    return text if len(text) <= 30 else text[:27] + "..."


# What a layer above puts around a function's VM (sympile.gpu.graphs: device work replayed
# as CUDA Graphs): each entry is called when a function is made, with (fgraph, whether it is
# profiled), and returns None or a wrapper: (vm, the cells of fgraph's inputs, the number of
# explicit inputs) -> the VM to run.
VM_WRAPPERS: list[Callable[[FunctionGraph, bool], Callable[[Any, list[list[Any]], int], Any]
                           | None]] = []


class _Maker:
    """What a Function was compiled from (Theano's `f.maker`)."""

    def __init__(self, fgraph: FunctionGraph, mode: Mode, inputs: list[In], outputs: list[Out]):
        self.fgraph = fgraph
        self.mode = mode
        self.inputs = inputs
        self.outputs = outputs


class Function:
    """A compiled function. Call it with the explicit inputs (by position or by name).

    trust_input = True skips checking and converting the inputs (give ndarrays of the exact
    dtype, none sharing memory with an input the function overwrites); fn(n_calls=N) runs
    the program N times on the inputs already stored, applying the updates each time, and
    returns the last call's outputs.
    """

    def __init__(self, fgraph: FunctionGraph, mode: Mode, specs: list[In], output_specs: list[Out],
                 output_keys: list[Any] | None, single: bool, shared_inputs: list[SharedVariable],
                 updated: list[SharedVariable], name: str | None,
                 allow_input_downcast: bool | None, trust_input: bool,
                 profile: ProfileStats | None = None):
        self.name = name
        self.profile = profile
        self.maker = _Maker(fgraph, mode, specs, output_specs)
        self.trust_input = trust_input
        self._specs = specs
        self._n_explicit = len(specs)
        self._allow_downcast = [s.allow_downcast if s.allow_downcast is not None
                                else allow_input_downcast for s in specs]
        self._input_cells: list[list[Any]] = [[None] for _ in specs]
        # What an input may be to skip filter(): an ndarray of its dtype (so native byte
        # order) and ndim, for a Type without static lengths.
        self._exact_arrays = [
            (np.dtype(s.variable.type.dtype), s.variable.type.ndim)
            if isinstance(s.variable.type, TensorType)
            and all(length is None for length in s.variable.type.shape) else (None, -1)
            for s in specs]
        self._defaults = [s.variable.type.filter(s.value, allow_downcast=True)
                          if s.has_default else None for s in specs]
        self._names = {}
        for index, spec in enumerate(specs):
            if spec.name is not None and spec.name not in self._names:
                self._names[spec.name] = index
        shared_cells = [v.container.storage for v in shared_inputs]
        # The inputs some node overwrites, by position among explicit + shared inputs: their
        # value must not share memory with another input's (checked at each call).
        destroyed = set(fgraph.destroy_handler.destroyed_inputs()) \
            if getattr(fgraph, "destroy_handler", None) is not None else set()
        self._destroyed_positions = [position for position, variable
                                     in enumerate(fgraph.inputs) if variable in destroyed]
        self._shared_cells = shared_cells
        self._free_after_call = mode.allow_gc
        # The VM runs one call at a time; this lock also keeps fn()'s n calls together and a
        # call together with the free() that follows it.
        self._gc_lock = threading.RLock()
        self._output_keys = output_keys
        self._single = single
        self._n_outputs = len(output_specs)
        self._updated = [(target, shared_inputs.index(target)) for target in updated]
        cells = self._input_cells + shared_cells
        self._vm_wrappers = [wrap for wrap in (make(fgraph, profile is not None)
                                               for make in VM_WRAPPERS) if wrap is not None]
        # The C VM compiling on a background thread (a Future), while the calls run on the
        # Python backend; None once they run on the function's own backend.
        self._pending: Future | None = None
        if mode.compiles_in_background(profile is not None):
            built = mode.link_in_background(fgraph, cells)
            if isinstance(built, Future):
                self._pending = built
                built = mode.link(_interim_graph(fgraph, self._n_explicit), cells, backend="python")
            self._install(built)
        else:
            self._install(mode.link(fgraph, cells, profile=profile is not None))

    def _install(self, vm: Any) -> None:
        """Run the calls on `vm` (a backend's VM of fgraph, or of the interim graph, as the
        VM_WRAPPERS make it) from now on: what its cells are, which outputs need a copy, its
        updates."""
        for wrap in self._vm_wrappers:
            vm = wrap(vm, self._input_cells + self._shared_cells, self._n_explicit)
        self._vm = vm
        if self.profile is not None:
            self.profile.vm = vm
        # The C backend checks each input's dtype and ndim itself, also under trust_input.
        self._check_trusted = not isinstance(vm, CVM)
        fgraph, n_outputs = vm.fgraph, self._n_outputs
        self._output_cells = vm.output_storage[:n_outputs]
        update_cells = vm.output_storage[n_outputs:]
        update_variables = fgraph.outputs[n_outputs:]
        # A returned array must not be one the function keeps using: an input's value, a
        # constant, another output, or a shared variable's new value.
        self._copy_output = [_aliases_input(fgraph, v) or _repeated(fgraph.outputs, i)
                             or any(v is u for u in update_variables)
                             for i, v in enumerate(fgraph.outputs[:n_outputs])]
        # Cells of computed outputs are emptied so that the next call allocates a fresh array
        # instead of overwriting the one returned (the C backend: only where the caller still
        # holds it when the next call starts); input cells are never touched.
        self._clear_output = [not spec.borrow and variable.owner is not None
                              for spec, variable in zip(self.maker.outputs, fgraph.outputs)]
        targets = fgraph.inputs[self._n_explicit:]
        self._updates = [(target.container.storage, cell,
                          _aliases_input(fgraph, variable, targets[position]))
                         for (target, position), cell, variable in zip(
                             self._updated, update_cells, update_variables)]
        vm.set_updates(self._updates)
        vm.set_call(self._input_cells,
                    [(cell, copy_needed, clear) for cell, copy_needed, clear
                     in zip(self._output_cells, self._copy_output, self._clear_output)],
                    self._single)

    # -- the switch to compiled code --------------------------------------------------------
    def wait_compiled(self) -> None:
        """Wait until the C code compiling in the background (config.compile_async) is
        built, and run on it from the next call; the CompileError of a failed build is raised
        here (and by every call). Returns at once when nothing is compiling."""
        pending = self._pending
        if pending is not None:
            wait([pending])
            with self._gc_lock:
                self._switch_if_built()

    def _switch_if_built(self) -> None:
        """Between two calls (the caller holds self._gc_lock): install the C VM once its
        build is done; raise its build's error."""
        pending = self._pending
        if pending is None or not pending.done():
            return
        error = pending.exception()
        if error is not None:
            raise CompileError(f"{self._label()}: its C code, compiled in the background "
                               f"(config.compile_async), failed: {error}") from error
        self._install(pending.result())
        self._pending = None

    # -- calling ----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self.trust_input and not kwargs and len(args) == self._n_explicit):
            args = self._filter_inputs(args, kwargs)
            if self._destroyed_positions:
                args = self._unshare_destroyed(args)
        elif self._check_trusted:
            self._check_trusted_inputs(args)
        if self._pending is not None or self._free_after_call:
            # No other thread's call between this one and its free(), nor across a switch
            # from the interim VM (one call at a time while it runs).
            with self._gc_lock:
                self._switch_if_built()
                outputs = self._vm.call(args)
                if self._free_after_call:
                    self.free()
        else:
            outputs = self._vm.call(args)
        if self._output_keys is not None:
            return dict(zip(self._output_keys, outputs))
        return outputs

    def fn(self, n_calls: int = 1) -> list[Any]:
        """Run the program `n_calls` times on the stored inputs, applying updates after each
        run; returns the outputs of the last run (a list). An In(..., mutable=True) input
        that the program overwrites is not restored between runs."""
        if not isinstance(n_calls, int) or n_calls < 1:
            raise ValueError(f"fn: n_calls must be a positive int, got {n_calls!r}")
        values = []
        for index, cell in enumerate(self._input_cells):
            if cell[0] is not None:
                values.append(cell[0])
            elif self._specs[index].has_default:
                values.append(self._default(index))
            else:
                raise TypeError(f"{self._label()}.fn: input {self._input_label(index)} has "
                                f"no stored value; call the function once with it first")
        with self._gc_lock:
            self._switch_if_built()
            self._vm.run(n_calls - 1)
            outputs = self._vm.call(tuple(values))
            if self._free_after_call:
                self.free()
        return [outputs] if self._single else outputs

    def _check_trusted_inputs(self, args: tuple) -> None:
        """What trust_input still checks on the Python backend (the C backend checks the
        same in C): each tensor input is an ndarray of its dtype, in the machine's byte
        order, with its number of dimensions. Conversions, static lengths and aliasing are
        the caller's to get right."""
        for index, (value, spec) in enumerate(zip(args, self._specs)):
            kind = spec.variable.type
            if not isinstance(kind, TensorType):
                continue
            if not (type(value) is np.ndarray and value.dtype == kind.numpy_dtype
                    and value.ndim == kind.ndim):
                got = (f"an ndarray of dtype {value.dtype.str} and shape {value.shape}"
                       if isinstance(value, np.ndarray) else f"{type(value).__name__}")
                raise TypeError(f"{self._label()}: input {self._input_label(index)}: "
                                f"trust_input=True needs an ndarray of dtype {kind.dtype} "
                                f"(native byte order) with {kind.ndim} dimensions, got {got}")

    def _unshare_destroyed(self, args: tuple) -> tuple:
        """`args`, with a copy of each value that shares memory with a value some node
        overwrites (an explicit input is copied rather than a shared variable's storage)."""
        values = list(args) + [cell[0] for cell in self._shared_cells]
        n_explicit = self._n_explicit
        for destroyed in self._destroyed_positions:
            for other in range(len(values)):
                if other == destroyed or not isinstance(values[other], np.ndarray) \
                        or not np.may_share_memory(values[destroyed], values[other]):
                    continue
                if destroyed < n_explicit:
                    values[destroyed] = values[destroyed].copy()
                elif other < n_explicit:
                    values[other] = values[other].copy()
                else:
                    cell = self._shared_cells[destroyed - n_explicit]
                    cell[0] = values[destroyed] = cell[0].copy()
        return tuple(values[:n_explicit])

    def _filter_inputs(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and len(args) == self._n_explicit and all(
                type(value) is np.ndarray and value.dtype == dtype and value.ndim == ndim
                for value, (dtype, ndim) in zip(args, self._exact_arrays)):
            return args
        if len(args) > self._n_explicit:
            raise TypeError(f"{self._label()}: expected at most {self._n_explicit} "
                            f"argument{'s' * (self._n_explicit != 1)}, got {len(args)}")
        values: list[Any] = list(args) + [_MISSING] * (self._n_explicit - len(args))
        for key, value in kwargs.items():
            index = self._names.get(key)
            if index is None:
                known = ", ".join(repr(n) for n in self._names) or "none"
                raise TypeError(f"{self._label()}: unknown keyword argument {key!r} (input "
                                f"names: {known})")
            if values[index] is not _MISSING:
                raise TypeError(f"{self._label()}: input {key!r} is given twice")
            values[index] = value
        filtered = []
        for index, value in enumerate(values):
            spec = self._specs[index]
            if value is _MISSING:
                if not spec.has_default:
                    raise TypeError(f"{self._label()}: missing input {self._input_label(index)}")
                filtered.append(self._default(index))
                continue
            try:
                filtered.append(spec.variable.type.filter(
                    value, strict=spec.strict, allow_downcast=self._allow_downcast[index]))
            except TypeError as error:
                raise TypeError(f"{self._label()}: bad input {self._input_label(index)}: "
                                f"{error}") from None
        return tuple(filtered)

    def _default(self, index: int) -> Any:
        """Input `index`'s default value; a copy for a mutable input, which may overwrite it."""
        default = self._defaults[index]
        return copy.copy(default) if self._specs[index].mutable else default

    def copy(self, share_memory: bool = False, swap: dict | None = None,
             delete_updates: bool = False, name: str | None = None) -> Function:
        """A new function computing the same thing (Theano's Function.copy).

        swap: {shared variable: another shared variable of the same type} used instead,
        in the outputs and as update targets. delete_updates: the copy updates nothing.
        Shared variables not swapped are shared with this function; intermediate storage
        never is (share_memory is accepted for compatibility). As in Theano, the copy
        returns a list of outputs even where this function returns its one output bare
        (the tutorial's `new_accumulator(100)` is `[array(0)]`).
        """
        arguments = dict(self._arguments)
        if self._single:
            arguments["outputs"] = [arguments["outputs"]]
        swap = dict(swap or {})
        for old, new in swap.items():
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TypeError(f"copy: swap must map shared variables to shared variables, "
                                f"got {old!r}: {new!r}")
            if old.type != new.type:
                raise TypeError(f"copy: cannot swap {old} ({old.type}) for {new} ({new.type})")
        if delete_updates:
            arguments["no_default_updates"] = True
        arguments["updates"] = [] if delete_updates else [
            (swap.get(target, target), value) for target, value in arguments["updates"]]
        arguments["givens"] = list(arguments["givens"]) + list(swap.items())
        arguments["name"] = name if name is not None else self.name
        # Deleting updates may leave an input unused; the copy keeps the original signature.
        arguments["on_unused_input"] = "ignore"
        copied = function(**arguments)
        copied.trust_input = self.trust_input
        return copied

    # -- pickling ---------------------------------------------------------------------------
    def __reduce__(self):
        """Pickle (and copy.deepcopy) what the function was compiled from: its graphs,
        shared variables (with their values), mode and options. Loading compiles it again;
        the C backend then finds its modules in the disk cache (config.compiledir) and
        compiles C only for those missing."""
        arguments = dict(self._arguments, profile=bool(self._arguments["profile"]))
        return _rebuild_function, (arguments, self.trust_input)

    # -- introspection ----------------------------------------------------------------------
    def _label(self) -> str:
        return f"function {self.name!r}" if self.name else "function"

    def _input_label(self, index: int) -> str:
        spec = self._specs[index]
        text = f"{index}"
        if spec.name:
            text += f" ({spec.name!r})"
        return f"{text}, of type {spec.variable.type}, created at {spec.variable.creation_site()}"

    @property
    def inputs(self) -> list[In]:
        return list(self._specs)

    def free(self) -> None:
        """Drop every intermediate value (memory is reallocated on the next call)."""
        for variable, cell in self._vm.storage.items():
            if variable.owner is not None:
                cell[0] = None

    def __repr__(self):
        """<sympile.Function name(x, y) -> (cost, grad), 2 updates>, as PyTorch's and JAX's
        objects describe themselves: the inputs and outputs by name."""
        maker = self.maker
        inputs = ", ".join(_display_name(spec.variable) for spec in maker.inputs
                           [:self._n_explicit])
        outputs = [_display_name(spec.variable) for spec in maker.outputs]
        returned = outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})"
        updates = len(maker.fgraph.outputs) - len(maker.outputs)
        extra = f", {updates} update{'s' * (updates != 1)}" if updates else ""
        return f"<sympile.Function {self.name or 'function'}({inputs}) -> {returned}{extra}>"


def _rebuild_function(arguments: dict[str, Any], trust_input: bool) -> Function:
    rebuilt = function(**arguments)
    rebuilt.trust_input = trust_input
    return rebuilt


class _ProfiledFunction(Function):
    """A Function that also counts its calls and their time in `self.profile`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self.profile.calls += 1
            self.profile.call_s += time.perf_counter() - start

    def fn(self, n_calls: int = 1) -> list[Any]:
        start = time.perf_counter()
        try:
            return super().fn(n_calls)
        finally:
            self.profile.calls += n_calls
            self.profile.call_s += time.perf_counter() - start


_MISSING = object()


def _aliases_input(fgraph: FunctionGraph, variable: Variable,
                   updated: Variable | None = None) -> bool:
    """True if `variable`'s value may be (a view of) an input's or a constant's value, so
    handing it out or storing it in a shared variable needs a copy. An output may view
    several inputs (an ifelse output is its then or its else value): each is followed.
    The new value of the shared variable `updated` may be its old memory overwritten in
    place (reached through destroy_map, or ops whose output is their input itself): storing
    it there needs no copy."""
    pending, seen = [(variable, False)], {variable}
    while pending:
        variable, through_view = pending.pop()
        if variable.owner is None:
            if variable is updated and not through_view:
                continue
            return True
        op = variable.owner.op
        viewed = op.view_map.get(variable.index)
        sources = viewed or op.destroy_map.get(variable.index) or ()
        # The whole input, unchanged (LengthsAgree): no more a view than the input itself.
        viewed = viewed and not op.is_identity_view
        for source in sources:
            source_variable = variable.owner.inputs[source]
            if source_variable not in seen:
                seen.add(source_variable)
                pending.append((source_variable, through_view or bool(viewed)))
    return False


def _repeated(outputs: list[Variable], index: int) -> bool:
    return any(outputs[index] is other for other in outputs[:index])


class _Evaluable:
    """Variable.eval(), bound onto graph Variables when compile is imported: the graph
    layer sits below compile, so it cannot define a method that compiles."""

    def eval(self, inputs_to_values: dict | None = None):
        """Compile and run this variable on the given {input variable: value} (a test aid,
        as Theano's; compiled functions are cached per set of inputs)."""
        inputs_to_values = dict(inputs_to_values or {})
        inputs = list(inputs_to_values)
        cache = self.__dict__.setdefault("_eval_cache", {})
        key = tuple(id(v) for v in inputs)
        if key not in cache:
            cache[key] = function(inputs, self, on_unused_input="ignore")
        return cache[key](*[inputs_to_values[v] for v in inputs])


bind_methods(Variable, _Evaluable)
