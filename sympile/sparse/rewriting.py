"""Sparse rewrites, each with its pattern:

canonicalize (tags canonicalize, fast_run):
  local_csm_properties_of_csm     csm_properties(CSM(d, i, p, s)) -> (d, i, p, s): a
                                  structured op of a structured op is then one elementwise
                                  loop on the stored values (fusion does the rest)
  local_csm_of_csm_properties     CSM(csm_properties(x)) -> x (the same format)
  local_csm_of_known_pattern      CSM(d, i, p, s) with (i, p, s) all x's, x of the CSM's
                                  format -> CSM(checked=False)(d, i, p, s): a structured op's
                                  result skips the O(nnz) index checks x passed already
  local_csm_properties_of_transpose
                                  csm_properties(transpose(x)) -> x's arrays, the shape
                                  reversed
  local_dense_product_of_sparse   dot(dense_from_sparse(S), W), and W @ dense_from_sparse(S)
                                  -> the sparse product (structured_dot for a structured
                                  dense_from_sparse, else dot): the zeros are never
                                  multiplied
specialize (tags specialize, fast_run), after the gradients are built (with the two
csm_properties rules again, for the CSM and Transpose nodes these make):
  local_sparse_product_to_kernel  structured_dot(S, y), dot(S, y) and dot(y, S) for a dense y
                                  -> SparseDenseProduct on S's arrays (C, threaded)
  local_sampling_dot_to_kernel    sampling_dot(x, y, P) -> CSM(SampledProducts(x, y, P's
                                  arrays), P's pattern)
blas (tags blas, fast_run), with the dense products' rules:
  local_sparse_accumulate         z + alpha * SparseDenseProduct(S, y) (also z - ...) ->
                                  SparseDenseAccumulate(z, alpha, S, y), which the inplace
                                  pass writes over z: W - lr * structured_dot(Xᵀ, g) adds
                                  into W at X's stored positions, with no dense gradient
                                  matrix zeroed, filled and read again
"""

from __future__ import annotations

from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.scalar import basic as scalar
from sympile.sparse.basic import (
    CSM,
    CSMProperties,
    DenseFromSparse,
    Dot,
    SamplingDot,
    StructuredDot,
    Transpose,
    csm_properties,
    is_sparse,
)
from sympile.sparse.kernels import SampledProducts, SparseDenseAccumulate, SparseDenseProduct
from sympile.tensor.blas.basic import Dot as DenseDot
from sympile.tensor.blas.basic import MatMul
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.math import cast
from sympile.tensor.rewriting.blas import blas_db, declared_replacement, sum_of_product_and_z
from sympile.tensor.rewriting.canonicalize import canonicalize_db
from sympile.tensor.rewriting.matching import as_type_of
from sympile.tensor.rewriting.specialize import specialize_db

__all__ = ["local_csm_of_csm_properties", "local_csm_of_known_pattern",
           "local_csm_properties_of_csm",
           "local_csm_properties_of_transpose",
           "local_dense_product_of_sparse", "local_sampling_dot_to_kernel",
           "local_sparse_accumulate", "local_sparse_product_to_kernel"]


def _as(variable, dtype: str):
    return variable if variable.type.dtype == dtype else cast(variable, dtype)


@node_rewriter([CSMProperties])
def local_csm_properties_of_csm(fgraph: FunctionGraph, node):
    """csm_properties(CSM(d, i, p, s)) -> (d, i, p, s), in the properties' dtypes."""
    owner = node.inputs[0].owner
    if owner is None or not isinstance(owner.op, CSM):
        return None
    replacements = [as_type_of(value, output) for value, output in zip(owner.inputs,
                                                                       node.outputs)]
    return None if any(r is None for r in replacements) else [r[0] for r in replacements]


@node_rewriter([CSMProperties])
def local_csm_properties_of_transpose(fgraph: FunctionGraph, node):
    """csm_properties(transpose(x)) -> csm_properties(x) with the shape reversed: a CSR
    matrix's transpose is the CSC matrix of the same arrays (one Python call less)."""
    owner = node.inputs[0].owner
    if owner is None or not isinstance(owner.op, Transpose):
        return None
    data, indices, indptr, shape = csm_properties(owner.inputs[0])
    replacements = [as_type_of(value, output) for value, output in
                    zip((data, indices, indptr, shape[::-1]), node.outputs)]
    return None if any(r is None for r in replacements) else [r[0] for r in replacements]


@node_rewriter([CSM])
def local_csm_of_csm_properties(fgraph: FunctionGraph, node):
    """CSM(csm_properties(x)) -> x, x of the CSM's format."""
    data = node.inputs[0].owner
    if data is None or not isinstance(data.op, CSMProperties):
        return None
    x = data.inputs[0]
    if x.type != node.outputs[0].type or any(
            value.owner is not data or value.index != index
            for index, value in enumerate(node.inputs)):
        return None
    return [x]


@node_rewriter([CSM])
def local_csm_of_known_pattern(fgraph: FunctionGraph, node):
    """CSM(d, i, p, s) -> CSM(checked=False)(d, i, p, s) when (i, p, s) are the indices,
    indptr and shape of one matrix of the CSM's format."""
    if not node.op.checked:
        return None
    pattern = [value.owner for value in node.inputs[1:]]
    source = pattern[0]
    if source is None or not isinstance(source.op, CSMProperties) \
            or source.inputs[0].type.format != node.op.format \
            or any(owner is not source for owner in pattern) \
            or [value.index for value in node.inputs[1:]] != [1, 2, 3]:
        return None
    return [CSM(node.op.format, checked=False)(*node.inputs)]


@node_rewriter([DenseDot, MatMul])
def local_dense_product_of_sparse(fgraph: FunctionGraph, node):
    """dot(dense_from_sparse(S), W) -> structured_dot(S, W) (or dot when the dense form has
    the regular gradient); W @ dense_from_sparse(S) likewise."""
    x, y = node.inputs
    if x.type.ndim != 2 or y.type.ndim != 2:
        return None
    for position, operand in enumerate((x, y)):
        owner = operand.owner
        if owner is None or not isinstance(owner.op, DenseFromSparse):
            continue
        sparse_operand = owner.inputs[0]
        other = y if position == 0 else x
        if is_sparse(other):
            return None
        if owner.op.sparse_grad and position == 0:
            product = StructuredDot()(sparse_operand, other)
        else:
            product = Dot()(sparse_operand, other) if position == 0 \
                else Dot()(other, sparse_operand)
        return [_as(product, node.outputs[0].type.dtype)]
    return None


def _kernel_product(sparse_operand, dense, dtype: str, transposed: bool):
    """S @ dense, or (transposed) dense @ S = (Sᵀ denseᵀ)ᵀ, by SparseDenseProduct."""
    data, indices, indptr, shape = csm_properties(sparse_operand)
    format = sparse_operand.type.format
    data, dense = _as(data, dtype), _as(dense, dtype)
    if not transposed:
        return SparseDenseProduct(format)(data, indices, indptr, shape, dense)
    flipped = "csc" if format == "csr" else "csr"
    return SparseDenseProduct(flipped)(data, indices, indptr, shape[::-1], dense.T).T


@node_rewriter([StructuredDot, Dot])
def local_sparse_product_to_kernel(fgraph: FunctionGraph, node):
    """structured_dot / dot of a sparse and a dense float matrix -> SparseDenseProduct."""
    x, y = node.inputs
    output = node.outputs[0]
    if is_sparse(output) or output.type.dtype not in ("float32", "float64"):
        return None
    if is_sparse(x):
        return [_kernel_product(x, y, output.type.dtype, transposed=False)]
    return [_kernel_product(y, x, output.type.dtype, transposed=True)]


@node_rewriter([SamplingDot])
def local_sampling_dot_to_kernel(fgraph: FunctionGraph, node):
    """sampling_dot(x, y, P) -> CSM(SampledProducts(x, y, P's data, indices, indptr),
    P's indices, indptr, shape)."""
    x, y, p = node.inputs
    output = node.outputs[0]
    dtype = output.type.dtype
    if dtype not in ("float32", "float64"):
        return None
    data, indices, indptr, shape = csm_properties(p)
    format = p.type.format
    values = SampledProducts(format, scaled=True)(_as(x, dtype), _as(y, dtype),
                                                  _as(data, dtype), indices, indptr)
    return [CSM(format)(values, indices, indptr, shape)]


@node_rewriter([Elemwise(scalar.add), Elemwise(scalar.sub)])
def local_sparse_accumulate(fgraph: FunctionGraph, node):
    """z + alpha * SparseDenseProduct(S, y) -> SparseDenseAccumulate(z, alpha, S, y), the
    product used by this sum only and z unscaled (alpha from the 0-d factors and signs)."""
    for product, z, dtype in sum_of_product_and_z(fgraph, node, 2):
        core = product.core
        if not isinstance(core.owner.op, SparseDenseProduct) or not z.is_unscaled \
                or dtype not in ("float32", "float64"):
            continue
        data, indices, indptr, shape, y = core.owner.inputs
        if data.type.dtype != dtype or y.type.dtype != dtype:
            continue
        accumulate = SparseDenseAccumulate(core.owner.op.format)
        return declared_replacement(node, accumulate(z.core, product.scale(dtype), data,
                                                     indices, indptr, shape, y))
    return None


blas_db.register(local_sparse_accumulate.name, local_sparse_accumulate, "blas", "fast_run")
for _rule in (local_csm_properties_of_csm, local_csm_of_csm_properties,
              local_csm_properties_of_transpose, local_dense_product_of_sparse,
              local_csm_of_known_pattern):
    canonicalize_db.register(_rule.name, _rule, "canonicalize", "fast_run")
# Specialize makes csm_properties of new CSM and Transpose nodes: those rules again there.
for _rule in (local_sparse_product_to_kernel, local_sampling_dot_to_kernel,
              local_csm_properties_of_csm, local_csm_properties_of_transpose,
              local_csm_of_known_pattern):
    specialize_db.register(_rule.name, _rule, "specialize", "fast_run")
del _rule
