"""Elementwise fusion: a tree of Elemwise nodes becomes one Elemwise(Composite) node, and a
reduction of an elementwise result one FusedCAReduce node.

  local_elemwise_fusion   f(g(x, y), h(z)) -> Elemwise(Composite(f(g(i0, i1), h(i2))))(x, y, z)
  local_careduce_fusion   sum(f(x, y), axis) -> FusedCAReduce(add, f, axis)(x, y)

registered in rewrite_db as 'local_elemwise_fusion' (tags fusion, fast_run) in the fusion
phase (after canonicalize, shape, stabilize and blas, whose rules match the separate Elemwise
nodes, before final_merge), as an out_to_in walk so that the outermost node of each tree
takes in the whole tree at once.

A producer is taken in only when the fused node is its only client (else its result would be
computed twice) and its output broadcasts like the fused node's output (else a value computed
once on a row would be computed again for every row of the larger result). Constants of one
element become constants of the scalar graph. A fused node has at most MAX_FUSED_INPUTS
inputs; the walks are iterative and take each node in once, so that a chain of thousands of
elementwise ops is fused in time in proportion.

local_careduce_fusion is registered in rewrite_db as 'local_careduce_fusion' (tags fusion,
fast_run) in the fusion phase, just after elemwise fusion, so that the reduction takes
in the whole fused expression (and after every rule that matches a CAReduce or an Elemwise,
since neither is left). Gradients are built before compilation, so the rewrite never meets
them; FusedCAReduce has its own L_op and R_op all the same.
"""

from __future__ import annotations

from collections import deque

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.ccode import C_TYPES
from sympile.graph.fgraph import OUTPUT, FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter, out2in
from sympile.scalar.basic import get_scalar_type
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.reduction import CAReduce, FusedCAReduce
from sympile.tensor.rewriting.basic import rewrite_db

__all__ = ["MAX_FUSED_INPUTS", "MAX_FUSED_NODES",
           "local_careduce_fusion", "local_elemwise_fusion"]

MAX_FUSED_INPUTS = 32
# The C compiler's time grows faster than one loop body's length: a longer chain of
# elementwise ops is fused into loops of at most this many scalar nodes each.
MAX_FUSED_NODES = 500


def _fusable_op(node: Apply) -> bool:
    return isinstance(node.op, Elemwise) and not node.op.inplace_pattern \
        and len(node.outputs) == 1


def _inlined_constant(variable: Variable) -> bool:
    """True for a constant of one element, which the scalar graph holds as a scalar."""
    return isinstance(variable, Constant) and variable.data.size == 1


def _broadcastable(variable: Variable) -> tuple[bool, ...]:
    return tuple(length == 1 for length in variable.type.shape)


def _scalar_size(node: Apply) -> int:
    """How many scalar nodes `node` computes (a fused node: its composite's)."""
    scalar_op = node.op.scalar_op
    return len(scalar_op.nodes) if isinstance(scalar_op, Composite) else 1


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
        # Post-order with an explicit stack: a chain of thousands of fused nodes must not
        # hit Python's recursion limit.
        stack = [variable]
        while stack:
            current = stack[-1]
            if current in scalars:
                stack.pop()
                continue
            if current.owner is None or current.owner not in absorbed_set:
                # Only an inlined constant is neither a leaf nor computed by an absorbed node.
                data = current.data.reshape(())
                scalars[current] = get_scalar_type(data.dtype).make_constant(data[()])
                stack.pop()
                continue
            pending = [v for v in current.owner.inputs if v not in scalars]
            if pending:
                stack.extend(reversed(pending))
                continue
            arguments = [scalars[v] for v in current.owner.inputs]
            scalars[current] = _apply_scalar(current.owner.op.scalar_op, arguments)
            stack.pop()
        return scalars[variable]

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
    # The leaves so far as a set (at most MAX_FUSED_INPUTS), updated per absorbed node, so
    # that a long chain is taken in in linear time.
    leaf_set = set(_leaves(absorbed, computed))
    frontier = deque(node.inputs)
    size = _scalar_size(node)
    while frontier:
        variable = frontier.popleft()
        if not _absorbable(fgraph, variable, absorbed_set, pattern) \
                or size + _scalar_size(variable.owner) > MAX_FUSED_NODES:
            continue
        owner = variable.owner
        leaves = (leaf_set - set(owner.outputs)) | {
            v for v in owner.inputs
            if v not in computed and v not in owner.outputs and not _inlined_constant(v)}
        if len(leaves) > MAX_FUSED_INPUTS:
            continue
        leaf_set = leaves
        size += _scalar_size(owner)
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
                    "fusion", "fast_run", phase="fusion")


def _has_c_loop(elemwise_node: Apply, reduction_node: Apply) -> bool:
    """Whether the fused node would run C code: every dtype has C arithmetic and the scalar op
    C statements (otherwise it would run perform(), which computes what the two nodes do)."""
    reduction = reduction_node.op
    dtypes = [v.type.dtype for v in elemwise_node.inputs + elemwise_node.outputs]
    dtypes.append(reduction_node.outputs[0].type.dtype)
    if reduction.acc_dtype is not None:
        dtypes.append(reduction.acc_dtype)
    if not all(dtype in C_TYPES for dtype in dtypes):
        return False
    scalar_op = elemwise_node.op.scalar_op
    inputs = tuple(f"x{index}" for index in range(len(elemwise_node.inputs)))
    code = scalar_op.c_scalar(inputs, ("z0",), tuple(v.type.dtype for v in elemwise_node.inputs),
                              (elemwise_node.outputs[0].type.dtype,))
    return code is not None


@node_rewriter([CAReduce])
def local_careduce_fusion(fgraph: FunctionGraph, node: Apply):
    """careduce(elemwise(x, y, ...)) -> FusedCAReduce(careduce's scalar op, elemwise's scalar
    op, its axis and dtypes)(x, y, ...): the elementwise values are computed where they are
    folded, never stored (sum((x - m)**2) reads x once and writes no temporary).

    Only when the reduction is the elementwise result's one client (else the values would be
    computed twice) and the fused node has C code (see _has_c_loop)."""
    (values,) = node.inputs
    producer = values.owner
    if producer is None or not _fusable_op(producer):
        return None
    clients = fgraph.clients.get(values, [])
    if len(clients) != 1 or clients[0][0] is not node:
        return None
    if not _has_c_loop(producer, node):
        return None
    op = node.op
    fused = FusedCAReduce(op.scalar_op, producer.op.scalar_op, op.axis, op.dtype, op.acc_dtype)
    return [fused(*producer.inputs)]


rewrite_db.register("local_careduce_fusion",
                    out2in(local_careduce_fusion, name="local_careduce_fusion"),
                    "fusion", "fast_run", phase="fusion")
