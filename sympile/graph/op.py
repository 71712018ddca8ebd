"""Op: the contract every operation implements, all in one class (see docs/architecture.md,
The Op contract)."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from sympile.config import config
from sympile.graph.basic import Apply, Variable, io_toposort
from sympile.graph.utils import (
    MethodNotDefined,
    positional_parameter_count,
    user_creation_site,
    user_stacklevel,
)

# The op classes with Theano's c_code already warned about.
_THEANO_C_WARNED: set[type] = set()

# ((input index, axis), (input index, axis)): two lengths that must be equal.
LengthPair = tuple[tuple[int, int], tuple[int, int]]


class Op:
    """An operation. Immutable; equal and hashed by its class and the values of the attributes
    named in `__props__` (an Op without props equals every instance of its class)::

      make_node(*inputs) -> Apply            check and convert inputs, build output Types
      perform(node, inputs, output_storage)  numpy implementation; writes output_storage[i][0]
      infer_shape(fgraph, node, input_shapes) -> list of output shapes (tuples of scalars)
      L_op(inputs, outputs, output_grads)    reverse mode
      R_op(inputs, eval_points)              forward mode
      c_code(node, names)                    C implementation, or None to call perform()
      destroy_map / view_map                 {output index: [input index]} for inplace and views
      default_output                         the output index that calling the op returns

    Theano's forms of the contract work too: grad(inputs, output_grads) serves as L_op where
    L_op is not defined, and infer_shape(node, input_shapes) without the fgraph. Theano's
    c_code(node, name, inputs, outputs, sub) is not compiled: the op runs perform(), with
    one warning.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        infer_shape = cls.__dict__.get("infer_shape")
        if infer_shape is not None and positional_parameter_count(infer_shape) == 3:
            # Theano's infer_shape(self, node, input_shapes).
            def with_fgraph(self, fgraph, node, input_shapes, _theano=infer_shape):
                return _theano(self, node, input_shapes)

            with_fgraph.__doc__ = infer_shape.__doc__
            cls.infer_shape = with_fgraph
        c_code = cls.__dict__.get("c_code")
        if c_code is not None and positional_parameter_count(c_code) == 6:
            # Theano's c_code(self, node, name, inputs, outputs, sub): another C contract.
            def runs_perform(self, node, names, _class=cls):
                if _class not in _THEANO_C_WARNED:
                    _THEANO_C_WARNED.add(_class)
                    warnings.warn(f"{_class.__name__} defines Theano's c_code(node, name, "
                                  f"inputs, outputs, sub), which sympile does not compile: "
                                  f"it runs its perform() (docs/guide/porting.md)",
                                  stacklevel=user_stacklevel())
                return None

            cls.c_code = runs_perform

    __props__: tuple[str, ...] = ()
    default_output: int | None = None
    # Read-only empty defaults: an op that has a map sets its own (usually in __init__).
    destroy_map: Mapping[int, Sequence[int]] = MappingProxyType({})
    view_map: Mapping[int, Sequence[int]] = MappingProxyType({})
    # A random draw: the merge rewrite never makes two equal draws one.
    is_random: bool = False
    # Output 0 is input 0 itself, whole (a run-time check, or only its type changes): no more
    # a view than the input is (what is known of the input's layout and aliasing holds).
    is_identity_view: bool = False
    # Where a function runs the node among the nodes it could run next (FunctionGraph.toposort):
    # -1 as soon as its inputs are computed (a collective's start), 1 only when nothing else
    # can run (its wait, so that the work between overlaps the collective), 0 in order.
    schedule: int = 0

    def _props(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__props__)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(self) is type(other) and self._props() == other._props())

    def __hash__(self) -> int:
        props = self._props()
        try:
            return hash((type(self), props))
        except TypeError:
            unhashable = [name for name, value in zip(self.__props__, props)
                          if not _is_hashable(value)]
            raise TypeError(f"{type(self).__name__}: the props {unhashable} are unhashable; "
                            f"store them as tuples or other immutable values") from None

    def __str__(self) -> str:
        if self.__props__:
            args = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__props__)
            return f"{type(self).__name__}{{{args}}}"
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)

    def make_node(self, *inputs: Any) -> Apply:
        raise MethodNotDefined(f"{type(self).__name__}.make_node")

    def __call__(self, *inputs: Any, name: str | None = None,
                 return_list: bool = False) -> Variable | list[Variable]:
        """Apply the op to `inputs`: the single output, the `default_output`, or the list of
        outputs (always the list with return_list=True, Theano's flag). `name` names the
        returned output (each output name_0, name_1, ... when a list is returned)."""
        node = self.make_node(*inputs)
        if not isinstance(node, Apply):
            raise TypeError(f"{type(self).__name__}.make_node returned {node!r}, expected an "
                            f"Apply node")
        # make_node ran inside the op's own code: point the outputs at the caller's line.
        trace = user_creation_site()
        for output in node.outputs:
            output.tag.trace = trace
        if config.compute_test_value != "off":
            _compute_test_values(node, trace)
        if self.default_output is not None and not return_list:
            if not 0 <= self.default_output < len(node.outputs):
                raise ValueError(f"{type(self).__name__}: default_output {self.default_output}"
                                 f" is not an output index (the node has "
                                 f"{len(node.outputs)} outputs)")
            result = node.outputs[self.default_output]
        elif len(node.outputs) == 1 and not return_list:
            result = node.outputs[0]
        else:
            if name is not None:
                for index, output in enumerate(node.outputs):
                    output.name = f"{name}_{index}"
            return list(node.outputs)
        if name is not None:
            result.name = name
        return result

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        raise MethodNotDefined(f"{type(self).__name__}.perform")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[tuple]) -> list[tuple]:
        raise MethodNotDefined(f"{type(self).__name__}.infer_shape")

    def length_constraints(self, node: Apply) -> list[LengthPair] | None:
        """When the only ways this node can fail are lengths that disagree: those lengths, as
        pairs ((input, axis), (input, axis)) that must be equal. None (the default) when it
        may also fail on values (an index out of bounds) or nobody has said. compile checks
        them before a call overwrites any shared variable (compile/updates.py)."""
        return None

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable],
             output_grads: Sequence[Variable]) -> list[Variable]:
        grad = getattr(self, "grad", None)
        if grad is None:
            raise MethodNotDefined(f"{type(self).__name__}.L_op")
        # Theano's custom ops define grad(inputs, output_grads) instead.
        return grad(list(inputs), list(output_grads))

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list[Variable]:
        raise MethodNotDefined(f"{type(self).__name__}.R_op")

    def c_code(self, node: Apply, names: Any) -> Any:
        """How the C backend computes this node; None: the backend calls perform()."""
        return None

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Whether the constant-folding rewrite may precompute this node."""
        return True


def _is_hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


_NO_TEST_VALUE = object()


def test_value_of(variable: Any) -> Any:
    """The value Theano's test values give `variable`: its tag.test_value, a constant's data
    or a shared variable's current value; a marker object when it has none."""
    value = getattr(variable.tag, "test_value", _NO_TEST_VALUE)
    if value is not _NO_TEST_VALUE:
        return value
    if hasattr(variable, "data"):
        return variable.data
    if callable(getattr(variable, "get_value", None)):
        return variable.get_value(borrow=True)
    return _NO_TEST_VALUE


def _compute_test_values(node: Apply, trace: str) -> None:
    """config.compute_test_value: run `node` on its inputs' test values, so that an error is
    raised where the graph is built; store the results as the outputs' tag.test_value."""
    values = [test_value_of(variable) for variable in node.inputs]
    # Inputs built by make_node (not by calling an op) get theirs from their own inputs'.
    lacking = [v for v, value in zip(node.inputs, values)
               if value is _NO_TEST_VALUE and v.owner is not None]
    if lacking:
        fill_test_values(lacking)
        values = [test_value_of(variable) for variable in node.inputs]
    missing = [variable for variable, value in zip(node.inputs, values)
               if value is _NO_TEST_VALUE]
    if missing:
        mode = config.compute_test_value
        message = (f"{node.op}: input {missing[0]} has no test value (set its "
                   f"tag.test_value, or config.compute_test_value = 'off')")
        if mode == "raise":
            raise ValueError(message)
        if mode == "warn":
            warnings.warn(message, stacklevel=3)
        return
    # Copies: an op that overwrites an input must not change a test value.
    values = [copy.deepcopy(value) for value in values]
    storage = [[None] for _ in node.outputs]
    try:
        node.op.perform(node, values, storage)
    except Exception as error:
        raise type(error)(f"{error}\n  computing the test value of {node.op}, built at "
                          f"{trace}") from error
    for output, cell in zip(node.outputs, storage):
        output.tag.test_value = cell[0]


def fill_test_values(variables: Sequence[Any]) -> None:
    """Compute the missing test values of `variables` and what they are computed from, for
    graphs built with config.compute_test_value off around internal placeholders (scan's
    derivatives): every node whose inputs all have test values gets them."""
    roots = [v for v in variables if isinstance(v, Variable)]
    if config.compute_test_value == "off" or not roots:
        return
    for node in io_toposort([], roots):
        if all(hasattr(output.tag, "test_value") for output in node.outputs):
            continue
        if all(test_value_of(variable) is not _NO_TEST_VALUE for variable in node.inputs):
            _compute_test_values(node, getattr(node.outputs[0].tag, "trace", "unknown"))
