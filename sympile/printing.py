"""Text views of graphs: debugprint (a tree with ids and types) and pp (an infix formula)."""

from __future__ import annotations

from sympile.graph.basic import Constant, Variable
from sympile.graph.debugprint import debugprint, op_text  # noqa: F401 - Theano's path

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
