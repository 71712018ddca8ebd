"""Text views of graphs: debugprint (a tree with ids and types) and pp (an infix formula);
Print, an op that prints values as a function computes them."""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable, io_toposort
from sympile.graph.debugprint import debugprint, graph_roots, op_text
from sympile.graph.op import Op
from sympile.tensor.variable import as_tensor_variable

# debugprint lives in graph (run-time errors use it); Theano's users import it from here.
__all__ = ["debugprint", "pp", "pydotprint", "Print", "op_text"]

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
    # An elementwise function by its name, as Theano's pprint: exp(x).
    name = (op.name or str(scalar_op)) if scalar_op is not None and \
        type(op).__name__ == "Elemwise" and not op.inplace_pattern else str(op)
    return f"{name}({arguments}){suffix}"


# Theano's name of the formula printer (theano.printing.pprint).
pprint = pp


# -- pictures of graphs --------------------------------------------------------------------------

class GraphPicture:
    """What a picture of a graph shows (shared by pydotprint and d3viz): `nodes` maps an id
    to (label, kind, details) with kind 'apply', 'input', 'shared', 'constant', 'output' or
    'variable'; `edges` lists (source id, target id, label)."""

    def __init__(self, target: Any, max_label_size: int = 70,
                 var_with_name_simple: bool = False):
        self.var_with_name_simple = var_with_name_simple
        outputs = graph_roots(target)
        self.nodes: dict[str, tuple[str, str, str]] = {}
        self.edges: list[tuple[str, str, str]] = []
        inputs = set(getattr(getattr(target, "maker", None), "fgraph", None).inputs) \
            if hasattr(target, "maker") else set()
        names: dict[int, str] = {}

        def key(obj: Any, prefix: str) -> str:
            if id(obj) not in names:
                names[id(obj)] = f"{prefix}{len(names)}"
            return names[id(obj)]

        def short(text: str) -> str:
            return text if len(text) <= max_label_size else text[:max_label_size - 3] + "..."

        for node in io_toposort([], outputs):
            node_id = key(node, "n")
            self.nodes[node_id] = (short(op_text(node.op)), "apply", str(node.op))
            for index, variable in enumerate(node.inputs):
                source = self._variable(variable, key, short, inputs, outputs)
                label = "" if len(node.inputs) == 1 else str(index)
                self.edges.append((source, node_id, f"{label} {variable.type}".strip()))
            for output in node.outputs:
                if output in outputs or len(node.outputs) > 1:
                    target_id = self._variable(output, key, short, inputs, outputs)
                    self.edges.append((node_id, target_id, str(output.type)))
        for output in outputs:
            if output.owner is None:
                self._variable(output, key, short, inputs, outputs)

    def _variable(self, variable: Variable, key, short, inputs, outputs) -> str:
        if variable.owner is not None and variable not in outputs \
                and len(variable.owner.outputs) == 1:
            return key(variable.owner, "n")
        variable_id = key(variable, "v")
        if isinstance(variable, Constant):
            data = np.asarray(variable.data)
            label, kind = (str(data) if data.size <= 8 else f"constant {data.shape}"), \
                "constant"
        else:
            label = str(variable.type) if not variable.name else variable.name \
                if self.var_with_name_simple else f"{variable.name} {variable.type}"
            kind = ("output" if variable in outputs else
                    "shared" if type(variable).__name__.endswith("SharedVariable") else
                    "input" if variable.owner is None or variable in inputs else "variable")
        self.nodes[variable_id] = (short(label), kind, f"{variable.type}")
        return variable_id


# Theano's pydotprint colours: inputs green, outputs blue, shared variables cyan-ish,
# constants grey, apply nodes white.
NODE_COLOURS = {"input": "limegreen", "output": "dodgerblue", "shared": "cyan", "constant": "grey",
            "variable": "white", "apply": "white"}


def pydotprint(fct: Any, outfile: str | None = None, format: str = "png",
               max_label_size: int = 70, return_image: bool = False,
               print_output_file: bool = True, var_with_name_simple: bool = False) -> Any:
    """Draw the graph of `fct` (a compiled function, a Variable or a list of them) with
    graphviz, as Theano's pydotprint: apply nodes as ellipses, variables as boxes (inputs
    green, outputs blue, shared variables cyan, constants grey), edges labelled with types.

    format: 'dot' (the graph's source, needs only the graphviz package), or 'png', 'svg',
    'pdf', ... (also graphviz's `dot` program). return_image: return the bytes instead of
    writing `outfile` (default 'sympile.pydotprint.<format>'). A named variable shows its
    name and type, or its name only with var_with_name_simple.
    """
    try:
        import graphviz
    except ImportError:
        raise ImportError("pydotprint needs the graphviz package: pip install "
                          "'sympile[graphs]' (and graphviz's dot program for images)") \
            from None
    picture = GraphPicture(fct, max_label_size, var_with_name_simple)
    graph = graphviz.Digraph("sympile", format=None if format == "dot" else format)
    for node_id, (label, kind, details) in picture.nodes.items():
        graph.node(node_id, label, tooltip=details, style="filled",
                   fillcolor=NODE_COLOURS[kind], shape="ellipse" if kind == "apply" else "box")
    for source, target, label in picture.edges:
        graph.edge(source, target, label=label)
    if format == "dot":
        image = graph.source.encode()
    else:
        try:
            image = graph.pipe(format=format)
        except graphviz.ExecutableNotFound:
            raise RuntimeError(f"pydotprint: format {format!r} needs graphviz's dot program "
                               f"on PATH (format='dot' writes the source without it)") \
                from None
    if return_image:
        return image
    outfile = outfile or f"sympile.pydotprint.{format}"
    with open(outfile, "wb") as stream:
        stream.write(image)
    if print_output_file:
        print("The output file is available at", outfile)
    return None


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
