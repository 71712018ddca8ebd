"""Op: the contract every operation implements, all in one class (see DESIGN.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sympile.graph.basic import Apply, Variable
from sympile.graph.utils import MethodNotDefined


class Op:
    """An operation. Immutable; equal and hashed by the values named in `__props__`.

    make_node(*inputs) -> Apply            check and convert inputs, build output Types
    perform(node, inputs, output_storage)  numpy implementation; writes output_storage[i][0]
    infer_shape(fgraph, node, input_shapes) -> list of output shapes (tuples of scalars)
    L_op(inputs, outputs, output_grads)    reverse mode
    R_op(inputs, eval_points)              forward mode
    c_code(node, names)                    C implementation, or None to call perform()
    destroy_map / view_map                 {output index: [input index]} for inplace and views
    """

    __props__: tuple[str, ...] = ()
    default_output: int | None = None
    destroy_map: dict[int, list[int]] = {}
    view_map: dict[int, list[int]] = {}

    def _props(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__props__)

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self) -> int:
        return hash((type(self), self._props()))

    def __str__(self) -> str:
        if self.__props__:
            args = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__props__)
            return f"{type(self).__name__}{{{args}}}"
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)

    def make_node(self, *inputs: Any) -> Apply:
        raise MethodNotDefined(f"{type(self).__name__}.make_node")

    def __call__(self, *inputs: Any, name: str | None = None) -> Variable | list[Variable]:
        node = self.make_node(*inputs)
        if name is not None and len(node.outputs) == 1:
            node.outputs[0].name = name
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return node.outputs

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        raise MethodNotDefined(f"{type(self).__name__}.perform")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[tuple]) -> list[tuple]:
        raise MethodNotDefined(f"{type(self).__name__}.infer_shape")

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable],
             output_grads: Sequence[Variable]) -> list[Variable]:
        raise MethodNotDefined(f"{type(self).__name__}.L_op")

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list[Variable]:
        raise MethodNotDefined(f"{type(self).__name__}.R_op")

    def c_code(self, node: Apply, names: Any) -> Any:
        """How the C backend computes this node; None: the backend calls perform()."""
        return None

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Whether the constant-folding rewrite may precompute this node."""
        return True
