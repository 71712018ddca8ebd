"""The inplace forms of the BLAS update and indexed-write ops: each computes what its base op
computes, written over its first input (destroy_map {0: [0]}), so the result needs no new
array. Only the inplace rewrites (sympile.tensor.rewriting.inplace) create them, when the
graph's DestroyHandler says the first input's value is needed by nobody else.

  GemmInplace                  z <- alpha * dot(x, y) + beta * z
  GemvInplace                  y <- alpha * dot(a, x) + beta * y
  GerInplace                   a <- a + alpha * outer(x, y)
  IncSubtensorInplace          x[index] <- y, or x[index] += y (basic index)
  AdvancedIncSubtensorInplace  the same for an advanced index

Elementwise ops have their inplace form in Elemwise itself (inplace_pattern); Theano's
T.inplace names are here: `exp_inplace`, `add_inplace`, ... for every elementwise function of
sympile.tensor.math, each an Elemwise writing its output over its first input (a graph
using one compiles with function(..., accept_inplace=True), as in Theano). Derivatives are
the base op's: its formula, never the overwriting form. The C backend's BLAS calls write over
the destroyed input when the op has a destroy_map (sympile.tensor.blas.blas_c), and so does the C of
the indexed writes (sympile.tensor.subtensor: inc_c.py, basic_c.py, rows_c.py).
"""

from __future__ import annotations

import numpy as np

from sympile.graph.op import Op
from sympile.tensor import math
from sympile.tensor.blas.gemm import Gemm, Gemv, Ger, check_runtime_lengths
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.subtensor import (
    AdvancedBooleanIncSubtensor,
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    IncSubtensor,
)
from sympile.tensor.subtensor.ops import apply_numpy_index, numpy_index

__all__ = ["AdvancedIncSubtensorInplace", "GemmInplace", "GemvInplace", "GerInplace",
           "IncSubtensorInplace", "base_form", "inplace_form", "register_inplace_form"]


def _elementwise_inplace() -> dict[str, Elemwise]:
    """Theano's T.inplace.<name>_inplace: each one-output elementwise op of tensor.math,
    written over its first input."""
    ops = {}
    for name in math.__all__:
        op = getattr(math, name)
        if isinstance(op, Elemwise) and op.scalar_op.nout == 1:
            inplace = Elemwise(op.scalar_op, ((0, 0),), name=getattr(op, "__name__", name))
            inplace.__doc__ = (f"{name}, written over its first input (Theano's "
                               f"T.inplace.{name}_inplace; compile with accept_inplace=True).")
            ops[f"{name}_inplace"] = inplace
    return ops


_ELEMENTWISE_INPLACE = _elementwise_inplace()
globals().update(_ELEMENTWISE_INPLACE)
__all__ += sorted(_ELEMENTWISE_INPLACE)  # noqa: PLE0605 - the names just made


class GemmInplace(Gemm):
    """Gemm written over z (input 0)."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        z, alpha, x, y, beta = inputs
        check_runtime_lengths(self, "the columns of x and the rows of y", [x.shape[1], y.shape[0]])
        check_runtime_lengths(self, "the rows of z and of x", [z.shape[0], x.shape[0]])
        check_runtime_lengths(self, "the columns of z and of y", [z.shape[1], y.shape[1]])
        product = np.dot(x, y)
        product *= alpha
        # As in Gemm, beta * z is computed even for beta = 0, so a NaN in z propagates.
        z *= beta
        z += product
        output_storage[0][0] = z

    def __str__(self):
        return "Gemm_inplace"


class GemvInplace(Gemv):
    """Gemv written over y (input 0)."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        y, alpha, a, x, beta = inputs
        check_runtime_lengths(self, "the columns of a and x", [a.shape[1], x.shape[0]])
        check_runtime_lengths(self, "y and the rows of a", [y.shape[0], a.shape[0]])
        product = np.dot(a, x)
        product *= alpha
        y *= beta
        y += product
        output_storage[0][0] = y

    def __str__(self):
        return "Gemv_inplace"


class GerInplace(Ger):
    """Ger written over a (input 0)."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        a, alpha, x, y = inputs
        check_runtime_lengths(self, "the rows of a and x", [a.shape[0], x.shape[0]])
        check_runtime_lengths(self, "the columns of a and y", [a.shape[1], y.shape[0]])
        product = np.outer(x, y)
        product *= alpha
        a += product
        output_storage[0][0] = a

    def __str__(self):
        return "Ger_inplace"


class IncSubtensorInplace(IncSubtensor):
    """IncSubtensor (set_subtensor / inc_subtensor, basic index) written over x (input 0)."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        x, y, *index_values = inputs
        index = numpy_index(self.idx_list, index_values) + (Ellipsis,)
        region = apply_numpy_index(self, x, index)
        self.check_value(node, y, region.shape)
        if self.set_instead_of_inc:
            region[...] = y
        else:
            region += y
        output_storage[0][0] = x

    def R_op(self, inputs, eval_points):
        return IncSubtensor(self.idx_list, self.set_instead_of_inc).R_op(inputs, eval_points)

    def __str__(self):
        return f"{super().__str__()}_inplace"


class AdvancedIncSubtensorInplace(AdvancedIncSubtensor):
    """AdvancedIncSubtensor written over x (input 0)."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        x, y, *index_values = inputs
        # Checked before anything is written, so a bad value leaves x as it was.
        region = self._runtime_region(x, index_values)
        self.check_value(node, y, region)
        index = numpy_index(self.idx_list, index_values)
        if self.set_instead_of_inc:
            x[index] = y
        elif self.ignore_duplicates:
            x[index] += y
        else:
            np.add.at(x, index, y)
        output_storage[0][0] = x

    def R_op(self, inputs, eval_points):
        base = AdvancedIncSubtensor(self.idx_list, self.set_instead_of_inc,
                                    self.ignore_duplicates)
        return base.R_op(inputs, eval_points)

    def __str__(self):
        return f"{super().__str__()}_inplace"


# Each base op class and its overwriting form; both take the base op's props as arguments.
_INPLACE_CLASSES = {Gemm: GemmInplace, Gemv: GemvInplace, Ger: GerInplace,
                    IncSubtensor: IncSubtensorInplace,
                    AdvancedIncSubtensor: AdvancedIncSubtensorInplace}
_BASE_CLASSES = {inplace: base for base, inplace in _INPLACE_CLASSES.items()}
# Theano's AdvancedIncSubtensor1 (rows of the first axis) and AdvancedBooleanIncSubtensor
# (masks) overwrite as any advanced write.
_INPLACE_CLASSES[AdvancedIncSubtensor1] = AdvancedIncSubtensorInplace
_INPLACE_CLASSES[AdvancedBooleanIncSubtensor] = AdvancedIncSubtensorInplace


def register_inplace_form(base: type, inplace: type) -> None:
    """Make `inplace` (which overwrites input 0 and takes `base`'s props) the overwriting
    form of `base`, for an op family above this layer (the sparse products)."""
    _INPLACE_CLASSES[base] = inplace
    _BASE_CLASSES[inplace] = base


def inplace_form(op: Op) -> Op | None:
    """The op of this module computing `op` over its input 0, or None if it has none."""
    inplace = _INPLACE_CLASSES.get(type(op))
    return None if inplace is None else inplace(*op._props())


def base_form(op: Op) -> Op | None:
    """The op computing what the overwriting `op` computes into a new array (inplace_form's
    inverse; an Elemwise without its inplace_pattern), or None if `op` overwrites nothing
    this module knows."""
    if isinstance(op, Elemwise):
        return Elemwise(op.scalar_op, (), op.name) if op.inplace_pattern else None
    base = _BASE_CLASSES.get(type(op))
    return None if base is None else base(*op._props())
