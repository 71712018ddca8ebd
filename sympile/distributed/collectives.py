"""Symbolic MPI collectives, ops usable anywhere in a graph: all_reduce (sum, mean, max,
min), all_gather (along the first axis, lengths may differ between ranks) and broadcast.

Each rank runs the same program on its own data; a collective's result is the same on
every rank. Derivatives are those of the sum of every rank's cost with respect to this
rank's input, so that each rank's grad of its local cost is the data-parallel gradient:
  all_reduce sum   x̄ = all_reduce_sum(ȳ)            (mean: all_reduce_mean(ȳ))
  all_reduce max   x̄ = all_reduce_sum(ȳ) where x holds the maximum (every tying rank)
  all_gather       x̄ = this rank's rows of all_reduce_sum(ȳ)
  broadcast        x̄ = all_reduce_sum(ȳ) on the root, zeros elsewhere
R_op: all_reduce of the tangents, the same way.

perform calls mpi4py on the arrays' buffers (no pickling): a barrier waited for with
init()'s timeout, then the blocking collective. Collectives are matched by order: every
rank must run them in the same order, which the same program gives (graphs compile to the
same order of nodes in every process).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.distributed.world import joined, size, wait, world
from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.basic import as_tensor_variable
from sympile.tensor.math import eq

__all__ = ["AllGather", "AllReduce", "Broadcast", "all_gather", "all_reduce", "broadcast"]

_OPS = ("sum", "mean", "max", "min")


def _mpi_op(name: str):
    from mpi4py import MPI
    return {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[name]


def _buffer(value: np.ndarray) -> np.ndarray:
    """value as a C-contiguous buffer, its shape kept (np.ascontiguousarray makes a 0-d
    array 1-d)."""
    return np.asarray(value, order="C")


class CollectiveOp(Op):
    """An op whose value depends on the other ranks (or on this rank's number): never
    computed while compiling, whatever its inputs."""

    def do_constant_folding(self, fgraph, node) -> bool:
        return False


class AllReduce(CollectiveOp):
    """The elementwise sum, mean, max or min of x over every rank."""

    __props__ = ("op",)

    def __init__(self, op: str = "sum"):
        if op not in _OPS:
            raise ValueError(f"all_reduce: op must be one of {_OPS}, got {op!r}")
        self.op = op

    def make_node(self, x):
        x = as_tensor_variable(x, op="all_reduce", argument="x")
        if self.op == "mean" and x.type.dtype[0] in "iub":
            raise TypeError(f"all_reduce: 'mean' needs a float tensor, got {x.type}")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        send = _buffer(inputs[0])
        result = np.empty_like(send)
        joined(f"all_reduce({self.op})")
        world().Allreduce(send, result, op=_mpi_op(self.op))
        if self.op == "mean":
            result /= size()
        output_storage[0][0] = result

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        if self.op in ("sum", "mean"):
            return [AllReduce(self.op)(g)]
        return [AllReduce("sum")(g) * eq(inputs[0], outputs[0])]

    def R_op(self, inputs, eval_points):
        (dx,) = eval_points
        if dx is None:
            return [None]
        if self.op in ("sum", "mean"):
            return [AllReduce(self.op)(dx)]
        return [AllReduce("sum")(dx * eq(inputs[0], self(inputs[0])))]


def all_reduce(x: Any, op: str = "sum") -> Variable:
    """x reduced elementwise over every rank ('sum', 'mean', 'max' or 'min')."""
    return AllReduce(op)(x)


def _lengths(length: int, who: str) -> np.ndarray:
    """Every rank's length along the first axis."""
    mine = np.array([length], dtype=np.int64)
    lengths = np.empty(size(), dtype=np.int64)
    wait(world().Iallgather(mine, lengths), who)
    return lengths


class AllGather(CollectiveOp):
    """Every rank's x, one after the other along the first axis (rank order); the other
    axes must agree."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x, op="all_gather", argument="x")
        if x.type.ndim == 0:
            raise TypeError("all_gather: x must have at least one axis; gather x[None]")
        return Apply(self, [x], [x.type.clone(shape=(None, *x.type.shape[1:]))()])

    def perform(self, node, inputs, output_storage):
        send = _buffer(inputs[0])
        row = int(np.prod(send.shape[1:], dtype=np.int64))
        lengths = _lengths(send.shape[0], "all_gather")
        shapes = np.empty(size() * max(send.ndim - 1, 1), dtype=np.int64)
        mine = np.array(send.shape[1:] or (0,), dtype=np.int64)
        wait(world().Iallgather(mine, shapes), "all_gather")
        if (shapes.reshape(size(), -1) != mine).any():
            raise ValueError(f"all_gather: the ranks' arrays differ past the first axis: "
                             f"{shapes.reshape(size(), -1).tolist()}")
        result = np.empty((int(lengths.sum()), *send.shape[1:]), dtype=send.dtype)
        counts = lengths * row
        joined("all_gather")
        world().Allgatherv(send, [result, counts])
        output_storage[0][0] = result

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        return [OwnRows()(inputs[0], AllReduce("sum")(g))]

    def R_op(self, inputs, eval_points):
        (dx,) = eval_points
        return [None if dx is None else self(dx)]


def all_gather(x: Any) -> Variable:
    """Every rank's x concatenated along the first axis, in rank order."""
    return AllGather()(x)


class OwnRows(CollectiveOp):
    """This rank's rows of a gathered array (all_gather's gradient): `total` holds every
    rank's rows in rank order, x is this rank's part (its length gives the offsets)."""

    __props__ = ()

    def make_node(self, x, total):
        return Apply(self, [x, total], [total.type.clone(shape=x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        x, total = inputs
        lengths = _lengths(x.shape[0], "all_gather (gradient)")
        start = int(lengths[:world().Get_rank()].sum())
        output_storage[0][0] = np.array(total[start:start + x.shape[0]])

    def connection_pattern(self, node):
        return [[False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        from sympile.graph.utils import MethodNotDefined
        raise MethodNotDefined("OwnRows has no derivative")


class Broadcast(CollectiveOp):
    """The root rank's x on every rank (the others' x gives only the type)."""

    __props__ = ("root",)

    def __init__(self, root: int = 0):
        if not isinstance(root, (int, np.integer)) or root < 0:
            raise ValueError(f"broadcast: root must be a rank (an int >= 0), got {root!r}")
        self.root = int(root)

    def make_node(self, x):
        x = as_tensor_variable(x, op="broadcast", argument="x")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        if self.root >= size():
            raise ValueError(f"broadcast: root {self.root} is not a rank of {size()}")
        value = _buffer(inputs[0])
        header = np.array([value.ndim, *value.shape], dtype=np.int64)
        lengths = np.zeros(1, dtype=np.int64)
        lengths[0] = header.size
        wait(world().Ibcast(lengths, root=self.root), "broadcast")
        if world().Get_rank() != self.root:
            header = np.empty(int(lengths[0]), dtype=np.int64)
        wait(world().Ibcast(header, root=self.root), "broadcast")
        result = value.copy() if world().Get_rank() == self.root else \
            np.empty(tuple(int(s) for s in header[1:]), dtype=value.dtype)
        if result.ndim != value.ndim:
            raise ValueError(f"broadcast: the root's array has {result.ndim} dimensions, this "
                             f"rank's type {value.ndim}")
        joined("broadcast")
        world().Bcast(result, root=self.root)
        output_storage[0][0] = result

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        return [AtRoot(self.root)(AllReduce("sum")(g))]

    def R_op(self, inputs, eval_points):
        (dx,) = eval_points
        return [None if dx is None else self(dx)]


class AtRoot(CollectiveOp):
    """x on the root rank, zeros on the others (broadcast's gradient)."""

    __props__ = ("root",)

    def __init__(self, root: int):
        self.root = root

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        output_storage[0][0] = np.array(x) if world().Get_rank() == self.root else \
            np.zeros_like(x)

    def L_op(self, inputs, outputs, output_grads):
        return [AtRoot(self.root)(output_grads[0])]


def broadcast(x: Any, root: int = 0) -> Variable:
    """The root rank's x, on every rank."""
    return Broadcast(root)(x)
