"""Convolution on the device: AbstractConv (2d and 3d) and its two gradients, by im2col and
the device's BLAS (cuBLAS through CuPy), float32 and float64, every option (padding,
strides, dilation, flipped or not, groups; unshared ones stay on the host). With the
columns `cols` of the whole batch (conv_cuda.py: channels x taps rows, images x outputs
columns) and W_g a group's filters as a (filters_g, channels_g x taps) matrix:

    forward        y_g (filters_g, images x outputs) = W_g . cols_g
    grad weights   gW_g = gy_g . cols_g^T             (gy as (filters, images x outputs))
    grad inputs    gx = col2im(W_g^T . gy_g)

one product per group for the whole batch (the CPU's C runs one per image). The shapes are
checked with the host op's checks, so a mismatch raises the CPU's error. Other dtypes, and
mixed ones, stay on the host.
"""

from __future__ import annotations

import math

from sympile.gpu.basic import GpuWrapper
from sympile.gpu.elemwise import copy_into
from sympile.gpu.placement import register_gpu
from sympile.gpu.runtime import runtime
from sympile.graph.basic import Apply
from sympile.tensor.nnet.abstract_conv import (
    THEANO_CLASSES,
    AbstractConv,
    AbstractConvGradWeights,
)
from sympile.tensor.nnet.conv_cuda import col2im_kernel, im2col_kernel
from sympile.tensor.rewriting.conv import CORRELATION_CLASSES

__all__ = ["GpuConv"]

KERNEL_DTYPES = ("float32", "float64")


class GpuConv(GpuWrapper):
    """`op` (an AbstractConv, AbstractConvGradWeights or AbstractConvGradInputs, Theano's
    classes included) on device arrays of `context`; the gradients' spatial shape input
    stays a host value."""

    device_inputs = 2

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].type.dtype
        if isinstance(self.op, AbstractConv):
            result = self._forward(*inputs, dtype)
        elif isinstance(self.op, AbstractConvGradWeights):
            x, gy, shape = inputs
            result = self._grad_weights(x, gy, [int(v) for v in shape], dtype)
        else:
            w, gy, shape = inputs
            result = self._grad_inputs(w, gy, [int(v) for v in shape], dtype)
        output_storage[0][0] = result

    # -- the three maps ------------------------------------------------------------------
    def _geometry(self, images: int, x_shape, kernel, out_spatial) -> list[int]:
        """The kernels' integer parameters (conv_cuda.GEOMETRY after n): images, then the
        geometry, 2d as 3d of depth 1; the pads after an axis only shorten the output, whose
        lengths are given."""
        op = self.op
        missing = 3 - op.convdim

        def three(values, fill):
            return [fill] * missing + [int(v) for v in values]

        return [images, int(x_shape[1]), *three(x_shape[2:], 1), *three(kernel, 1),
                *three(out_spatial, 1),
                *three([before for before, _ in op.padding(kernel)], 0),
                *three(op.subsample, 1), *three(op.filter_dilation, 1), int(op.filter_flip)]

    def _columns(self, x, kernel, out_spatial):
        """im2col of the batch x: (channels x taps, images x outputs)."""
        device = runtime(self.context)
        images, channels = x.shape[:2]
        rows = channels * math.prod(kernel)
        width = images * math.prod(out_spatial)
        cols = device.empty((rows, width), x.dtype.name)
        if rows * width:
            strides = [s // x.dtype.itemsize for s in x.strides]
            if self.op.convdim == 2:
                strides.insert(2, 0)
            geometry = self._geometry(images, x.shape, kernel, out_spatial)
            device.launch(im2col_kernel(x.dtype.name), rows * width,
                          [rows * width, *geometry, x, *strides, cols])
        return cols

    def _gradient_rows(self, gy):
        """gy (images, filters, *outputs) as a C-contiguous (filters, images x outputs)."""
        images, filters = gy.shape[:2]
        outputs = math.prod(gy.shape[2:])
        device = runtime(self.context)
        rows = device.empty((filters, images, outputs), gy.dtype.name)
        copy_into(self.context, gy.reshape((images, filters, outputs)).transpose((1, 0, 2)),
                  rows)
        return rows.reshape((filters, images * outputs))

    def _forward(self, x, w, dtype: str):
        op = self.op
        images, channels = x.shape[:2]
        filters, kernel = w.shape[0], tuple(w.shape[2:])
        op.check_channels(channels, w.shape[1], filters)
        out_spatial = op.output_spatial(x.shape[2:], kernel)
        taps, outputs = math.prod(kernel), math.prod(out_spatial)
        cols = self._columns(x, kernel, out_spatial)
        device = runtime(self.context)
        out = device.empty((images, filters, *out_spatial), dtype)
        by_filter = out.reshape((images, filters, outputs))
        for group_channels, group_filters in op.group_slices(channels, filters):
            weights = w[group_filters].reshape((filters // op.num_groups, w.shape[1] * taps))
            product = device.matmul(weights, cols[group_channels.start * taps:
                                                   group_channels.stop * taps])
            copy_into(self.context,
                      product.reshape((product.shape[0], images, outputs)).transpose((1, 0, 2)),
                      by_filter[:, group_filters])
        return out

    def _grad_weights(self, x, gy, kernel, dtype: str):
        op = self.op
        op.check_grad_weights_shapes(x.shape, gy.shape, kernel)
        channels, filters = x.shape[1], gy.shape[1]
        per_channel, taps = channels // op.num_groups, math.prod(kernel)
        cols = self._columns(x, kernel, list(gy.shape[2:]))
        rows = self._gradient_rows(gy)
        device = runtime(self.context)
        if op.num_groups == 1:
            product = device.matmul(rows, cols.transpose((1, 0)))
            return product.reshape((filters, per_channel, *kernel))
        result = device.empty((filters, per_channel, *kernel), dtype)
        by_filter = result.reshape((filters, per_channel * taps))
        for group_channels, group_filters in op.group_slices(channels, filters):
            columns = cols[group_channels.start * taps:group_channels.stop * taps]
            copy_into(self.context, device.matmul(rows[group_filters],
                                                  columns.transpose((1, 0))),
                      by_filter[group_filters])
        return result

    def _grad_inputs(self, w, gy, spatial, dtype: str):
        op = self.op
        op.check_grad_inputs_shapes(w.shape, gy.shape, spatial)
        filters, per_channel, kernel = w.shape[0], w.shape[1], tuple(w.shape[2:])
        images, channels = gy.shape[0], per_channel * op.num_groups
        taps, out_spatial = math.prod(kernel), list(gy.shape[2:])
        rows = self._gradient_rows(gy)
        device = runtime(self.context)
        if op.num_groups == 1:
            cols = device.matmul(w.reshape((filters, per_channel * taps)).transpose((1, 0)), rows)
        else:
            cols = device.empty((channels * taps, rows.shape[1]), gy.dtype.name)
            for group_channels, group_filters in op.group_slices(channels, filters):
                weights = w[group_filters].reshape((filters // op.num_groups, per_channel * taps))
                copy_into(self.context,
                          device.matmul(weights.transpose((1, 0)), rows[group_filters]),
                          cols[group_channels.start * taps:group_channels.stop * taps])
        gx = device.empty((images, channels, *spatial), dtype)
        size = math.prod(gx.shape)
        if size:
            shape = (images, channels, *spatial)
            device.launch(col2im_kernel(dtype), size,
                          [size, *self._geometry(images, shape, kernel, out_spatial), cols,
                           gx])
        return gx


def _one_float_dtype(node: Apply) -> bool:
    """Every tensor of the node has one dtype the kernels take."""
    dtypes = {v.type.dtype for v in node.inputs[:2] + node.outputs}
    return len(dtypes) == 1 and dtypes <= set(KERNEL_DTYPES)


def _lift_conv(node: Apply, inputs, context: str):
    if node.op.unshared or not _one_float_dtype(node):
        return None
    return [GpuConv(node.op, context)(*inputs[:2], *node.inputs[2:])]


for _family in (AbstractConv.family, *THEANO_CLASSES.values(),
                *CORRELATION_CLASSES.values()):
    for _op_class in _family:
        register_gpu(_op_class)(_lift_conv)
