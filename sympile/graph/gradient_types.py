"""The special 'gradients' that rules return: disconnected (no dependence) and null (undefined
or not implemented). They live in the IR layer so that any Op's rules can use them."""

from __future__ import annotations

from typing import Any

from sympile.graph.basic import Variable
from sympile.graph.type import Type


class DisconnectedType(Type):
    """The 'gradient' of something that does not depend on the variable: no value at all."""

    def filter(self, value, strict=False, allow_downcast=None):
        raise TypeError("a disconnected gradient has no value")

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "DisconnectedType"


def disconnected_type() -> Variable:
    """A fresh Variable meaning 'this input does not influence the output'."""
    return DisconnectedType()()


class NullType(Type):
    """A gradient that is undefined or not implemented; `why_null` says which and why."""

    def __init__(self, why_null: str = "(no explanation given)"):
        self.why_null = why_null

    def filter(self, value, strict=False, allow_downcast=None):
        raise TypeError(f"a null gradient has no value: {self.why_null}")

    def __eq__(self, other):
        return type(other) is type(self) and other.why_null == self.why_null

    def __hash__(self):
        return hash((type(self), self.why_null))

    def __str__(self):
        return "NullType"


def grad_undefined(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of `op` with respect to its input `x_pos` is mathematically undefined."""
    return NullType(f"the gradient of {op} with respect to input {x_pos} ({x}) is undefined"
                    f"{': ' + comment if comment else ''}")()


def grad_not_implemented(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of `op` with respect to its input `x_pos` exists but is not implemented."""
    return NullType(f"the gradient of {op} with respect to input {x_pos} ({x}) is not "
                    f"implemented{': ' + comment if comment else ''}")()


def is_disconnected(variable: Any) -> bool:
    return isinstance(getattr(variable, "type", None), DisconnectedType)


def is_null(variable: Any) -> bool:
    return isinstance(getattr(variable, "type", None), NullType)


class NonDifferentiable:
    """Mixin for one-output Ops whose output does not vary smoothly with any input (integer
    results: shapes, lengths, indices, counts): every input is disconnected, and the output
    has no tangent."""

    def connection_pattern(self, node) -> list[list[bool]]:
        return [[False] * len(node.outputs) for _ in node.inputs]

    def L_op(self, inputs, outputs, output_grads) -> list[Variable]:
        return [disconnected_type() for _ in inputs]

    def R_op(self, inputs, eval_points) -> list[None]:
        return [None]
