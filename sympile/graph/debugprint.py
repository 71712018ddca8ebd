"""debugprint: a graph as an indented tree with ids and types, in Theano's text. It lives in
the graph layer so that run-time errors can show the failing node's graph
(config.exception_verbosity='high'); sympile.printing serves it at Theano's path."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from sympile.graph.basic import Constant, Variable


def graph_roots(target: Any) -> list[Variable]:
    """The variables to print for a Variable, a list of them, a FunctionGraph or a Function."""
    if isinstance(target, Variable):
        return [target]
    if hasattr(target, "maker"):
        return list(target.maker.fgraph.outputs)
    if hasattr(target, "outputs") and hasattr(target, "apply_nodes"):
        return list(target.outputs)
    if isinstance(target, (list, tuple)):
        roots = []
        for item in target:
            roots.extend(graph_roots(item))
        return roots
    raise TypeError(f"debugprint: cannot print {target!r}; give a Variable, a list of them, a "
                    f"FunctionGraph or a compiled Function")


def debugprint(target: Any, file: TextIO | str | None = None, print_type: bool = False,
               depth: int = -1, ids: str = "id") -> Any:
    """Print the graph of `target` as an indented tree, one line per variable, as Theano
    does: `Elemwise{add,no_inplace} [id A] 'name'   <type>`. A node already printed shows
    only its id.

    file: None prints to stdout and returns None; a stream is written and returned; 'str'
    prints nothing and returns the text (Theano's three forms).
    """
    names: dict[int, str] = {}
    lines: list[str] = []

    def label(obj: Any) -> str:
        if ids == "":
            return ""
        key = id(obj)
        if key not in names:
            names[key] = _id_name(len(names))
        return f" [{ids} {names[key]}]"

    def walk(variable: Variable, prefix: str, level: int) -> None:
        node = variable.owner
        type_text = f" <{variable.type}>" if print_type else ""
        if node is None:
            text = str(variable.data) if isinstance(variable, Constant) else \
                (variable.name or f"<{variable.type}>")
            lines.append(f"{prefix}{text}{label(variable)}{type_text}")
            return
        suffix = f".{variable.index}" if len(node.outputs) > 1 else ""
        seen = id(node) in names
        lines.append(f"{prefix}{op_text(node.op)}{suffix}{label(node)} "
                     f"'{variable.name or ''}'{type_text}")
        if seen or level == depth:
            return
        for parent in node.inputs:
            walk(parent, prefix + " |", level + 1)

    for root in graph_roots(target):
        walk(root, "", 0)
    text = "\n".join(lines)
    if isinstance(file, str):
        if file != "str":
            raise ValueError(f"debugprint: file must be a stream, 'str' or None, got {file!r}")
        return text
    (sys.stdout if file is None else file).write(text + "\n")
    return file


def op_text(op: Any) -> str:
    """An op's name as Theano prints it: Elemwise{add,no_inplace}, Elemwise{add,inplace};
    other ops by their own text (DimShuffle{x,0}, dot, Sum{axis=(0,)} ...)."""
    scalar_op = getattr(op, "scalar_op", None)
    if type(op).__name__ == "Elemwise" and scalar_op is not None:
        inplace = "inplace" if op.inplace_pattern else "no_inplace"
        return f"Elemwise{{{op.name or scalar_op},{inplace}}}"
    return str(op)


def _id_name(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters
