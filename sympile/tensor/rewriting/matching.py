"""The matchers the tensor rewrites share: which node or constant a pattern expects, and how
a replacement is made to fit the Type of what it replaces.

A rule reads as its pattern when these do the looking: `one_plus(v)` is x where v is 1 + x,
`inputs_of(v, scalar.mul)` the factors of a product, `is_zeros(v)` an array of zeros however it
was built. Each rule module imports them from here, so one definition serves all of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.scalar import basic as scalar
from sympile.tensor import math
from sympile.tensor.basic import Alloc, alloc
from sympile.tensor.elemwise.ops import Elemwise, is_elemwise_of
from sympile.tensor.shape import ShapeI, specify_shape
from sympile.tensor.type import TensorType

__all__ = ["as_type_of", "elemwise_lengths", "inputs_of", "is_constant", "is_elemwise",
           "is_real_float", "is_zeros", "like_output", "negate", "one_minus", "one_plus"]


def is_constant(variable: Variable, value: Any) -> bool:
    """True if `variable` is a constant whose every element equals `value` (constants padded
    to the rank of an Elemwise have shape (1,) * ndim)."""
    if not isinstance(variable, Constant) or not isinstance(variable.type, TensorType):
        return False
    data = np.asarray(variable.data)
    with np.errstate(all="ignore"):
        return data.size > 0 and bool(np.all(data == value))


def is_zeros(variable: Variable) -> bool:
    """True if `variable` is alloc(0, ...) or a constant array of zeros."""
    if is_constant(variable, 0):
        return True
    return variable.owner is not None and isinstance(variable.owner.op, Alloc) \
        and is_constant(variable.owner.inputs[0], 0)


def is_elemwise(node: Apply, scalar_op: scalar.ScalarOp) -> bool:
    return isinstance(node.op, Elemwise) and node.op.scalar_op == scalar_op \
        and not node.op.inplace_pattern


def inputs_of(variable: Any, scalar_op: scalar.ScalarOp) -> list[Variable] | None:
    """The inputs of the Elemwise(scalar_op) node computing `variable`, or None."""
    if not is_elemwise_of(variable, scalar_op):
        return None
    return list(variable.owner.inputs)


def is_real_float(variable: Variable) -> bool:
    return variable.type.dtype in scalar.FLOAT_DTYPES


def one_plus(variable: Variable) -> Variable | None:
    """x if `variable` is 1 + x or x + 1 computed in a real float dtype, else None."""
    terms = inputs_of(variable, scalar.add)
    if terms is None or not is_real_float(variable):
        return None
    if is_constant(terms[0], 1):
        return terms[1]
    if is_constant(terms[1], 1):
        return terms[0]
    return None


def one_minus(variable: Variable) -> Variable | None:
    """x if `variable` is 1 - x computed in a real float dtype, else None."""
    terms = inputs_of(variable, scalar.sub)
    if terms is None or not is_real_float(variable) or not is_constant(terms[0], 1):
        return None
    return terms[1]


def negate(variable: Variable) -> Variable:
    """-variable; the input of a neg rather than a double negation."""
    inner = inputs_of(variable, scalar.neg)
    return inner[0] if inner is not None else math.neg(variable)


def elemwise_lengths(node: Apply) -> list[Any]:
    """The output lengths of an Elemwise node: ints where its type knows them, else the
    length of an input that is not broadcast on that axis: an Alloc's length input where
    one is such an input (so that the rewritten graph does not keep the Alloc alive only to
    read its shape), else ShapeI of the first."""
    lengths = []
    for axis, static in enumerate(node.outputs[0].type.shape):
        if static is not None:
            lengths.append(static)
            continue
        sources = [v for v in node.inputs if v.type.shape[axis] != 1]
        if not sources:
            # Every input has length 1 there (a rewrite gave one a more specific type than
            # the node's output was built for): so has the output.
            lengths.append(1)
            continue
        allocated = next((v for v in sources if v.owner is not None
                          and isinstance(v.owner.op, Alloc)), None)
        if allocated is None:
            lengths.append(ShapeI(axis)(sources[0]))
        else:
            lengths.append(allocated.owner.inputs[1 + axis])
    return lengths


def like_output(node: Apply, value: Variable) -> Variable | None:
    """`value` (holding the values of node's output, broadcast or not) made to fit the Type of
    node's only output: cast to its dtype, allocated to its shape if other inputs broadcast it.
    None if it cannot fit."""
    (output,) = node.outputs
    value = math.cast(value, output.type.dtype)
    if value.type.ndim != output.type.ndim:
        return None
    # An axis of static length 1 where the output's is not 1 is broadcast (Elemwise broadcasts
    # no other): is_super alone would accept the smaller array.
    if any(length == 1 and out_length != 1
           for length, out_length in zip(value.type.shape, output.type.shape)):
        value = alloc(value, *elemwise_lengths(node))
    return value if output.type.is_super(value.type) else None


def as_type_of(new: Variable, old: Variable) -> list[Variable] | None:
    """[new] with exactly old's Type (cast to old's dtype, lengths old knows declared by
    specify_shape), or None when new's static shape contradicts old's."""
    new = math.cast(new, old.type.dtype)
    if new.type.ndim != old.type.ndim:
        return None
    missing = []
    for own, wanted in zip(new.type.shape, old.type.shape):
        if own == wanted:
            missing.append(None)
        elif own is None:
            missing.append(wanted)
        else:
            return None
    if any(length is not None for length in missing):
        new = specify_shape(new, missing)
    return [new] if new.type == old.type else None
