"""Dense products: dot, matmul, tensordot, outer, batched_dot, with numpy's semantics.

Three Ops compute them: Dot (numpy.dot of 1-d and 2-d tensors: the products a BLAS rewrite
turns into gemm/gemv/dot calls), MatMul (numpy.matmul, batched over leading axes) and TensorDot
(numpy.tensordot, any ranks). The result dtype is numpy's promotion of the input dtypes, as
numpy.dot gives it: an int8 product stays int8 (and may wrap around), a product of bools is a
bool (an OR of ANDs), complex values are not conjugated.

Derivatives: each product is linear in each operand, so the forward rule (R_op) is the product
applied to one tangent and the other operand, summed over the two operands; the reverse rule
(L_op) contracts the output gradient with the other operand (for dot, g · bᵀ and aᵀ · g), then
sums over the batch axes an operand was broadcast along and restores its axis order and type.
Bool and integer operands get no gradient.

C backend: float32 and float64 products (both inputs and the output of one dtype) call BLAS
(gemm, gemv, dot; see sympile.tensor.blas.blas_c); other dtypes run perform.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.ccode import c_string
from sympile.graph.gradient_types import DisconnectedType, disconnected_type
from sympile.graph.op import Op
from sympile.scalar.basic import DISCRETE_DTYPES, upcast
from sympile.tensor import math, reduction
from sympile.tensor.blas.blas_c import BLAS_C_DTYPES, blas_call, dot_c_code
from sympile.tensor.elemwise import DimShuffle, broadcast_static_shape
from sympile.tensor.shape.ops import declared_like, flatten, reshape
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Dot", "MatMul", "TensorDot", "dot", "matmul", "tensordot", "outer", "batched_dot",
           "batched_tensordot"]


def _shape_text(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("?" if n is None else str(n) for n in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def _check_static_match(op: Any, a: Variable, b: Variable, axis_a: int, axis_b: int) -> None:
    """ValueError if the types say that axis_a of a and axis_b of b, which are summed over
    together, have different lengths."""
    length_a, length_b = a.type.shape[axis_a], b.type.shape[axis_b]
    if length_a is not None and length_b is not None and length_a != length_b:
        raise ValueError(f"{op}: shapes {_shape_text(a.type.shape)} and "
                         f"{_shape_text(b.type.shape)} are not aligned: axis {axis_a} of a has "
                         f"length {length_a}, axis {axis_b} of b has length {length_b}")


def check_runtime_match(op: Any, a: np.ndarray, b: np.ndarray, axis_a: int,
                         axis_b: int) -> None:
    if a.shape[axis_a] != b.shape[axis_b]:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} are not aligned: axis "
                         f"{axis_a} of a has length {a.shape[axis_a]}, axis {axis_b} of b has "
                         f"length {b.shape[axis_b]}")


def _store(output_storage: list[list[Any]], node: Apply, result: Any) -> None:
    output_storage[0][0] = np.asarray(result).astype(node.outputs[0].type.dtype, copy=False)


def _gradient_like(gradient: Variable, operand: Variable) -> Variable:
    """`gradient`, computed for `operand`, in its dtype and with a compatible static shape."""
    return declared_like(math.cast(gradient, operand.type.dtype), operand)


def _no_gradient(output_grad: Variable) -> bool:
    return isinstance(output_grad.type, DisconnectedType)


def _operand_gradients(operands: Sequence[Variable], gradients: Sequence[Any]) -> list:
    """The L_op result from `gradients`, one function per operand that builds its gradient:
    each gradient in its operand's form; bool and integer operands (which have no gradient)
    are disconnected, without building theirs."""
    return [disconnected_type() if operand.type.dtype in DISCRETE_DTYPES
            else _gradient_like(gradient(), operand)
            for operand, gradient in zip(operands, gradients)]


def _product_tangent(product: Any, operands: Sequence[Variable],
                     tangents: Sequence[Variable | None]) -> list[Variable | None]:
    """The R_op of a product that is linear in each operand: product(ta, b) + product(a, tb),
    each tangent declared with its operand's static shape (its broadcastable axes)."""
    a, b = operands
    tangent_a, tangent_b = tangents
    terms = []
    if tangent_a is not None and a.type.dtype not in DISCRETE_DTYPES:
        terms.append(product(declared_like(math.cast(tangent_a, a.type.dtype), a), b))
    if tangent_b is not None and b.type.dtype not in DISCRETE_DTYPES:
        terms.append(product(a, declared_like(math.cast(tangent_b, b.type.dtype), b)))
    if not terms:
        return [None]
    return [terms[0] if len(terms) == 1 else math.add(*terms)]


def _blas_c_dtype(node: Apply) -> str | None:
    """The dtype in which the C backend computes the product `node` by BLAS: float32 or
    float64, shared by its inputs and output; None for any other (perform computes those)."""
    dtypes = {variable.type.dtype for variable in node.inputs + node.outputs}
    dtype = dtypes.pop()
    return dtype if not dtypes and dtype in BLAS_C_DTYPES else None


def _swap_last_axes(x: Variable) -> Variable:
    """x with its last two axes exchanged (the transpose of each matrix of a stack)."""
    ndim = x.type.ndim
    return DimShuffle(ndim, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))(x)


class Dot(Op):
    """numpy.dot of 1-d and 2-d tensors: matrix @ matrix, matrix @ vector, vector @ matrix,
    and the inner product of two vectors (a 0-d result). The last axis of a is summed with
    the first axis of b."""

    def make_node(self, a, b):
        a = as_tensor_variable(a, op=self, argument="a")
        b = as_tensor_variable(b, op=self, argument="b")
        for name, variable in (("a", a), ("b", b)):
            if variable.type.ndim not in (1, 2):
                raise TypeError(f"{self}: input {name} must be 1-d or 2-d, got {variable} of "
                                f"type {variable.type} (dot and tensordot take other ranks)")
        _check_static_match(self, a, b, a.type.ndim - 1, 0)
        shape = a.type.shape[:-1] + b.type.shape[1:]
        return Apply(self, [a, b], [tensor_type(upcast(a.type.dtype, b.type.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        check_runtime_match(self, a, b, a.ndim - 1, 0)
        _store(output_storage, node, np.dot(a, b))

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape = input_shapes
        return [tuple(a_shape[:-1]) + tuple(b_shape[1:])]

    def L_op(self, inputs, outputs, output_grads):
        """For z = a · b and the gradient g of z: matrices give g · bᵀ and aᵀ · g; a vector
        operand takes the outer product of g with the other operand (matrix · vector:
        outer(g, b) for a), and two vectors give g * b and g * a."""
        a, b = inputs
        (output_grad,) = output_grads
        if _no_gradient(output_grad):
            return [disconnected_type(), disconnected_type()]

        def column(x):
            return DimShuffle(1, (0, "x"))(x)

        def row(x):
            return DimShuffle(1, ("x", 0))(x)

        transpose = DimShuffle(2, (1, 0))
        if a.type.ndim == 2 and b.type.ndim == 2:
            gradients = (lambda: _dot(output_grad, transpose(b)),
                         lambda: _dot(transpose(a), output_grad))
        elif a.type.ndim == 2:
            gradients = (lambda: _dot(column(output_grad), row(b)),
                         lambda: _dot(transpose(a), output_grad))
        elif b.type.ndim == 2:
            gradients = (lambda: _dot(b, output_grad),
                         lambda: _dot(column(a), row(output_grad)))
        else:
            gradients = (lambda: math.mul(output_grad, b), lambda: math.mul(output_grad, a))
        return _operand_gradients(inputs, gradients)

    def R_op(self, inputs, eval_points):
        """dot(ta, b) + dot(a, tb) for the tangents ta of a and tb of b."""
        return _product_tangent(_dot, inputs, eval_points)

    def c_code(self, node, names):
        """One BLAS call: gemm (matrix @ matrix), gemv (with a vector) or dot (two
        vectors)."""
        dtype = _blas_c_dtype(node)
        if dtype is None:
            return None
        return dot_c_code(str(self), dtype)


def _matmul_operand_shapes(a_shape: Sequence[Any], b_shape: Sequence[Any]) -> tuple[list, list]:
    """numpy.matmul's view of its operands: a 1-d a is a row (1, n), a 1-d b a column (n, 1)."""
    a_shape, b_shape = list(a_shape), list(b_shape)
    if len(a_shape) == 1:
        a_shape = [1] + a_shape
    if len(b_shape) == 1:
        b_shape = b_shape + [1]
    return a_shape, b_shape


def _matmul_result_shape(a_ndim: int, b_ndim: int, batch: Sequence[Any], a_shape: Sequence[Any],
                         b_shape: Sequence[Any]) -> tuple:
    """The batch axes, then a's rows unless a is 1-d, then b's columns unless b is 1-d."""
    rows = (a_shape[-2],) if a_ndim > 1 else ()
    columns = (b_shape[-1],) if b_ndim > 1 else ()
    return tuple(batch) + rows + columns


class MatMul(Op):
    """numpy.matmul: matrix products over the last two axes, broadcast over the leading (batch)
    axes. A 1-d a is a row vector and a 1-d b a column vector, whose axis is then removed from
    the result. As in Elemwise, a batch axis broadcasts only when its type says it has length
    1; an axis of unknown length must match the other input's at run time."""

    def make_node(self, a, b):
        a = as_tensor_variable(a, op=self, argument="a")
        b = as_tensor_variable(b, op=self, argument="b")
        for name, variable in (("a", a), ("b", b)):
            if variable.type.ndim == 0:
                raise ValueError(f"{self}: input {name} ({variable}) is 0-d; matmul needs at "
                                 f"least one axis (multiply by a scalar with mul)")
        a_shape, b_shape = _matmul_operand_shapes(a.type.shape, b.type.shape)
        if None not in (a_shape[-1], b_shape[-2]) and a_shape[-1] != b_shape[-2]:
            raise ValueError(f"{self}: shapes {_shape_text(a.type.shape)} and "
                             f"{_shape_text(b.type.shape)} are not aligned: a has "
                             f"{a_shape[-1]} columns, b has {b_shape[-2]} rows")
        batch = broadcast_static_shape([a_shape[:-2], b_shape[:-2]], op=self)
        shape = _matmul_result_shape(a.type.ndim, b.type.ndim, batch, a_shape, b_shape)
        return Apply(self, [a, b], [tensor_type(upcast(a.type.dtype, b.type.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        self.check_shapes(node, a.shape, b.shape)
        _store(output_storage, node, np.matmul(a, b))

    def check_shapes(self, node: Apply, a_shape: tuple, b_shape: tuple) -> None:
        """ValueError unless operands of these run-time shapes multiply (the GPU's MatMul
        checks them too)."""
        a_lengths, b_lengths = _matmul_operand_shapes(a_shape, b_shape)
        if a_lengths[-1] != b_lengths[-2]:
            raise ValueError(f"{self}: shapes {a_shape} and {b_shape} are not aligned: a has "
                             f"{a_lengths[-1]} columns, b has {b_lengths[-2]} rows")
        self._check_batch(node, a_shape, b_shape)

    def _check_batch(self, node: Apply, a_shape: tuple, b_shape: tuple) -> None:
        """ValueError unless the batch axes are equal where neither type says length 1."""
        static_a, static_b = _matmul_operand_shapes(node.inputs[0].type.shape,
                                                    node.inputs[1].type.shape)
        static_a, static_b = static_a[:-2], static_b[:-2]
        runtime_a, runtime_b = _matmul_operand_shapes(a_shape, b_shape)
        runtime_a, runtime_b = runtime_a[:-2], runtime_b[:-2]
        ndim = max(len(static_a), len(static_b))
        # Axes an operand lacks are broadcastable: pad them as static length 1.
        static_a = [1] * (ndim - len(static_a)) + static_a
        static_b = [1] * (ndim - len(static_b)) + static_b
        runtime_a = [1] * (ndim - len(runtime_a)) + runtime_a
        runtime_b = [1] * (ndim - len(runtime_b)) + runtime_b
        for axis in range(ndim):
            lengths = [runtime[axis] for static, runtime in ((static_a, runtime_a),
                                                             (static_b, runtime_b))
                       if static[axis] != 1]
            if len(lengths) == 2 and lengths[0] != lengths[1]:
                hint = (" (a length-1 batch axis broadcasts only if its type says it has "
                        "length 1)" if 1 in lengths else "")
                raise ValueError(f"{self}: shapes {a_shape} and {b_shape} have batch axes "
                                 f"that cannot be broadcast together: batch axis {axis} has "
                                 f"lengths {lengths[0]} and {lengths[1]}{hint}")

    def infer_shape(self, fgraph, node, input_shapes):
        a, b = node.inputs
        a_static, b_static = _matmul_operand_shapes(a.type.shape, b.type.shape)
        a_shape, b_shape = _matmul_operand_shapes(input_shapes[0], input_shapes[1])
        ndim = max(len(a_shape), len(b_shape)) - 2
        operands = []
        for static, lengths in ((a_static, a_shape), (b_static, b_shape)):
            missing = ndim - (len(lengths) - 2)
            operands.append(([1] * missing + static[:-2], [1] * missing + lengths[:-2]))
        batch = []
        for axis in range(ndim):
            # The batch length is that of an operand whose type does not say 1.
            for static, lengths in operands:
                if static[axis] != 1:
                    batch.append(lengths[axis])
                    break
            else:
                batch.append(1)
        return [_matmul_result_shape(a.type.ndim, b.type.ndim, batch, a_shape, b_shape)]

    def L_op(self, inputs, outputs, output_grads):
        """For z = a @ b and the gradient g of z: g @ bᵀ for a and aᵀ @ g for b (transposing
        the last two axes), each summed over the batch axes its operand was broadcast along
        (the leading axes it lacks, and those its type gives length 1). A 1-d operand is
        promoted as in the forward product (a to a row, b to a column, with g given the
        matching length-1 axis) and its gradient demoted back."""
        a, b = inputs
        (output_grad,) = output_grads
        if _no_gradient(output_grad):
            return [disconnected_type(), disconnected_type()]
        a_matrix = a if a.type.ndim > 1 else DimShuffle(1, ("x", 0))(a)
        b_matrix = b if b.type.ndim > 1 else DimShuffle(1, (0, "x"))(b)
        grad_ndim = output_grad.type.ndim
        batch_ndim = grad_ndim - (a.type.ndim > 1) - (b.type.ndim > 1)
        positions = iter(range(batch_ndim, grad_ndim))
        order = list(range(batch_ndim)) + [next(positions) if a.type.ndim > 1 else "x",
                                            next(positions) if b.type.ndim > 1 else "x"]
        grad_matrix = DimShuffle(grad_ndim, order)(output_grad)

        def gradient_of_a():
            full = _sum_to_operand(_matmul(grad_matrix, _swap_last_axes(b_matrix)), a_matrix)
            return full if a.type.ndim > 1 else DimShuffle(2, (1,))(full)

        def gradient_of_b():
            full = _sum_to_operand(_matmul(_swap_last_axes(a_matrix), grad_matrix), b_matrix)
            return full if b.type.ndim > 1 else DimShuffle(2, (0,))(full)

        return _operand_gradients(inputs, (gradient_of_a, gradient_of_b))

    def R_op(self, inputs, eval_points):
        """matmul(ta, b) + matmul(a, tb) for the tangents ta of a and tb of b."""
        return _product_tangent(_matmul, inputs, eval_points)

    def c_code(self, node, names):
        """Operands of up to 3 axes: as Dot for 1-d and 2-d ones; with a batch axis, one
        gemm per matrix of the batch (one in all when b has no batch and a's matrices are
        the rows of one tall matrix)."""
        dtype = _blas_c_dtype(node)
        if dtype is None or any(variable.type.ndim > 3 for variable in node.inputs):
            return None
        a, b = names.inputs
        batch_one = [int(variable.type.ndim == 3 and variable.type.shape[0] == 1)
                     for variable in node.inputs]
        return blas_call("matmul", dtype, [c_string(str(self)), a, b, *map(str, batch_one),
                                           f"&{names.outputs[0]}"], names.fail)


def _sum_to_operand(gradient: Variable, operand: Variable) -> Variable:
    """`gradient`, with the batch axes of a matmul result, summed over the batch axes along
    which the (2-d or more) `operand` was broadcast: the leading axes it lacks, and those its
    type gives length 1 where the gradient's does not."""
    extra = gradient.type.ndim - operand.type.ndim
    if extra:
        gradient = reduction.sum(gradient, axis=tuple(range(extra)))
    broadcast = tuple(axis for axis in range(operand.type.ndim - 2)
                      if operand.type.shape[axis] == 1 and gradient.type.shape[axis] != 1)
    if broadcast:
        gradient = reduction.sum(gradient, axis=broadcast, keepdims=True)
    return gradient


class TensorDot(Op):
    """numpy.tensordot(a, b, (axes_a, axes_b)): the sum over the paired axes of the products;
    the result has a's other axes followed by b's other axes."""

    __props__ = ("axes_a", "axes_b")

    def __init__(self, axes_a: Sequence[int], axes_b: Sequence[int]):
        self.axes_a = tuple(int(axis) for axis in axes_a)
        self.axes_b = tuple(int(axis) for axis in axes_b)
        for axes in (self.axes_a, self.axes_b):
            if any(axis < 0 for axis in axes) or len(set(axes)) != len(axes):
                raise ValueError(f"TensorDot: axes must be distinct ints >= 0, got {axes}")
        if len(self.axes_a) != len(self.axes_b):
            raise ValueError(f"TensorDot: {self.axes_a} and {self.axes_b} do not pair up: "
                             f"give as many axes of a as of b")

    def __str__(self):
        return f"TensorDot{{axes={self.axes_a}, {self.axes_b}}}"

    def make_node(self, a, b):
        a = as_tensor_variable(a, op=self, argument="a")
        b = as_tensor_variable(b, op=self, argument="b")
        for name, variable, axes in (("a", a, self.axes_a), ("b", b, self.axes_b)):
            for axis in axes:
                if axis >= variable.type.ndim:
                    raise ValueError(f"{self}: input {name} ({variable.type}) has no axis "
                                     f"{axis}")
        for axis_a, axis_b in zip(self.axes_a, self.axes_b):
            _check_static_match(self, a, b, axis_a, axis_b)
        shape = self._result_shape(a.type.shape, b.type.shape)
        return Apply(self, [a, b], [tensor_type(upcast(a.type.dtype, b.type.dtype), shape)()])

    def _result_shape(self, a_shape: Sequence[Any], b_shape: Sequence[Any]) -> tuple:
        return tuple(n for axis, n in enumerate(a_shape) if axis not in self.axes_a) + \
            tuple(n for axis, n in enumerate(b_shape) if axis not in self.axes_b)

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        for axis_a, axis_b in zip(self.axes_a, self.axes_b):
            check_runtime_match(self, a, b, axis_a, axis_b)
        _store(output_storage, node, np.tensordot(a, b, (list(self.axes_a),
                                                         list(self.axes_b))))

    def infer_shape(self, fgraph, node, input_shapes):
        return [self._result_shape(*input_shapes)]

    def L_op(self, inputs, outputs, output_grads):
        """For z = tensordot(a, b, (A, B)) and the gradient g of z (a's free axes, then b's):
        a's gradient contracts g's b-part with b's free axes, tensordot(g, b, (b-part, b's
        free axes)), whose axes (a's free ones, then b's paired ones in b's order) are then
        put in a's order; b's gradient is the mirror image."""
        a, b = inputs
        (output_grad,) = output_grads
        if _no_gradient(output_grad):
            return [disconnected_type(), disconnected_type()]
        free_a = [axis for axis in range(a.type.ndim) if axis not in self.axes_a]
        free_b = [axis for axis in range(b.type.ndim) if axis not in self.axes_b]
        grad_part_a = tuple(range(len(free_a)))
        grad_part_b = tuple(range(len(free_a), len(free_a) + len(free_b)))

        def gradient_of_a():
            contracted = TensorDot(grad_part_b, free_b)(output_grad, b)
            # contracted: a's free axes, then b's paired axes in increasing order.
            paired = sorted(self.axes_b)
            order = [free_a.index(axis) if axis in free_a
                     else len(free_a) + paired.index(self.axes_b[self.axes_a.index(axis)])
                     for axis in range(a.type.ndim)]
            return _transposed(contracted, order)

        def gradient_of_b():
            contracted = TensorDot(free_a, grad_part_a)(a, output_grad)
            # contracted: a's paired axes in increasing order, then b's free axes.
            paired = sorted(self.axes_a)
            order = [len(self.axes_a) + free_b.index(axis) if axis in free_b
                     else paired.index(self.axes_a[self.axes_b.index(axis)])
                     for axis in range(b.type.ndim)]
            return _transposed(contracted, order)

        return _operand_gradients(inputs, (gradient_of_a, gradient_of_b))

    def R_op(self, inputs, eval_points):
        """tensordot(ta, b) + tensordot(a, tb) over the same axes, for the tangents ta, tb."""
        return _product_tangent(self, inputs, eval_points)

    def c_code(self, node, names):
        """As numpy.tensordot: a's free axes then its summed ones, and b's summed axes then
        its free ones, reshaped (copied only where the transposed axes do not merge) into the
        matrices of one gemm."""
        a, b = node.inputs
        dtype = _blas_c_dtype(node)
        if dtype is None or a.type.ndim == 0 or b.type.ndim == 0:
            return None
        order_a = [axis for axis in range(a.type.ndim) if axis not in self.axes_a] + \
            list(self.axes_a)
        order_b = list(self.axes_b) + [axis for axis in range(b.type.ndim)
                                       if axis not in self.axes_b]
        setup = (f"static const int order_a[] = {{{', '.join(map(str, order_a))}}};\n"
                 f"        static const int order_b[] = {{{', '.join(map(str, order_b))}}};")
        return blas_call("tensordot", dtype,
                         [c_string(str(self)), *names.inputs, str(len(self.axes_a)), "order_a",
                          "order_b", f"&{names.outputs[0]}"], names.fail, setup=setup)


def _transposed(x: Variable, order: Sequence[int]) -> Variable:
    """x with its axes in `order` (no node when it is the identity)."""
    if list(order) == list(range(x.type.ndim)):
        return x
    return DimShuffle(x.type.ndim, tuple(order))(x)


_dot = Dot()
_matmul = MatMul()


def dot(a: Any, b: Any) -> Variable:
    """numpy.dot(a, b): with a 0-d input the elementwise product; for 1-d and 2-d inputs the
    inner, matrix-vector or matrix product; otherwise the sum over the last axis of a and the
    second-to-last of b (the last, if b is 1-d)."""
    a = as_tensor_variable(a, op="dot", argument="a")
    b = as_tensor_variable(b, op="dot", argument="b")
    if a.type.ndim == 0 or b.type.ndim == 0:
        return math.mul(a, b)
    if a.type.ndim <= 2 and b.type.ndim <= 2:
        return _dot(a, b)
    return TensorDot((a.type.ndim - 1,), (max(b.type.ndim - 2, 0),))(a, b)


def matmul(a: Any, b: Any) -> Variable:
    """numpy.matmul(a, b) (a @ b); see MatMul. 0-d inputs are a ValueError, as in numpy."""
    return _matmul(a, b)


def _tensordot_axes(axes: Any, a_ndim: int, b_ndim: int) -> tuple[tuple[int, ...], ...]:
    """numpy.tensordot's `axes` (an int n: the last n axes of a with the first n of b; or a
    pair of an int or sequence of ints each) as two tuples of non-negative axes."""
    if isinstance(axes, np.ndarray) and axes.dtype.kind in "iu" and axes.ndim <= 2:
        # numpy and Theano take an integer array: 0-d (n) or of shape (2, k).
        axes = axes.tolist()
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        if not 0 <= axes <= min(a_ndim, b_ndim):
            raise ValueError(f"tensordot: axes={axes} must be between 0 and the smaller rank "
                             f"of the inputs, {min(a_ndim, b_ndim)}")
        return tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes))
    if not (isinstance(axes, (list, tuple)) and len(axes) == 2):
        raise TypeError(f"tensordot: axes must be an int or a pair (axes of a, axes of b), got "
                        f"{axes!r}")
    normalized = []
    for name, entry, ndim in (("a", axes[0], a_ndim), ("b", axes[1], b_ndim)):
        entries = list(entry) if isinstance(entry, (list, tuple)) else [entry]
        result = []
        for axis in entries:
            if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
                raise TypeError(f"tensordot: the axes of {name} must be ints, got {entry!r}")
            if not -ndim <= axis < ndim:
                raise ValueError(f"tensordot: axis {axis} is out of range for {name}, which "
                                 f"has {ndim} dimensions")
            result.append(int(axis) % ndim)
        if len(set(result)) != len(result):
            raise ValueError(f"tensordot: the axes of {name}, {entry!r}, repeat an axis")
        normalized.append(tuple(result))
    if len(normalized[0]) != len(normalized[1]):
        raise ValueError(f"tensordot: {len(normalized[0])} axes of a cannot pair up with "
                         f"{len(normalized[1])} axes of b ({axes!r})")
    return normalized[0], normalized[1]


def tensordot(a: Any, b: Any, axes: Any = 2) -> Variable:
    """numpy.tensordot(a, b, axes): the sum over paired axes; the result has the other axes
    of a, then those of b. axes=n pairs the last n axes of a with the first n of b."""
    a = as_tensor_variable(a, op="tensordot", argument="a")
    b = as_tensor_variable(b, op="tensordot", argument="b")
    axes_a, axes_b = _tensordot_axes(axes, a.type.ndim, b.type.ndim)
    if a.type.ndim in (1, 2) and b.type.ndim in (1, 2) and axes_a == (a.type.ndim - 1,) \
            and axes_b == (0,):
        return _dot(a, b)
    return TensorDot(axes_a, axes_b)(a, b)


def outer(a: Any, b: Any) -> Variable:
    """numpy.outer(a, b): result[i, j] = a.ravel()[i] * b.ravel()[j]."""
    vectors = []
    for name, value in (("a", a), ("b", b)):
        variable = as_tensor_variable(value, op="outer", argument=name)
        vectors.append(variable if variable.type.ndim == 1 else flatten(variable))
    column = DimShuffle(1, (0, "x"))(vectors[0])
    row = DimShuffle(1, ("x", 0))(vectors[1])
    return math.mul(column, row)


def batched_dot(a: Any, b: Any) -> Variable:
    """Theano's batched_dot: result[i] = dot(a[i], b[i]) over the leading (batch) axis.

    (B, n, m) x (B, m, k) -> (B, n, k); (B, n) x (B, n) -> (B,); (B, n, m) x (B, m) -> (B, n);
    higher ranks follow numpy.dot per batch element, and a 1-d input scales the other's
    slices. A batch axis whose type says it has length 1 broadcasts, as in matmul.
    """
    a = as_tensor_variable(a, op="batched_dot", argument="a")
    b = as_tensor_variable(b, op="batched_dot", argument="b")
    for name, variable in (("a", a), ("b", b)):
        if variable.type.ndim == 0:
            raise TypeError(f"batched_dot: input {name} ({variable}) is 0-d; both inputs need "
                            f"a batch axis")
    _check_static_match("batched_dot", a, b, 0, 0)
    if a.type.ndim == 1 or b.type.ndim == 1:
        # dot of a scalar with each slice: scale it, the batch vector broadcast on its axes.
        if a.type.ndim == 1:
            a = DimShuffle(1, (0,) + ("x",) * (b.type.ndim - 1))(a)
        if b.type.ndim == 1:
            b = DimShuffle(1, (0,) + ("x",) * (a.type.ndim - 1))(b)
        return math.mul(a, b)
    b_is_vector = b.type.ndim == 2
    contracted_b = 1 if b_is_vector else b.type.ndim - 2
    _check_static_match("batched_dot", a, b, a.type.ndim - 1, contracted_b)
    # One matmul computes every dot(a[i], b[i]): the last free axis of a[i] becomes the rows,
    # the last axis of b[i] the columns, and the other free axes of both become batch axes
    # (each operand gets length-1 axes where the other has free ones), moved back after.
    a_free = list(range(1, a.type.ndim - 1))
    b_free = [] if b_is_vector else list(range(1, b.type.ndim - 2))
    a_batch = a_free[:-1]
    rows = a_free[-1] if a_free else "x"
    columns = "x" if b_is_vector else b.type.ndim - 1
    a_operand = DimShuffle(a.type.ndim, [0] + a_batch + ["x"] * len(b_free)
                           + [rows, a.type.ndim - 1])(a)
    b_operand = DimShuffle(b.type.ndim, [0] + ["x"] * len(a_batch) + b_free
                           + [contracted_b, columns])(b)
    product = _matmul(a_operand, b_operand)
    rows_position = 1 + len(a_batch) + len(b_free)
    order = [0] + list(range(1, 1 + len(a_batch))) + ([rows_position] if a_free else []) \
        + list(range(1 + len(a_batch), rows_position)) + ([] if b_is_vector
                                                           else [rows_position + 1])
    if order == list(range(product.type.ndim)):
        return product
    return DimShuffle(product.type.ndim, order)(product)


def batched_tensordot(x: Any, y: Any, axes: Any = 2) -> Variable:
    """Theano's batched_tensordot: result[i] = tensordot(x[i], y[i]) over the leading (batch)
    axis. axes: an int n (the last n axes of x with the n axes of y after its batch axis) or
    a pair of the axes of x and of y, each an int or a list (batch axis 0 excluded). The
    result has the batch axis, then x's free axes, then y's, each in order."""
    x = as_tensor_variable(x, op="batched_tensordot", argument="x")
    y = as_tensor_variable(y, op="batched_tensordot", argument="y")
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        count = int(axes)
        if not 0 <= count < min(x.type.ndim, y.type.ndim):
            raise ValueError(f"batched_tensordot: axes={count} does not fit inputs of "
                             f"{x.type.ndim} and {y.type.ndim} dimensions")
        x_axes = list(range(x.type.ndim - count, x.type.ndim))
        y_axes = list(range(1, 1 + count))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        # Each side an int or a sequence of ints, as numpy's and Theano's tensordot take.
        x_axes, y_axes = ([int(a) for a in np.atleast_1d(group)] for group in axes)
    else:
        raise TypeError(f"batched_tensordot: axes must be an int or a pair (axes of x, axes "
                        f"of y), got {axes!r}")
    for name, variable, chosen in (("x", x, x_axes), ("y", y, y_axes)):
        if any(not 1 <= a < variable.type.ndim for a in chosen) or len(set(chosen)) != len(
                chosen):
            raise ValueError(f"batched_tensordot: axes {chosen} of {name} must be distinct "
                             f"axes of {variable.type} after the batch axis 0")
    if len(x_axes) != len(y_axes):
        raise ValueError(f"batched_tensordot: {len(x_axes)} axes of x but {len(y_axes)} of y")
    x_free = [a for a in range(1, x.type.ndim) if a not in x_axes]
    y_free = [a for a in range(1, y.type.ndim) if a not in y_axes]
    batch = x.shape[0]

    def product(variable, chosen):
        result = 1
        for axis in chosen:
            result = result * variable.shape[axis]
        return result

    summed = product(x, x_axes)
    left = reshape(DimShuffle(x.type.ndim, [0, *x_free, *x_axes])(x),
                   (batch, product(x, x_free), summed))
    right = reshape(DimShuffle(y.type.ndim, [0, *y_axes, *y_free])(y),
                    (batch, summed, product(y, y_free)))
    result = batched_dot(left, right)
    return reshape(result, (batch, *[x.shape[a] for a in x_free],
                            *[y.shape[a] for a in y_free]))
