"""Convolution (Theano's T.nnet.abstract_conv): conv2d, conv3d, their gradients with respect to
the inputs and the filters, and conv2d_transpose.

Layout NCHW (NCDHW in 3d): input (batch, channels, *spatial), filters (output channels,
channels / num_groups, *kernel). Options, as in Theano:

  border_mode      'valid' (no padding), 'full' (padding (k - 1) d), 'half' (padding
                   ((k - 1) d + 1) // 2), an int or a tuple of ints (that padding)
  subsample        the stride of the output
  filter_flip      True: a true convolution (the filters flipped spatially); False:
                   cross-correlation
  filter_dilation  the spacing d between the filter's taps
  num_groups       the channels split in groups, each convolved with its own filters

The three ops compute one bilinear map and its two transposes:

  AbstractConv(x, w)                        y = conv(x, w)
  AbstractConvGradInputs(w, gy, shape)      gx = J_x^T gy  (x's spatial shape given)
  AbstractConvGradWeights(x, gy, shape)     gw = J_w^T gy  (w's spatial shape given)

and each one's derivatives are the other two (so grad of grad works), its tangent the sum of
the map applied to each tangent. perform() works on windows of the padded input
(numpy.lib.stride_tricks.sliding_window_view) contracted with the filters by tensordot, a
group at a time; the gradient with respect to the inputs adds each tap's contribution into
the padded input. On the C backend, float32/float64 convolutions run im2col and BLAS gemm
per image and group (abstract_conv_c.py, conv_gemm.c); the others run perform().
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.scalar.basic import upcast
from sympile.tensor.nnet.abstract_conv_c import conv_c_code
from sympile.tensor.shape import specify_shape
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = ["AbstractConv", "AbstractConvGradInputs", "AbstractConvGradWeights", "conv2d",
           "conv3d", "conv2d_grad_wrt_inputs", "conv2d_grad_wrt_weights",
           "conv3d_grad_wrt_inputs", "conv3d_grad_wrt_weights", "conv2d_transpose",
           "get_conv_output_shape"]

_FLOAT_DTYPES = ("float16", "float32", "float64")


def _per_dimension(value: Any, convdim: int, name: str, label: str, minimum: int) -> tuple:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),) * convdim
    if not (isinstance(value, (tuple, list)) and len(value) == convdim and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"{label}: {name} must be an int or a tuple of {convdim} ints, got "
                        f"{value!r}")
    if any(v < minimum for v in value):
        raise ValueError(f"{label}: {name} must be >= {minimum}, got {tuple(value)}")
    return tuple(int(v) for v in value)


def _border_mode(value: Any, convdim: int, label: str) -> str | tuple[int, ...]:
    if value in ("valid", "full", "half"):
        return value
    if isinstance(value, str):
        raise ValueError(f"{label}: border_mode must be 'valid', 'full', 'half', an int or a "
                         f"tuple of ints, got {value!r}")
    return _per_dimension(value, convdim, "border_mode", label, 0)


def _padding(border_mode, kernel: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """The padding of each spatial dimension, for kernel lengths `kernel`."""
    dilated = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if border_mode == "valid":
        return (0,) * len(kernel)
    if border_mode == "full":
        return tuple(k - 1 for k in dilated)
    if border_mode == "half":
        return tuple(k // 2 for k in dilated)
    return tuple(border_mode)


def _output_lengths(lengths, kernel, border_mode, dilation, subsample) -> list:
    """The output's spatial lengths for inputs of spatial lengths `lengths` and filters of
    `kernel` (ints or symbolic scalars alike)."""
    pads = _padding(border_mode, kernel, dilation)
    return [(n + 2 * p - ((k - 1) * d + 1)) // s + 1
            for n, p, k, d, s in zip(lengths, pads, kernel, dilation, subsample)]


def get_conv_output_shape(image_shape, kernel_shape, border_mode, subsample,
                          filter_dilation=None) -> tuple:
    """The output shape of a convolution (Theano's function): ints where the inputs' are
    known, None elsewhere."""
    convdim = len(image_shape) - 2
    dilation = filter_dilation or (1,) * convdim
    spatial = []
    for axis in range(convdim):
        length, kernel = image_shape[2 + axis], kernel_shape[2 + axis]
        border = border_mode if isinstance(border_mode, str) else (border_mode[axis],)
        spatial.append(None if length is None or kernel is None else _output_lengths(
            [length], [kernel], border, [dilation[axis]], [subsample[axis]])[0])
    return (image_shape[0], kernel_shape[0], *spatial)


class _AbstractConvBase(Op):
    __props__ = ("convdim", "border_mode", "subsample", "filter_flip", "filter_dilation",
                 "num_groups")

    def __init__(self, convdim: int = 2, border_mode: Any = "valid", subsample: Any = 1,
                 filter_flip: bool = True, filter_dilation: Any = 1, num_groups: int = 1):
        label = type(self).__name__
        if convdim not in (2, 3):
            raise ValueError(f"{label}: convdim must be 2 or 3, got {convdim!r}")
        self.convdim = convdim
        self.border_mode = _border_mode(border_mode, convdim, label)
        self.subsample = _per_dimension(subsample, convdim, "subsample", label, 1)
        self.filter_flip = bool(filter_flip)
        self.filter_dilation = _per_dimension(filter_dilation, convdim, "filter_dilation",
                                              label, 1)
        if not isinstance(num_groups, (int, np.integer)) or num_groups < 1:
            raise ValueError(f"{label}: num_groups must be a positive int, got {num_groups!r}")
        self.num_groups = int(num_groups)

    @property
    def label(self) -> str:
        return f"conv{self.convdim}d"

    def _options(self) -> dict:
        return {name: getattr(self, name) for name in self.__props__}

    def _tensor(self, value: Any, name: str, ndim: int) -> Variable:
        variable = as_tensor_variable(value, op=self.label, argument=name)
        if variable.type.ndim != ndim:
            raise TypeError(f"{self.label}: {name} must be a {ndim}-d tensor "
                            f"({'NCDHW' if self.convdim == 3 else 'NCHW'} layout), got "
                            f"{variable.type}")
        if variable.type.dtype not in _FLOAT_DTYPES:
            raise TypeError(f"{self.label}: {name} must be a float tensor, got "
                            f"{variable.type}")
        return variable

    def _shape_input(self, shape: Any) -> Variable:
        shape = as_tensor_variable(shape, op=self.label, argument="shape")
        if shape.type.ndim != 1 or shape.type.dtype[0] not in "iu":
            raise TypeError(f"{self.label}: shape must be an integer vector of the "
                            f"{self.convdim} spatial lengths, got {shape.type}")
        return shape.astype("int64") if shape.type.dtype != "int64" else shape

    def _flipped(self, filters: np.ndarray) -> np.ndarray:
        if not self.filter_flip:
            return filters
        return filters[(Ellipsis,) + (slice(None, None, -1),) * self.convdim]

    # -- numpy ---------------------------------------------------------------------------
    def _windows(self, x: np.ndarray, kernel: Sequence[int]) -> tuple[np.ndarray, tuple]:
        """(windows (N, C, *output, *kernel) of the padded x, the padding)."""
        pad = _padding(self.border_mode, kernel, self.filter_dilation)
        padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
        dilated = [(k - 1) * d + 1 for k, d in zip(kernel, self.filter_dilation)]
        for axis, (length, span) in enumerate(zip(padded.shape[2:], dilated)):
            if span > length:
                raise ValueError(
                    f"{self.label}: the filter ({tuple(kernel)}, dilation "
                    f"{self.filter_dilation}) is larger than the padded input "
                    f"({tuple(padded.shape[2:])}) in spatial dimension {axis}")
        windows = sliding_window_view(padded, dilated, axis=tuple(range(2, 2 + self.convdim)))
        strides = tuple(slice(None, None, s) for s in self.subsample)
        taps = tuple(slice(None, None, d) for d in self.filter_dilation)
        return windows[(slice(None), slice(None)) + strides + taps], pad

    def _check_channels(self, channels: int, filter_channels: int, filters: int) -> None:
        if channels != filter_channels * self.num_groups:
            raise ValueError(f"{self.label}: the input has {channels} channels but the filters "
                             f"expect {filter_channels} x num_groups={self.num_groups}")
        if filters % self.num_groups:
            raise ValueError(f"{self.label}: {filters} filters cannot be split in "
                             f"num_groups={self.num_groups} groups")

    def _group_slices(self, channels: int, filters: int):
        per_channel, per_filter = channels // self.num_groups, filters // self.num_groups
        return [(slice(g * per_channel, (g + 1) * per_channel),
                 slice(g * per_filter, (g + 1) * per_filter)) for g in range(self.num_groups)]

    def _forward(self, x: np.ndarray, w: np.ndarray, dtype: str) -> np.ndarray:
        self._check_channels(x.shape[1], w.shape[1], w.shape[0])
        windows, _ = self._windows(x, w.shape[2:])
        w = self._flipped(w)
        spatial = windows.shape[2:2 + self.convdim]
        output = np.empty((x.shape[0], w.shape[0], *spatial), dtype=dtype)
        kernel_axes = list(range(2 + self.convdim, 2 + 2 * self.convdim))
        for channels, filters in self._group_slices(x.shape[1], w.shape[0]):
            product = np.tensordot(windows[:, channels], w[filters],
                                   axes=([1, *kernel_axes], [1, *range(2, 2 + self.convdim)]))
            output[:, filters] = np.moveaxis(product, -1, 1)
        return output

    def _grad_weights(self, x: np.ndarray, gy: np.ndarray, kernel: Sequence[int],
                      dtype: str) -> np.ndarray:
        windows, _ = self._windows(x, kernel)
        spatial = windows.shape[2:2 + self.convdim]
        if tuple(gy.shape[2:]) != tuple(spatial) or gy.shape[0] != x.shape[0]:
            raise ValueError(f"{self.label}: the output gradient has shape {gy.shape}, "
                             f"expected ({x.shape[0]}, filters, {', '.join(map(str, spatial))})")
        if x.shape[1] % self.num_groups or gy.shape[1] % self.num_groups:
            raise ValueError(f"{self.label}: {x.shape[1]} channels and {gy.shape[1]} filters "
                             f"cannot be split in num_groups={self.num_groups} groups")
        per_channel = x.shape[1] // self.num_groups
        result = np.empty((gy.shape[1], per_channel, *kernel), dtype=dtype)
        output_axes = list(range(2, 2 + self.convdim))
        for channels, filters in self._group_slices(x.shape[1], gy.shape[1]):
            result[filters] = np.tensordot(gy[:, filters], windows[:, channels],
                                           axes=([0, *output_axes], [0, *output_axes]))
        return self._flipped(result)

    def _grad_inputs(self, w: np.ndarray, gy: np.ndarray, spatial: Sequence[int],
                     dtype: str) -> np.ndarray:
        channels = w.shape[1] * self.num_groups
        if gy.shape[1] != w.shape[0] or w.shape[0] % self.num_groups:
            raise ValueError(f"{self.label}: the output gradient has {gy.shape[1]} channels "
                             f"but there are {w.shape[0]} filters in {self.num_groups} groups")
        kernel = w.shape[2:]
        pad = _padding(self.border_mode, kernel, self.filter_dilation)
        expected = _output_lengths(spatial, kernel, self.border_mode, self.filter_dilation,
                                   self.subsample)
        if list(gy.shape[2:]) != expected or min(expected, default=1) < 1:
            raise ValueError(f"{self.label}: the output gradient's spatial shape "
                             f"{tuple(gy.shape[2:])} does not match an input of spatial "
                             f"shape {tuple(spatial)} (expected {tuple(expected)})")
        w = self._flipped(w)
        padded = np.zeros((gy.shape[0], channels, *[n + 2 * p for n, p in zip(spatial, pad)]),
                          dtype=np.result_type(w, gy))
        for tap in np.ndindex(*kernel):
            target = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in
                           zip(tap, self.filter_dilation, gy.shape[2:], self.subsample))
            for group_channels, filters in self._group_slices(channels, w.shape[0]):
                # (N, F_g, *output) x (F_g, C_g) -> (N, *output, C_g)
                contribution = np.tensordot(gy[:, filters], w[(filters, slice(None)) + tap],
                                            axes=([1], [0]))
                padded[(slice(None), group_channels) + target] += np.moveaxis(
                    contribution, -1, 1)
        crop = tuple(slice(p, p + n) for p, n in zip(pad, spatial))
        return padded[(slice(None), slice(None)) + crop].astype(dtype, copy=False)


def _bilinear_tangent(op, inputs, eval_points):
    """The tangent of op(a, b, *rest), bilinear in (a, b): op(va, b, *rest) + op(a, vb,
    *rest), without the terms whose tangent is None (rest, shapes, have none)."""
    a, b, *rest = inputs
    va, vb = eval_points[:2]
    terms = [op(va, b, *rest)] if va is not None else []
    if vb is not None:
        terms.append(op(a, vb, *rest))
    if not terms:
        return [None]
    return [terms[0] if len(terms) == 1 else terms[0] + terms[1]]


def _static(length):
    return None if length is None else int(length)


class AbstractConv(_AbstractConvBase):
    """y = conv(x, w): see the module docstring."""

    def make_node(self, x, w):
        x = self._tensor(x, "input", self.convdim + 2)
        w = self._tensor(w, "filters", self.convdim + 2)
        channels, filter_channels = x.type.shape[1], w.type.shape[1]
        if channels is not None and filter_channels is not None:
            self._check_channels(channels, filter_channels, w.type.shape[0] or
                                 self.num_groups)
        shape = get_conv_output_shape(x.type.shape, w.type.shape, self.border_mode,
                                      self.subsample, self.filter_dilation)
        if any(length is not None and length < 1 for length in shape[2:]):
            raise ValueError(f"{self.label}: the filter {w.type.shape[2:]} (dilation "
                             f"{self.filter_dilation}) is larger than the padded input "
                             f"{x.type.shape[2:]} with border_mode={self.border_mode!r}")
        dtype = upcast(x.type.dtype, w.type.dtype)
        return Apply(self, [x, w], [tensor_type(dtype, tuple(map(_static, shape)))()])

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, w_shape = input_shapes
        spatial = _output_lengths(x_shape[2:], w_shape[2:], self.border_mode,
                                  self.filter_dilation, self.subsample)
        return [(x_shape[0], w_shape[0], *spatial)]

    def perform(self, node, inputs, output_storage):
        x, w = inputs
        output_storage[0][0] = self._forward(x, w, node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return conv_c_code(self, node, names, kind=0)

    def L_op(self, inputs, outputs, output_grads):
        x, w = inputs
        (gy,) = output_grads
        if is_disconnected(gy):
            return [disconnected_type(), disconnected_type()]
        options = self._options()
        spatial = x.shape[2:]
        kernel = w.shape[2:]
        gx = AbstractConvGradInputs(**options)(w, gy, spatial)
        gw = AbstractConvGradWeights(**options)(x, gy, kernel)
        return [gx.astype(x.type.dtype), gw.astype(w.type.dtype)]

    def R_op(self, inputs, eval_points):
        return _bilinear_tangent(self, inputs, eval_points)


class AbstractConvGradWeights(_AbstractConvBase):
    """gw = J_w^T gy for y = conv(x, w): inputs (x, gy, the filters' spatial shape)."""

    def make_node(self, x, gy, shape):
        x = self._tensor(x, "input", self.convdim + 2)
        gy = self._tensor(gy, "output_grad", self.convdim + 2)
        shape = self._shape_input(shape)
        kernel = (tuple(int(v) for v in shape.data) if isinstance(shape, Constant)
                  else (None,) * self.convdim)
        channels = x.type.shape[1]
        per_channel = None if channels is None else channels // self.num_groups
        dtype = upcast(x.type.dtype, gy.type.dtype)
        return Apply(self, [x, gy, shape], [tensor_type(dtype, (gy.type.shape[1], per_channel,
                                                                *kernel))()])

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, gy_shape, _ = input_shapes
        shape = node.inputs[2]
        return [(gy_shape[1], x_shape[1] // self.num_groups,
                 *(shape[axis] for axis in range(self.convdim)))]

    def perform(self, node, inputs, output_storage):
        x, gy, shape = inputs
        output_storage[0][0] = self._grad_weights(x, gy, [int(v) for v in shape],
                                                  node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return conv_c_code(self, node, names, kind=1)

    def connection_pattern(self, node):
        return [[True], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, gy, _ = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 3
        options = self._options()
        gx = AbstractConvGradInputs(**options)(g, gy, x.shape[2:])
        ggy = AbstractConv(**options)(x, g)
        return [gx.astype(x.type.dtype), ggy.astype(gy.type.dtype), disconnected_type()]

    def R_op(self, inputs, eval_points):
        return _bilinear_tangent(self, inputs, eval_points)


class AbstractConvGradInputs(_AbstractConvBase):
    """gx = J_x^T gy for y = conv(x, w): inputs (w, gy, the input's spatial shape)."""

    def make_node(self, w, gy, shape):
        w = self._tensor(w, "filters", self.convdim + 2)
        gy = self._tensor(gy, "output_grad", self.convdim + 2)
        shape = self._shape_input(shape)
        spatial = (tuple(int(v) for v in shape.data) if isinstance(shape, Constant)
                   else (None,) * self.convdim)
        per_channel = w.type.shape[1]
        channels = None if per_channel is None else per_channel * self.num_groups
        dtype = upcast(w.type.dtype, gy.type.dtype)
        return Apply(self, [w, gy, shape], [tensor_type(dtype, (gy.type.shape[0], channels,
                                                                *spatial))()])

    def infer_shape(self, fgraph, node, input_shapes):
        w_shape, gy_shape, _ = input_shapes
        shape = node.inputs[2]
        return [(gy_shape[0], w_shape[1] * self.num_groups,
                 *(shape[axis] for axis in range(self.convdim)))]

    def perform(self, node, inputs, output_storage):
        w, gy, shape = inputs
        output_storage[0][0] = self._grad_inputs(w, gy, [int(v) for v in shape],
                                                 node.outputs[0].type.dtype)

    def c_code(self, node, names):
        return conv_c_code(self, node, names, kind=2)

    def connection_pattern(self, node):
        return [[True], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        w, gy, _ = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 3
        options = self._options()
        gw = AbstractConvGradWeights(**options)(g, gy, w.shape[2:])
        ggy = AbstractConv(**options)(g, w)
        return [gw.astype(w.type.dtype), ggy.astype(gy.type.dtype), disconnected_type()]

    def R_op(self, inputs, eval_points):
        return _bilinear_tangent(self, inputs, eval_points)


# -- Theano's functions ------------------------------------------------------------------------

def _hinted(variable: Variable, shape: Any, name: str, label: str, ndim: int) -> Variable:
    """`variable` with the static shape hint `shape` (ints or None), checked at run time."""
    if shape is None:
        return variable
    shape = tuple(shape)
    if len(shape) != ndim:
        raise ValueError(f"{label}: {name} must have {ndim} entries, got {shape}")
    if all(entry is None for entry in shape):
        return variable
    return specify_shape(variable, shape)


def _conv(convdim, input, filters, input_shape, filter_shape, border_mode, subsample,
          filter_flip, filter_dilation, num_groups):
    label = f"conv{convdim}d"
    op = AbstractConv(convdim, border_mode, subsample, filter_flip, filter_dilation, num_groups)
    input = _hinted(op._tensor(input, "input", convdim + 2), input_shape, "input_shape",
                    label, convdim + 2)
    filters = _hinted(op._tensor(filters, "filters", convdim + 2), filter_shape,
                      "filter_shape", label, convdim + 2)
    return op(input, filters)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, image_shape=None, filter_dilation=(1, 1),
           num_groups=1, **kwargs):
    """The 2d convolution of input (batch, channels, rows, columns) with filters
    (output channels, channels / num_groups, rows, columns); see the module docstring.
    input_shape and filter_shape (ints or None; image_shape is Theano's old name of
    input_shape) give static shapes, checked at run time."""
    if kwargs:
        raise TypeError(f"conv2d: unexpected arguments {sorted(kwargs)}")
    return _conv(2, input, filters, input_shape if input_shape is not None else image_shape,
                 filter_shape, border_mode, subsample, filter_flip, filter_dilation, num_groups)


def conv3d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1, 1), filter_flip=True, filter_dilation=(1, 1, 1), num_groups=1):
    """The 3d convolution of input (batch, channels, depth, rows, columns) with filters
    (output channels, channels / num_groups, depth, rows, columns)."""
    return _conv(3, input, filters, input_shape, filter_shape, border_mode, subsample,
                 filter_flip, filter_dilation, num_groups)


def _spatial_shape(shape: Any, convdim: int, label: str) -> Variable:
    """The spatial lengths out of a full (batch, channels, *spatial) shape."""
    if isinstance(shape, Variable):
        return shape[2:] if shape.type.ndim == 1 else shape
    shape = tuple(shape)
    if len(shape) != convdim + 2:
        raise ValueError(f"{label}: the shape must have {convdim + 2} entries, got {shape}")
    spatial = shape[2:]
    if all(isinstance(v, (int, np.integer)) for v in spatial):
        return constant(np.array(spatial, dtype=np.int64))
    return as_tensor_variable(list(spatial)).astype("int64")


def _grad_wrt_inputs(convdim, output_grad, filters, input_shape, filter_shape, border_mode,
                     subsample, filter_flip, filter_dilation, num_groups):
    label = f"conv{convdim}d_grad_wrt_inputs"
    op = AbstractConvGradInputs(convdim, border_mode, subsample, filter_flip, filter_dilation,
                                num_groups)
    filters = _hinted(op._tensor(filters, "filters", convdim + 2), filter_shape,
                      "filter_shape", label, convdim + 2)
    return op(filters, output_grad, _spatial_shape(input_shape, convdim, label))


def _grad_wrt_weights(convdim, input, output_grad, filter_shape, input_shape, border_mode,
                      subsample, filter_flip, filter_dilation, num_groups):
    label = f"conv{convdim}d_grad_wrt_weights"
    op = AbstractConvGradWeights(convdim, border_mode, subsample, filter_flip,
                                 filter_dilation, num_groups)
    input = _hinted(op._tensor(input, "input", convdim + 2), input_shape, "input_shape", label,
                    convdim + 2)
    return op(input, output_grad, _spatial_shape(filter_shape, convdim, label))


def conv2d_grad_wrt_inputs(output_grad, filters, input_shape, filter_shape=None,
                           border_mode="valid", subsample=(1, 1), filter_flip=True,
                           filter_dilation=(1, 1), num_groups=1):
    """The gradient of conv2d with respect to its input, for an input of shape input_shape
    (4 entries, ints or scalars, or a shape vector)."""
    return _grad_wrt_inputs(2, output_grad, filters, input_shape, filter_shape, border_mode,
                            subsample, filter_flip, filter_dilation, num_groups)


def conv2d_grad_wrt_weights(input, output_grad, filter_shape, input_shape=None,
                            border_mode="valid", subsample=(1, 1), filter_flip=True,
                            filter_dilation=(1, 1), num_groups=1):
    """The gradient of conv2d with respect to its filters, of shape filter_shape."""
    return _grad_wrt_weights(2, input, output_grad, filter_shape, input_shape, border_mode,
                             subsample, filter_flip, filter_dilation, num_groups)


def conv3d_grad_wrt_inputs(output_grad, filters, input_shape, filter_shape=None,
                           border_mode="valid", subsample=(1, 1, 1), filter_flip=True,
                           filter_dilation=(1, 1, 1), num_groups=1):
    return _grad_wrt_inputs(3, output_grad, filters, input_shape, filter_shape, border_mode,
                            subsample, filter_flip, filter_dilation, num_groups)


def conv3d_grad_wrt_weights(input, output_grad, filter_shape, input_shape=None,
                            border_mode="valid", subsample=(1, 1, 1), filter_flip=True,
                            filter_dilation=(1, 1, 1), num_groups=1):
    return _grad_wrt_weights(3, input, output_grad, filter_shape, input_shape, border_mode,
                             subsample, filter_flip, filter_dilation, num_groups)


def conv2d_transpose(input, filters, output_shape, filter_shape=None, border_mode="valid",
                     input_dilation=(1, 1), filter_flip=True, filter_dilation=(1, 1),
                     num_groups=1):
    """The transpose of conv2d (a "deconvolution"): conv2d_grad_wrt_inputs of `input`, for
    an output of shape output_shape, the stride of the forward conv being input_dilation."""
    return conv2d_grad_wrt_inputs(input, filters, output_shape, filter_shape, border_mode,
                                  input_dilation, filter_flip, filter_dilation, num_groups)
