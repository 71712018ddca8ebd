"""Elemwise (a scalar Op lifted to broadcasting tensors) and DimShuffle. Their L_op and R_op
are in sympile/tensor/derivatives.py (they sum and cast with ops built on these)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.op import Op
from sympile.scalar.basic import ScalarOp, elementwise_impl
from sympile.tensor.elemwise.elemwise_c import dimshuffle_c_code, elemwise_c_code
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable, constant, is_python_scalar

__all__ = ["DimShuffle", "Elemwise", "broadcast_static_shape"]


def broadcast_static_shape(shapes: Sequence[tuple], op: Any = "broadcast") -> tuple:
    """numpy broadcasting of static shapes (None = unknown); ValueError if they conflict."""
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    result = []
    for axis in range(ndim):
        sizes = {s[axis] for s in padded}
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            raise ValueError(f"{op}: shapes {', '.join(map(str, shapes))} cannot be broadcast "
                             f"together (axis {axis} has lengths {sorted(known)})")
        if known:
            result.append(known.pop())
        elif sizes == {1}:
            result.append(1)
        else:
            result.append(None)
    return tuple(result)


_SIGNED_DTYPES = ("int8", "int16", "int32", "int64")
_UNSIGNED_DTYPES = ("uint8", "uint16", "uint32", "uint64")


def _python_kind_rank(value: Any) -> int:
    """0 for a bool, 1 for an int, 2 for a float, 3 for a complex (numpy's kind order)."""
    if isinstance(value, bool):
        return 0
    return 1 if isinstance(value, int) else 2 if isinstance(value, float) else 3


def _smallest_integer_dtype(value: int, signed: bool) -> str | None:
    for name in _SIGNED_DTYPES if signed else _UNSIGNED_DTYPES:
        info = np.iinfo(name)
        if info.min <= value <= info.max:
            return name
    return None


def _weak_dtype(value: Any, tensor_dtypes: Sequence[str]) -> tuple[str | None, bool]:
    """(dtype, in_range) for a Python scalar operand next to tensors of `tensor_dtypes`, as
    numpy 2 (NEP 50) treats it: 'weak', it takes the dtype the tensors promote to with a
    Python value of its kind (float32 tensor + 1.5 stays float32, int8 tensor + 1 stays int8).

    An int out of that dtype's range (where numpy raises OverflowError) is widened to the
    smallest integer dtype holding both, as Theano did (int8 + 1000 -> int16, uint8 + -1 ->
    int16); in_range is then False, and the dtype None when no integer dtype can (int64 and
    2**63).
    """
    promoted = np.result_type(*tensor_dtypes, value)
    if promoted.kind not in "iu" or isinstance(value, bool):
        return promoted.name, True
    info = np.iinfo(promoted)
    if info.min <= value <= info.max:
        return promoted.name, True
    candidate = _smallest_integer_dtype(value, signed=promoted.kind == "i" or value < 0)
    if candidate is not None:
        widened = np.result_type(*tensor_dtypes, candidate)
        if widened.kind in "iu":
            return widened.name, False
    return None, False


def _weak_scalar_dtype(value: Any, tensor_dtypes: list[str]) -> str | None:
    """The dtype a Python scalar operand takes next to tensors of `tensor_dtypes` (see
    _weak_dtype; None when there is no tensor). Where no integer dtype holds the value, the
    dtype numpy promotes it to (float64 for int64 and 2**63)."""
    if not tensor_dtypes:
        return None
    dtype, _ = _weak_dtype(value, tensor_dtypes)
    if dtype is None:
        return np.result_type(*tensor_dtypes, np.min_scalar_type(value)).name
    return dtype


def _numpy_output_dtypes(op: Elemwise, probes: Sequence[Any]) -> tuple[str, ...] | None:
    """The output dtypes numpy gives the op on `probes` (empty arrays and Python scalars, which
    numpy treats as weak); None where numpy refuses or the op is not numpy's."""
    if not op.scalar_op.impl_takes_arrays:
        return None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = op.scalar_op.impl(*probes)
    except (TypeError, ValueError, OverflowError):
        return None
    if op.scalar_op.nout == 1:
        results = (results,)
    return tuple(np.asarray(r).dtype.name for r in results)


def _as_operands(op: Elemwise, inputs: Sequence[Any]) -> list:
    """The inputs as tensor variables; Python scalars become constants of their weak dtype
    (see _weak_dtype)."""
    variables: list[Any] = [None if is_python_scalar(x)
                            else as_tensor_variable(x, op=op, argument=index)
                            for index, x in enumerate(inputs)]
    promoted = op.scalar_op.promoted_inputs
    promoted = range(len(inputs)) if promoted is None else promoted
    for index, value in enumerate(inputs):
        if variables[index] is None and index not in promoted:
            variables[index] = as_tensor_variable(value, op=op, argument=index)
    tensor_dtypes = [variables[i].type.dtype for i in promoted if variables[i] is not None]
    weak = [i for i in promoted if variables[i] is None]
    if not weak:
        return variables
    if not tensor_dtypes:
        # Only Python scalars take part: the one of the highest kind (complex > float > int >
        # bool) takes its default dtype (floatX for a float) and the others are weak to it.
        anchor = max(weak, key=lambda i: _python_kind_rank(inputs[i]))
        variables[anchor] = as_tensor_variable(inputs[anchor], op=op, argument=anchor)
        tensor_dtypes = [variables[anchor].type.dtype]
        weak.remove(anchor)
    if op.scalar_op.logical:
        for i in weak:
            variables[i] = as_tensor_variable(bool(inputs[i]), op=op, argument=i)
        return variables
    values = {i: inputs[i] for i in weak}
    chosen = {i: _weak_dtype(inputs[i], tensor_dtypes) for i in weak}
    out_of_range = [i for i in weak if not chosen[i][1]]
    if out_of_range and not op.scalar_op.comparison:
        # numpy accepts an int out of the tensor's range when the op has no integer loop: it
        # converts the int to the loop's dtype (logaddexp(uint8, -1) is float16,
        # logical_and(uint64, -1) is bool). Do the same, so that our dtype is numpy's.
        numpy_dtypes = _numpy_output_dtypes(op, [np.zeros(0, v.type.dtype) if v is not None
                                                 else inputs[i]
                                                 for i, v in enumerate(variables)])
        if numpy_dtypes is not None:
            for i in out_of_range:
                chosen[i] = (numpy_dtypes[0], True)
    for i in weak:
        dtype = chosen[i][0]
        if dtype is None and op.scalar_op.comparison:
            # An infinity of the value's sign compares with every integer as the value does.
            dtype, values[i] = "float64", float("inf") if values[i] > 0 else float("-inf")
        elif dtype is None:
            raise OverflowError(
                f"{op}: the Python integer {values[i]} is out of the range of "
                f"{np.result_type(*tensor_dtypes, values[i]).name}, and no integer dtype holds "
                f"both it and the {', '.join(tensor_dtypes)} operand; cast the tensor (e.g. "
                f"x.astype('float64')) or pass a numpy scalar of the dtype you want")
        # The conversion may overflow to inf (float16 + 1e6), as in numpy: no warning.
        with np.errstate(all="ignore"):
            variables[i] = as_tensor_variable(values[i], dtype=dtype, op=op, argument=i)
    return variables


class Elemwise(Op):
    """Applies `scalar_op` elementwise with numpy broadcasting.

    Inputs of lower rank are padded on the left with broadcastable dimensions. A dimension of
    unknown length is never broadcast at run time: to broadcast a length-1 dimension it must
    be known to be 1 (row, col, dimshuffle('x', ...), specify_shape), so that gradients can be
    summed back over exactly the broadcast dimensions (as in Theano and PyTensor).

    inplace_pattern: ((output index, input index), ...): outputs written over inputs.
    An associative binary op (add, mul, maximum, ...) takes more than two inputs, combined
    from left to right, as Theano's did.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: tuple[tuple[int, int], ...] = (),
                 name: str | None = None):
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(inplace_pattern)
        self.name = name
        self.destroy_map = {out: [inp] for out, inp in self.inplace_pattern}

    def __str__(self):
        # Theano's text: Elemwise{add,no_inplace} for T.add, add_inplace for T.inplace's.
        text = self.name or str(self.scalar_op)
        if self.inplace_pattern:
            return text + "_inplace"
        return f"Elemwise{{{text},no_inplace}}"

    def make_node(self, *inputs):
        nin = self.scalar_op.nin
        if nin == 2 and len(inputs) > 2 and self.scalar_op.associative \
                and not self.inplace_pattern:
            # Theano's add(a, b, c) and mul(...): combined from left to right.
            result = inputs[0]
            for value in inputs[1:-1]:
                result = self(result, value)
            return self.make_node(result, inputs[-1])
        if len(inputs) != nin:
            several = nin == 2 and self.scalar_op.associative and not self.inplace_pattern
            raise TypeError(f"{self}: expected {'at least ' * several}{nin} "
                            f"input{'s' * (nin != 1)}, got {len(inputs)}")
        variables = _as_operands(self, inputs)
        ndim = max(v.type.ndim for v in variables)
        aligned = [pad_left(v, ndim) for v in variables]
        shape = broadcast_static_shape([v.type.shape for v in aligned], op=self)
        dtypes = self.scalar_op.output_dtypes(*(v.type.dtype for v in aligned))
        for out_index, in_index in self.inplace_pattern:
            in_type = aligned[in_index].type
            if in_type.dtype != dtypes[out_index] or in_type.shape != shape:
                raise TypeError(f"{self}: output {out_index} cannot be written over input "
                                f"{in_index} of type {in_type}")
        outputs = [tensor_type(dtype, shape)() for dtype in dtypes]
        return Apply(self, aligned, outputs)

    def perform(self, node, inputs, output_storage):
        check_runtime_broadcast(self, node.inputs, inputs)
        with np.errstate(all="ignore"):
            results = elementwise_impl(self.scalar_op, *inputs)
        if len(node.outputs) == 1:
            results = (results,)
        for storage, result, variable in zip(output_storage, results, node.outputs):
            result = np.asarray(result)
            if result.dtype.name != variable.type.dtype:
                result = result.astype(variable.type.dtype)
            elif any(np.may_share_memory(result, value) for value in inputs):
                # np.real of a float array is that array: Elemwise outputs are never views.
                result = result.copy()
            storage[0] = result
        for out_index, in_index in self.inplace_pattern:
            target = inputs[in_index]
            target[...] = output_storage[out_index][0]
            output_storage[out_index][0] = target

    def infer_shape(self, fgraph, node, input_shapes):
        return [broadcast_infer_shape(node, input_shapes)] * len(node.outputs)

    def length_constraints(self, node):
        """On each axis, every input that is not broadcast (static length 1) has the length
        of the first such input: the only way an elementwise op fails."""
        pairs = []
        for axis in range(node.outputs[0].type.ndim):
            free = [index for index, variable in enumerate(node.inputs)
                    if variable.type.shape[axis] != 1]
            pairs += [((free[0], axis), (other, axis)) for other in free[1:]]
        return pairs

    def c_code(self, node, names):
        """One loop over the broadcast output running the scalar op's C (see
        sympile.tensor.elemwise.elemwise_c); None where the scalar op has no C for these dtypes."""
        return elemwise_c_code(self, node, names)



def broadcast_infer_shape(node: Apply, input_shapes: Sequence[tuple]) -> tuple:
    """The output shape of a node whose inputs (of one rank) broadcast as Elemwise's do: the
    output's static lengths, else on each axis the length of the first input whose type does
    not say 1 (the run-time check makes every such input agree)."""
    shape = []
    for axis, static in enumerate(node.outputs[0].type.shape):
        if static is not None:
            shape.append(static)
            continue
        shape.append(next(input_shape[axis]
                          for variable, input_shape in zip(node.inputs, input_shapes)
                          if variable.type.shape[axis] != 1))
    return tuple(shape)


def pad_left(variable, ndim: int):
    """`variable` with broadcastable axes added in front up to `ndim` dimensions."""
    missing = ndim - variable.type.ndim
    if missing == 0:
        return variable
    if isinstance(variable, Constant):
        return constant(variable.data.reshape((1,) * missing + variable.data.shape))
    return DimShuffle(variable.type.ndim, ("x",) * missing + tuple(range(variable.type.ndim)))(
        variable)


def check_runtime_broadcast(op: Elemwise, variables: Sequence[Variable],
                            inputs: Sequence[Any]) -> None:
    """ValueError naming `op` unless the values `inputs` of the aligned input `variables`
    broadcast: on each axis, the inputs whose type does not say length 1 have one length."""
    ndim = max((v.type.ndim for v in variables), default=0)
    for axis in range(ndim):
        length = None
        for variable, value in zip(variables, inputs):
            if variable.type.shape[axis] == 1:
                continue
            size = value.shape[axis]
            if length is None:
                length = size
            elif size != length:
                shapes = ", ".join(str(np.shape(v)) for v in inputs)
                if 1 in (size, length):
                    raise ValueError(
                        f"{op}: input shapes {shapes} differ at axis {axis}, where one input "
                        f"has length 1 at run time but its type does not say the axis is "
                        f"broadcastable; declare it (row/col, dimshuffle('x', ...), "
                        f"specify_shape or a static shape) to broadcast it")
                raise ValueError(f"{op}: input shapes {shapes} cannot be broadcast together "
                                 f"(axis {axis} has lengths {length} and {size})")


class DimShuffle(Op):
    """Reorder, insert ('x': a new axis of length 1) and drop (length-1 only) dimensions.

    new_order: for each output axis, the input axis it takes or 'x'. Returns a view.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order: Sequence[int | str]):
        self.input_ndim = int(input_ndim)
        order = tuple(new_order)
        for axis in order:
            valid_axis = isinstance(axis, (int, np.integer)) and not isinstance(
                axis, (bool, np.bool_)) and 0 <= axis < self.input_ndim
            if not (valid_axis or (isinstance(axis, str) and axis == "x")):
                raise ValueError(f"DimShuffle: {axis!r} in pattern {order} is neither 'x' nor "
                                 f"an axis of a {self.input_ndim}-d input (0 to "
                                 f"{self.input_ndim - 1})")
        self.new_order = tuple(a if a == "x" else int(a) for a in order)
        kept = [axis for axis in self.new_order if axis != "x"]
        if len(set(kept)) != len(kept):
            raise ValueError(f"DimShuffle: pattern {self.new_order} repeats an axis")
        self.drop = tuple(a for a in range(self.input_ndim) if a not in kept)
        self.shuffle = tuple(kept)
        self.augment = tuple(i for i, a in enumerate(self.new_order) if a == "x")

    def __str__(self):
        return f"DimShuffle{{{','.join(str(a) for a in self.new_order)}}}"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        if x.type.ndim != self.input_ndim:
            raise TypeError(f"{self}: expected a {self.input_ndim}-d input, got {x.type}")
        for axis in self.drop:
            if x.type.shape[axis] != 1:
                raise ValueError(f"{self}: cannot drop axis {axis} of {x.type}: only axes of "
                                 f"length 1 (broadcastable) can be dropped")
        shape = tuple(1 if a == "x" else x.type.shape[a] for a in self.new_order)
        return Apply(self, [x], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        result = x.transpose(self.shuffle + self.drop)
        shape = [1 if a == "x" else x.shape[a] for a in self.new_order]
        output_storage[0][0] = result.reshape(shape)

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        return [tuple(1 if a == "x" else shape[a] for a in self.new_order)]

    def c_code(self, node, names):
        """A view with rearranged dimensions and strides (see elemwise_c.py)."""
        return dimshuffle_c_code(self, node, names)



def is_elemwise_of(variable: Any, scalar_op: ScalarOp) -> bool:
    """True if `variable` is computed by Elemwise(scalar_op)."""
    owner = getattr(variable, "owner", None)
    return owner is not None and isinstance(owner.op, Elemwise) \
        and owner.op.scalar_op == scalar_op

