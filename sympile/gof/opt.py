"""Theano's `theano.gof.opt`: writing rewrites the Theano way, over sympile's rewrite engine
(sympile.graph.rewriting).

    @local_optimizer([T.exp])           # Theano's form: the function takes the node
    def local_exp_log(node): ...

    class MyRewrite(LocalOptimizer):    # transform(node) as Theano's, or (fgraph, node)
        def tracks(self): return [T.exp]
        def transform(self, node): ...

A transform returns, as in Theano, a list of replacements (one per output), a dict
{old: new}, or False/None to leave the node alone. TopoOptimizer / in2out / out2in walk
the graph once, EquilibriumOptimizer until nothing changes, PatternSub, OpSub and OpRemove
rewrite by pattern and by op; check_stack_trace tells whether the nodes a rewrite made still
say where the user built them. Theano's options that change how the walk treats new nodes or
failures (ignore_newtrees, failure_callback, final and cleanup optimizers) are not
supported: passing one raises NotImplementedError rather than being ignored.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sympile.compile.function import Function
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.op import Op
from sympile.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
)
from sympile.graph.rewriting.destroyhandler import destroy_handler_of
from sympile.graph.rewriting.pattern import PatternNodeRewriter
from sympile.graph.utils import positional_parameter_count
from sympile.tensor.constant_value import NotScalarConstantError, get_scalar_constant_value

__all__ = ["EquilibriumOptimizer", "FromFunctionLocalOptimizer", "GlobalOptimizer",
           "LocalOptimizer", "OpRemove", "OpSub", "Optimizer", "PatternSub", "SeqOptimizer",
           "TopoOptimizer", "check_stack_trace", "in2out", "local_optimizer", "out2in"]


def _takes_fgraph(function: Callable, bound_self: bool) -> bool:
    """True for PyTensor's transform(fgraph, node), False for Theano's transform(node)."""
    return positional_parameter_count(function) - bound_self >= 2


def _unsupported(owner: str, **options: Any) -> None:
    for name, value in options.items():
        if value:
            raise NotImplementedError(f"{owner}: {name}={value!r} is not supported by sympile's "
                                      f"rewrite engine (docs/guide/porting.md)")


class LocalOptimizer(NodeRewriter):
    """Theano's base of node rewriters: define tracks() and transform(node) (Theano) or
    transform(fgraph, node) (PyTensor); add_requirements(fgraph) runs once per graph before
    the first transform on it."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        transform = cls.__dict__.get("transform")
        if transform is None or getattr(transform, "_adapted", False):
            return
        takes_fgraph = _takes_fgraph(transform, bound_self=True)

        def adapted(self, *arguments):
            # The engine calls transform(fgraph, node); Theano's code calls transform(node).
            fgraph, node = arguments if len(arguments) == 2 else (None, *arguments)
            if fgraph is not None:
                self._prepare(fgraph)
            return transform(self, fgraph, node) if takes_fgraph else transform(self, node)

        adapted._adapted = True
        adapted.__doc__ = transform.__doc__
        cls.transform = adapted

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features the transform needs (Theano's hook); nothing by default."""

    def _prepare(self, fgraph: FunctionGraph) -> None:
        prepared = self.__dict__.setdefault("_prepared", weakref.WeakSet())
        if fgraph not in prepared:
            self.add_requirements(fgraph)
            prepared.add(fgraph)


class FromFunctionLocalOptimizer(LocalOptimizer):
    """A LocalOptimizer made of a function of the node (Theano) or of (fgraph, node)."""

    def __init__(self, function: Callable, tracks: Sequence[Any] | None,
                 requirements: Sequence[Callable[[FunctionGraph], Any]] = ()):
        self.function = function
        self._tracks = None if tracks is None else list(tracks)
        self.requirements = tuple(requirements)
        self._takes_fgraph = _takes_fgraph(function, bound_self=False)
        self.name = getattr(function, "__name__", type(self).__name__)
        self.__doc__ = function.__doc__

    def tracks(self):
        return self._tracks

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for requirement in self.requirements:
            requirement(fgraph)

    def transform(self, fgraph, node):
        return self.function(fgraph, node) if self._takes_fgraph else self.function(node)

    def __call__(self, *arguments):
        return self.transform(*arguments)


def local_optimizer(tracks: Sequence[Any] | None, inplace: bool = False,
                    requirements: Sequence[Callable[[FunctionGraph], Any]] = ()):
    """Theano's decorator: `@local_optimizer([op_or_op_class, ...])` on a function of the node.
    inplace=True makes sure the graph has a DestroyHandler (which vets inplace results);
    `requirements` are called with each graph before the first transform on it."""
    requirements = tuple(requirements) + ((destroy_handler_of,) if inplace else ())

    def decorate(function: Callable) -> FromFunctionLocalOptimizer:
        return FromFunctionLocalOptimizer(function, tracks, requirements)

    return decorate


class Optimizer(GraphRewriter):
    """Theano's graph optimizer: define apply(fgraph); optimize(fgraph), or calling it, adds
    its requirements then applies it."""

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features apply needs (Theano's hook); nothing by default."""

    def optimize(self, fgraph: FunctionGraph) -> bool:
        self.add_requirements(fgraph)
        return self.apply(fgraph)

    def __call__(self, fgraph: FunctionGraph) -> bool:
        return self.optimize(fgraph)


GlobalOptimizer = Optimizer


class TopoOptimizer(WalkingGraphRewriter):
    """Theano's TopoOptimizer: one walk applying `local_opt` (one or a list), in order
    'in_to_out' or 'out_to_in'."""

    def __init__(self, local_opt: NodeRewriter | Iterable[NodeRewriter],
                 order: str = "in_to_out", ignore_newtrees: bool = False,
                 failure_callback: Callable | None = None, name: str | None = None):
        _unsupported("TopoOptimizer", ignore_newtrees=ignore_newtrees,
                     failure_callback=failure_callback)
        super().__init__(local_opt, order, name=name)


def in2out(*local_opts: NodeRewriter, name: str | None = None,
           ignore_newtrees: bool = False, failure_callback: Callable | None = None
           ) -> TopoOptimizer:
    """Theano's in2out: a TopoOptimizer from the inputs to the outputs."""
    return TopoOptimizer(list(local_opts), "in_to_out", ignore_newtrees, failure_callback,
                         name)


def out2in(*local_opts: NodeRewriter, name: str | None = None,
           ignore_newtrees: bool = False, failure_callback: Callable | None = None
           ) -> TopoOptimizer:
    """Theano's out2in: a TopoOptimizer from the outputs to the inputs."""
    return TopoOptimizer(list(local_opts), "out_to_in", ignore_newtrees, failure_callback,
                         name)


class EquilibriumOptimizer(EquilibriumGraphRewriter):
    """Theano's EquilibriumOptimizer: applies local and global optimizers until none changes
    the graph; max_use_ratio bounds the changes per optimizer (x the number of nodes)."""

    def __init__(self, optimizers: Iterable[Any], failure_callback: Callable | None = None,
                 ignore_newtrees: bool = True, tracks_on_change_inputs: bool = False,
                 max_use_ratio: float | None = None, final_optimizers: Any = None,
                 cleanup_optimizers: Any = None, name: str | None = None):
        _unsupported("EquilibriumOptimizer", failure_callback=failure_callback,
                     tracks_on_change_inputs=tracks_on_change_inputs,
                     final_optimizers=final_optimizers, cleanup_optimizers=cleanup_optimizers)
        # ignore_newtrees only orders the visits: the equilibrium reached is the same.
        super().__init__(optimizers, 10.0 if max_use_ratio is None else max_use_ratio, name)


class SeqOptimizer(SequentialGraphRewriter):
    """Theano's SeqOptimizer: its graph optimizers once each, in order (given as arguments
    or as one list)."""

    def __init__(self, *optimizers: Any, name: str | None = None):
        if len(optimizers) == 1 and isinstance(optimizers[0], (list, tuple)):
            optimizers = tuple(optimizers[0])
        super().__init__(optimizers, name)


class PatternSub(PatternNodeRewriter):
    """Theano's PatternSub(in_pattern, out_pattern): patterns are tuples (op, sub-patterns or
    names...), with dicts {'pattern': ..., 'constraint': function} constraining one; a
    Python number in the input pattern matches a constant of that value."""

    def __init__(self, in_pattern: Any, out_pattern: Any, allow_multiple_clients: bool = False,
                 skip_identities_fn: Callable | None = None, name: str | None = None,
                 pdb: bool = False, tracks: Sequence[Any] = (), get_nodes: Any = None,
                 values_eq_approx: Any = None):
        _unsupported("PatternSub", skip_identities_fn=skip_identities_fn, pdb=pdb,
                     tracks=tuple(tracks), get_nodes=get_nodes,
                     values_eq_approx=values_eq_approx)
        numbers = iter(range(1 << 30))
        super().__init__(_with_number_constraints(in_pattern, numbers), out_pattern,
                         name=name, allow_multiple_clients=allow_multiple_clients)


def _with_number_constraints(pattern: Any, numbers: Any) -> Any:
    """`pattern` with each Python number (which Theano matches against a constant of that
    value, whatever its dtype or broadcast dimensions) as a constrained pattern variable."""
    if isinstance(pattern, bool) or not isinstance(pattern, (int, float, tuple, list, dict)):
        return pattern
    if isinstance(pattern, (int, float)):
        value = pattern

        def is_that_constant(variable: Any) -> bool:
            try:
                return bool(get_scalar_constant_value(variable) == value)
            except NotScalarConstantError:
                return False

        return {"pattern": f"_number_{next(numbers)}", "constraint": is_that_constant}
    if isinstance(pattern, dict):
        return {**pattern, "pattern": _with_number_constraints(pattern["pattern"], numbers)}
    converted = [_with_number_constraints(entry, numbers) for entry in pattern]
    return type(pattern)(converted)


class OpSub(LocalOptimizer):
    """Theano's OpSub(op1, op2): every node of op1 becomes op2 applied to the same inputs."""

    def __init__(self, op1: Any, op2: Any, transfer_tags: bool = True):
        self.op1, self.op2 = op1, op2
        self.transfer_tags = transfer_tags
        self.name = f"{op1} -> {op2}"

    def tracks(self):
        return [self.op1]

    def transform(self, node):
        if node.op != self.op1:
            return False
        replacement = self.op2.make_node(*node.inputs)
        if self.transfer_tags:
            for old, new in zip(node.outputs, replacement.outputs):
                new.tag.__dict__.update(old.tag.__dict__)
        return replacement.outputs


class OpRemove(LocalOptimizer):
    """Theano's OpRemove(op): every node of op (one input, one output) becomes its input,
    as libraries remove their gradient-only ops (a ViewOp subclass) once grad has run."""

    def __init__(self, op: Any):
        self.op = op
        self.name = f"remove {op}"

    def tracks(self):
        return [self.op]

    def transform(self, node):
        if node.op != self.op:
            return False
        return [node.inputs[0]]


def check_stack_trace(f_or_fgraph: Any, ops_to_check: Any = "last",
                      bug_print: str = "raise") -> bool:
    """Theano's check_stack_trace: True when every output of the nodes `ops_to_check`
    selects in a compiled function's graph (or a FunctionGraph) says where the user built it
    (tag.trace, which rewrites carry over to the variables they put in place), else False.

    ops_to_check: 'last' (the nodes computing the graph's outputs), 'all', an Op class or
    instance, a tuple or list of them (a class also selects Elemwise nodes of that scalar
    op), or a function of a node returning whether to check it. bug_print: what to do when
    it selects no node: 'raise' (an exception), 'warn' or 'ignore'."""
    if isinstance(f_or_fgraph, Function):
        fgraph = f_or_fgraph.maker.fgraph
    elif isinstance(f_or_fgraph, FunctionGraph):
        fgraph = f_or_fgraph
    else:
        raise ValueError(f"check_stack_trace: f_or_fgraph must be a compiled function or a "
                         f"FunctionGraph, got {type(f_or_fgraph).__name__}")
    if bug_print not in ("raise", "warn", "ignore"):
        raise ValueError(f"check_stack_trace: bug_print must be 'raise', 'warn' or "
                         f"'ignore', got {bug_print!r}")
    if isinstance(ops_to_check, Op) or (isinstance(ops_to_check, type)
                                        and issubclass(ops_to_check, Op)):
        ops_to_check = (ops_to_check,)
    if isinstance(ops_to_check, str):
        if ops_to_check == "last":
            nodes = [output.owner for output in fgraph.outputs if output.owner is not None]
        elif ops_to_check == "all":
            nodes = list(fgraph.apply_nodes)
        else:
            raise ValueError(f"check_stack_trace: ops_to_check as a string must be 'last' "
                             f"or 'all', got {ops_to_check!r}")
    elif isinstance(ops_to_check, (tuple, list)):
        instances = [item for item in ops_to_check if isinstance(item, Op)]
        classes = tuple(item for item in ops_to_check if not isinstance(item, Op))
        nodes = [node for node in fgraph.apply_nodes
                 if node.op in instances or isinstance(node.op, classes)
                 or isinstance(getattr(node.op, "scalar_op", None), classes)]
    elif callable(ops_to_check):
        nodes = [node for node in fgraph.apply_nodes if ops_to_check(node)]
    else:
        raise ValueError(f"check_stack_trace: ops_to_check must be 'last', 'all', ops, op "
                         f"classes or a function of a node, got {ops_to_check!r}")
    if not nodes:
        message = ("check_stack_trace: the ops to check are not in the graph, or the graph "
                   "is empty")
        if bug_print == "raise":
            raise ValueError(message)
        if bug_print == "warn":
            warnings.warn(message, stacklevel=2)
    return all(getattr(output.tag, "trace", None) for node in nodes for output in node.outputs)
