"""CAReduce and FusedCAReduce on the device: the passes of
sympile/tensor/reduction/careduce_cuda.py.

The input's axes (the broadcast of a fused reduction's inputs) split into kept ones (the
output's, in order) and reduced ones; each group is merged where every operand's strides
allow. The first pass folds each output's R values into K partial results, about
REDUCTION_THREADS threads in all with at least REDUCTION_MIN_VALUES values each (K = 1: the
one pass writes the output); passes over the partial results follow until one is left.
Argmax and Argmin scan each output's values on one thread (argreduce_cuda.py).
"""

from __future__ import annotations

import math

from sympile.gpu.basic import GpuArrayType, GpuFromHost, GpuWrapper, check_context, kernel_cache
from sympile.gpu.elemwise import (
    GpuDimShuffle,
    GpuElemwise,
    GpuShapeOp,
    broadcast_operands,
    collapse_axes,
    element_strides,
    elemwise_of,
)
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import Runtime, runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.scalar import basic as scalar
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel, computed_dtype
from sympile.tensor.reduction.argreduce_cuda import argreduce_cuda_kernel
from sympile.tensor.reduction.careduce_cuda import careduce_cuda_kernel
from sympile.tensor.reduction.ops import (
    Argmax,
    Argmin,
    CAReduce,
    CenteredSquareSum,
    FusedCAReduce,
    check_runtime_nonempty,
)
from sympile.tensor.shape.ops import Shape

__all__ = ["GpuArgReduce", "GpuCAReduce", "partial_count"]


def partial_count(device: Runtime, outputs: int, values: int) -> int:
    """K, the partial results per output of a pass over `values` values per output."""
    by_threads = device.REDUCTION_THREADS // max(outputs, 1)
    return max(1, min(values // device.REDUCTION_MIN_VALUES, by_threads))


class GpuCAReduce(Op):
    """`reduction` (a CAReduce or a FusedCAReduce) of device arrays of `context`.
    empty_value: what max and min (which have no identity) give for an empty slice, as
    numpy's `initial` (None: an empty slice is an error, as CAReduce's)."""

    __props__ = ("reduction", "context", "empty_value")

    def __init__(self, reduction: CAReduce | FusedCAReduce, context: str,
                 empty_value: float | None = None):
        self.reduction = reduction
        self.context = context
        self.empty_value = empty_value
        fused = isinstance(reduction, FusedCAReduce)
        self.careduce = reduction.reduction if fused else reduction
        self.pre_op = reduction.pre_op if fused else None
        self.elemwise = reduction.elemwise if fused else None

    def __str__(self):
        return f"Gpu{self.reduction}<{self.context}>"

    def make_node(self, *inputs):
        check_context(self, inputs, self.context)
        host = self.reduction.make_node(*[v.type.host_type() for v in inputs])
        return Apply(self, list(inputs),
                     [GpuArrayType.of(host.outputs[0].type, self.context)()])

    def acc_dtype(self, node: Apply) -> str:
        return self.careduce.acc_dtype or node.outputs[0].type.dtype

    @kernel_cache
    def kernel(self, input_dtypes: tuple[str, ...], acc_dtype: str, out_dtype: str,
               kept_ndim: int, reduced_ndim: int, first: bool) -> CudaKernel | None:
        """The kernel of the first pass (over the inputs) or of a later one (over the
        partial results, in the computed accumulation dtype)."""
        if first:
            return careduce_cuda_kernel(self.careduce.scalar_op, self.pre_op, input_dtypes,
                                        acc_dtype, out_dtype, kept_ndim, reduced_ndim,
                                        self.empty_value)
        partial = computed_dtype(acc_dtype)
        return careduce_cuda_kernel(self.careduce.scalar_op, None, (partial,), partial,
                                    out_dtype, 1, 1)

    def perform(self, node, inputs, output_storage):
        device = runtime(self.context)
        if self.elemwise is not None:
            shape, strides = broadcast_operands(self.elemwise, node.inputs, inputs)
        else:
            shape = tuple(inputs[0].shape)
            strides = [element_strides(inputs[0], node.inputs[0].type.broadcastable)]
        axes = tuple(range(len(shape))) if self.careduce.axis is None else self.careduce.axis
        if self.careduce.scalar_op.identity is None and self.empty_value is None:
            check_runtime_nonempty(self.reduction, shape, axes)
        kept = [axis for axis in range(len(shape)) if axis not in axes]
        out_dtype, acc_dtype = node.outputs[0].type.dtype, self.acc_dtype(node)
        output = device.empty([shape[axis] for axis in kept], out_dtype)
        outputs, values = math.prod(shape[a] for a in kept), math.prod(shape[a] for a in axes)
        if outputs == 0:
            output_storage[0][0] = output
            return
        kept_shape, kept_strides = collapse_axes(tuple(shape[a] for a in kept),
                                                 [[s[a] for a in kept] for s in strides])
        reduced_shape, reduced_strides = collapse_axes(tuple(shape[a] for a in axes),
                                                       [[s[a] for a in axes] for s in strides])
        if values == 0:
            reduced_shape = [0]
        partials = partial_count(device, outputs, values)
        target = output if partials == 1 else device.empty(
            (outputs, partials), computed_dtype(acc_dtype))
        kernel = self.kernel(tuple(v.type.dtype for v in node.inputs), acc_dtype,
                             out_dtype if partials == 1 else computed_dtype(acc_dtype),
                             len(kept_shape), len(reduced_shape), True)
        arguments = [outputs, partials, values, *kept_shape, *reduced_shape]
        for value, kept_operand, reduced_operand in zip(inputs, kept_strides, reduced_strides):
            arguments += [value, *kept_operand, *reduced_operand]
        device.launch(kernel, outputs * partials, [*arguments, target])
        while partials > 1:
            values, partials = partials, partial_count(device, outputs, partials)
            source = target
            target = output if partials == 1 else device.empty(
                (outputs, partials), computed_dtype(acc_dtype))
            kernel = self.kernel((), acc_dtype, out_dtype if partials == 1
                                 else computed_dtype(acc_dtype), 1, 1, False)
            device.launch(kernel, outputs * partials,
                          [outputs, partials, values, outputs, values, source, values, 1,
                           target])
        output_storage[0][0] = output

    def infer_shape(self, fgraph, node, input_shapes):
        return self.reduction.infer_shape(fgraph, node, input_shapes)


@register_gpu(CAReduce)
@register_gpu(FusedCAReduce)
def _lift_reduction(node: Apply, inputs, context: str):
    gpu_op = GpuCAReduce(node.op, context)
    ndim = node.inputs[0].type.ndim
    axes = range(ndim) if gpu_op.careduce.axis is None else gpu_op.careduce.axis
    kept, reduced = max(ndim - len(axes), 1), max(len(axes), 1)
    dtypes = tuple(v.type.dtype for v in node.inputs)
    out_dtype = node.outputs[0].type.dtype
    acc = gpu_op.careduce.acc_dtype or out_dtype
    if gpu_op.kernel(dtypes, acc, out_dtype, kept, reduced, True) is None \
            or gpu_op.kernel((), acc, out_dtype, 1, 1, False) is None:
        return None
    return gpu_op.make_node(*inputs).outputs


@register_gpu(CenteredSquareSum)
def _lift_centered_square_sum(node: Apply, inputs, context: str):
    """sum((x - x.mean())**2) as the two passes it was before local_centered_square_sum
    (the device reads x twice: once for the sum, once for the fused squares)."""
    (x,) = inputs
    dtype, ndim = x.type.dtype, x.type.ndim
    total = GpuCAReduce(CAReduce(scalar.add), context)(x)
    count = CAReduce(scalar.mul)(GpuShapeOp(Shape())(x))
    # x.mean()'s own arithmetic: the sum over the int64 count, cast back to x's dtype.
    divide = elemwise_of([dtype, "int64"], lambda s, n: scalar.cast_op(dtype)(
        scalar.true_div(s, n)))
    mean = GpuElemwise(divide, context)(total, GpuFromHost(context)(count))
    kept = GpuDimShuffle(DimShuffle(0, ("x",) * ndim), context)(mean)
    square = elemwise_of([dtype, dtype], lambda v, m: scalar.sqr(scalar.sub(v, m))).scalar_op
    return [GpuCAReduce(FusedCAReduce(scalar.add, square), context)(x, kept)]


class GpuArgReduce(GpuWrapper):
    """Argmax or Argmin (`op`) of a device array of `context`: int64 positions, on the
    device."""

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = tuple(range(x.ndim)) if self.op.axis is None else self.op.axis
        check_runtime_nonempty(self.op, x.shape, axes)
        kept = [axis for axis in range(x.ndim) if axis not in axes]
        strides = element_strides(x, (False,) * x.ndim)
        device = runtime(self.context)
        output = device.empty([x.shape[a] for a in kept], "int64")
        outputs, values = output.size, math.prod(x.shape[a] for a in axes)
        if outputs:
            # An empty group of axes is one axis of length 1: the kernel needs one of each.
            kept_shape = [x.shape[a] for a in kept] or [1]
            kept_strides = [strides[a] for a in kept] or [0]
            reduced_shape = [x.shape[a] for a in axes] or [1]
            reduced_strides = [strides[a] for a in axes] or [0]
            kernel = argreduce_cuda_kernel(x.dtype.name, isinstance(self.op, Argmax),
                                           len(kept_shape), len(reduced_shape))
            device.launch(kernel, outputs, [outputs, values, *kept_shape, *reduced_shape, x,
                                            *kept_strides, *reduced_strides, output])
        output_storage[0][0] = output


@register_gpu(Argmax)
@register_gpu(Argmin)
def _lift_argreduce(node: Apply, inputs, context: str):
    if node.inputs[0].type.dtype.startswith("complex"):
        return None
    return [GpuArgReduce(node.op, context)(*inputs)]
