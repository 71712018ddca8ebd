"""Text views of graphs: debugprint (a tree with ids and types) and pp (an infix formula);
Print, an op that prints values as a function computes them."""

from __future__ import annotations

from typing import Any

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.debugprint import debugprint, op_text  # noqa: F401 - Theano's path
from sympile.graph.op import Op
from sympile.tensor.variable import as_tensor_variable

_INFIX = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//", "mod": "%",
          "pow": "**", "lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==", "neq": "!=",
          "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}



def pp(variable: Variable) -> str:
    """The formula computing `variable`, with infix operators where there are some:
    pp(x ** 2 + y) == '((x ** 2) + y)'."""
    if not isinstance(variable, Variable):
        raise TypeError(f"pp: expected a Variable, got {variable!r}")
    return _pp(variable)


def _pp(variable: Variable) -> str:
    node = variable.owner
    if node is None:
        if isinstance(variable, Constant):
            data = variable.data
            return variable.name or str(data.reshape(()) if data.size == 1 else data)
        return variable.name or f"<{variable.type}>"
    op = node.op
    scalar_op = getattr(op, "scalar_op", None)
    if scalar_op is not None:
        symbol = _INFIX.get(getattr(scalar_op, "name", ""))
        if symbol is not None and len(node.inputs) == 2:
            left, right = (_pp(v) for v in node.inputs)
            return f"({left} {symbol} {right})"
        if getattr(scalar_op, "name", "") == "neg":
            return f"-{_pp(node.inputs[0])}"
    if type(op).__name__ == "DimShuffle":
        return f"{_pp(node.inputs[0])}.dimshuffle({','.join(map(str, op.new_order))})"
    arguments = ", ".join(_pp(v) for v in node.inputs)
    suffix = f"[{variable.index}]" if len(node.outputs) > 1 else ""
    return f"{op}({arguments}){suffix}"


# Theano's name of the formula printer (theano.printing.pprint).
pprint = pp


def _print_attributes(op: Print, value: Any) -> None:
    for attribute in op.attrs:
        shown = getattr(value, attribute)
        if callable(shown):
            shown = shown()
        print(op.message, attribute, "=", shown)


class Print(Op):
    """Print(message, attrs=('__str__',))(x): x, printing `message` and each attribute of
    x's value (called when it is a method) whenever the function computes it, as Theano's
    Print. global_fn(op, value) replaces the printing. Gradients and tangents pass through;
    rewrites never fold it into a constant."""

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(self, message: str = "", attrs: tuple[str, ...] = ("__str__",),
                 global_fn: Any = _print_attributes):
        self.message = str(message)
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x, op=self, argument="x")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]
        self.global_fn(self, inputs[0])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]

    def do_constant_folding(self, fgraph, node) -> bool:
        return False
