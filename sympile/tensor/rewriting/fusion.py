"""Elementwise fusion: a tree of Elemwise nodes becomes one Elemwise(Composite) node.

  local_elemwise_fusion   f(g(x, y), h(z)) -> Elemwise(Composite(f(g(i0, i1), h(i2))))(x, y, z)

registered in rewrite_db as 'local_elemwise_fusion' (tag fusion; FAST_RUN runs it with
get_mode("FAST_RUN").including("fusion")) at position FUSION_POSITION (49: after
canonicalize, shape, stabilize and blas, whose rules match the separate Elemwise nodes,
before final_merge), as an out_to_in walk so that the outermost node of each tree takes in
the whole tree at once. It is not tagged fast_run (yet) because tests of the other rules count
the Elemwise nodes FAST_RUN leaves.

A producer is taken in only when the fused node is its only client (else its result would be
computed twice) and its output broadcasts like the fused node's output (else a value computed
once on a row would be computed again for every row of the larger result). Constants of one
element become constants of the scalar graph. A fused node has at most MAX_FUSED_INPUTS
inputs.
"""

from __future__ import annotations

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import OUTPUT, FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter, out2in
from sympile.scalar.basic import get_scalar_type
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.rewriting.basic import rewrite_db

__all__ = ["FUSION_POSITION", "MAX_FUSED_INPUTS", "local_elemwise_fusion"]

FUSION_POSITION = 49
MAX_FUSED_INPUTS = 32


def _fusable_op(node: Apply) -> bool:
    return isinstance(node.op, Elemwise) and not node.op.inplace_pattern \
        and len(node.outputs) == 1


def _inlined_constant(variable: Variable) -> bool:
    """True for a constant of one element, which the scalar graph holds as a scalar."""
    return isinstance(variable, Constant) and variable.data.size == 1


def _broadcastable(variable: Variable) -> tuple[bool, ...]:
    return tuple(length == 1 for length in variable.type.shape)


def _leaves(absorbed: list[Apply], computed: set[Variable]) -> list[Variable]:
    """The inputs of the fused graph: what the absorbed nodes read and do not compute, in
    order of first use, without the inlined constants."""
    leaves: dict[Variable, None] = {}
    for node in absorbed:
        for variable in node.inputs:
            if variable not in computed and not _inlined_constant(variable):
                leaves.setdefault(variable, None)
    return list(leaves)


def _absorbable(fgraph: FunctionGraph, variable: Variable, absorbed_set: set[Apply],
                pattern: tuple[bool, ...]) -> bool:
    owner = variable.owner
    if owner is None or owner in absorbed_set or not _fusable_op(owner):
        return False
    if _broadcastable(variable) != pattern:
        return False
    clients = fgraph.clients.get(variable, [])
    return bool(clients) and all(client is not OUTPUT and client in absorbed_set
                                 for client, _ in clients)


def _scalar_graph(absorbed_set: set[Apply], leaves: list[Variable], output: Variable):
    """The scalar inputs (one per leaf) and the scalar graph of `output`; the nodes of
    composites are inlined, so fused graphs do not nest."""
    scalars: dict[Variable, Variable] = {v: get_scalar_type(v.type.dtype)() for v in leaves}

    def scalar_of(variable: Variable) -> Variable:
        if variable in scalars:
            return scalars[variable]
        if variable.owner is None or variable.owner not in absorbed_set:
            # Only an inlined constant is neither a leaf nor computed by an absorbed node.
            data = variable.data.reshape(())
            result = get_scalar_type(data.dtype).make_constant(data[()])
        else:
            node = variable.owner
            arguments = [scalar_of(v) for v in node.inputs]
            result = _apply_scalar(node.op.scalar_op, arguments)
        scalars[variable] = result
        return result

    return [scalars[v] for v in leaves], scalar_of(output)


def _apply_scalar(scalar_op, arguments: list[Variable]) -> Variable:
    """scalar_op applied to `arguments`, a composite by rebuilding its graph on them."""
    if not isinstance(scalar_op, Composite):
        return scalar_op.make_node(*arguments).outputs[0]
    values: dict[Variable, Variable] = dict(zip(scalar_op.inputs, arguments))
    for node in scalar_op.nodes:
        rebuilt = node.op.make_node(*[values.get(v, v) for v in node.inputs])
        values.update(zip(node.outputs, rebuilt.outputs))
    (output,) = scalar_op.outputs
    return values.get(output, output)


@node_rewriter([Elemwise])
def local_elemwise_fusion(fgraph: FunctionGraph, node: Apply):
    """elemwise(..., elemwise(...), ...) -> one Elemwise(Composite) computing them all, for
    the producers that only this computation uses and that broadcast like its output, up to
    MAX_FUSED_INPUTS inputs (see the module docstring)."""
    if not _fusable_op(node):
        return None
    pattern = _broadcastable(node.outputs[0])
    absorbed = [node]
    absorbed_set = {node}
    computed = set(node.outputs)
    frontier = list(node.inputs)
    while frontier:
        variable = frontier.pop(0)
        if not _absorbable(fgraph, variable, absorbed_set, pattern):
            continue
        owner = variable.owner
        leaves = _leaves(absorbed + [owner], computed | set(owner.outputs))
        if len(leaves) > MAX_FUSED_INPUTS:
            continue
        absorbed.append(owner)
        absorbed_set.add(owner)
        computed.update(owner.outputs)
        frontier.extend(owner.inputs)
    leaves = _leaves(absorbed, computed)
    if len(absorbed) == 1 or not leaves:
        return None
    scalar_inputs, scalar_output = _scalar_graph(absorbed_set, leaves, node.outputs[0])
    composite = Composite(scalar_inputs, [scalar_output])
    return [Elemwise(composite)(*leaves)]


rewrite_db.register("local_elemwise_fusion",
                    out2in(local_elemwise_fusion, name="local_elemwise_fusion"),
                    "fusion", "fast_run", position=FUSION_POSITION)
