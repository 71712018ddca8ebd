"""Run-time assertions (Theano's `T.opt.Assert` and `assert_op`, PyTensor's `raise_op`): a
value, passed on unchanged once every condition holds."""

from __future__ import annotations

from typing import Any

from sympile.graph.basic import Apply
from sympile.graph.gradient_types import disconnected_type
from sympile.graph.op import Op
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Assert", "assert_op"]


class Assert(Op):
    """Assert(msg)(value, *conditions): `value` itself (a view) when every condition (a
    scalar) is nonzero at run time; otherwise an AssertionError with `msg`, naming the node
    and where the value was created. Its gradient and tangent are the value's."""

    __props__ = ("msg",)
    view_map = {0: [0]}

    def __init__(self, msg: str = "Theano Assert failed!"):
        self.msg = str(msg)

    def __str__(self):
        return f"Assert{{msg={self.msg!r}}}"

    def make_node(self, value, *conditions):
        value = as_tensor_variable(value, op=self, argument="value")
        checked = [as_tensor_variable(c, op=self, argument=i + 1)
                   for i, c in enumerate(conditions)]
        for index, condition in enumerate(checked):
            if condition.type.ndim != 0:
                raise TypeError(f"{self}: condition {index} must be a scalar, got "
                                f"{condition.type}")
        return Apply(self, [value, *checked], [value.type()])

    def perform(self, node, inputs, output_storage):
        value, *conditions = inputs
        if not all(conditions):
            raise AssertionError(self.msg)
        output_storage[0][0] = value

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]] + [disconnected_type() for _ in inputs[1:]]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0], *inputs[1:])]


def assert_op(value: Any, *conditions: Any) -> Any:
    """`value`, checked at run time that every condition is nonzero (Theano's assert_op)."""
    return Assert()(value, *conditions)
