"""as_op: a Python function as an Op (Theano's theano.compile.ops.as_op); DeepCopyOp, the
copy Theano's function() put on an output that was an input; ViewOp, the identity that
libraries subclass to change only a gradient (Theano's consider_constant idiom).

    @as_op(itypes=[T.dmatrix], otypes=[T.dvector])
    def row_medians(m):
        return numpy.median(m, axis=1)

    y = row_medians(x)            # a node whose perform calls the function

The function gets numpy values and returns one value (one output type) or a list of them;
each is checked against its output type (its dtype converted where that loses nothing). It
has no gradient (grad raises, naming the op), and the C backend calls it from C.
infer_shape(node, input_shapes) -> [output shape, ...] (Theano's signature) lets shape
rewrites avoid running it to learn the output shapes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply
from sympile.graph.gradient_types import grad_not_implemented
from sympile.graph.op import Op
from sympile.graph.type import Type
from sympile.tensor.shape.ops import PassThroughOp
from sympile.tensor.type import TensorType
from sympile.tensor.variable import as_tensor_variable

__all__ = ["DeepCopyOp", "FromFunctionOp", "ViewOp", "as_op", "deep_copy_op", "view_op"]


class FromFunctionOp(Op):
    """The Op that as_op makes around `function`."""

    __props__ = ("function", "itypes", "otypes")

    def __init__(self, function: Callable[..., Any], itypes: Sequence[Type],
                 otypes: Sequence[Type], infer_shape: Callable | None = None):
        self.function = function
        self.itypes = tuple(itypes)
        self.otypes = tuple(otypes)
        self._infer_shape = infer_shape
        self.__name__ = getattr(function, "__name__", "as_op")
        self.__doc__ = getattr(function, "__doc__", None)

    def __str__(self) -> str:
        return f"FromFunctionOp{{{self.__name__}}}"

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.itypes):
            raise TypeError(f"{self}: expected {len(self.itypes)} inputs, got {len(inputs)}")
        converted = []
        for index, (value, itype) in enumerate(zip(inputs, self.itypes)):
            variable = as_tensor_variable(value, op=self, argument=f"input {index}") \
                if isinstance(itype, TensorType) else value
            fitted = itype.convert_variable(variable)
            if fitted is None:
                raise TypeError(f"{self}: input {index} is {variable} of type {variable.type}, "
                                f"expected {itype}")
            converted.append(fitted)
        return Apply(self, converted, [otype() for otype in self.otypes])

    def perform(self, node, inputs, output_storage):
        results = self.function(*inputs)
        if len(self.otypes) == 1:
            results = [results]
        elif not isinstance(results, (list, tuple)) or len(results) != len(self.otypes):
            raise ValueError(f"{self}: the function must return {len(self.otypes)} values "
                             f"(a list or tuple), got {type(results).__name__}")
        for index, (cell, value, otype) in enumerate(zip(output_storage, results,
                                                         self.otypes)):
            try:
                cell[0] = otype.filter(value)
            except TypeError as error:
                raise TypeError(f"{self}: output {index} of the function: {error}") from None

    def infer_shape(self, fgraph, node, input_shapes):
        if self._infer_shape is None:
            return super().infer_shape(fgraph, node, input_shapes)
        return self._infer_shape(node, input_shapes)

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, index, variable)
                for index, variable in enumerate(inputs)]


def as_op(itypes: Sequence[Type], otypes: Sequence[Type],
          infer_shape: Callable | None = None) -> Callable[[Callable], FromFunctionOp]:
    """Decorator: the function becomes an Op taking `itypes` and giving `otypes`."""
    itypes, otypes = list(itypes), list(otypes)
    for name, types in (("itypes", itypes), ("otypes", otypes)):
        if not all(isinstance(t, Type) for t in types):
            raise TypeError(f"as_op: {name} must be a list of Types (T.dmatrix, ...), got "
                            f"{types!r}")
    if not otypes:
        raise TypeError("as_op: otypes must name at least one output type")
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError(f"as_op: infer_shape must be callable, got {infer_shape!r}")

    def decorate(function: Callable) -> FromFunctionOp:
        if not callable(function):
            raise TypeError(f"as_op: expected a function to decorate, got {function!r}")
        return FromFunctionOp(function, itypes, otypes, infer_shape)
    return decorate


class DeepCopyOp(PassThroughOp):
    """Theano's DeepCopyOp: a copy of its input that shares no memory with it (an array's
    data copied, any other value deep-copied). Its gradient and R_op pass through."""

    def perform(self, node, inputs, output_storage):
        value = inputs[0]
        output_storage[0][0] = value.copy() if isinstance(value, np.ndarray) \
            else copy.deepcopy(value)

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)


deep_copy_op = DeepCopyOp()


class ViewOp(PassThroughOp):
    """Theano's ViewOp: its output is its input itself (a view), and gradients pass through.
    Subclasses override grad (or L_op) to change only the gradient."""

    view_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def grad(self, inputs, output_grads):
        return list(output_grads)


view_op = ViewOp()
