"""Softmax, LogSoftmax, SoftmaxGrad and the fused cross-entropy on the device, from the
reduction and elementwise kernels with the CPU's formulas:

    peak  = max(x, axis) (-inf for an empty slice), taken as 0 where it is not finite
    sum   = sum(exp(x - peak), axis)                       (one fused reduction)
    softmax = exp(x - peak) / sum;  log_softmax = (x - peak) - log(sum)
    SoftmaxGrad(dy, sm) = sm * (dy - sum(dy * sm, axis))
    CrossentropySoftmax1Hot(x, y) = (-log_softmax(x)[i, y[i]], exp(log_softmax(x)))
    CrossentropySoftmax1HotDx(g, sm, y) = (sm - onehot(y)) * g[:, None]

so the values at infinities and NaNs are the CPU's (sympile/tensor/nnet/basic.py). The
cross-entropy's pick and gradient are kernels of their own (crossentropy_cuda.py), which
check the targets; they take float32 and float64 (float16 stays on the host).
"""

from __future__ import annotations

import numpy as np

from sympile.gpu.basic import GpuArrayType, check_context
from sympile.gpu.elemwise import GpuDimShuffle, GpuElemwise, elemwise_of
from sympile.gpu.placement import register_gpu
from sympile.gpu.reduction import GpuCAReduce
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.scalar import basic as scalar
from sympile.tensor.elemwise import DimShuffle
from sympile.tensor.nnet.basic import (
    CrossentropySoftmax1Hot,
    CrossentropySoftmax1HotDx,
    LogSoftmax,
    Softmax,
    SoftmaxGrad,
)
from sympile.tensor.nnet.crossentropy_cuda import crossentropy_dx_kernel, crossentropy_pick_kernel
from sympile.tensor.reduction import CAReduce, FusedCAReduce

__all__ = ["GpuCrossentropyDx", "GpuCrossentropyPick"]

KERNEL_DTYPES = ("float32", "float64")


def _zero(dtype: str):
    return scalar.get_scalar_type(dtype).make_constant(np.asarray(0, dtype))


def _shift(peak):
    """The peak a slice is shifted by: 0 where it is not finite."""
    return scalar.switch(scalar.isfinite(peak), peak, _zero(peak.type.dtype))


def _kept(variable, axis: int, context: str):
    """A reduction's result with the reduced axis put back, of length 1 (a view)."""
    order = list(range(variable.type.ndim))
    order.insert(axis, "x")
    return GpuDimShuffle(DimShuffle(variable.type.ndim, order), context)(variable)


def _peak_and_sum(x, axis: int, context: str):
    """(peak, sum of exp(x - shift(peak))) along `axis`, both with the axis kept."""
    dtype = x.type.dtype
    peak = GpuCAReduce(CAReduce(scalar.maximum, (axis,)), context, -np.inf)(x)
    peak = _kept(peak, axis, context)
    pre = elemwise_of([dtype, dtype], lambda v, p: scalar.exp(scalar.sub(v, _shift(p)))).scalar_op
    total = GpuCAReduce(FusedCAReduce(scalar.add, pre, (axis,)), context)(x, peak)
    return peak, _kept(total, axis, context)


def _log_softmax(v, p, s):
    return scalar.sub(scalar.sub(v, _shift(p)), scalar.log(s))


def _axis(node: Apply) -> int:
    return node.op.axis % node.inputs[-1].type.ndim


@register_gpu(Softmax)
def _lift_softmax(node: Apply, inputs, context: str):
    (x,) = inputs
    peak, total = _peak_and_sum(x, _axis(node), context)
    divide = elemwise_of([x.type.dtype] * 3, lambda v, p, s: scalar.true_div(
        scalar.exp(scalar.sub(v, _shift(p))), s))
    return [GpuElemwise(divide, context)(x, peak, total)]


@register_gpu(LogSoftmax)
def _lift_log_softmax(node: Apply, inputs, context: str):
    (x,) = inputs
    peak, total = _peak_and_sum(x, _axis(node), context)
    return [GpuElemwise(elemwise_of([x.type.dtype] * 3, _log_softmax), context)(x, peak, total)]


@register_gpu(SoftmaxGrad)
def _lift_softmax_grad(node: Apply, inputs, context: str):
    output_grad, probabilities = inputs
    axis = _axis(node)
    dtypes = [output_grad.type.dtype, probabilities.type.dtype]
    products = elemwise_of(dtypes, scalar.mul).scalar_op
    total = GpuCAReduce(FusedCAReduce(scalar.add, products, (axis,)), context)(
        output_grad, probabilities)
    total = _kept(total, axis, context)
    scale = elemwise_of([*dtypes, total.type.dtype],
                       lambda g, sm, s: scalar.mul(sm, scalar.sub(g, s)))
    return [GpuElemwise(scale, context)(output_grad, probabilities, total)]


class GpuCrossentropyPick(Op):
    """(x, peak, sum, y) -> the fused cross-entropy's loss per row (crossentropy_pick.cu)."""

    __props__ = ("context",)

    def __init__(self, context: str):
        self.context = context

    def __str__(self):
        return f"GpuCrossentropyPick<{self.context}>"

    def make_node(self, x, peak, total, targets):
        check_context(self, [x, peak, total, targets], self.context)
        loss = GpuArrayType(x.type.dtype, (x.type.shape[0],), self.context)
        return Apply(self, [x, peak, total, targets], [loss()])

    def perform(self, node, inputs, output_storage):
        x, peak, total, targets = inputs
        rows, classes = x.shape
        _check_rows(self, targets, rows)
        device = runtime(self.context)
        loss = device.empty((rows,), x.dtype.name)
        if rows:
            kernel = crossentropy_pick_kernel(x.dtype.name, targets.dtype.name)
            arguments = [rows, classes, x, *_strides(x), peak, _strides(peak)[0], total,
                         _strides(total)[0], targets, _strides(targets)[0], loss]
            _launch_checking_targets(self, device, kernel, rows, arguments, classes)
        output_storage[0][0] = loss


class GpuCrossentropyDx(Op):
    """(dloss, sm, y) -> (sm - onehot(y)) * dloss[:, None] (crossentropy_dx.cu)."""

    __props__ = ("context",)

    def __init__(self, context: str):
        self.context = context

    def __str__(self):
        return f"GpuCrossentropyDx<{self.context}>"

    def make_node(self, loss_grad, probabilities, targets):
        check_context(self, [loss_grad, probabilities, targets], self.context)
        host = CrossentropySoftmax1HotDx().make_node(
            loss_grad.type.host_type(), probabilities.type.host_type(),
            targets.type.host_type())
        return Apply(self, [loss_grad, probabilities, targets],
                     [GpuArrayType.of(host.outputs[0].type, self.context)()])

    def perform(self, node, inputs, output_storage):
        loss_grad, probabilities, targets = inputs
        rows, classes = probabilities.shape
        _check_rows(self, targets, rows)
        if loss_grad.shape[0] != rows:
            raise ValueError(f"{self}: dloss has {loss_grad.shape[0]} entries for {rows} rows")
        device = runtime(self.context)
        out_dtype = node.outputs[0].type.dtype
        out = device.empty((rows, classes), out_dtype)
        if rows * classes:
            kernel = crossentropy_dx_kernel(probabilities.dtype.name, loss_grad.dtype.name,
                                            out_dtype, targets.dtype.name)
            arguments = [rows, classes, probabilities, *_strides(probabilities), targets,
                         _strides(targets)[0], loss_grad, _strides(loss_grad)[0], out]
            _launch_checking_targets(self, device, kernel, rows * classes, arguments, classes)
        output_storage[0][0] = out


def _strides(value) -> list[int]:
    return [stride // value.dtype.itemsize for stride in value.strides]


def _check_rows(op: Op, targets, rows: int) -> None:
    if targets.shape[0] != rows:
        raise ValueError(f"{op}: {targets.shape[0]} targets for {rows} rows: expected one "
                         f"class index per row")


def _launch_checking_targets(op: Op, device, kernel, size: int, arguments, classes: int):
    try:
        device.launch(kernel, size, arguments)
    except IndexError:
        raise IndexError(f"{op}: target class indices must be in [0, {classes})") from None


def _row_kernels_apply(node: Apply) -> bool:
    return all(v.type.dtype in KERNEL_DTYPES for v in node.inputs[:-1]) \
        and node.inputs[-1].type.dtype in scalar.INTEGER_DTYPES


@register_gpu(CrossentropySoftmax1Hot)
def _lift_crossentropy(node: Apply, inputs, context: str):
    if not _row_kernels_apply(node):
        return None
    x, targets = inputs
    peak, total = _peak_and_sum(x, 1, context)
    probabilities = GpuElemwise(elemwise_of([x.type.dtype] * 3, lambda v, p, s: scalar.exp(
        _log_softmax(v, p, s))), context)(x, peak, total)
    rows = GpuDimShuffle(DimShuffle(2, (0,)), context)
    loss = GpuCrossentropyPick(context)(x, rows(peak), rows(total), targets)
    return [loss, probabilities]


@register_gpu(CrossentropySoftmax1HotDx)
def _lift_crossentropy_dx(node: Apply, inputs, context: str):
    if not _row_kernels_apply(node):
        return None
    return [GpuCrossentropyDx(context)(*inputs)]

