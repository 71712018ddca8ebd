"""Elementwise fusion: a tree of Elemwise nodes becomes one Elemwise(Composite) node, and a
reduction of an elementwise result one FusedCAReduce node.

  local_elemwise_fusion   f(g(x, y), h(z)) -> Elemwise(Composite(f(g(i0, i1), h(i2))))(x, y, z)
  local_careduce_fusion   sum(f(x, y), axis) -> FusedCAReduce(add, f, axis)(x, y)
  local_centered_square_sum
                          sum((x - x.mean())**2) over every axis -> CenteredSquareSum()(x)

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
from sympile.scalar import basic as scalar
from sympile.scalar.basic import Cast, get_scalar_type
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.reduction import CAReduce, CenteredSquareSum, FusedCAReduce
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.shape.ops import ShapeI

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


def _composite_parts(node: Apply) -> tuple[Variable, dict[Variable, Variable]] | None:
    """(the scalar output, scalar input -> outer input) of an Elemwise node with one output."""
    op = getattr(node.op, "scalar_op", None)
    if not isinstance(node.op, Elemwise) or len(node.outputs) != 1:
        return None
    if isinstance(op, Composite):
        return op.outputs[0], dict(zip(op.inputs, node.inputs))
    inputs = [get_scalar_type(v.type.dtype)() for v in node.inputs]
    return op.make_node(*inputs).outputs[0], dict(zip(inputs, node.inputs))


def _is_mean_of(mean: Variable, x: Variable) -> bool:
    """mean is x.mean() as the graph computes it: cast(sum(x) / (n0 * n1 ...)) broadcast to
    x's rank, n_k the lengths of x (Shape_i), over every axis of x."""
    owner = mean.owner
    if owner is None or not isinstance(owner.op, DimShuffle) \
            or owner.inputs[0].type.ndim != 0 or owner.outputs[0].type.ndim != x.type.ndim:
        return False
    quotient = owner.inputs[0].owner
    parts = _composite_parts(quotient) if quotient is not None else None
    if parts is None:
        return False
    expression, outer = parts
    if expression.owner is not None and isinstance(expression.owner.op, Cast):
        expression = expression.owner.inputs[0]
    if expression.owner is None or expression.owner.op != scalar.true_div:
        return False
    numerator, denominator = expression.owner.inputs
    total = outer.get(numerator)
    if total is None or total.owner is None or not isinstance(total.owner.op, CAReduce) \
            or total.owner.op.scalar_op != scalar.add or total.owner.inputs[0] is not x \
            or total.owner.op.dtype not in (None, x.type.dtype) or total.owner.op.acc_dtype \
            or total.owner.outputs[0].type.ndim != 0:
        return False
    lengths, pending = [], [denominator]
    while pending:
        factor = pending.pop()
        if factor.owner is not None and factor.owner.op == scalar.mul:
            pending += factor.owner.inputs
            continue
        length = outer.get(factor)
        if length is None or length.owner is None or not isinstance(length.owner.op, ShapeI) \
                or length.owner.inputs[0] is not x:
            return False
        lengths.append(length.owner.op.axis)
    return sorted(lengths) == list(range(x.type.ndim))


def _is_square_of_difference(pre_op) -> bool:
    """pre_op is (i0 - i1)**2 (sqr, or the difference times itself)."""
    if not isinstance(pre_op, Composite) or len(pre_op.inputs) != 2 or len(pre_op.nodes) != 2:
        return False
    difference, square = pre_op.nodes
    return difference.op == scalar.sub and list(difference.inputs) == pre_op.inputs \
        and (square.op == scalar.sqr and square.inputs == difference.outputs
             or square.op == scalar.mul and square.inputs == difference.outputs * 2) \
        and pre_op.outputs == square.outputs


@node_rewriter([FusedCAReduce])
def local_centered_square_sum(fgraph: FunctionGraph, node: Apply):
    """FusedCAReduce(add, (i0 - i1)**2, every axis)(x, x.mean()) -> CenteredSquareSum()(x):
    the sum of squared deviations (a variance's numerator) reads x once in C instead of
    twice (once for the mean, once for the deviations). For float32 and float64 x, with the
    default dtypes; the result agrees with the two passes to rounding (its sums run in
    double)."""
    op = node.op
    if op.scalar_op != scalar.add or op.dtype is not None or op.acc_dtype is not None \
            or len(node.inputs) != 2:
        return None
    x, mean = node.inputs
    if x.type.dtype not in ("float32", "float64") or x.type.ndim == 0 \
            or node.outputs[0].type.dtype != x.type.dtype:
        return None
    if op.axis is not None and sorted(op.axis) != list(range(x.type.ndim)):
        return None
    if not _is_square_of_difference(op.pre_op) or not _is_mean_of(mean, x):
        return None
    return [CenteredSquareSum()(x)]


rewrite_db.register("local_centered_square_sum",
                    out2in(local_centered_square_sum, name="local_centered_square_sum"),
                    "fusion", "fast_run", phase="fusion")
