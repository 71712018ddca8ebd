"""ifelse: a lazy conditional (Theano's `theano.ifelse.ifelse`).

    z = ifelse(T.lt(a, b), T.mean(x), T.mean(y))

computes only the branch the condition selects, on every backend: the condition is a scalar
(nonzero is true), and each branch is one variable or a list of them, of matching types.
`T.switch` stays the strict elementwise form, which computes both.

The IfElse Op's inputs are (condition, *then_branch, *else_branch) and its outputs one per
branch pair; each output is (a view of) the chosen branch's value. Laziness is the backends'
business: an op with `branch_inputs(node)` is a conditional to them (see
sympile.link.python.vm.lazy_schedule), so the nodes only one branch needs run only when that
branch is taken.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.ccode import CCode
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import zeros_like
from sympile.tensor.math import cast
from sympile.tensor.shape.ops import declared_like
from sympile.tensor.type import TensorType, is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = ["IfElse", "ifelse"]


class IfElse(Op):
    """`IfElse(n_outs)(condition, *then_values, *else_values)`: the n_outs then values when the
    scalar condition is nonzero, else the n_outs else values. With as_view=True each output
    is the value chosen itself (a view of both inputs); with as_view=False (Theano's
    default for the op) a copy of it. ifelse() builds views, as Theano's inplace rewrite
    made them. `name` only labels the op in printouts."""

    __props__ = ("n_outs", "as_view")

    def __init__(self, n_outs: int, as_view: bool = False, gpu: bool = False,
                 name: str | None = None):
        if not isinstance(n_outs, int) or isinstance(n_outs, bool) or n_outs < 1:
            raise ValueError(f"IfElse: n_outs must be a positive int, got {n_outs!r}")
        if gpu:
            raise ValueError("IfElse: gpu=True (Theano's old GPU flag) is not supported; "
                             "placement on the device is config.device's")
        self.n_outs = n_outs
        self.as_view = bool(as_view)
        self.name = name
        if self.as_view:
            self.view_map = {index: [1 + index, 1 + n_outs + index] for index in range(n_outs)}

    def __str__(self) -> str:
        label = f"IfElse{{n_outs={self.n_outs}}}" if self.as_view else \
            f"IfElse{{n_outs={self.n_outs}, copy}}"
        return f"{label}{{{self.name}}}" if self.name else label

    def branch_inputs(self, node: Apply) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The input positions of the then values and of the else values; input 0 is the
        condition. The backends compute the inputs of the branch taken only."""
        return (tuple(range(1, 1 + self.n_outs)),
                tuple(range(1 + self.n_outs, 1 + 2 * self.n_outs)))

    def make_node(self, condition, *branches):
        if len(branches) != 2 * self.n_outs:
            raise ValueError(f"{self}: expected a condition and {2 * self.n_outs} branch values "
                             f"({self.n_outs} then, {self.n_outs} else), got {len(branches)} "
                             f"branch values")
        condition = _condition(condition, str(self))
        then_values = list(branches[:self.n_outs])
        else_values = list(branches[self.n_outs:])
        outputs = []
        for index, (then_value, else_value) in enumerate(zip(then_values, else_values)):
            then_value, else_value = _branch_pair(then_value, else_value, index, str(self))
            then_values[index], else_values[index] = then_value, else_value
            outputs.append(_common_type(then_value.type, else_value.type)())
        return Apply(self, [condition, *then_values, *else_values], outputs)

    def perform(self, node, inputs, output_storage):
        condition = inputs[0]
        chosen = inputs[1:1 + self.n_outs] if condition else inputs[1 + self.n_outs:]
        for storage, value in zip(output_storage, chosen):
            storage[0] = value if self.as_view else value.copy()

    def infer_shape(self, fgraph, node, input_shapes):
        """Each length: the one both branches share, else ifelse(condition, then length, else
        length) (lazy too: the other branch's shape is not computed)."""
        condition = node.inputs[0]
        shapes = []
        for index, output in enumerate(node.outputs):
            then_shape = input_shapes[1 + index]
            else_shape = input_shapes[1 + self.n_outs + index]
            lengths = []
            for static, then_length, else_length in zip(output.type.shape, then_shape,
                                                         else_shape):
                if static is not None:
                    lengths.append(static)
                elif then_length is else_length or _same_int(then_length, else_length):
                    lengths.append(then_length)
                else:
                    lengths.append(ifelse(condition, _length(then_length),
                                          _length(else_length)))
            shapes.append(tuple(lengths))
        return shapes

    def connection_pattern(self, node):
        n = self.n_outs
        condition = [[False] * n]
        branch = [[input_index % n == output for output in range(n)] for input_index in range(n)]
        return condition + branch + [list(row) for row in branch]

    def L_op(self, inputs, outputs, output_grads):
        """The gradient goes to the branch taken: ifelse(c, g, 0) for the then value and
        ifelse(c, 0, g) for the else value, with 0 zeros of that value's shape. The condition
        is disconnected, as are discrete values."""
        condition = inputs[0]
        then_values = inputs[1:1 + self.n_outs]
        else_values = inputs[1 + self.n_outs:]
        then_grads: list[Variable] = [disconnected_type() for _ in then_values]
        else_grads: list[Variable] = [disconnected_type() for _ in else_values]
        connected = [index for index, gradient in enumerate(output_grads)
                     if not is_disconnected(gradient) and not is_discrete(outputs[index])]
        if connected:
            gradients = [cast(output_grads[i], outputs[i].type.dtype) for i in connected]
            then_zeros = [zeros_like(then_values[i]) for i in connected]
            else_zeros = [zeros_like(else_values[i]) for i in connected]
            op = IfElse(len(connected), as_view=True, name=_suffixed(self.name, "grad"))
            to_then = _as_list(op(condition, *gradients, *then_zeros))
            to_else = _as_list(op(condition, *else_zeros, *gradients))
            for position, index in enumerate(connected):
                then_grads[index] = declared_like(to_then[position], then_values[index])
                else_grads[index] = declared_like(to_else[position], else_values[index])
        return [disconnected_type(), *then_grads, *else_grads]

    def R_op(self, inputs, eval_points):
        """ifelse(c, tangent of the then value, tangent of the else value); a branch without a
        tangent contributes zeros, an output with neither has none (None)."""
        condition = inputs[0]
        results: list[Variable | None] = [None] * self.n_outs
        pairs = []
        for index in range(self.n_outs):
            then_value, else_value = inputs[1 + index], inputs[1 + self.n_outs + index]
            then_point = eval_points[1 + index]
            else_point = eval_points[1 + self.n_outs + index]
            if (then_point is None and else_point is None) or is_discrete(then_value):
                continue
            dtype = then_value.type.dtype
            then_point = zeros_like(then_value) if then_point is None else cast(then_point, dtype)
            else_point = zeros_like(else_value) if else_point is None else cast(else_point, dtype)
            pairs.append((index, then_point, else_point))
        if not pairs:
            return results
        op = IfElse(len(pairs), as_view=True, name=_suffixed(self.name, "rop"))
        tangents = _as_list(op(condition, *[p[1] for p in pairs], *[p[2] for p in pairs]))
        for (index, _, _), tangent in zip(pairs, tangents):
            results[index] = tangent
        return results

    def c_code(self, node, names):
        """Reads the condition (nonzero is true) and hands out a new reference to each value
        of the branch taken (as_view) or a copy of it; the backend has computed that branch
        only."""
        n = self.n_outs
        condition = "sympile_ifelse_condition"

        def assignments(offset: int) -> str:
            if self.as_view:
                return "\n".join(
                    f"            Py_INCREF({names.inputs[offset + i]});\n"
                    f"            sympile_assign_output(&{names.outputs[i]}, "
                    f"{names.inputs[offset + i]});" for i in range(n))
            return "\n".join(
                f"            if (sympile_assign_output(&{names.outputs[i]}, (PyArrayObject *)"
                f"PyArray_NewCopy({names.inputs[offset + i]}, NPY_KEEPORDER)) < 0) "
                f"{names.fail}" for i in range(n))

        body = (f"        int {condition} = PyObject_IsTrue((PyObject *){names.inputs[0]});\n"
                f"        if ({condition} < 0) {names.fail}\n"
                f"        if ({condition}) {{\n{assignments(1)}\n        }} else {{\n"
                f"{assignments(1 + n)}\n        }}")
        return CCode(body=body)

    def do_constant_folding(self, fgraph, node) -> bool:
        # Folding would compute both branches; the ifelse rewrites remove constant conditions.
        return False


def _suffixed(name: str | None, suffix: str) -> str | None:
    return f"{name}_{suffix}" if name else None


def _as_list(result: Variable | list[Variable]) -> list[Variable]:
    return result if isinstance(result, list) else [result]


def _condition(condition: Any, who: str) -> Variable:
    try:
        condition = as_tensor_variable(condition, op=who, argument="condition")
    except TypeError as error:
        raise TypeError(f"{who}: the condition must be a scalar tensor (bool, int or float): "
                        f"{error}") from None
    if condition.type.ndim != 0:
        raise TypeError(f"{who}: the condition must be a scalar (0-d) tensor, got {condition} of "
                        f"type {condition.type}")
    return condition


def _branch_pair(then_value: Any, else_value: Any, index: int,
                 who: str) -> tuple[Variable, Variable]:
    """Both values of output `index` as tensor variables of one dtype and ndim; a value that
    is data (a number, an array) is converted to the other branch's dtype when that keeps it
    exact."""
    if not isinstance(then_value, Variable) and isinstance(else_value, Variable):
        then_value = _data_like(then_value, else_value)
    elif not isinstance(else_value, Variable) and isinstance(then_value, Variable):
        else_value = _data_like(else_value, then_value)
    then_value = as_tensor_variable(then_value, op=who, argument=f"then value {index}")
    else_value = as_tensor_variable(else_value, op=who, argument=f"else value {index}")
    if then_value.type.dtype != else_value.type.dtype:
        raise TypeError(f"{who}: the branches of output {index} have different dtypes: then "
                        f"{then_value} is {then_value.type.dtype}, else {else_value} is "
                        f"{else_value.type.dtype}; cast one (T.cast) so they match")
    if then_value.type.ndim != else_value.type.ndim:
        raise TypeError(f"{who}: the branches of output {index} have different numbers of "
                        f"dimensions: then {then_value} is {then_value.type}, else {else_value} "
                        f"is {else_value.type}")
    return then_value, else_value


def _data_like(value: Any, like: Variable) -> Any:
    """`value` as a constant of like's dtype if that keeps every element exact, else as is
    (as_tensor_variable then converts it, and a dtype mismatch is reported)."""
    if not isinstance(like.type, TensorType):
        return value
    try:
        data = np.asarray(value)
        converted = data.astype(like.type.dtype)
    except (TypeError, ValueError):
        return value
    if data.dtype.kind not in "biuf" or converted.shape != data.shape \
            or not np.array_equal(converted, data):
        return value
    return constant(converted)


def _common_type(a: TensorType, b: TensorType) -> TensorType:
    """The type of values of a or b: their dtype, each length that both know and agree on."""
    shape = [x if x == y else None for x, y in zip(a.shape, b.shape)]
    return tensor_type(a.dtype, shape)


def _same_int(a: Any, b: Any) -> bool:
    return isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)) and a == b


def _length(length: Any) -> Variable:
    """A length (int or scalar variable) as an int64 scalar variable."""
    if isinstance(length, Variable):
        return cast(length, "int64")
    return constant(int(length), dtype="int64")


def ifelse(condition: Any, then_branch: Any, else_branch: Any,
           name: str | None = None) -> Variable | list[Variable] | tuple[Variable, ...]:
    """then_branch if the scalar `condition` is nonzero, else else_branch; only the branch
    taken is computed. Branches are one variable each (returns one variable) or lists or
    tuples of the same length (returns a list or tuple), of matching dtypes and ndims."""
    kind = type(then_branch) if isinstance(then_branch, (list, tuple)) else None
    then_values = list(then_branch) if kind is not None else [then_branch]
    else_values = list(else_branch) if isinstance(else_branch, (list, tuple)) else [else_branch]
    if len(then_values) != len(else_values):
        raise ValueError(f"ifelse: then_branch has {len(then_values)} values and else_branch "
                         f"{len(else_values)}; they must have as many")
    if not then_values:
        raise ValueError("ifelse: the branches are empty; give at least one value each")
    op = IfElse(len(then_values), as_view=True, name=name)
    results = _as_list(op(condition, *then_values, *else_values))
    if name is not None:
        for index, result in enumerate(results):
            result.name = name if len(results) == 1 else f"{name}_{index}"
    if kind is None:
        return results[0]
    return kind(results)
