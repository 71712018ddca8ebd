"""BLAS specialization: a product and the elementwise terms around it replaced by one BLAS
update (sympile.tensor.blas.gemm), which computes them in one call without the intermediates.

  local_ger   z + alpha * outer(x, y)              -> Ger(z, alpha, x, y)
              (outer(x, y) as mul or dot of the column x[:, None] and the row y[None, :])
  local_gemm  alpha * dot(x, y) + beta * z         -> Gemm(z, alpha, x, y, beta)
  local_gemv  alpha * dot(a, x) + beta * y         -> Gemv(y, alpha, a, x, beta)
              (dot(x, a) of a vector and a matrix: Gemv with a transposed)

A scale is any chain of negations and multiplications by 0-d (or all-length-1) factors, so
z + dot(x, y), z - dot(x, y), dot(x, y) + z, W - lr * dot(x.T, g) and -(b * z) + dot(x, y)
all match (the missing scales are the constants 1 and -1). Plain products stay Dot.

The rules fire only where the update computes exactly what the graph did: every array in the
pattern (z, the product, the operands, each scaled intermediate) has the output's dtype,
float32 or float64, so nothing is upcast or rounded differently; z and the product have the
same static shape pattern, so neither broadcasts against the other (a row or column z added
to a matrix product is left alone); and the product is used only by this sum, so that it is
not computed twice. Scale factors are cast to the output dtype (the elementwise graph did the
same, as its output had that dtype).

They run in blas_db, an EquilibriumDatabase registered in rewrite_db as 'blas' (tags blas,
fast_run) in the blas phase: after canonicalization and stabilization, whose rules match the
elementwise forms, and before the final merge. Ger is tried before Gemm on each node, so
that an outer product becomes the level-2 update.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.scalar import basic as scalar
from sympile.tensor import math
from sympile.tensor.blas.basic import Dot
from sympile.tensor.blas.gemm import BLAS_DTYPES, gemm, gemv, ger
from sympile.tensor.elemwise.ops import DimShuffle, Elemwise, is_elemwise_of
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.shape.ops import declared_like
from sympile.tensor.variable import as_tensor_variable

__all__ = ["blas_db", "declared_replacement", "local_gemm", "local_gemv",
           "local_ger", "sum_of_product_and_z"]

_add = Elemwise(scalar.add)
_sub = Elemwise(scalar.sub)


@dataclass
class _Term:
    """One addend of the sum: sign * prod(factors) * core, the factors 0-d variables."""

    core: Variable
    factors: list[Variable]
    negative: bool
    # The variables between the addend and its core (the addend included), each to be used
    # only along the chain for the product to be computed once.
    chain: list[Variable]

    def scale(self, dtype: str) -> Variable:
        """The 0-d scale of the core, in `dtype`."""
        sign = -1 if self.negative else 1
        if all(isinstance(f, Constant) for f in self.factors):
            # Folded here: constant folding ran before these rules.
            value = reduce(np.multiply, [np.asarray(f.data, dtype=dtype) for f in self.factors],
                           np.asarray(sign, dtype=dtype))
            return as_tensor_variable(np.asarray(value, dtype=dtype))
        factors = [math.cast(f, dtype) for f in self.factors]
        scale = reduce(math.mul, factors)
        return math.neg(scale) if self.negative else scale

    @property
    def is_unscaled(self) -> bool:
        return not self.factors and not self.negative


def _scalar_factor(variable: Variable) -> Variable | None:
    """`variable` as a 0-d variable if it holds one value broadcast by an Elemwise (0-d, a
    constant of length-1 axes or a DimShuffle adding length-1 axes to a 0-d), else None."""
    if variable.type.ndim == 0:
        return variable
    if any(length != 1 for length in variable.type.shape):
        return None
    if isinstance(variable, Constant):
        return as_tensor_variable(np.asarray(variable.data).reshape(()))
    owner = variable.owner
    if owner is not None and isinstance(owner.op, DimShuffle) and owner.op.input_ndim == 0:
        return owner.inputs[0]
    return None


def _term(variable: Variable, negative: bool, dtype: str) -> _Term:
    """`variable` split into its scale and its core: negations and multiplications by 0-d
    factors are peeled off while their results have `dtype`."""
    factors: list[Variable] = []
    chain = [variable]
    while variable.type.dtype == dtype:
        if is_elemwise_of(variable, scalar.neg):
            negative = not negative
            (variable,) = variable.owner.inputs
        elif is_elemwise_of(variable, scalar.mul):
            inputs = variable.owner.inputs
            scalars = [_scalar_factor(v) for v in inputs]
            others = [v for v, s in zip(inputs, scalars) if s is None]
            if len(others) != 1 or others[0].type.shape != variable.type.shape:
                break
            factors.extend(s for s in scalars if s is not None)
            variable = others[0]
        else:
            break
        chain.append(variable)
    return _Term(variable, factors, negative, chain)


def _addends(node: Apply) -> list[tuple[Variable, bool]] | None:
    """The two (variable, negated) addends of a binary add or sub on BLAS dtypes, or None."""
    output = node.outputs[0]
    if output.type.dtype not in BLAS_DTYPES or len(node.inputs) != 2:
        return None
    left, right = node.inputs
    if node.op == _add:
        return [(left, False), (right, False)]
    if node.op == _sub:
        return [(left, False), (right, True)]
    return None


def _used_once(fgraph: FunctionGraph, chain: list[Variable]) -> bool:
    """True if each variable of the chain has one client (the next one up, the sum for the
    addend)."""
    return all(len(fgraph.clients.get(v, ())) == 1 for v in chain)


def _same_pattern(a: Variable, b: Variable) -> bool:
    """True if a and b have the output's rank and neither broadcasts against the other."""
    return a.type.ndim == b.type.ndim \
        and all((m == 1) == (n == 1) for m, n in zip(a.type.shape, b.type.shape))


def sum_of_product_and_z(fgraph: FunctionGraph, node: Apply, rank: int):
    """(product term, z term, dtype) for each way of reading the sum as product + z: the
    product's core has the node's dtype and rank and is used only by this sum, z has the
    node's dtype and the product's shape pattern."""
    addends = _addends(node)
    if addends is None or node.outputs[0].type.ndim != rank:
        return
    dtype = node.outputs[0].type.dtype
    for first, second in ((0, 1), (1, 0)):
        product = _term(*addends[first], dtype)
        z = _term(*addends[second], dtype)
        core = product.core
        if core.owner is None or core.type.dtype != dtype or z.core.type.dtype != dtype \
                or not _used_once(fgraph, product.chain) \
                or not _same_pattern(core, z.core) or not _same_pattern(core, node.outputs[0]):
            continue
        yield product, z, dtype


def declared_replacement(node: Apply, new: Variable) -> list[Variable] | None:
    """[new] declared with the lengths the node's output knows, if its Type then fits."""
    old = node.outputs[0]
    new = declared_like(new, old)
    return [new] if old.type.is_super(new.type) else None


def _vector_of(variable: Variable, order: tuple) -> Variable | None:
    """The vector v if `variable` is DimShuffle(1, order)(v) (a column or a row of v)."""
    owner = variable.owner
    if owner is not None and isinstance(owner.op, DimShuffle) and owner.op.input_ndim == 1 \
            and owner.op.new_order == order:
        return owner.inputs[0]
    return None


@node_rewriter([_add, _sub])
def local_ger(fgraph: FunctionGraph, node: Apply):
    """z + alpha * outer(x, y) -> Ger(z, alpha, x, y), the outer product as the mul or the dot
    of x[:, None] and y[None, :]."""
    for product, z, dtype in sum_of_product_and_z(fgraph, node, 2):
        core = product.core
        if not z.is_unscaled:
            continue
        is_outer = isinstance(core.owner.op, Dot) or is_elemwise_of(core, scalar.mul)
        if not is_outer or len(core.owner.inputs) != 2:
            continue
        column, row = core.owner.inputs
        x, y = _vector_of(column, (0, "x")), _vector_of(row, ("x", 0))
        if x is None or y is None or x.type.dtype != dtype or y.type.dtype != dtype:
            continue
        return declared_replacement(node, ger(z.core, product.scale(dtype), x, y))
    return None


@node_rewriter([_add, _sub])
def local_gemm(fgraph: FunctionGraph, node: Apply):
    """alpha * dot(x, y) + beta * z -> Gemm(z, alpha, x, y, beta) for matrices."""
    for product, z, dtype in sum_of_product_and_z(fgraph, node, 2):
        core = product.core
        if not isinstance(core.owner.op, Dot):
            continue
        x, y = core.owner.inputs
        if x.type.ndim != 2 or y.type.ndim != 2 or x.type.dtype != dtype \
                or y.type.dtype != dtype:
            continue
        return declared_replacement(node, gemm(z.core, product.scale(dtype), x, y,
                                               z.scale(dtype)))
    return None


@node_rewriter([_add, _sub])
def local_gemv(fgraph: FunctionGraph, node: Apply):
    """alpha * dot(a, x) + beta * y -> Gemv(y, alpha, a, x, beta) for a matrix a and vectors
    x and y; dot(x, a) is dot(aᵀ, x)."""
    for product, y, dtype in sum_of_product_and_z(fgraph, node, 1):
        core = product.core
        if not isinstance(core.owner.op, Dot):
            continue
        a, x = core.owner.inputs
        if a.type.ndim == 1 and x.type.ndim == 2:
            a, x = DimShuffle(2, (1, 0))(x), a
        if a.type.ndim != 2 or x.type.ndim != 1 or a.type.dtype != dtype \
                or x.type.dtype != dtype:
            continue
        return declared_replacement(node, gemv(y.core, product.scale(dtype), a, x,
                                               y.scale(dtype)))
    return None


blas_db = EquilibriumDatabase("blas")
for _rule in (local_ger, local_gemm, local_gemv):
    blas_db.register(_rule.name, _rule, "blas", "fast_run")
del _rule

rewrite_db.register("blas", blas_db, "blas", "fast_run", phase="blas")
