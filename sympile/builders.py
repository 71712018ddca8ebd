"""OpFromGraph: a graph packaged as one Op (Theano's theano.OpFromGraph, from
theano.compile.builders).

    x, y = T.dmatrices("x", "y")
    affine = OpFromGraph([x, y], [T.dot(x, y) + 1])
    z = affine(a, b) * 2          # one node; its inner graph runs as a compiled function

The inner graph is copied when the op is made, so later changes to the variables given do
not reach it. Shared variables the outputs use become implicit inputs of every node (as in
Theano), so the function that uses the op reads their current values. With inline=True the
node is replaced by its inner graph when a function is compiled (rewrite
local_inline_op_from_graph), so the rewrites see through it and the C backend compiles it;
otherwise the node runs its inner graph as a function compiled with the outer function's
rewrites and backend.

Derivatives come from the inner graph (grad and Rop on it, on the node's inputs), unless
lop_overrides (or Theano's older grad_overrides) / rop_overrides give them:
lop_overrides(inputs, outputs, output_grads) and grad_overrides(inputs, output_grads) return
one gradient per input; rop_overrides(inputs, eval_points) one tangent per output.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from sympile.compile import Mode, Out
from sympile.compile import function as compile_function
from sympile.gradient import Rop, grad
from sympile.graph.basic import Apply, Constant, Variable, clone_replace, graph_inputs
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.graph.rewriting.basic import node_rewriter
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.sharedvar import SharedVariable
from sympile.tensor.type import TensorType, is_discrete
from sympile.tensor.variable import as_tensor_variable

__all__ = ["OpFromGraph", "local_inline_op_from_graph"]


class OpFromGraph(Op):
    """An Op computing `outputs` from `inputs` (ownerless, non-constant variables)."""

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable] | Variable,
                 inline: bool = False, grad_overrides: Callable | None = None,
                 lop_overrides: Callable | None = None,
                 rop_overrides: Callable | None = None, name: str | None = None):
        inputs = list(inputs)
        outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
        for index, variable in enumerate(inputs):
            if not isinstance(variable, Variable) or variable.owner is not None \
                    or isinstance(variable, (Constant, SharedVariable)):
                raise TypeError(f"OpFromGraph: inputs[{index}] must be a symbolic input "
                                f"variable (no owner, not a constant or shared variable), got "
                                f"{variable!r}")
        if not outputs or not all(isinstance(v, Variable) for v in outputs):
            raise TypeError(f"OpFromGraph: outputs must be one or more Variables, got "
                            f"{outputs!r}")
        if grad_overrides is not None and lop_overrides is not None:
            raise ValueError("OpFromGraph: give grad_overrides or lop_overrides, not both")
        given = {id(v) for v in inputs}
        missing = [v for v in graph_inputs(outputs) if id(v) not in given
                   and not isinstance(v, (Constant, SharedVariable))]
        if missing:
            raise ValueError(f"OpFromGraph: the outputs depend on {missing[0]} (created at "
                             f"{missing[0].creation_site()}), which is not among the inputs")
        self.shared_inputs = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
        # The op's own copy: inner inputs stand for the explicit and the shared inputs.
        self.inner_inputs = [v.type() for v in inputs + self.shared_inputs]
        self.inner_outputs = clone_replace(outputs, dict(zip(inputs + self.shared_inputs,
                                                             self.inner_inputs)))
        self.n_explicit = len(inputs)
        self.inline = bool(inline)
        self.lop_overrides = lop_overrides
        self.grad_overrides = grad_overrides
        self.rop_overrides = rop_overrides
        self.name = name
        self._functions: dict[Any, Any] = {}
        self._node_modes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    # Each OpFromGraph is its own op: two with equal inner graphs are still not merged.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __str__(self) -> str:
        return self.name or f"OpFromGraph{{inline={self.inline}}}"

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_functions"], state["_node_modes"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._functions = {}
        self._node_modes = weakref.WeakKeyDictionary()

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != self.n_explicit:
            raise TypeError(f"{self}: expected {self.n_explicit} inputs, got {len(inputs)}")
        converted = []
        for index, (value, inner) in enumerate(zip(inputs, self.inner_inputs)):
            variable = as_tensor_variable(value, op=self, argument=f"input {index}") \
                if isinstance(inner.type, TensorType) else value
            fitted = inner.type.convert_variable(variable)
            if fitted is None:
                raise TypeError(f"{self}: input {index} is {variable} of type {variable.type}, "
                                f"expected {inner.type}")
            converted.append(fitted)
        return Apply(self, converted + self.shared_inputs,
                     [output.type() for output in self.inner_outputs])

    # -- running ------------------------------------------------------------------------------
    def prepare_node(self, node: Apply, mode: Any, backend: str) -> None:
        """Called by Mode.link: run the inner graph with the outer function's rewrites and
        backend."""
        self._node_modes[node] = (mode.rewriter, backend)

    def perform(self, node, inputs, output_storage):
        key = self._node_modes.get(node)
        function = self._functions.get(key)
        if function is None:
            mode = None if key is None else Mode(key[0], backend=key[1])
            function = compile_function(self.inner_inputs,
                                        [Out(output, borrow=False)
                                         for output in self.inner_outputs],
                                        mode=mode, on_unused_input="ignore")
            self._functions[key] = function
        for cell, value in zip(output_storage, function(*inputs)):
            cell[0] = value

    def _inlined(self, inputs: Sequence[Variable]) -> list[Variable]:
        """The inner outputs computed from the node inputs `inputs`."""
        return clone_replace(self.inner_outputs, dict(zip(self.inner_inputs, inputs)))

    # -- derivatives --------------------------------------------------------------------------
    def L_op(self, inputs, outputs, output_grads):
        explicit = list(inputs[:self.n_explicit])
        grads = [None if is_disconnected(g) else g for g in output_grads]
        if self.lop_overrides is not None or self.grad_overrides is not None:
            filled = [g if g is not None else output.zeros_like()
                      for g, output in zip(grads, outputs)]
            result = self.lop_overrides(explicit, list(outputs), filled) \
                if self.lop_overrides is not None else self.grad_overrides(explicit, filled)
            result = list(result)
            if len(result) != self.n_explicit:
                raise ValueError(f"{self}: the gradient override returned {len(result)} "
                                 f"gradients for {self.n_explicit} inputs")
            return result + [disconnected_type() for _ in self.shared_inputs]
        # Differentiated towards the inner inputs, which are distinct even where the node
        # reads one variable twice, then put on the node's inputs.
        known = {output: g for output, g in zip(self.inner_outputs, grads) if g is not None}
        if not known:
            return [disconnected_type() for _ in inputs]
        result = grad(None, self.inner_inputs, known_grads=known, disconnected_inputs="ignore",
                      return_disconnected="disconnected", add_names=False)
        substitution = dict(zip(self.inner_inputs, inputs))
        return [disconnected_type() if is_disconnected(g) or is_discrete(v)
                else clone_replace(g, substitution) for v, g in zip(inputs, result)]

    def R_op(self, inputs, eval_points):
        if self.rop_overrides is not None:
            result = list(self.rop_overrides(list(inputs[:self.n_explicit]),
                                             list(eval_points[:self.n_explicit])))
            if len(result) != len(self.inner_outputs):
                raise ValueError(f"{self}: rop_overrides returned {len(result)} tangents for "
                                 f"{len(self.inner_outputs)} outputs")
            return result
        pairs = [(inner, point) for inner, point in zip(self.inner_inputs, eval_points)
                 if point is not None]
        if not pairs:
            return [None] * len(self.inner_outputs)
        tangents = Rop(self.inner_outputs, [inner for inner, _ in pairs],
                       [point for _, point in pairs], disconnected_outputs="ignore",
                       return_disconnected="none")
        substitution = dict(zip(self.inner_inputs, inputs))
        return [None if t is None else clone_replace(t, substitution) for t in tangents]


@node_rewriter([OpFromGraph])
def local_inline_op_from_graph(fgraph, node):
    """OpFromGraph(inline=True)(inputs) -> its inner graph on `inputs`."""
    if not node.op.inline:
        return None
    return node.op._inlined(node.inputs)


rewrite_db.register(local_inline_op_from_graph.name, local_inline_op_from_graph,
                    "fast_compile", "fast_run", "inline", phase="inline")
