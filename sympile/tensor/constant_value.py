"""get_scalar_constant_value (Theano's): the value a scalar expression takes in every call,
where the graph alone decides it, else NotScalarConstantError.

It looks through the ops that pass a value on unchanged (DimShuffle, SpecifyShape,
Unbroadcast, an Assert whose conditions it decides hold, the scalar/tensor conversions, the
value of an Alloc), reads an element of a constant or of a vector of scalars at indices it
decides, static lengths (shape_i, shape(x)[i]) and, with elemwise=True, computes elementwise
ops whose inputs are all constant. A constant array counts if all its elements are equal
(Theano's unique value); an empty one never does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Constant, Variable
from sympile.tensor.basic import Alloc, ScalarFromTensor, TensorFromScalar
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.raise_op import Assert
from sympile.tensor.shape import Shape, ShapeI, SpecifyShape, Unbroadcast
from sympile.tensor.shape.ops import MakeVector, vector_static_entries
from sympile.tensor.subtensor import Subtensor
from sympile.tensor.subtensor.ops import IndexInput
from sympile.tensor.variable import as_tensor_variable

__all__ = ["NotScalarConstantError", "get_scalar_constant_value", "extract_constant",
           "get_vector_length"]


class NotScalarConstantError(Exception):
    """The variable's value is not one constant scalar that the graph alone decides."""


def _unique(data: Any, variable: Any) -> np.ndarray:
    data = np.asarray(data)
    if data.size == 0 or data.dtype.kind not in "biufc":
        raise NotScalarConstantError(f"{variable} is not a numeric scalar constant")
    first = data.reshape(-1)[0]
    if data.size > 1 and not (np.all(data == first) or np.all(np.isnan(data))):
        raise NotScalarConstantError(f"{variable} holds different values")
    return np.array(first, dtype=data.dtype)


def _static_length(variable: Variable, axis: int) -> np.ndarray:
    length = variable.type.shape[axis]
    if length is None:
        raise NotScalarConstantError(f"the length of axis {axis} of {variable} is not static")
    return np.array(length, dtype="int64")


def get_scalar_constant_value(v: Any, elemwise: bool = True,
                              only_process_constants: bool = False,
                              max_recur: int = 10) -> np.ndarray:
    """The 0-d array that `v` (a number, an array or a Variable) always equals.

    only_process_constants: look at constants only, through no op; elemwise: compute
    elementwise ops of constants; max_recur: how many ops deep to look. NotScalarConstantError
    where the value is not decided by the graph or is not one scalar."""
    if not isinstance(v, Variable):
        return _unique(v, repr(v))
    if isinstance(v, Constant):
        return _unique(v.data, v)
    node = v.owner
    if node is None or only_process_constants or max_recur <= 0:
        raise NotScalarConstantError(f"{v} is not a constant")

    def inner(variable: Variable) -> np.ndarray:
        return get_scalar_constant_value(variable, elemwise, only_process_constants,
                                         max_recur - 1)

    op = node.op
    if isinstance(op, (DimShuffle, SpecifyShape, Unbroadcast, Alloc)):
        return inner(node.inputs[0])
    if isinstance(op, ShapeI):
        return _static_length(node.inputs[0], op.axis)
    if isinstance(op, Assert):
        # The value only where the graph decides that every condition holds.
        if not all(inner(condition) for condition in node.inputs[1:]):
            raise NotScalarConstantError(f"{v}: its assertion fails")
        return inner(node.inputs[0])
    if isinstance(op, (ScalarFromTensor, TensorFromScalar)):
        return inner(node.inputs[0])
    if isinstance(op, Subtensor):
        return _indexed(node, inner)
    if isinstance(op, Elemwise) and elemwise and len(node.outputs) == 1:
        values = [inner(variable) for variable in node.inputs]
        with np.errstate(all="ignore"):
            result = op.scalar_op.impl(*values)
        return _unique(np.asarray(result).astype(v.type.dtype), v)
    raise NotScalarConstantError(f"{v} ({op}) is not a constant the graph decides")


def _indexed(node, inner) -> np.ndarray:
    """The element x[i, j, ...] a Subtensor node takes with integer indices (constants, or
    scalars the graph decides) of x: a constant, shape(y) (y's static lengths), or a vector
    made of scalars (MakeVector)."""
    x, *index_inputs = node.inputs
    indices, position = [], 0
    for entry in node.op.idx_list:
        if isinstance(entry, int):
            indices.append(entry)
        elif isinstance(entry, IndexInput) and entry.kind == "scalar":
            indices.append(int(inner(index_inputs[position])))
            position += 1
        else:
            raise NotScalarConstantError(f"{node.outputs[0]} takes a slice or an array index")
    if len(indices) != x.type.ndim:
        raise NotScalarConstantError(f"{node.outputs[0]} is not one element of {x}")
    if isinstance(x, Constant):
        return _unique(x.data[tuple(indices)], node.outputs[0])
    owner = x.owner
    if owner is not None and isinstance(owner.op, Shape):
        return _static_length(owner.inputs[0], indices[0])
    if owner is not None and isinstance(owner.op, MakeVector):
        return inner(owner.inputs[indices[0]])
    raise NotScalarConstantError(f"{node.outputs[0]} indexes {x}, which is not a constant")


def extract_constant(x: Any, elemwise: bool = True,
                     only_process_constants: bool = False) -> Any:
    """Theano's extract_constant: the 0-d array get_scalar_constant_value finds for `x` (a
    new array each call, so changing it changes no constant), else `x` itself."""
    try:
        return get_scalar_constant_value(x, elemwise, only_process_constants).copy()
    except NotScalarConstantError:
        return x


def get_vector_length(v: Any) -> int:
    """The number of entries of the 1-d `v`, known when the graph is built (its static
    shape, a constant, shape(x), a MakeVector of scalars); ValueError where only a call
    decides it."""
    v = as_tensor_variable(v, op="get_vector_length", argument="v")
    if v.type.ndim != 1:
        raise TypeError(f"get_vector_length: expected a vector, got {v} of type {v.type}")
    entries = vector_static_entries(v)
    if entries is None:
        raise ValueError(f"get_vector_length: the length of {v} ({v.type}) is not known "
                         f"before the function runs")
    return len(entries)
