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

The C backend runs them with collectives.c, which calls the MPI library mpi4py loaded with
no Python in between; perform() calls mpi4py on the arrays' buffers (no pickling), with the
same messages, so that the two can meet across ranks. Both use: the non-blocking collective,
waited for with init()'s timeout (one collective: a barrier before the blocking one cost
2 us more per call, and the blocking one was no faster at any size, 4 bytes to 11 MB on two
ranks). all_reduce reduces in place in buffers kept for the process (see _work_buffer), not
in a new array each call, and takes several tensors in one call (a bucket). Where other
work can overlap it, a compiled all_reduce is two nodes, AllReduceStart and AllReduceWait
(rewriting.py, in_flight.c). Collectives are matched by order: every rank must run them in
the same order, which the same program gives (graphs compile to the same order of nodes in
every process, on either backend).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from typing import Any

import numpy as np

from sympile.distributed.capi import DTYPES, OPERATIONS, c_types
from sympile.distributed.world import size, wait, world
from sympile.graph.basic import Apply, Variable
from sympile.graph.ccode import CCode, c_file, render
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from sympile.tensor.basic.ops import as_tensor_variable
from sympile.tensor.math import eq
from sympile.tensor.type import TensorType

__all__ = ["AllGather", "AllReduce", "AllReduceStart", "AllReduceWait", "Broadcast",
           "all_gather", "all_reduce", "broadcast"]

_OPS = ("sum", "mean", "max", "min")


def _mpi_op(name: str):
    from mpi4py import MPI
    return {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[name]


def _buffer(value: np.ndarray) -> np.ndarray:
    """value as a C-contiguous buffer, its shape kept (np.ascontiguousarray makes a 0-d
    array 1-d)."""
    return np.asarray(value, order="C")


# One buffer, reused by every all_reduce of this process: MPICH pays for each buffer address
# it has not seen before (a new 11 MB buffer a call cost 4-5 ms more here, against 1.7 ms for
# the whole in-place all-reduce of a buffer it knows). Calls run one at a time (collectives
# are matched by order across ranks).
_WORK: list[np.ndarray] = [np.empty(0, np.uint8)]


def _work_buffer(nbytes: int, slot: int = 0) -> np.ndarray:
    """The process's all-reduce buffer `slot` (0: AllReduce's; one per collective in flight
    for AllReduceStart), at least `nbytes` long (grown, never shrunk)."""
    while len(_WORK) <= slot:
        _WORK.append(np.empty(0, np.uint8))
    if _WORK[slot].nbytes < nbytes:
        _WORK[slot] = np.empty(nbytes, np.uint8)
    return _WORK[slot][:nbytes]


def _packed(values: list[np.ndarray], slot: int = 0) -> np.ndarray:
    """The arrays `values` (of one dtype), one after the other in work buffer `slot`."""
    values = [_buffer(value) for value in values]
    work = _work_buffer(sum(value.nbytes for value in values), slot).view(values[0].dtype)
    start = 0
    for value in values:
        work[start:start + value.size] = value.reshape(-1)
        start += value.size
    return work


def _unpack(op: str, work: np.ndarray, values: list[np.ndarray], output_storage) -> None:
    """The reduced `work` into arrays shaped as `values`, divided by the number of ranks
    for 'mean'."""
    start = 0
    for cell, value in zip(output_storage, values):
        piece = work[start:start + value.size].reshape(np.shape(value))
        cell[0] = np.divide(piece, size()) if op == "mean" else piece.copy()
        start += value.size


# Broadcast's header: ndim, then the lengths (numpy's most dimensions).
_HEADER = 65


@functools.cache
def _collectives_c(handle: str, request: str) -> str:
    """collectives.c for an MPI library whose handles and requests have these C types."""
    return render(c_file(__file__, "collectives.c"), {
        "HANDLE": handle, "REQUEST": request, "INT64": DTYPES.index("int64"),
        "N_TYPES": len(DTYPES), "HEADER": _HEADER})


@functools.cache
def _in_flight_unit(handle: str, request: str) -> tuple[str, str, dict[str, str]]:
    """The library unit of the split all-reduce (collectives.c, then in_flight.c), the
    declarations of its start and finish functions for the op units, and the names of its
    functions (start, finish, progress), named by the unit's text."""
    unit = _collectives_c(handle, request) + c_file(__file__, "in_flight.c")
    digest = hashlib.sha256(unit.encode()).hexdigest()[:16]
    names = {name: f"sympile_mpi_{name}_{digest}" for name in ("start", "finish", "progress")}
    declarations = (
        f"int {names['start']}(PyArrayObject *const *, int, int, int, const char *, "
        f"PyArrayObject **);\n"
        f"int {names['finish']}(PyArrayObject *, PyArrayObject *const *, PyArrayObject **, "
        f"int, int, const char *);\n")
    return render(unit, names), declarations, names


class CollectiveOp(Op):
    """An op whose value depends on the other ranks (or on this rank's number): never
    computed while compiling, whatever its inputs."""

    def do_constant_folding(self, fgraph, node) -> bool:
        return False

    def _c_code(self, node, names, call: str, in_flight: bool = False) -> CCode | None:
        """The node's C: `call`, given `inputs`, the array of the node's inputs, and
        `outputs`, of its outputs, under the node's names; a collectives.c function, or with
        `in_flight` one of in_flight.c's, its name given by `call`'s {start} or {finish}.
        None before init() (the node then runs perform(), which asks for init())."""
        types = c_types()
        if types is None or any(v.type.dtype not in DTYPES
                                for v in node.inputs + node.outputs):
            return None
        if in_flight:
            unit, declarations, functions = _in_flight_unit(*types)
            call = call.format(**functions)
            extra = {"support": (declarations,), "units": (unit,),
                     "between_nodes": (functions["progress"],)}
        else:
            extra = {"support": (_collectives_c(*types),)}
        n_outputs = len(names.outputs)
        back = " ".join(f"{name} = outputs[{i}];" for i, name in enumerate(names.outputs))
        return CCode(body=f"""
        PyArrayObject *const inputs[] = {{{", ".join(names.inputs)}}};
        PyArrayObject *outputs[{n_outputs}] = {{{", ".join(names.outputs)}}};
        const int failed = {call};
        {back}
        if (failed) {names.fail}
        """, **extra)


def _check_op(op: str) -> str:
    if op not in _OPS:
        raise ValueError(f"all_reduce: op must be one of {_OPS}, got {op!r}")
    return op


def _bucket(op: str, tensors) -> list[Variable]:
    """all_reduce's tensors, checked: at least one, of one dtype (a float one for 'mean')."""
    if not tensors:
        raise ValueError("all_reduce: needs at least one tensor")
    tensors = [as_tensor_variable(t, op="all_reduce",
                                  argument="x" if len(tensors) == 1 else f"tensors[{i}]")
               for i, t in enumerate(tensors)]
    dtypes = sorted({t.type.dtype for t in tensors})
    if len(dtypes) > 1:
        raise TypeError(f"all_reduce: the tensors of one bucket need one dtype, got "
                        f"{', '.join(dtypes)}")
    if op == "mean" and dtypes[0][0] in "iub":
        raise TypeError(f"all_reduce: 'mean' needs float tensors, got {tensors[0].type}")
    return tensors


class AllReduce(CollectiveOp):
    """The elementwise sum, mean, max or min over every rank of each input: one tensor, or
    several of one dtype reduced in one collective (a bucket: they are packed into the
    process's work buffer, reduced in place and unpacked, so that many small tensors cost
    one call)."""

    __props__ = ("op",)

    def __init__(self, op: str = "sum"):
        self.op = _check_op(op)

    def make_node(self, *tensors):
        tensors = _bucket(self.op, tensors)
        return Apply(self, tensors, [t.type() for t in tensors])

    def perform(self, node, inputs, output_storage):
        from mpi4py import MPI
        work = _packed(inputs)
        wait(world().Iallreduce(MPI.IN_PLACE, work, op=_mpi_op(self.op)),
             f"all_reduce({self.op})")
        _unpack(self.op, work, inputs, output_storage)

    def c_code(self, node, names):
        return self._c_code(node, names, (
            f"sympile_mpi_all_reduce(inputs, outputs, {len(node.inputs)}, "
            f"{OPERATIONS.index(_reduction(self.op))}, "
            f"{int(self.op == 'mean')}, {DTYPES.index(node.inputs[0].type.dtype)}, "
            f'"all_reduce({self.op})")'))

    def infer_shape(self, fgraph, node, input_shapes):
        return list(input_shapes)

    def _reduced(self, op: str, tensors: list[Variable | None]) -> list[Variable | None]:
        """AllReduce(op) of the tensors that are not None, in one bucket; None stays."""
        given = [t for t in tensors if t is not None]
        if not given:
            return list(tensors)
        reduced = AllReduce(op)(*given)
        reduced = iter([reduced] if len(given) == 1 else reduced)
        return [None if t is None else next(reduced) for t in tensors]

    def L_op(self, inputs, outputs, output_grads):
        gradients = self._reduced("sum" if self.op in ("max", "min") else self.op,
                                  [None if is_disconnected(g) else g for g in output_grads])
        if self.op in ("max", "min"):
            gradients = [None if g is None else g * eq(x, y)
                         for g, x, y in zip(gradients, inputs, outputs)]
        return [disconnected_type() if g is None else g for g in gradients]

    def R_op(self, inputs, eval_points):
        if self.op in ("sum", "mean"):
            return self._reduced(self.op, list(eval_points))
        outputs = self(*inputs)
        outputs = [outputs] if len(inputs) == 1 else outputs
        return self._reduced("sum", [None if dx is None else dx * eq(x, y)
                                     for dx, x, y in zip(eval_points, inputs, outputs)])


def all_reduce(x: Any, op: str = "sum") -> Variable | list[Variable]:
    """x reduced elementwise over every rank ('sum', 'mean', 'max' or 'min'); x a tensor, or
    a list of tensors of one dtype, reduced in one collective (a list of results)."""
    if isinstance(x, (list, tuple)):
        reduced = AllReduce(op)(*x)
        return [reduced] if len(x) == 1 else list(reduced)
    return AllReduce(op)(x)


# The collectives AllReduceStart's perform() started, by token (its work buffer's slot).
_IN_FLIGHT: dict[int, Any] = {}


class AllReduceStart(CollectiveOp):
    """Starts all_reduce(op) of the tensors and gives a token for AllReduceWait, which
    finishes it: the nodes that run between them overlap the collective. It runs as soon as
    its inputs are computed (schedule -1); the C backend makes the collective progress
    after every node until its wait. Made from AllReduce by the rewrite
    split_all_reduce."""

    __props__ = ("op",)
    schedule = -1

    def __init__(self, op: str = "sum"):
        self.op = _check_op(op)

    def make_node(self, *tensors):
        tensors = _bucket(self.op, tensors)
        return Apply(self, tensors, [TensorType("int64", shape=())()])

    def perform(self, node, inputs, output_storage):
        from mpi4py import MPI
        slot = next(slot for slot in itertools.count(1) if slot not in _IN_FLIGHT)
        work = _packed(inputs, slot)
        _IN_FLIGHT[slot] = (world().Iallreduce(MPI.IN_PLACE, work, op=_mpi_op(self.op)),
                            work)
        output_storage[0][0] = np.array(slot, dtype=np.int64)

    def c_code(self, node, names):
        return self._c_code(node, names, (
            f"{{start}}(inputs, {len(node.inputs)}, {OPERATIONS.index(_reduction(self.op))}, "
            f"{DTYPES.index(node.inputs[0].type.dtype)}, \"all_reduce({self.op})\", "
            f"&outputs[0])"), in_flight=True)


class AllReduceWait(CollectiveOp):
    """Finishes the all_reduce(op) that AllReduceStart started (its token), giving the
    reduced tensors (shaped as `tensors`, the start's inputs). It runs only when no other
    node can (schedule 1)."""

    __props__ = ("op",)
    schedule = 1

    def __init__(self, op: str = "sum"):
        self.op = _check_op(op)

    def make_node(self, token, *tensors):
        tensors = _bucket(self.op, tensors)
        return Apply(self, [token, *tensors], [t.type() for t in tensors])

    def perform(self, node, inputs, output_storage):
        token, *values = inputs
        if int(token) not in _IN_FLIGHT:
            raise RuntimeError(f"all_reduce({self.op}): no collective in flight for token "
                               f"{int(token)}")
        request, work = _IN_FLIGHT.pop(int(token))
        wait(request, f"all_reduce({self.op})")
        _unpack(self.op, work, values, output_storage)

    def c_code(self, node, names):
        return self._c_code(node, names, (
            f"{{finish}}(inputs[0], inputs + 1, outputs, {len(node.outputs)}, "
            f'{int(self.op == "mean")}, "all_reduce({self.op})")'), in_flight=True)

    def infer_shape(self, fgraph, node, input_shapes):
        return list(input_shapes[1:])


def _reduction(op: str) -> str:
    """The MPI operation of all_reduce's `op` (a mean is a sum, divided afterwards)."""
    return "sum" if op == "mean" else op


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
        # One header per rank: its length, then its other lengths.
        mine = np.array(send.shape, dtype=np.int64)
        headers = np.empty(size() * send.ndim, dtype=np.int64)
        wait(world().Iallgather(mine, headers), "all_gather")
        headers = headers.reshape(size(), send.ndim)
        for other, header in enumerate(headers):
            for axis in range(1, send.ndim):
                if header[axis] != mine[axis]:
                    raise ValueError(f"all_gather: the ranks' arrays differ past the first "
                                     f"axis: rank {other}'s axis {axis} is {header[axis]} "
                                     f"long, rank {world().Get_rank()}'s {mine[axis]}")
        lengths = headers[:, 0]
        result = np.empty((int(lengths.sum()), *send.shape[1:]), dtype=send.dtype)
        counts = lengths * row
        wait(world().Iallgatherv(send, [result, counts]), "all_gather")
        output_storage[0][0] = result

    def c_code(self, node, names):
        return self._c_code(node, names, (
            f"sympile_mpi_all_gather(inputs[0], &outputs[0], "
            f'{DTYPES.index(node.inputs[0].type.dtype)}, "all_gather")'))

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

    def c_code(self, node, names):
        return self._c_code(node, names, "sympile_mpi_own_rows(inputs[0], inputs[1], "
                                         '&outputs[0], "all_gather (gradient)")')

    def connection_pattern(self, node):
        return [[False], [True]]

    def L_op(self, inputs, outputs, output_grads):
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
        header = np.zeros(_HEADER, dtype=np.int64)
        header[:value.ndim + 1] = [value.ndim, *value.shape]
        wait(world().Ibcast(header, root=self.root), "broadcast")
        if header[0] != value.ndim:
            raise ValueError(f"broadcast: the root's array has {header[0]} dimensions, this "
                             f"rank's type {value.ndim}")
        result = value.copy() if world().Get_rank() == self.root else \
            np.empty(tuple(int(s) for s in header[1:value.ndim + 1]), dtype=value.dtype)
        wait(world().Ibcast(result, root=self.root), "broadcast")
        output_storage[0][0] = result

    def c_code(self, node, names):
        return self._c_code(node, names, (
            f"sympile_mpi_broadcast(inputs[0], &outputs[0], {self.root}, "
            f'{DTYPES.index(node.inputs[0].type.dtype)}, "broadcast")'))

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

    def c_code(self, node, names):
        return self._c_code(node, names, f"sympile_mpi_at_root(inputs[0], &outputs[0], "
                                         f'{self.root}, "broadcast (gradient)")')

    def L_op(self, inputs, outputs, output_grads):
        return [AtRoot(self.root)(output_grads[0])]


def broadcast(x: Any, root: int = 0) -> Variable:
    """The root rank's x, on every rank."""
    return Broadcast(root)(x)
