"""Sparse operations (Theano's sympile.sparse.basic): building and taking apart CSR/CSC
matrices, conversions, arithmetic, products, sums, stacking, indexing, and the structured
elementwise family. perform runs scipy.sparse (its C++ kernels).

Two kinds of gradient, as in Theano (the paper's section 3.5):
  structured  the gradient of a sparse input keeps its sparsity pattern: only the stored
              values are variables (structured_dot, sampling_dot, the structured_* family,
              add and mul with a dense operand, dense_from_sparse by default,
              sp_sum(sparse_grad=True));
  regular     the gradient is the true derivative, dense where the math is dense (dot and
              true_dot, dense_from_sparse(sparse_grad=False), sp_sum by default), stored in
              the input's sparse format.
The structured_* ops apply a tensor op to the stored values (csm_properties, then CSM), so
their derivatives and C code are those of the tensor op.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.graph.utils import MethodNotDefined
from sympile.sparse.type import SparseTensorType, as_sparse_variable, is_sparse
from sympile.tensor import math as tensor_math
from sympile.tensor.basic.ops import alloc, as_tensor_variable, ones_like
from sympile.tensor.blas.basic import dot as dense_dot
from sympile.tensor.nnet import sigmoid
from sympile.tensor.type import tensor_type

__all__ = [
    "CSM", "AddSD", "AddSS", "AsFormat", "CSMGrad", "CSMProperties", "DenseFromSparse",
    "Dot", "GetItem2d", "GetItemList", "MulSD", "MulSS", "SamplingDot", "SparseFromDense",
    "SpSum", "Stack", "StructuredDot", "Transpose", "add", "as_format", "col_scale",
    "csc_from_dense", "csm_data", "csm_indices", "csm_indptr", "csm_properties",
    "csm_shape", "csr_from_dense", "dense_from_sparse", "dot", "get_item", "hstack", "mul",
    "neg", "row_scale", "sampling_dot", "sp_ones_like", "sp_sum", "structured_dot", "sub",
    "transpose", "true_dot", "vstack"]


def _sparse_like(format: str, dtype: Any) -> Variable:
    return SparseTensorType(format, dtype)()


def _dense(x: Any, who: str, argument: str, ndim: int | None = None) -> Variable:
    if is_sparse(x):
        raise TypeError(f"{who}: {argument} must be dense, got the sparse {x.type}")
    x = as_tensor_variable(x, op=who, argument=argument)
    if ndim is not None and x.type.ndim != ndim:
        raise TypeError(f"{who}: {argument} must have {ndim} dimensions, got {x.type}")
    return x


def _int_vector(x: Any, who: str, argument: str) -> Variable:
    x = _dense(x, who, argument, 1)
    if not x.type.dtype.startswith("int"):
        raise TypeError(f"{who}: {argument} must be an integer vector, got {x.type}")
    return x


def _result_dtype(*variables: Variable) -> str:
    return np.result_type(*[np.dtype(v.type.dtype) for v in variables]).name


def _as_matrix(value: Any, format: str, dtype: str):
    """A scipy.sparse result as the output type's class and dtype."""
    matrix_class = scipy.sparse.csr_matrix if format == "csr" else scipy.sparse.csc_matrix
    result = matrix_class(value, dtype=dtype)
    result.sort_indices()
    return result


# ---------------------------------------------------------------------------------------------
# Building and taking apart

class CSM(Op):
    """The sparse matrix of `format` with stored values `data` at `indices` (columns for
    CSR, rows for CSC) in the rows (columns) `indptr` delimits, of `shape` (Theano's CSM).
    The indices must be in range and sorted within each row (column); a malformed matrix is
    a ValueError naming the op. Derivative: with respect to data only (the values of the
    gradient at the stored positions).

    checked=False skips the O(stored values) checks of the indices' range and order (scipy's
    own checks of the arrays' lengths still run): for a pattern taken whole from another
    sparse matrix (see sympile.sparse.rewriting), which had them when it was made."""

    __props__ = ("format", "checked")
    # The matrix keeps the arrays it is given (as scipy does) when their dtypes fit.
    view_map = {0: [0, 1, 2]}

    def __init__(self, format: str, checked: bool = True):
        if format not in ("csr", "csc"):
            raise ValueError(f"CSM: format must be 'csr' or 'csc', got {format!r}")
        self.format = format
        self.checked = bool(checked)

    def make_node(self, data, indices, indptr, shape):
        data = _dense(data, "CSM", "data", 1)
        indices = _int_vector(indices, "CSM", "indices")
        indptr = _int_vector(indptr, "CSM", "indptr")
        shape = _int_vector(shape, "CSM", "shape")
        return Apply(self, [data, indices, indptr, shape],
                     [_sparse_like(self.format, data.type.dtype)])

    def perform(self, node, inputs, output_storage):
        data, indices, indptr, shape = inputs
        if len(shape) != 2 or (shape < 0).any():
            raise ValueError(f"CSM: shape must be two lengths >= 0, got {list(shape)}")
        major, minor = (shape[0], shape[1]) if self.format == "csr" else (shape[1], shape[0])
        if self.checked:
            self._check_pattern(data, indices, indptr, major, minor)
        matrix_class = scipy.sparse.csr_matrix if self.format == "csr" else \
            scipy.sparse.csc_matrix
        output_storage[0][0] = matrix_class(
            (data, np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int32)),
            shape=tuple(int(s) for s in shape), dtype=node.outputs[0].type.dtype, copy=False)

    def _check_pattern(self, data, indices, indptr, major, minor) -> None:
        if len(indptr) != major + 1 or indptr[0] != 0 or (np.diff(indptr) < 0).any() \
                or indptr[-1] != len(data) or len(indices) != len(data):
            raise ValueError(f"CSM: indptr must rise from 0 to len(data) = {len(data)} in "
                             f"{major + 1} entries, with as many indices as values; got "
                             f"indptr of {len(indptr)} entries ending at "
                             f"{indptr[-1] if len(indptr) else None} and {len(indices)} "
                             f"indices")
        if len(indices) and (indices.min() < 0 or indices.max() >= minor):
            raise ValueError(f"CSM: indices must be in [0, {minor}), got values from "
                             f"{indices.min()} to {indices.max()}")
        # Within a row, each index exceeds the one before; not across a row's start.
        steps = np.diff(indices)
        breaks = np.zeros(len(steps), dtype=bool)
        starts = indptr[1:-1]
        breaks[starts[(starts > 0) & (starts < len(indices))] - 1] = True
        if (steps[~breaks] <= 0).any():
            raise ValueError("CSM: indices must be sorted (and without repeats) within each "
                             "row" if self.format == "csr" else "column")

    def connection_pattern(self, node):
        return [[True], [False], [False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        rest = [disconnected_type()] * 3
        if is_disconnected(g):
            return [disconnected_type()] + rest
        return [CSMGrad()(inputs[1], inputs[2], as_format(g, self.format))] + rest

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


class CSMGrad(Op):
    """The values of the sparse matrix g at the positions (indices, indptr) of another one
    of g's format and shape: the stored values' gradient (zero where g stores nothing)."""

    __props__ = ()

    def make_node(self, indices, indptr, g):
        g = as_sparse_variable(g, who="CSMGrad", argument="g")
        return Apply(self, [_int_vector(indices, "CSMGrad", "indices"),
                            _int_vector(indptr, "CSMGrad", "indptr"), g],
                     [tensor_type(g.type.dtype, (None,))()])

    def perform(self, node, inputs, output_storage):
        indices, indptr, g = inputs
        majors = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        rows, cols = (majors, indices) if g.format == "csr" else (indices, majors)
        output_storage[0][0] = np.asarray(g[rows, cols], dtype=node.outputs[0].type.dtype
                                          ).reshape(-1)

    def connection_pattern(self, node):
        return [[False], [False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        raise MethodNotDefined("CSMGrad has no derivative")


class CSMProperties(Op):
    """(data, indices, indptr, shape) of a sparse matrix (Theano's csm_properties); the
    indices sorted within each row (column). Derivative: through data (a sparse matrix of
    the same pattern)."""

    __props__ = ()
    # data, indices and indptr are the matrix's own arrays (no copy).
    view_map = {0: [0], 1: [0], 2: [0]}

    def make_node(self, x):
        x = as_sparse_variable(x, who="csm_properties")
        return Apply(self, [x], [tensor_type(x.type.dtype, (None,))(),
                                 tensor_type("int32", (None,))(),
                                 tensor_type("int32", (None,))(),
                                 tensor_type("int64", (2,))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if not x.has_sorted_indices:
            x = x.sorted_indices()
        if max(x.nnz, x.indptr.shape[0]) > np.iinfo(np.int32).max:
            raise ValueError(f"csm_properties: {x.nnz} stored values: more than int32 "
                             f"indices address")
        for cell, value in zip(output_storage, (x.data, np.asarray(x.indices, dtype=np.int32),
                                                np.asarray(x.indptr, dtype=np.int32),
                                                np.asarray(x.shape, dtype=np.int64))):
            cell[0] = value

    def infer_shape(self, fgraph, node, input_shapes):
        return [(None,), (None,), (None,), (2,)]

    def L_op(self, inputs, outputs, output_grads):
        g_data = output_grads[0]
        if is_disconnected(g_data):
            return [disconnected_type()]
        _, indices, indptr, shape = outputs
        return [CSM(inputs[0].type.format)(g_data, indices, indptr, shape)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None] * 4
        _, indices, indptr, _ = self(inputs[0])
        return [CSMGrad()(indices, indptr, eval_points[0]), None, None, None]


def csm_properties(x: Any) -> list[Variable]:
    """[data, indices, indptr, shape] of the sparse matrix x."""
    return CSMProperties()(x)


def csm_data(x: Any) -> Variable:
    return csm_properties(x)[0]


def csm_indices(x: Any) -> Variable:
    return csm_properties(x)[1]


def csm_indptr(x: Any) -> Variable:
    return csm_properties(x)[2]


def csm_shape(x: Any) -> Variable:
    return csm_properties(x)[3]


def _with_data(x: Variable, data: Variable) -> Variable:
    """The sparse matrix of x's pattern holding `data`."""
    _, indices, indptr, shape = csm_properties(x)
    return CSM(x.type.format)(data, indices, indptr, shape)


def sp_ones_like(x: Any) -> Variable:
    """Ones where x stores a value (Theano's sp_ones_like)."""
    x = as_sparse_variable(x, who="sp_ones_like")
    return _with_data(x, ones_like(csm_data(x)))


# ---------------------------------------------------------------------------------------------
# Conversions

class AsFormat(Op):
    """x in `format` (CSR <-> CSC, the same matrix)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, x):
        x = as_sparse_variable(x, who="as_format")
        return Apply(self, [x], [_sparse_like(self.format, x.type.dtype)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = _as_matrix(inputs[0], self.format, node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        return [disconnected_type() if is_disconnected(g)
                else as_format(g, inputs[0].type.format)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def as_format(x: Variable, format: str) -> Variable:
    """x in `format` ('csr' or 'csc'); x itself when it is already."""
    return x if x.type.format == format else AsFormat(format)(x)


class DenseFromSparse(Op):
    """The dense matrix of a sparse one (Theano's dense_from_sparse). structured (Theano's
    name; the attribute is sparse_grad, as Theano's): the gradient keeps x's pattern; else
    it is the whole dense gradient."""

    __props__ = ("sparse_grad",)

    def __init__(self, structured: bool = True):
        self.sparse_grad = bool(structured)

    def make_node(self, x):
        x = as_sparse_variable(x, who="dense_from_sparse")
        return Apply(self, [x], [tensor_type(x.type.dtype, (None, None))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].toarray()

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        x = inputs[0]
        if self.sparse_grad:
            return [MulSD()(sp_ones_like(x), g)]
        return [SparseFromDense(x.type.format)(g)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def dense_from_sparse(x: Any, sparse_grad: bool = True) -> Variable:
    return DenseFromSparse(sparse_grad)(x)


class SparseFromDense(Op):
    """The sparse matrix (`format`) of a dense one: its nonzero entries stored (Theano's
    csr_from_dense, csc_from_dense)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        if format not in ("csr", "csc"):
            raise ValueError(f"SparseFromDense: format must be 'csr' or 'csc', got {format!r}")
        self.format = format

    def make_node(self, x):
        x = _dense(x, f"{self.format}_from_dense", "x", 2)
        return Apply(self, [x], [_sparse_like(self.format, x.type.dtype)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = _as_matrix(inputs[0], self.format, node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        return [disconnected_type() if is_disconnected(g) else dense_from_sparse(g)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def csr_from_dense(x: Any) -> Variable:
    return SparseFromDense("csr")(x)


def csc_from_dense(x: Any) -> Variable:
    return SparseFromDense("csc")(x)


class Transpose(Op):
    """xᵀ: a CSR matrix's transpose is the CSC matrix of the same arrays, and back."""

    __props__ = ()

    def make_node(self, x):
        x = as_sparse_variable(x, who="transpose")
        other = "csc" if x.type.format == "csr" else "csr"
        return Apply(self, [x], [_sparse_like(other, x.type.dtype)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].transpose()

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        return [disconnected_type() if is_disconnected(g)
                else as_format(transpose(g), inputs[0].type.format)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def transpose(x: Any) -> Variable:
    return Transpose()(x)


def neg(x: Any) -> Variable:
    """-x (the stored values negated)."""
    x = as_sparse_variable(x, who="neg")
    return _with_data(x, -csm_data(x))


# ---------------------------------------------------------------------------------------------
# Arithmetic

class _SparseSparse(Op):
    """An elementwise op of two sparse matrices of one shape: sparse, the format of x."""

    __props__ = ()
    who = ""

    def combine(self, x, y):
        """The scipy result of x and y (each subclass's operation)."""
        raise NotImplementedError(f"{type(self).__name__}.combine")

    def make_node(self, x, y):
        x = as_sparse_variable(x, who=self.who, argument="x")
        y = as_sparse_variable(y, who=self.who, argument="y")
        return Apply(self, [x, y], [_sparse_like(x.type.format, _result_dtype(x, y))])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape != y.shape:
            raise ValueError(f"{self.who}: the shapes {x.shape} and {y.shape} differ")
        output_storage[0][0] = _as_matrix(self.combine(x, y), node.outputs[0].type.format,
                                          node.outputs[0].type.dtype)


class AddSS(_SparseSparse):
    """x + y of two sparse matrices (the format of x)."""

    who = "add"

    def combine(self, x, y):
        return x + y

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        return [as_format(g, x.type.format) for x in inputs]

    def R_op(self, inputs, eval_points):
        dx, dy = eval_points
        if dx is None and dy is None:
            return [None]
        parts = [as_format(d, inputs[0].type.format) for d in (dx, dy) if d is not None]
        return [parts[0] if len(parts) == 1 else self(*parts)]


def _check_broadcast(who: str, shape: tuple[int, int], y: np.ndarray, variable: Variable
                     ) -> None:
    """y (of `variable`'s type) must broadcast to `shape` along the axes its type says
    are broadcastable (static length 1), and match it along the others."""
    offset = 2 - y.ndim
    for axis, (length, static) in enumerate(zip(y.shape, variable.type.shape)):
        if length != shape[axis + offset] and not (static == 1 and length == 1):
            raise ValueError(f"{who}: the dense operand of shape {y.shape} does not match the "
                             f"sparse matrix's {shape} (only a length the type declares 1 "
                             f"broadcasts)")


def _reduce_to(g: Variable, y: Variable) -> Variable:
    """The gradient g of a dense matrix, summed to the dense operand y it was broadcast
    from (leading axes y lacks, and its static length-1 axes)."""
    offset = 2 - y.type.ndim
    if offset:
        g = g.sum(axis=tuple(range(offset)))
    for axis, length in enumerate(y.type.shape):
        if length == 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def _sparse_and_dense(x, y, who: str):
    """(x, y) for an op of a sparse x and a dense y of at most 2 dimensions."""
    x = as_sparse_variable(x, who=who, argument="x")
    y = _dense(y, who, "y")
    if y.type.ndim > 2:
        raise TypeError(f"{who}: the dense operand must have at most 2 dimensions, got "
                        f"{y.type}")
    return x, y


class AddSD(Op):
    """x + y of a sparse x and a dense y: dense. The gradient of x is structured (x's
    pattern), as Theano's."""

    __props__ = ()

    def make_node(self, x, y):
        x, y = _sparse_and_dense(x, y, "add")
        return Apply(self, [x, y], [tensor_type(_result_dtype(x, y), (None, None))()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_broadcast("add", x.shape, np.asarray(y), node.inputs[1])
        output_storage[0][0] = np.asarray(x.toarray() + y, dtype=node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        x, y = inputs
        return [MulSD()(sp_ones_like(x), g), _reduce_to(g, y)]

    def R_op(self, inputs, eval_points):
        dx, dy = eval_points
        if dx is None and dy is None:
            return [None]
        if dx is None:
            return [self(_with_data(inputs[0], csm_data(inputs[0]) * 0), dy)]
        return [self(dx, dy) if dy is not None else dense_from_sparse(dx)]


class MulSS(_SparseSparse):
    """x ∘ y of two sparse matrices (elementwise; the format of x)."""

    who = "mul"

    def combine(self, x, y):
        return x.multiply(y)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        x, y = inputs
        return [as_format(self(g, y), x.type.format), as_format(self(g, x), y.type.format)]

    def R_op(self, inputs, eval_points):
        x, y = inputs
        dx, dy = eval_points
        parts = [self(dx, y) if dx is not None else None,
                 as_format(self(x, dy), x.type.format) if dy is not None else None]
        parts = [p for p in parts if p is not None]
        if not parts:
            return [None]
        return [parts[0] if len(parts) == 1 else AddSS()(*parts)]


class MulSD(Op):
    """x ∘ y of a sparse x and a dense y (a scalar, a row, a column or a matrix,
    broadcast): sparse, of x's pattern. The gradient of y is dense."""

    __props__ = ()

    def make_node(self, x, y):
        x, y = _sparse_and_dense(x, y, "mul")
        return Apply(self, [x, y], [_sparse_like(x.type.format, _result_dtype(x, y))])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        y = np.asarray(y)
        _check_broadcast("mul", x.shape, y, node.inputs[1])
        coo = x.tocoo()
        values = coo.data * np.broadcast_to(y, x.shape)[coo.row, coo.col] if coo.nnz \
            else coo.data
        output_storage[0][0] = _as_matrix(
            scipy.sparse.coo_matrix((values, (coo.row, coo.col)), shape=x.shape),
            node.outputs[0].type.format, node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        x, y = inputs
        gy = _reduce_to(dense_from_sparse(MulSS()(as_format(g, x.type.format), x)), y)
        return [as_format(self(g, y), x.type.format), gy]

    def R_op(self, inputs, eval_points):
        x, y = inputs
        dx, dy = eval_points
        parts = []
        if dx is not None:
            parts.append(self(dx, y))
        if dy is not None:
            parts.append(self(x, dy))
        if not parts:
            return [None]
        return [parts[0] if len(parts) == 1 else AddSS()(*parts)]


def add(x: Any, y: Any) -> Variable:
    """x + y with x or y sparse: sparse + sparse is sparse; with a dense operand, dense."""
    if is_sparse(x) and is_sparse(y):
        return AddSS()(x, y)
    if is_sparse(y):
        x, y = y, x
    if not is_sparse(x) and not scipy.sparse.issparse(x):
        raise TypeError("add: one of x and y must be sparse")
    return AddSD()(x, y)


def sub(x: Any, y: Any) -> Variable:
    """x - y with x or y sparse."""
    if is_sparse(y) or scipy.sparse.issparse(y):
        return add(x, neg(y))
    return add(x, -as_tensor_variable(y, op="sub", argument="y"))


def mul(x: Any, y: Any) -> Variable:
    """x ∘ y (elementwise) with x or y sparse: sparse, of the sparse operand's pattern (of
    both patterns' intersection when both are sparse)."""
    if is_sparse(x) and is_sparse(y):
        return MulSS()(x, y)
    if is_sparse(y) or scipy.sparse.issparse(y):
        x, y = y, x
    return MulSD()(x, y)


def row_scale(x: Any, s: Any) -> Variable:
    """x with row i times s[i] (Theano's row_scale)."""
    s = _dense(s, "row_scale", "s", 1)
    return MulSD()(x, s.dimshuffle(0, "x"))


def col_scale(x: Any, s: Any) -> Variable:
    """x with column j times s[j] (Theano's col_scale)."""
    s = _dense(s, "col_scale", "s", 1)
    return MulSD()(x, s.dimshuffle("x", 0))


# ---------------------------------------------------------------------------------------------
# Products

class StructuredDot(Op):
    """x @ y of a sparse x and a dense matrix y: dense. The gradient of x is structured:
    (ḡ yᵀ) at x's stored positions (sampling_dot); that of y is xᵀ ḡ."""

    __props__ = ()

    def make_node(self, x, y):
        x = as_sparse_variable(x, who="structured_dot", argument="x")
        y = _dense(y, "structured_dot", "y", 2)
        return Apply(self, [x, y], [tensor_type(_result_dtype(x, y), (None, None))()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[1] != y.shape[0]:
            raise ValueError(f"structured_dot: the shapes {x.shape} and {y.shape} do not "
                             f"multiply")
        output_storage[0][0] = np.asarray(x @ y, dtype=node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        x, y = inputs
        gx = as_format(SamplingDot()(g, y, sp_ones_like(x)), x.type.format)
        return [gx, self(transpose(x), g)]

    def R_op(self, inputs, eval_points):
        x, y = inputs
        dx, dy = eval_points
        parts = [self(dx, y) if dx is not None else None,
                 self(x, dy) if dy is not None else None]
        parts = [p for p in parts if p is not None]
        return [None] if not parts else [parts[0] if len(parts) == 1 else parts[0] + parts[1]]


def structured_dot(x: Any, y: Any) -> Variable:
    """x @ y with one sparse operand and a structured gradient for it (Theano's
    structured_dot); a dense x and a sparse y give (yᵀ xᵀ)ᵀ."""
    if is_sparse(x) or scipy.sparse.issparse(x):
        if is_sparse(y):
            raise TypeError("structured_dot: y must be dense when x is sparse; for two "
                            "sparse matrices use dot")
        return StructuredDot()(x, y)
    return StructuredDot()(transpose(y), _dense(x, "structured_dot", "x", 2).T).T


class Dot(Op):
    """x @ y with at least one sparse operand, with the regular gradient (Theano's dot and
    true_dot): sparse @ dense and dense @ sparse are dense, sparse @ sparse is sparse (the
    format of x). The gradient of a sparse operand is the whole product ḡ yᵀ (or xᵀ ḡ),
    stored in its format."""

    __props__ = ()

    def make_node(self, x, y):
        if not (is_sparse(x) or is_sparse(y)):
            raise TypeError("dot: one of x and y must be sparse")
        x = x if is_sparse(x) else _dense(x, "dot", "x", 2)
        y = y if is_sparse(y) else _dense(y, "dot", "y", 2)
        dtype = _result_dtype(x, y)
        out = _sparse_like(x.type.format, dtype) if is_sparse(x) and is_sparse(y) \
            else tensor_type(dtype, (None, None))()
        return Apply(self, [x, y], [out])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[1] != y.shape[0]:
            raise ValueError(f"dot: the shapes {x.shape} and {y.shape} do not multiply")
        result = x @ y
        out = node.outputs[0].type
        output_storage[0][0] = _as_matrix(result, out.format, out.dtype) \
            if isinstance(out, SparseTensorType) else np.asarray(result, dtype=out.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        x, y = inputs
        return [_regular(_product(g, _t(y)), x), _regular(_product(_t(x), g), y)]

    def R_op(self, inputs, eval_points):
        x, y = inputs
        dx, dy = eval_points
        parts = [_product(dx, y) if dx is not None else None,
                 _product(x, dy) if dy is not None else None]
        parts = [p for p in parts if p is not None]
        if not parts:
            return [None]
        if len(parts) == 2:
            return [add(*parts) if is_sparse(parts[0]) or is_sparse(parts[1])
                    else parts[0] + parts[1]]
        return parts


def _t(x: Variable) -> Variable:
    return transpose(x) if is_sparse(x) else x.T


def _product(x: Variable, y: Variable) -> Variable:
    return Dot()(x, y) if is_sparse(x) or is_sparse(y) else x.dot(y) if hasattr(x, "dot") \
        else _dense_dot(x, y)


def _dense_dot(x: Variable, y: Variable) -> Variable:
    return dense_dot(x, y)


def _regular(gradient: Variable, like: Variable) -> Variable:
    """A gradient for `like`: in its sparse format when like is sparse."""
    if not is_sparse(like):
        return dense_from_sparse(gradient) if is_sparse(gradient) else gradient
    if is_sparse(gradient):
        return as_format(gradient, like.type.format)
    return SparseFromDense(like.type.format)(gradient)


def dot(x: Any, y: Any) -> Variable:
    """x @ y with x or y sparse and the regular gradient (Theano's sparse.dot)."""
    if scipy.sparse.issparse(x):
        x = as_sparse_variable(x)
    if scipy.sparse.issparse(y):
        y = as_sparse_variable(y)
    return Dot()(x, y)


true_dot = dot


class SamplingDot(Op):
    """p ∘ (x yᵀ) for dense x (n x k), y (m x k) and a sparse p (n x m): only the
    products at p's stored positions are computed (Theano's sampling_dot); sparse, p's
    format."""

    __props__ = ()

    def make_node(self, x, y, p):
        x = _dense(x, "sampling_dot", "x", 2)
        y = _dense(y, "sampling_dot", "y", 2)
        p = as_sparse_variable(p, who="sampling_dot", argument="p")
        return Apply(self, [x, y, p], [_sparse_like(p.type.format, _result_dtype(x, y, p))])

    def perform(self, node, inputs, output_storage):
        x, y, p = inputs
        if x.shape[1] != y.shape[1] or p.shape != (x.shape[0], y.shape[0]):
            raise ValueError(f"sampling_dot: x {x.shape} and y {y.shape} need the same number "
                             f"of columns and p of shape ({x.shape[0]}, {y.shape[0]}), got "
                             f"{p.shape}")
        coo = p.tocoo()
        values = coo.data * np.einsum("ij,ij->i", x[coo.row], y[coo.col])
        output_storage[0][0] = _as_matrix(
            scipy.sparse.coo_matrix((values, (coo.row, coo.col)), shape=p.shape),
            node.outputs[0].type.format, node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 3
        x, y, p = inputs
        weighted = MulSS()(as_format(g, p.type.format), p)
        # p's gradient: ḡ ∘ (x yᵀ), at the stored positions of ḡ (p's own)
        return [structured_dot(weighted, y), structured_dot(transpose(weighted), x),
                as_format(self(x, y, g), p.type.format)]

    def R_op(self, inputs, eval_points):
        x, y, p = inputs
        dx, dy, dp = eval_points
        parts = []
        if dx is not None:
            parts.append(self(dx, y, p))
        if dy is not None:
            parts.append(self(x, dy, p))
        if dp is not None:
            parts.append(as_format(self(x, y, dp), p.type.format))
        if not parts:
            return [None]
        total = parts[0]
        for part in parts[1:]:
            total = AddSS()(total, part)
        return [total]


def sampling_dot(x: Any, y: Any, p: Any) -> Variable:
    return SamplingDot()(x, y, p)


# ---------------------------------------------------------------------------------------------
# Sums, stacking, indexing

class SpSum(Op):
    """The sum of a sparse matrix: all of it (axis None, a scalar) or over axis 0 or 1 (a
    dense vector). sparse_grad: the gradient keeps x's pattern (structured); else it is
    dense (every entry), in x's format."""

    __props__ = ("axis", "sparse_grad")

    def __init__(self, axis: int | None = None, sparse_grad: bool = False):
        if axis not in (None, 0, 1):
            raise ValueError(f"sp_sum: axis must be None, 0 or 1, got {axis!r}")
        self.axis, self.sparse_grad = axis, bool(sparse_grad)

    def make_node(self, x):
        x = as_sparse_variable(x, who="sp_sum")
        shape = () if self.axis is None else (None,)
        return Apply(self, [x], [tensor_type(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        total = inputs[0].sum(axis=self.axis)
        output_storage[0][0] = np.asarray(total, dtype=node.outputs[0].type.dtype).reshape(
            () if self.axis is None else -1)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        x = inputs[0]
        spread = g if self.axis is None else g.dimshuffle("x", 0) if self.axis == 0 \
            else g.dimshuffle(0, "x")
        if self.sparse_grad:
            return [MulSD()(sp_ones_like(x), spread)]
        shape = csm_shape(x)
        return [SparseFromDense(x.type.format)(alloc(spread, shape[0], shape[1]))]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def sp_sum(x: Any, axis: int | None = None, sparse_grad: bool = False) -> Variable:
    return SpSum(axis, sparse_grad)(x)


class Stack(Op):
    """scipy.sparse.hstack (axis 1) or vstack (axis 0) of sparse matrices, in `format` (None:
    the first block's), of `dtype` (None: the blocks' common dtype)."""

    __props__ = ("axis", "format", "dtype")

    def __init__(self, axis: int, format: str | None = None, dtype: Any = None):
        if format not in (None, "csr", "csc"):
            raise ValueError(f"{'hstack' if axis == 1 else 'vstack'}: format must be 'csr', "
                             f"'csc' or None, got {format!r}")
        self.axis, self.format = axis, format
        self.dtype = None if dtype is None else np.dtype(dtype).name

    def make_node(self, *blocks):
        who = "hstack" if self.axis == 1 else "vstack"
        if not blocks:
            raise TypeError(f"{who}: give at least one sparse matrix")
        blocks = [as_sparse_variable(b, who=who, argument=f"blocks[{i}]")
                  for i, b in enumerate(blocks)]
        return Apply(self, blocks, [_sparse_like(self.format or blocks[0].type.format,
                                                 self.dtype or _result_dtype(*blocks))])

    def perform(self, node, inputs, output_storage):
        along = 1 - self.axis
        if len({block.shape[along] for block in inputs}) > 1:
            who = "hstack" if self.axis == 1 else "vstack"
            raise ValueError(f"{who}: the blocks' shapes {[b.shape for b in inputs]} differ "
                             f"along axis {along}")
        stack = scipy.sparse.hstack if self.axis == 1 else scipy.sparse.vstack
        output = node.outputs[0].type
        output_storage[0][0] = _as_matrix(stack(inputs), output.format, output.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * len(inputs)
        gradients, start = [], 0
        for block in inputs:
            length = csm_shape(block)[self.axis]
            end = start + length
            part = GetItem2d()(g, *((None, None, start, end) if self.axis == 1
                                   else (start, end, None, None)))
            part = as_format(part, block.type.format)
            if not np.issubdtype(np.dtype(block.type.dtype), np.inexact):
                part = disconnected_type()
            elif part.type.dtype != block.type.dtype:
                part = Cast(block.type.dtype)(part)
            gradients.append(part)
            start = end
        return gradients

    def R_op(self, inputs, eval_points):
        if all(point is None for point in eval_points):
            return [None]
        return [self(*[_with_data(x, csm_data(x) * 0) if point is None else point
                       for x, point in zip(inputs, eval_points)])]


class HStack(Stack):
    """Theano's HStack: Stack along axis 1."""

    def __init__(self, format: str | None = None, dtype: Any = None):
        super().__init__(1, format, dtype)


class VStack(Stack):
    """Theano's VStack: Stack along axis 0."""

    def __init__(self, format: str | None = None, dtype: Any = None):
        super().__init__(0, format, dtype)


def hstack(blocks: list[Any], format: str | None = None, dtype: Any = None) -> Variable:
    """The sparse matrices side by side (scipy.sparse.hstack); format: that of the first
    block by default; dtype: the blocks' common one by default."""
    return HStack(format, dtype)(*blocks)


def vstack(blocks: list[Any], format: str | None = None, dtype: Any = None) -> Variable:
    """The sparse matrices one above the other (scipy.sparse.vstack)."""
    return VStack(format, dtype)(*blocks)


class GetItem2d(Op):
    """x[r0:r1, c0:c1] of a sparse x (None: from the start, to the end): sparse."""

    __props__ = ()

    def make_node(self, x, r0, r1, c0, c1):
        x = as_sparse_variable(x, who="get_item")
        bounds = [_bound(b, name) for b, name in ((r0, "r0"), (r1, "r1"), (c0, "c0"),
                                                   (c1, "c1"))]
        return Apply(self, [x, *bounds], [_sparse_like(x.type.format, x.type.dtype)])

    def perform(self, node, inputs, output_storage):
        x, *bounds = inputs
        r0, r1, c0, c1 = [None if b.size == 0 else int(b.reshape(-1)[0]) for b in
                          (np.asarray(b) for b in bounds)]
        output_storage[0][0] = _as_matrix(x[r0:r1, c0:c1], node.outputs[0].type.format,
                                          node.outputs[0].type.dtype)

    def connection_pattern(self, node):
        return [[True]] + [[False]] * 4

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        rest = [disconnected_type()] * 4
        if is_disconnected(g):
            return [disconnected_type()] + rest
        return [GetItem2dGrad()(inputs[0], as_format(g, inputs[0].type.format),
                                *inputs[1:])] + rest

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0], *inputs[1:])]


def _bound(b: Any, name: str) -> Variable:
    """A slice bound as an int64 vector of 0 (None) or 1 entries."""
    if b is None:
        return as_tensor_variable(np.zeros(0, dtype=np.int64))
    b = as_tensor_variable(b, op="get_item", argument=name)
    if b.type.ndim != 0 or not b.type.dtype.startswith("int"):
        raise TypeError(f"get_item: slice bound {name} must be an integer scalar, got "
                        f"{b.type}")
    return tensor_math.cast(b, "int64").dimshuffle("x")


class GetItem2dGrad(Op):
    """The gradient of x[r0:r1, c0:c1]: g placed in a zero matrix of x's shape."""

    __props__ = ()

    def make_node(self, x, g, *bounds):
        return Apply(self, [x, g, *bounds], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, g, *bounds = inputs
        rows, cols = x.shape
        r0, r1, c0, c1 = [None if np.asarray(b).size == 0 else int(np.asarray(b)[0])
                          for b in bounds]
        r0, _, _ = slice(r0, r1).indices(rows)
        c0, _, _ = slice(c0, c1).indices(cols)
        coo = g.tocoo()
        output_storage[0][0] = _as_matrix(
            scipy.sparse.coo_matrix((coo.data, (coo.row + r0, coo.col + c0)), shape=x.shape),
            x.format, node.outputs[0].type.dtype)

    def connection_pattern(self, node):
        return [[False], [True]] + [[False]] * (len(node.inputs) - 2)

    def L_op(self, inputs, outputs, output_grads):
        raise MethodNotDefined("GetItem2dGrad has no derivative")


class GetItemList(Op):
    """x[rows] for an integer vector of row indices (repeats allowed): sparse."""

    __props__ = ()

    def make_node(self, x, rows):
        x = as_sparse_variable(x, who="get_item")
        rows = _int_vector(rows, "get_item", "rows")
        return Apply(self, [x, rows], [_sparse_like(x.type.format, x.type.dtype)])

    def perform(self, node, inputs, output_storage):
        x, rows = inputs
        if len(rows) and (rows.min() < -x.shape[0] or rows.max() >= x.shape[0]):
            raise IndexError(f"get_item: row indices from {rows.min()} to {rows.max()} are "
                             f"out of range for {x.shape[0]} rows")
        output_storage[0][0] = _as_matrix(x[rows], node.outputs[0].type.format,
                                          node.outputs[0].type.dtype)

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        return [GetItemListGrad()(inputs[0], as_format(g, inputs[0].type.format), inputs[1]),
                disconnected_type()]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0], inputs[1])]


class GetItemListGrad(Op):
    """The gradient of x[rows]: g's rows added into a zero matrix of x's shape."""

    __props__ = ()

    def make_node(self, x, g, rows):
        return Apply(self, [x, g, rows], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, g, rows = inputs
        rows = np.where(rows < 0, rows + x.shape[0], rows)
        selection = scipy.sparse.csr_matrix(
            (np.ones(len(rows)), (np.arange(len(rows)), rows)), shape=(len(rows), x.shape[0]))
        output_storage[0][0] = _as_matrix(selection.T @ g, x.format,
                                          node.outputs[0].type.dtype)

    def connection_pattern(self, node):
        return [[False], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        raise MethodNotDefined("GetItemListGrad has no derivative")


def get_item(x: Variable, index: Any) -> Variable:
    """x[index]: a list or integer vector of rows, or a pair of slices (steps of 1)."""
    if isinstance(index, tuple):
        if len(index) != 2 or not all(isinstance(i, slice) for i in index):
            raise TypeError(f"get_item: a sparse matrix takes a pair of slices or a list of "
                            f"rows, got {index!r}")
        for part in index:
            if part.step not in (None, 1):
                raise ValueError(f"get_item: slices of a sparse matrix have step 1, got "
                                 f"{part.step}")
        rows, cols = index
        return GetItem2d()(x, rows.start, rows.stop, cols.start, cols.stop)
    if isinstance(index, slice):
        return get_item(x, (index, slice(None)))
    return GetItemList()(x, index)


# ---------------------------------------------------------------------------------------------
# The structured elementwise family: a tensor op on the stored values only

def _structured(function, name: str):
    def structured(x: Any, *arguments: Any) -> Variable:
        x = as_sparse_variable(x, who=name)
        values = function(csm_data(x), *arguments)
        if values.type.dtype == "float16":
            # numpy's dtype for, say, sin of int8 values, which scipy.sparse cannot store:
            # they are computed and stored in float32 (Theano's dtype for them).
            values = function(tensor_math.cast(csm_data(x), "float32"), *arguments)
        return _with_data(x, values)
    structured.__name__ = name
    structured.__doc__ = (f"{function.__name__} of x's stored values (x's pattern kept, "
                          f"the implicit zeros untouched).")
    return structured


def _sigmoid(x):
    return sigmoid(x)


_sigmoid.__name__ = "sigmoid"

structured_sigmoid = _structured(_sigmoid, "structured_sigmoid")
structured_exp = _structured(tensor_math.exp, "structured_exp")
structured_log = _structured(tensor_math.log, "structured_log")
structured_pow = _structured(tensor_math.pow, "structured_pow")
structured_minimum = _structured(tensor_math.minimum, "structured_minimum")
structured_maximum = _structured(tensor_math.maximum, "structured_maximum")
structured_add = _structured(tensor_math.add, "structured_add")

# Theano's elementwise functions of sparse matrices, on the stored values (those with
# f(0) = 0 give the elementwise result; the others, like structured_exp, are structured).
_UNARY = ("abs", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "conj", "deg2rad", "expm1",
          "floor", "log1p", "rad2deg", "rint", "sgn", "sin", "sinh", "sqr", "sqrt", "tan",
          "tanh", "trunc")
for _name in _UNARY:
    globals()[_name] = _structured(getattr(tensor_math, _name), _name)
    __all__.append(_name)
del _name
abs_ = globals()["abs"]  # Theano's name
__all__.append("abs_")
__all__ += ["structured_add", "structured_exp", "structured_log", "structured_maximum",
            "structured_minimum", "structured_pow", "structured_sigmoid"]


# ---------------------------------------------------------------------------------------------
# The pattern and the stored values: explicit zeros, sorted indices, the diagonal, casts

class _PatternOp(Op):
    """An op that changes how x is stored, not the matrix it is: its output's gradient is
    x's as it is. inplace: x itself is changed (destroy_map)."""

    __props__ = ("inplace",)
    who = ""

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}

    def __str__(self):
        return f"{type(self).__name__}{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def make_node(self, x):
        x = as_sparse_variable(x, who=self.who)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self.restored(inputs[0] if self.inplace else inputs[0].copy())

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


class Remove0(_PatternOp):
    """x without its explicitly stored zeros (scipy's eliminate_zeros)."""

    who = "remove0"

    @staticmethod
    def restored(matrix):
        matrix.eliminate_zeros()
        return matrix


remove0 = Remove0()


class EnsureSortedIndices(_PatternOp):
    """x with the indices of each row (CSR) or column (CSC) in increasing order, as other
    libraries need them."""

    who = "ensure_sorted_indices"

    @staticmethod
    def restored(matrix):
        matrix.sort_indices()
        return matrix


ensure_sorted_indices = EnsureSortedIndices()


def clean(x: Any) -> Variable:
    """x without stored zeros and with sorted indices (Theano's clean)."""
    return ensure_sorted_indices(remove0(x))


class Diag(Op):
    """The diagonal of a square sparse matrix, as a dense vector. Derivative (regular):
    square_diagonal of the output's gradient."""

    __props__ = ()

    def make_node(self, x):
        x = as_sparse_variable(x, who="diag")
        return Apply(self, [x], [tensor_type(x.type.dtype, (None,))()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"diag: x must be a square matrix, got shape {x.shape}")
        output_storage[0][0] = np.asarray(x.diagonal(), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0],)]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        return [as_format(square_diagonal(g), inputs[0].type.format)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


diag = Diag()


class SquareDiagonal(Op):
    """The square CSC matrix with the dense vector `diagonal` on its diagonal (each entry
    stored, zeros included). Derivative: the gradient's diagonal."""

    __props__ = ()

    def make_node(self, diagonal):
        diagonal = _dense(diagonal, "square_diagonal", "diagonal", 1)
        return Apply(self, [diagonal], [_sparse_like("csc", diagonal.type.dtype)])

    def perform(self, node, inputs, output_storage):
        values = inputs[0]
        n = len(values)
        positions = np.arange(n + 1, dtype=np.int32)
        output_storage[0][0] = scipy.sparse.csc_matrix(
            (values.copy(), positions[:n], positions), shape=(n, n))

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0], input_shapes[0][0])]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()]
        return [diag(g)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


square_diagonal = SquareDiagonal()


class Cast(Op):
    """x's values as `out_type` (a dtype), pattern kept. Derivative (regular): the output's
    gradient cast back to x's dtype; none for an integer x."""

    __props__ = ("out_type",)

    def __init__(self, out_type: Any):
        self.out_type = np.dtype(out_type).name

    def __str__(self):
        return f"Cast({self.out_type})"

    def make_node(self, x):
        x = as_sparse_variable(x, who="cast")
        return Apply(self, [x], [_sparse_like(x.type.format, self.out_type)])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].astype(self.out_type)

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        x = inputs[0]
        if is_disconnected(g) or not np.issubdtype(np.dtype(x.type.dtype), np.inexact):
            return [disconnected_type()]
        return [g if g.type.dtype == x.type.dtype else Cast(x.type.dtype)(g)]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def cast(variable: Any, dtype: Any) -> Variable:
    """The sparse matrix `variable` with values of `dtype`."""
    return Cast(dtype)(variable)


# Theano's casts by the dtype's letter.
bcast, wcast, icast, lcast = Cast("int8"), Cast("int16"), Cast("int32"), Cast("int64")
fcast, dcast, ccast, zcast = (Cast("float32"), Cast("float64"), Cast("complex64"),
                              Cast("complex128"))


# ---------------------------------------------------------------------------------------------
# Stored values against a dense vector, and two matrices of one pattern

def _columns(x) -> np.ndarray:
    """The column of each stored value of a CSR or CSC matrix, in storage order."""
    if x.format == "csr":
        return x.indices
    return np.repeat(np.arange(x.shape[1]), np.diff(x.indptr))


class _StoredWithVector(Op):
    """An op of x's stored values and the entries of the dense vector y at their columns
    (y has one entry per column); sparse, x's pattern."""

    __props__ = ()
    who = ""

    def make_node(self, x, y):
        x = as_sparse_variable(x, who=self.who)
        y = _dense(y, self.who, "y", 1)
        return Apply(self, [x, y], [_sparse_like(x.type.format, _result_dtype(x, y))])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if len(y) != x.shape[1]:
            raise ValueError(f"{self.who}: y has {len(y)} entries; x has {x.shape[1]} columns")
        result = x.astype(node.outputs[0].type.dtype)
        result.data = self.combine(result.data, y[_columns(x)])
        output_storage[0][0] = result

    def R_op(self, inputs, eval_points):
        return [None]


class MulSV(_StoredWithVector):
    """x * y for a sparse x and a dense vector y broadcast along the rows (structured: x's
    stored values times y at their columns). Derivative: x's structured, y's the column
    sums of gz * x."""

    who = "mul_s_v"

    @staticmethod
    def combine(values, entries):
        return values * entries

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        x, y = inputs
        if is_disconnected(g):
            return [disconnected_type()] * 2
        g = as_format(g, x.type.format)
        return [mul_s_v(g, y), sp_sum(MulSS()(x, g), axis=0, sparse_grad=True)]


class StructuredAddSV(_StoredWithVector):
    """x + y added only where x stores a value (y a dense vector, one entry per column).
    Derivative: x's the output's gradient, y's its column sums at x's stored positions."""

    who = "structured_add_s_v"

    @staticmethod
    def combine(values, entries):
        return values + entries

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        x, _ = inputs
        if is_disconnected(g):
            return [disconnected_type()] * 2
        g = as_format(g, x.type.format)
        return [g, sp_sum(MulSS()(sp_ones_like(x), g), axis=0, sparse_grad=True)]


mul_s_v = MulSV()
structured_add_s_v = StructuredAddSV()


class AddSSData(Op):
    """The matrix of x's pattern holding x's stored values plus y's: x and y must store
    values at the same positions (same shape and number of stored values). Derivative: the
    output's gradient for both."""

    __props__ = ()

    def make_node(self, x, y):
        x = as_sparse_variable(x, who="add_s_s_data", argument="x")
        y = as_sparse_variable(y, who="add_s_s_data", argument="y")
        if x.type.format != y.type.format:
            raise TypeError(f"add_s_s_data: x and y must have one format, got "
                            f"{x.type.format} and {y.type.format}")
        return Apply(self, [x, y], [_sparse_like(x.type.format, _result_dtype(x, y))])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape != y.shape or x.nnz != y.nnz:
            raise ValueError(f"add_s_s_data: x and y must have one pattern, got shapes "
                             f"{x.shape} and {y.shape} storing {x.nnz} and {y.nnz} values")
        result = x.astype(node.outputs[0].type.dtype)
        result.data = result.data + y.data
        output_storage[0][0] = result

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        return [g, g]

    def R_op(self, inputs, eval_points):
        return [None]


add_s_s_data = AddSSData()


class Usmm(Op):
    """alpha * dot(x, y) + z with x or y sparse and z dense (Theano's usmm, the fused form
    of that expression): dense. Derivatives: those of the expression."""

    __props__ = ()

    def make_node(self, alpha, x, y, z):
        if not (is_sparse(x) or is_sparse(y)) or is_sparse(z):
            raise TypeError("usmm: x or y must be sparse, and z dense")
        alpha = _dense(alpha, "usmm", "alpha")
        x = x if is_sparse(x) else _dense(x, "usmm", "x", 2)
        y = y if is_sparse(y) else _dense(y, "usmm", "y", 2)
        z = _dense(z, "usmm", "z", 2)
        if alpha.type.ndim not in (0, 1, 2):
            raise TypeError(f"usmm: alpha must be a scalar, got {alpha.type}")
        return Apply(self, [alpha, x, y, z],
                     [tensor_type(_result_dtype(alpha, x, y, z), (None, None))()])

    def perform(self, node, inputs, output_storage):
        alpha, x, y, z = inputs
        if np.size(alpha) != 1:
            raise ValueError(f"usmm: alpha must hold one value, got shape {np.shape(alpha)}")
        product = x @ y
        product = product.toarray() if scipy.sparse.issparse(product) else np.asarray(product)
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(np.asarray(alpha).reshape(()) * product + z,
                                          dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        from sympile.gradient import Lop
        alpha, x, y, z = inputs
        expression = alpha.reshape(()) * dot(x, y) + z
        return [Lop(expression, variable, output_grads[0]) for variable in inputs]


usmm = Usmm()


# ---------------------------------------------------------------------------------------------
# Comparisons

class Comparison(Op):
    """x `operator` y elementwise, as scipy.sparse computes it: of two sparse matrices, a
    sparse matrix of the positions where it holds (uint8, Theano's dtype for sparse
    truths); of a sparse and a dense matrix, a dense bool matrix."""

    __props__ = ("operator",)
    _OPERATORS = {"eq": "__eq__", "neq": "__ne__", "lt": "__lt__", "gt": "__gt__",
                  "le": "__le__", "ge": "__ge__"}

    def __init__(self, operator: str):
        if operator not in self._OPERATORS:
            raise ValueError(f"Comparison: operator must be one of "
                             f"{', '.join(self._OPERATORS)}, got {operator!r}")
        self.operator = operator

    def __str__(self):
        return f"Sparse{self.operator}"

    def make_node(self, x, y):
        if not (is_sparse(x) or is_sparse(y)):
            x = as_sparse_variable(x, who=self.operator, argument="x")
        x = x if is_sparse(x) else _dense(x, self.operator, "x", 2)
        y = y if is_sparse(y) else _dense(y, self.operator, "y", 2)
        if is_sparse(x) and is_sparse(y):
            output = _sparse_like(x.type.format, "uint8")
        else:
            output = tensor_type("bool", (None, None))()
        return Apply(self, [x, y], [output])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape != y.shape:
            raise ValueError(f"{self.operator}: x and y must have one shape, got {x.shape} "
                             f"and {y.shape}")
        name = self._OPERATORS[self.operator]
        if not scipy.sparse.issparse(x):
            # dense op sparse: the sparse side's reflected comparison.
            reflected = {"__lt__": "__gt__", "__gt__": "__lt__", "__le__": "__ge__",
                         "__ge__": "__le__"}
            x, y, name = y, x, reflected.get(name, name)
        with warnings.catch_warnings():
            # scipy warns that >=, <=, == of sparse matrices store most entries: asked for.
            warnings.simplefilter("ignore", scipy.sparse.SparseEfficiencyWarning)
            result = getattr(x, name)(y)
        if scipy.sparse.issparse(result):
            output_storage[0][0] = _as_matrix(result, node.outputs[0].type.format, "uint8")
        else:
            output_storage[0][0] = np.asarray(result, dtype=bool)

    def connection_pattern(self, node):
        return [[False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type(), disconnected_type()]


eq, neq, lt, gt, le, ge = (Comparison(name) for name in ("eq", "neq", "lt", "gt", "le", "ge"))

__all__ += ["AddSSData", "Cast", "Comparison", "Diag", "EnsureSortedIndices", "HStack",
            "MulSV", "Remove0", "SquareDiagonal", "StructuredAddSV", "Usmm", "VStack",
            "add_s_s_data", "bcast", "cast", "ccast", "clean", "dcast", "diag",
            "ensure_sorted_indices", "eq", "fcast", "ge", "gt", "icast", "lcast", "le", "lt",
            "mul_s_v", "neq", "remove0", "square_diagonal", "structured_add_s_v", "usmm",
            "wcast", "zcast"]
