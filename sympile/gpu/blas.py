"""Products on the device: Dot and MatMul (batches broadcast as numpy's) through the device's
BLAS (cuBLAS, by CuPy's matmul), and
Gemm, Gemv and Ger as that product followed by one elementwise kernel that scales and adds
(alpha * p + beta * z, a + alpha * p), in the order the CPU ops compute them, so each
element's rounding is the same. Products of floats of one dtype move; the others (integer
dot, mixed dtypes) stay on the host.
"""

from __future__ import annotations

from sympile.gpu.basic import GpuArrayType, GpuWrapper, check_context
from sympile.gpu.elemwise import GpuDimShuffle, GpuElemwise, elemwise_of
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.scalar.basic import add, mul
from sympile.tensor.blas.basic import Dot, MatMul, check_runtime_match
from sympile.tensor.blas.gemm import Gemm, Gemv, Ger
from sympile.tensor.elemwise import DimShuffle, Elemwise

__all__ = ["GpuDot", "GpuMatMul"]

FLOATS = ("float16", "float32", "float64")


class GpuDot(Op):
    """numpy.dot of 1-d and 2-d device arrays of one float dtype (Dot's semantics)."""

    __props__ = ("context",)

    def __init__(self, context: str):
        self.context = context

    def __str__(self):
        return f"GpuDot<{self.context}>"

    def make_node(self, a, b):
        check_context(self, [a, b], self.context)
        host = Dot().make_node(a.type.host_type(), b.type.host_type())
        return Apply(self, [a, b], [GpuArrayType.of(host.outputs[0].type, self.context)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        check_runtime_match(self, a, b, a.ndim - 1, 0)
        output_storage[0][0] = runtime(self.context).matmul(a, b)

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape = input_shapes
        return [tuple(a_shape[:-1]) + tuple(b_shape[1:])]


def _same_float(node: Apply) -> bool:
    dtypes = {v.type.dtype for v in node.inputs}
    return len(dtypes) == 1 and dtypes.pop() in FLOATS


def _broadcast(variable, ndim: int, context: str):
    """A 0-d device array as an `ndim`-d one of length-1 axes (a view)."""
    return GpuDimShuffle(DimShuffle(0, ("x",) * ndim), context)(variable)


def _combination(dtype: str, alpha_first: bool) -> Elemwise:
    """Elemwise of (alpha, p, beta, z) -> alpha * p + beta * z, or of (alpha, p, a) ->
    a + alpha * p (alpha_first=False)."""
    if alpha_first:
        return elemwise_of([dtype] * 4, lambda alpha, p, beta, z: add(mul(alpha, p),
                                                                      mul(beta, z)))
    return elemwise_of([dtype] * 3, lambda alpha, p, a: add(a, mul(alpha, p)))


class GpuMatMul(GpuWrapper):
    """numpy.matmul (a MatMul op) of device arrays of one float dtype, batches included."""

    device_inputs = 2

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        self.op.check_shapes(node, a.shape, b.shape)
        output_storage[0][0] = runtime(self.context).matmul(a, b)


@register_gpu(MatMul)
def _lift_matmul(node: Apply, inputs, context: str):
    if not _same_float(node):
        return None
    return [GpuMatMul(node.op, context)(*inputs)]


@register_gpu(Dot)
def _lift_dot(node: Apply, inputs, context: str):
    if not _same_float(node):
        return None
    return [GpuDot(context)(*inputs)]


@register_gpu(Gemm)
@register_gpu(Gemv)
def _lift_gemm(node: Apply, inputs, context: str):
    """alpha * dot(x, y) + beta * z (Gemm: matrices; Gemv: a matrix and vectors)."""
    if not _same_float(node):
        return None
    z, alpha, x, y, beta = inputs
    ndim = node.outputs[0].type.ndim
    product = GpuDot(context)(x, y)
    combine = GpuElemwise(_combination(node.outputs[0].type.dtype, True), context)
    return [combine(_broadcast(alpha, ndim, context), product, _broadcast(beta, ndim, context),
                    z)]


@register_gpu(Ger)
def _lift_ger(node: Apply, inputs, context: str):
    """a + alpha * outer(x, y), the outer product as the product of a column and a row."""
    if not _same_float(node):
        return None
    a, alpha, x, y = inputs
    column = GpuDimShuffle(DimShuffle(1, (0, "x")), context)(x)
    row = GpuDimShuffle(DimShuffle(1, ("x", 0)), context)(y)
    combine = GpuElemwise(_combination(node.outputs[0].type.dtype, False), context)
    return [combine(_broadcast(alpha, 2, context), GpuDot(context)(column, row), a)]
