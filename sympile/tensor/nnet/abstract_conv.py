"""Convolution (Theano's T.nnet.abstract_conv): conv2d, conv3d, their gradients with respect to
the inputs and the filters, and conv2d_transpose.

Layout NCHW (NCDHW in 3d): input (batch, channels, *spatial), filters (output channels,
channels / num_groups, *kernel). Options, as in Theano:

  border_mode      'valid' (no padding), 'full' (padding (k - 1) d), 'half' (padding
                   ((k - 1) d + 1) // 2), an int or a tuple of ints (that padding), or
                   per axis a (before, after) pair (asymmetric padding)
  subsample        the stride of the output
  filter_flip      True: a true convolution (the filters flipped spatially); False:
                   cross-correlation
  filter_dilation  the spacing d between the filter's taps
  num_groups       the channels split in groups, each convolved with its own filters
  unshared         (2d) a locally connected layer: one filter per output position,
                   filters (output channels, output rows, output columns, channels /
                   num_groups, *kernel)

The three ops compute one bilinear map and its two transposes:

  AbstractConv(x, w)                        y = conv(x, w)
  AbstractConvGradInputs(w, gy, shape)      gx = J_x^T gy  (x's spatial shape given)
  AbstractConvGradWeights(x, gy, shape)     gw = J_w^T gy  (w's spatial shape given)

and each one's derivatives are the other two (so grad of grad works), its tangent the sum of
the map applied to each tangent. perform() works on windows of the padded input
(numpy.lib.stride_tricks.sliding_window_view) contracted with the filters by tensordot, a
group at a time; the gradient with respect to the inputs adds each tap's contribution into
the padded input. On the C backend, float32/float64 convolutions run im2col and BLAS gemm
per image and group (abstract_conv_c.py, conv_gemm.c); the others, and unshared
convolutions (a contraction per output position, numpy's einsum), run perform().
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from sympile.config import config
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.scalar.basic import upcast
from sympile.tensor.basic import concatenate
from sympile.tensor.constant_value import NotScalarConstantError, get_scalar_constant_value
from sympile.tensor.nnet.abstract_conv_c import conv_c_code
from sympile.tensor.shape import reshape, specify_shape
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = ["AbstractConv", "AbstractConvGradInputs", "AbstractConvGradWeights",
           "AbstractConv2d", "AbstractConv2d_gradWeights", "AbstractConv2d_gradInputs",
           "AbstractConv3d", "AbstractConv3d_gradWeights", "AbstractConv3d_gradInputs",
           "conv2d", "conv3d", "conv2d_grad_wrt_inputs", "conv2d_grad_wrt_weights",
           "conv3d_grad_wrt_inputs", "conv3d_grad_wrt_weights", "conv2d_transpose",
           "separable_conv2d", "separable_conv3d", "causal_conv1d",
           "bilinear_kernel_1D", "bilinear_kernel_2D", "bilinear_upsampling",
           "get_conv_output_shape", "get_conv_shape_1axis", "get_conv_gradweights_shape",
           "get_conv_gradweights_shape_1axis", "get_conv_gradinputs_shape",
           "get_conv_gradinputs_shape_1axis", "check_conv_gradinputs_shape",
           "assert_conv_shape", "assert_shape", "THEANO_CLASSES", "imported_scipy_signal"]

# Theano's flag for "scipy.signal is importable" (its tests compare with scipy.signal):
# scipy is one of sympile's two dependencies.
imported_scipy_signal = True

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


def _border_mode(value: Any, convdim: int, label: str) -> str | tuple:
    """'valid', 'full', 'half', or one entry per spatial axis: the padding of both sides, or
    (before, after) where they differ (Theano's asymmetric padding; an equal pair is read
    as its int, so both spellings make equal ops)."""
    if value in ("valid", "full", "half"):
        return value
    if isinstance(value, str):
        raise ValueError(f"{label}: border_mode must be 'valid', 'full', 'half', an int or a "
                         f"tuple of ints or (before, after) pairs, got {value!r}")
    if isinstance(value, (tuple, list)) and len(value) == convdim and any(
            isinstance(entry, (tuple, list)) for entry in value):
        axes = []
        for entry in value:
            before, after = _per_dimension(entry if isinstance(entry, (tuple, list))
                                           else int(entry), 2, "border_mode's padding",
                                           label, 0)
            axes.append(before if before == after else (before, after))
        return tuple(axes)
    return _per_dimension(value, convdim, "border_mode", label, 0)


def _padding(border_mode, kernel: Sequence[int], dilation: Sequence[int]) -> tuple:
    """The (before, after) padding of each spatial dimension, for kernel lengths `kernel`."""
    dilated = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if border_mode == "valid":
        pads = (0,) * len(kernel)
    elif border_mode == "full":
        pads = tuple(k - 1 for k in dilated)
    elif border_mode == "half":
        pads = tuple(k // 2 for k in dilated)
    else:
        pads = border_mode
    return _explicit_pairs(pads)


def _explicit_pairs(pads) -> tuple:
    """Explicit paddings (an entry per axis: a padding or a (before, after) pair) as
    (before, after) pairs."""
    return tuple(pad if isinstance(pad, tuple) else (pad, pad) for pad in pads)


def _output_lengths(lengths, kernel, border_mode, dilation, subsample) -> list:
    """The output's spatial lengths for inputs of spatial lengths `lengths` and filters of
    `kernel` (ints or symbolic scalars alike)."""
    pads = _padding(border_mode, kernel, dilation)
    return [(n + before + after - ((k - 1) * d + 1)) // s + 1
            for n, (before, after), k, d, s in zip(lengths, pads, kernel, dilation, subsample)]


def get_conv_output_shape(image_shape, kernel_shape, border_mode, subsample,
                          filter_dilation=None) -> tuple:
    """The output shape of a convolution (Theano's function): ints where the inputs' are
    known, None elsewhere."""
    convdim = len(image_shape) - 2
    dilation = filter_dilation or (1,) * convdim
    spatial = []
    for axis in range(convdim):
        length, kernel = image_shape[2 + axis], kernel_shape[axis - convdim]
        border = border_mode if isinstance(border_mode, str) else (border_mode[axis],)
        spatial.append(None if length is None or kernel is None else _output_lengths(
            [length], [kernel], border, [dilation[axis]], [subsample[axis]])[0])
    return (image_shape[0], kernel_shape[0], *spatial)


def get_conv_shape_1axis(image_shape, kernel_shape, border_mode, subsample, dilation=1):
    """Theano's: the output's length along one axis (None where an input's is None);
    border_mode 'valid', 'full', 'half', a padding or a (before, after) pair."""
    if None in (image_shape, kernel_shape, border_mode, subsample, dilation):
        return None
    return _output_lengths([image_shape], [kernel_shape], _axis_border(border_mode),
                           [dilation], [subsample])[0]


def _axis_border(border_mode, label: str | None = None):
    """One axis's border_mode as _padding takes it: the string, or (padding,) of a padding or
    a (before, after) pair; a negative padding is a ValueError naming `label` where given."""
    if isinstance(border_mode, str):
        return border_mode
    if label is not None and min(border_mode if isinstance(border_mode, tuple)
                                 else (border_mode,)) < 0:
        raise ValueError(f"{label}: border_mode must be >= 0")
    return (border_mode,)


def _border_per_axis(border_mode, convdim: int) -> list:
    """One border_mode entry per spatial axis."""
    if isinstance(border_mode, (tuple, list)):
        return list(border_mode)
    return [border_mode] * convdim


def get_conv_gradweights_shape_1axis(image_shape, top_shape, border_mode, subsample,
                                     dilation):
    """Theano's: the filters' length along one axis from the image's and the output's,
    None where the geometry does not decide it (subsample not 1, border_mode 'half') or an
    input is None."""
    if None in (image_shape, top_shape, border_mode, subsample, dilation):
        return None
    if subsample != 1 or border_mode == "half":
        return None
    border = _axis_border(border_mode, "get_conv_gradweights_shape")
    if border == "full":
        span = top_shape - image_shape
    elif border == "valid":
        span = image_shape - top_shape
    else:
        ((before, after),) = _explicit_pairs(border)
        span = image_shape + before + after - top_shape
    return span // dilation + 1


def get_conv_gradweights_shape(image_shape, top_shape, border_mode, subsample,
                               filter_dilation=None, num_groups=1, unshared=False):
    """Theano's: the filters' shape of a weights' gradient, (output channels, input
    channels / groups, spatial lengths; unshared: the output's spatial lengths after the
    output channels), None where undecided (see the 1-axis form)."""
    convdim = len(subsample)
    dilation = filter_dilation if filter_dilation is not None else (1,) * convdim
    channels, filters = image_shape[1], top_shape[1]
    if num_groups > 1 and channels is not None:
        channels = channels // num_groups
    borders = _border_per_axis(border_mode, convdim)
    positions = tuple(top_shape[2:]) if unshared else ()
    return (filters, *positions, channels) + tuple(
        get_conv_gradweights_shape_1axis(image_shape[2 + axis], top_shape[2 + axis],
                                         borders[axis], subsample[axis], dilation[axis])
        for axis in range(convdim))


def get_conv_gradinputs_shape_1axis(kernel_shape, top_shape, border_mode, subsample,
                                    dilation):
    """Theano's: the image's length along one axis from the filters' and the output's,
    None where the geometry does not decide it (subsample not 1) or an input is None."""
    if None in (kernel_shape, top_shape, border_mode, subsample, dilation):
        return None
    if subsample != 1:
        return None
    before, after = _padding(_axis_border(border_mode, "get_conv_gradinputs_shape"),
                             [kernel_shape], [dilation])[0]
    return top_shape + (kernel_shape - 1) * dilation - before - after


def get_conv_gradinputs_shape(kernel_shape, top_shape, border_mode, subsample,
                              filter_dilation=None, num_groups=1):
    """Theano's: the image's shape of an inputs' gradient, (batch, channels, spatial
    lengths), None where undecided (see the 1-axis form)."""
    convdim = len(top_shape) - 2
    dilation = filter_dilation if filter_dilation is not None else (1,) * convdim
    channels = kernel_shape[1]
    if num_groups > 1 and channels is not None:
        channels = channels * num_groups
    borders = _border_per_axis(border_mode, convdim)
    return (top_shape[0], channels) + tuple(
        get_conv_gradinputs_shape_1axis(kernel_shape[-convdim + axis], top_shape[2 + axis],
                                        borders[axis], subsample[axis], dilation[axis])
        for axis in range(convdim))


def check_conv_gradinputs_shape(image_shape, kernel_shape, output_shape, border_mode,
                                subsample, filter_dilation=None) -> bool:
    """Theano's: False when a convolution of these image and filter shapes and options
    cannot give `output_shape`; True when it gives it, or where a length is None or not a
    constant (nothing to check)."""
    image_shape, kernel_shape = tuple(image_shape), tuple(kernel_shape)
    output_shape = tuple(output_shape)
    if not len(image_shape) == len(kernel_shape) == len(output_shape):
        return False
    if len(image_shape) - 2 != len(subsample) or (
            filter_dilation is not None and len(image_shape) - 2 != len(filter_dilation)):
        return False
    computed = get_conv_output_shape(image_shape, kernel_shape, border_mode, subsample,
                                     filter_dilation)

    def agrees(given, want) -> bool:
        if given is None or want is None:
            return True
        try:
            return int(get_scalar_constant_value(given)) == int(
                get_scalar_constant_value(want))
        except NotScalarConstantError:
            return True

    return all(agrees(given, want) for given, want in zip(output_shape, computed))


def assert_conv_shape(shape) -> tuple:
    """Theano's: `shape` (of a convolution's input, output or filters) with each length
    checked: the first two >= 0, the spatial ones > 0. A constant that fails raises
    ValueError now; the others are wrapped in an Assert that raises AssertionError when the
    function runs."""
    from sympile.tensor.math import ge, gt
    from sympile.tensor.raise_op import Assert

    checked = []
    for axis, length in enumerate(shape):
        relation, compare = (">= 0", ge) if axis < 2 else ("> 0", gt)
        message = (f"The convolution would produce an invalid shape (dim[{axis}] must be "
                   f"{relation})")
        try:
            value = get_scalar_constant_value(length)
        except NotScalarConstantError:
            checked.append(Assert(message)(length, compare(length, 0)))
            continue
        if not (value >= 0 if axis < 2 else value > 0):
            raise ValueError(f"{message}, got {value}")
        checked.append(length)
    return tuple(checked)


def assert_shape(x, expected_shape, msg: str = "Unexpected shape."):
    """Theano's: x wrapped in an Assert that raises AssertionError(msg) when the function
    runs and x's shape differs from `expected_shape` where it gives a length (None: not
    checked); x itself when nothing is to be checked."""
    from sympile.tensor.math import eq
    from sympile.tensor.raise_op import Assert

    if expected_shape is None or not config.conv.assert_shape:
        return x
    x = as_tensor_variable(x, argument="x")
    tests = [eq(x.shape[axis], length) for axis, length in enumerate(expected_shape)
             if length is not None]
    return Assert(msg)(x, *tests) if tests else x


class _AbstractConvBase(Op):
    __props__ = ("convdim", "border_mode", "subsample", "filter_flip", "filter_dilation",
                 "num_groups", "unshared")

    def __init__(self, convdim: int = 2, border_mode: Any = "valid", subsample: Any = 1,
                 filter_flip: bool = True, filter_dilation: Any = 1, num_groups: int = 1,
                 unshared: bool = False):
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
        if unshared and convdim != 2:
            raise ValueError(f"{label}: unshared (locally connected) convolutions are 2d only, "
                             f"as in Theano")
        self.unshared = bool(unshared)

    # The forward op and its two transposes (AbstractConv, AbstractConvGradWeights,
    # AbstractConvGradInputs, or Theano's classes of one convdim): set after the classes.
    family: tuple = ()

    @property
    def label(self) -> str:
        return f"conv{self.convdim}d"

    @property
    def filters_ndim(self) -> int:
        """The filters' rank: (output channels, channels / groups, *kernel), unshared ones
        with the output's spatial lengths after the output channels."""
        return 2 + self.convdim * (2 if self.unshared else 1)

    def filter_channels(self, w_shape: Sequence) -> Any:
        """The channels per group of filters of shape `w_shape`."""
        return w_shape[-self.convdim - 1]

    def check_unshared_outputs(self, w_shape: Sequence[int], spatial: Sequence[int]) -> None:
        """ValueError unless unshared filters have one filter per output position."""
        if self.unshared and tuple(w_shape[1:1 + self.convdim]) != tuple(spatial):
            raise ValueError(f"{self.label}: unshared filters of shape {tuple(w_shape)} hold "
                             f"{tuple(w_shape[1:1 + self.convdim])} output positions, the "
                             f"output has {tuple(spatial)}")

    def _options(self) -> dict:
        return {name: getattr(self, name) for name in self.__props__}

    def _related(self, kind: int) -> Op:
        """The op of `kind` (0: forward, 1: weights' gradient, 2: inputs' gradient) of this
        op's family, with this op's options."""
        return self.family[kind](**self._options())

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
        self.output_spatial(x.shape[2:], kernel)
        pad = self.padding(kernel)
        padded = np.pad(x, [(0, 0), (0, 0), *pad])
        dilated = [(k - 1) * d + 1 for k, d in zip(kernel, self.filter_dilation)]
        windows = sliding_window_view(padded, dilated, axis=tuple(range(2, 2 + self.convdim)))
        strides = tuple(slice(None, None, s) for s in self.subsample)
        taps = tuple(slice(None, None, d) for d in self.filter_dilation)
        return windows[(slice(None), slice(None)) + strides + taps], pad

    @property
    def explicit_padding(self) -> tuple:
        """The (before, after) padding of each spatial dimension of an explicit
        border_mode (not 'valid', 'full' or 'half')."""
        return _explicit_pairs(self.border_mode)

    def padding(self, kernel: Sequence[int]) -> tuple:
        """The (before, after) padding of each spatial dimension for filters of spatial
        shape `kernel`."""
        return _padding(self.border_mode, kernel, self.filter_dilation)

    def output_spatial(self, spatial: Sequence[int], kernel: Sequence[int]) -> list[int]:
        """The output's spatial lengths for an input of spatial shape `spatial`; ValueError
        where the dilated filter is larger than the padded input."""
        pad = self.padding(kernel)
        for axis, (length, k, d, p) in enumerate(zip(spatial, kernel, self.filter_dilation,
                                                     pad)):
            if (k - 1) * d + 1 > length + sum(p):
                padded = tuple(n + sum(q) for n, q in zip(spatial, pad))
                raise ValueError(
                    f"{self.label}: the filter ({tuple(kernel)}, dilation "
                    f"{self.filter_dilation}) is larger than the padded input "
                    f"({padded}) in spatial dimension {axis}")
        return _output_lengths(spatial, kernel, self.border_mode, self.filter_dilation,
                               self.subsample)

    def check_grad_weights_shapes(self, x_shape: Sequence[int], gy_shape: Sequence[int],
                                  kernel: Sequence[int]) -> None:
        """ValueError unless gy has the output's shape for input x and filters `kernel`,
        and the channels and filters split in the groups."""
        spatial = self.output_spatial(x_shape[2:], kernel)
        if list(gy_shape[2:]) != spatial or gy_shape[0] != x_shape[0]:
            raise ValueError(f"{self.label}: the output gradient has shape {tuple(gy_shape)}, "
                             f"expected ({x_shape[0]}, filters, {', '.join(map(str, spatial))})")
        if x_shape[1] % self.num_groups or gy_shape[1] % self.num_groups:
            raise ValueError(f"{self.label}: {x_shape[1]} channels and {gy_shape[1]} filters "
                             f"cannot be split in num_groups={self.num_groups} groups")

    def check_grad_inputs_shapes(self, w_shape: Sequence[int], gy_shape: Sequence[int],
                                 spatial: Sequence[int]) -> None:
        """ValueError unless gy has the output's shape for filters w and an input of
        spatial shape `spatial`."""
        if gy_shape[1] != w_shape[0] or w_shape[0] % self.num_groups:
            raise ValueError(f"{self.label}: the output gradient has {gy_shape[1]} channels "
                             f"but there are {w_shape[0]} filters in {self.num_groups} groups")
        expected = _output_lengths(spatial, w_shape[-self.convdim:], self.border_mode,
                                   self.filter_dilation, self.subsample)
        if list(gy_shape[2:]) != expected or min(expected, default=1) < 1:
            raise ValueError(f"{self.label}: the output gradient's spatial shape "
                             f"{tuple(gy_shape[2:])} does not match an input of spatial "
                             f"shape {tuple(spatial)} (expected {tuple(expected)})")

    def group_slices(self, channels: int, filters: int) -> list[tuple[slice, slice]]:
        """(channels, filters) of each group."""
        per_channel, per_filter = channels // self.num_groups, filters // self.num_groups
        return [(slice(g * per_channel, (g + 1) * per_channel),
                 slice(g * per_filter, (g + 1) * per_filter)) for g in range(self.num_groups)]

    def check_channels(self, channels: int, filter_channels: int, filters: int) -> None:
        if channels != filter_channels * self.num_groups:
            raise ValueError(f"{self.label}: the input has {channels} channels but the filters "
                             f"expect {filter_channels} x num_groups={self.num_groups}")
        if filters % self.num_groups:
            raise ValueError(f"{self.label}: {filters} filters cannot be split in "
                             f"num_groups={self.num_groups} groups")

    def _forward(self, x: np.ndarray, w: np.ndarray, dtype: str) -> np.ndarray:
        self.check_channels(x.shape[1], self.filter_channels(w.shape), w.shape[0])
        windows, _ = self._windows(x, w.shape[-self.convdim:])
        w = self._flipped(w)
        spatial = windows.shape[2:2 + self.convdim]
        self.check_unshared_outputs(w.shape, spatial)
        output = np.empty((x.shape[0], w.shape[0], *spatial), dtype=dtype)
        kernel_axes = list(range(2 + self.convdim, 2 + 2 * self.convdim))
        for channels, filters in self.group_slices(x.shape[1], w.shape[0]):
            if self.unshared:
                output[:, filters] = np.einsum("ncijkl,fijckl->nfij", windows[:, channels],
                                               w[filters])
                continue
            product = np.tensordot(windows[:, channels], w[filters],
                                   axes=([1, *kernel_axes], [1, *range(2, 2 + self.convdim)]))
            output[:, filters] = np.moveaxis(product, -1, 1)
        return output

    def _grad_weights(self, x: np.ndarray, gy: np.ndarray, kernel: Sequence[int],
                      dtype: str) -> np.ndarray:
        self.check_grad_weights_shapes(x.shape, gy.shape, kernel)
        windows, _ = self._windows(x, kernel)
        per_channel = x.shape[1] // self.num_groups
        positions = tuple(gy.shape[2:]) if self.unshared else ()
        result = np.empty((gy.shape[1], *positions, per_channel, *kernel), dtype=dtype)
        output_axes = list(range(2, 2 + self.convdim))
        for channels, filters in self.group_slices(x.shape[1], gy.shape[1]):
            if self.unshared:
                result[filters] = np.einsum("nfij,ncijkl->fijckl", gy[:, filters],
                                            windows[:, channels])
                continue
            result[filters] = np.tensordot(gy[:, filters], windows[:, channels],
                                           axes=([0, *output_axes], [0, *output_axes]))
        return self._flipped(result)

    def _grad_inputs(self, w: np.ndarray, gy: np.ndarray, spatial: Sequence[int],
                     dtype: str) -> np.ndarray:
        self.check_grad_inputs_shapes(w.shape, gy.shape, spatial)
        self.check_unshared_outputs(w.shape, gy.shape[2:])
        channels = self.filter_channels(w.shape) * self.num_groups
        kernel = w.shape[-self.convdim:]
        pad = self.padding(kernel)
        w = self._flipped(w)
        padded = np.zeros((gy.shape[0], channels, *[n + sum(p) for n, p in zip(spatial, pad)]),
                          dtype=np.result_type(w, gy))
        for tap in np.ndindex(*kernel):
            target = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in
                           zip(tap, self.filter_dilation, gy.shape[2:], self.subsample))
            for group_channels, filters in self.group_slices(channels, w.shape[0]):
                if self.unshared:
                    # (N, F_g, *output) x (F_g, *output, C_g) -> (N, C_g, *output)
                    padded[(slice(None), group_channels) + target] += np.einsum(
                        "nfij,fijc->ncij", gy[:, filters], w[(filters, Ellipsis) + tap])
                    continue
                # (N, F_g, *output) x (F_g, C_g) -> (N, *output, C_g)
                contribution = np.tensordot(gy[:, filters], w[(filters, slice(None)) + tap],
                                            axes=([1], [0]))
                padded[(slice(None), group_channels) + target] += np.moveaxis(
                    contribution, -1, 1)
        crop = tuple(slice(before, before + n) for (before, _), n in zip(pad, spatial))
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
        w = self._tensor(w, "filters", self.filters_ndim)
        channels, filter_channels = x.type.shape[1], self.filter_channels(w.type.shape)
        if channels is not None and filter_channels is not None:
            self.check_channels(channels, filter_channels, w.type.shape[0] or
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
        spatial = _output_lengths(x_shape[2:], w_shape[-self.convdim:], self.border_mode,
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
        gx = self._related(2)(w, gy, x.shape[2:])
        gw = self._related(1)(x, gy, w.shape[-self.convdim:])
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
        positions = tuple(gy.type.shape[2:]) if self.unshared else ()
        dtype = upcast(x.type.dtype, gy.type.dtype)
        return Apply(self, [x, gy, shape], [tensor_type(dtype, (gy.type.shape[1], *positions,
                                                                per_channel, *kernel))()])

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, gy_shape, _ = input_shapes
        shape = node.inputs[2]
        positions = tuple(gy_shape[2:]) if self.unshared else ()
        return [(gy_shape[1], *positions, x_shape[1] // self.num_groups,
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
        gx = self._related(2)(g, gy, x.shape[2:])
        ggy = self._related(0)(x, g)
        return [gx.astype(x.type.dtype), ggy.astype(gy.type.dtype), disconnected_type()]

    def R_op(self, inputs, eval_points):
        return _bilinear_tangent(self, inputs, eval_points)


class AbstractConvGradInputs(_AbstractConvBase):
    """gx = J_x^T gy for y = conv(x, w): inputs (w, gy, the input's spatial shape)."""

    def make_node(self, w, gy, shape):
        w = self._tensor(w, "filters", self.filters_ndim)
        gy = self._tensor(gy, "output_grad", self.convdim + 2)
        shape = self._shape_input(shape)
        spatial = (tuple(int(v) for v in shape.data) if isinstance(shape, Constant)
                   else (None,) * self.convdim)
        per_channel = self.filter_channels(w.type.shape)
        channels = None if per_channel is None else per_channel * self.num_groups
        dtype = upcast(w.type.dtype, gy.type.dtype)
        return Apply(self, [w, gy, shape], [tensor_type(dtype, (gy.type.shape[0], channels,
                                                                *spatial))()])

    def infer_shape(self, fgraph, node, input_shapes):
        w_shape, gy_shape, _ = input_shapes
        shape = node.inputs[2]
        return [(gy_shape[0], self.filter_channels(w_shape) * self.num_groups,
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
        gw = self._related(1)(g, gy, w.shape[-self.convdim:])
        ggy = self._related(0)(g, w)
        return [gw.astype(w.type.dtype), ggy.astype(gy.type.dtype), disconnected_type()]

    def R_op(self, inputs, eval_points):
        return _bilinear_tangent(self, inputs, eval_points)


AbstractConv.family = AbstractConvGradWeights.family = AbstractConvGradInputs.family = (
    AbstractConv, AbstractConvGradWeights, AbstractConvGradInputs)


# -- Theano's classes ----------------------------------------------------------------------

def _shape_hint(value: Any, ndim: int, label: str, name: str) -> tuple:
    """A shape hint (None, or `ndim` entries each None, an int or an integer constant) as a
    tuple of ints and Nones."""
    if value is None:
        return (None,) * ndim
    if isinstance(value, Variable) or not isinstance(value, (tuple, list)) or \
            len(value) != ndim:
        raise ValueError(f"{label}: {name} must be None or {ndim} entries, got {value!r}")
    hint = []
    for entry in value:
        if isinstance(entry, Constant):
            entry = entry.data
        if entry is None:
            hint.append(None)
        elif isinstance(entry, (int, np.integer)) or (
                isinstance(entry, np.ndarray) and entry.ndim == 0 and entry.dtype.kind in "iu"):
            hint.append(int(entry))
        else:
            raise ValueError(f"{label}: {name} entries must be None or constant ints, got "
                             f"{entry!r}")
    return tuple(hint)


def _known(hint: tuple, variable: Variable | None) -> tuple:
    """The hint, with the lengths the variable's type knows where the hint has None."""
    if variable is None:
        return hint
    return tuple(own if given is None else given
                 for given, own in zip(hint, variable.type.shape))


def _hinted(variable: Variable, shape: tuple, label: str) -> Variable:
    """`variable` with the static lengths `shape` gives (ints or None), checked at run time."""
    if all(given is None or given == own for given, own in zip(shape, variable.type.shape)):
        return variable
    try:
        return specify_shape(variable, shape)
    except ValueError as error:
        raise ValueError(f"{label}: a shape hint {shape} contradicts {variable}'s type "
                         f"{variable.type} ({error})") from None


class _TheanoConv(_AbstractConvBase):
    """Theano's constructor and call signatures on the ops above (AbstractConv2d,
    AbstractConv2d_gradWeights, AbstractConv2d_gradInputs and the 3d ones). imshp and kshp:
    the shapes of the forward convolution's input and filters (None, or entries None or
    int): the lengths they give become the static lengths of the inputs they describe (the
    image, the filters, and the output gradient's through the output shape they imply),
    checked when the function runs. Spatial hints that leave no output are read as
    placeholders and not applied (a model only built, or built before its sizes are known),
    so only the graph's own static shapes fail the build; the convolution checks the real
    sizes when it runs."""

    __props__ = _AbstractConvBase.__props__ + ("imshp", "kshp")
    convdim = 2

    def __init__(self, imshp=None, kshp=None, border_mode="valid", subsample=None,
                 filter_flip=True, filter_dilation=None, num_groups=1, unshared=False):
        label = type(self).__name__
        convdim = type(self).convdim
        super().__init__(convdim, border_mode, 1 if subsample is None else subsample,
                         filter_flip, 1 if filter_dilation is None else filter_dilation,
                         num_groups, unshared)
        self.imshp = _shape_hint(imshp, convdim + 2, label, "imshp")
        self.kshp = _shape_hint(kshp, self.filters_ndim, label, "kshp")

    def _options(self) -> dict:
        return {name: getattr(self, name) for name in self.__props__ if name != "convdim"}

    def _hints(self, image: Variable | None, kernel: Variable | None) -> tuple:
        """(image hint, kernel hint, output hint), as the class docstring says."""
        imshp, kshp = self.imshp, self.kshp
        for attempt in range(2):
            output = get_conv_output_shape(_known(imshp, image), _known(kshp, kernel),
                                           self.border_mode, self.subsample,
                                           self.filter_dilation)
            if attempt or not any(n is not None and n < 1 for n in output[2:]):
                break
            imshp = imshp[:2] + (None,) * self.convdim
            kshp = kshp[:-self.convdim] + (None,) * self.convdim
        return imshp, kshp, tuple(output[:2]) + tuple(
            None if n is not None and n < 1 else n for n in output[2:])


class _TheanoForward(_TheanoConv, AbstractConv):
    def make_node(self, img, kern):
        img = self._tensor(img, "input", self.convdim + 2)
        kern = self._tensor(kern, "filters", self.filters_ndim)
        imshp, kshp, _ = self._hints(img, kern)
        return AbstractConv.make_node(self, _hinted(img, imshp, self.label),
                                      _hinted(kern, kshp, self.label))


class _TheanoGradWeights(_TheanoConv, AbstractConvGradWeights):
    def make_node(self, img, topgrad, shape):
        ndim = self.convdim + 2
        img = self._tensor(img, "input", ndim)
        topgrad = self._tensor(topgrad, "output_grad", ndim)
        imshp, _, output = self._hints(img, None)
        return AbstractConvGradWeights.make_node(self, _hinted(img, imshp, self.label),
                                                 _hinted(topgrad, output, self.label), shape)


class _TheanoGradInputs(_TheanoConv, AbstractConvGradInputs):
    def make_node(self, kern, topgrad, shape):
        kern = self._tensor(kern, "filters", self.filters_ndim)
        topgrad = self._tensor(topgrad, "output_grad", self.convdim + 2)
        _, kshp, output = self._hints(None, kern)
        return AbstractConvGradInputs.make_node(self, _hinted(kern, kshp, self.label),
                                                _hinted(topgrad, output, self.label), shape)


class AbstractConv2d(_TheanoForward):
    """Theano's AbstractConv2d: op(input, filters)."""


class AbstractConv2d_gradWeights(_TheanoGradWeights):
    """Theano's AbstractConv2d_gradWeights: op(input, output_grad, filters' (rows, columns))."""


class AbstractConv2d_gradInputs(_TheanoGradInputs):
    """Theano's AbstractConv2d_gradInputs: op(filters, output_grad, input's (rows, columns))."""


class AbstractConv3d(_TheanoForward):
    """Theano's AbstractConv3d: op(input, filters)."""

    convdim = 3


class AbstractConv3d_gradWeights(_TheanoGradWeights):
    """Theano's AbstractConv3d_gradWeights: op(input, output_grad, filters' spatial shape)."""

    convdim = 3


class AbstractConv3d_gradInputs(_TheanoGradInputs):
    """Theano's AbstractConv3d_gradInputs: op(filters, output_grad, input's spatial shape)."""

    convdim = 3


AbstractConv2d.family = AbstractConv2d_gradWeights.family = \
    AbstractConv2d_gradInputs.family = (AbstractConv2d, AbstractConv2d_gradWeights,
                                        AbstractConv2d_gradInputs)
AbstractConv3d.family = AbstractConv3d_gradWeights.family = \
    AbstractConv3d_gradInputs.family = (AbstractConv3d, AbstractConv3d_gradWeights,
                                        AbstractConv3d_gradInputs)
# convdim -> Theano's (forward, weights' gradient, inputs' gradient) classes.
THEANO_CLASSES = {2: (AbstractConv2d, AbstractConv2d_gradWeights, AbstractConv2d_gradInputs),
                  3: (AbstractConv3d, AbstractConv3d_gradWeights, AbstractConv3d_gradInputs)}


# -- Theano's functions ------------------------------------------------------------------------

def _conv(convdim, input, filters, input_shape, filter_shape, border_mode, subsample,
          filter_flip, filter_dilation, num_groups, unshared=False):
    op = THEANO_CLASSES[convdim][0](input_shape, filter_shape, border_mode, subsample,
                                     filter_flip, filter_dilation, num_groups, unshared)
    return op(input, filters)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, image_shape=None, filter_dilation=(1, 1),
           num_groups=1, unshared=False, **kwargs):
    """The 2d convolution of input (batch, channels, rows, columns) with filters
    (output channels, channels / num_groups, rows, columns; unshared: output channels,
    output rows, output columns, channels / num_groups, rows, columns); see the module
    docstring. input_shape and filter_shape (ints or None; image_shape is Theano's old name
    of input_shape) give static shapes, checked at run time."""
    if kwargs:
        raise TypeError(f"conv2d: unexpected arguments {sorted(kwargs)}")
    return _conv(2, input, filters, input_shape if input_shape is not None else image_shape,
                 filter_shape, border_mode, subsample, filter_flip, filter_dilation, num_groups,
                 unshared)


def conv3d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1, 1), filter_flip=True, filter_dilation=(1, 1, 1), num_groups=1):
    """The 3d convolution of input (batch, channels, depth, rows, columns) with filters
    (output channels, channels / num_groups, depth, rows, columns)."""
    return _conv(3, input, filters, input_shape, filter_shape, border_mode, subsample,
                 filter_flip, filter_dilation, num_groups)


def _separable(convdim, input, depthwise_filters, pointwise_filters, num_channels,
               input_shape, depthwise_filter_shape, pointwise_filter_shape, border_mode,
               subsample, filter_flip, filter_dilation):
    depthwise = _conv(convdim, input, depthwise_filters, input_shape, depthwise_filter_shape,
                      border_mode, subsample, filter_flip, filter_dilation, num_channels)
    image, kernel = _numeric(input_shape), _numeric(depthwise_filter_shape)
    depthwise_shape = None
    if image is not None and kernel is not None:
        label = f"separable_conv{convdim}d"
        depthwise_shape = get_conv_output_shape(
            image, kernel, _border_mode(border_mode, convdim, label),
            _per_dimension(subsample, convdim, "subsample", label, 1),
            _per_dimension(filter_dilation, convdim, "filter_dilation", label, 1))
    return _conv(convdim, depthwise, pointwise_filters, depthwise_shape,
                 pointwise_filter_shape, "valid", 1, filter_flip, 1, 1)


def separable_conv2d(input, depthwise_filters, pointwise_filters, num_channels,
                     input_shape=None, depthwise_filter_shape=None,
                     pointwise_filter_shape=None, border_mode="valid", subsample=(1, 1),
                     filter_flip=True, filter_dilation=(1, 1)):
    """Theano's separable_conv2d: a depthwise convolution (each of the num_channels input
    channels by its own depthwise_filters (channels x multiplier, 1, rows, columns): groups
    of one channel; border_mode, subsample and filter_dilation apply to it) then a pointwise
    one (pointwise_filters (outputs, channels x multiplier, 1, 1)) mixing the channels."""
    return _separable(2, input, depthwise_filters, pointwise_filters, num_channels,
                      input_shape, depthwise_filter_shape, pointwise_filter_shape,
                      border_mode, subsample, filter_flip, filter_dilation)


def separable_conv3d(input, depthwise_filters, pointwise_filters, num_channels,
                     input_shape=None, depthwise_filter_shape=None,
                     pointwise_filter_shape=None, border_mode="valid", subsample=(1, 1, 1),
                     filter_flip=True, filter_dilation=(1, 1, 1)):
    """Theano's separable_conv3d: separable_conv2d's depthwise then pointwise convolutions
    on (batch, channels, depth, rows, columns)."""
    return _separable(3, input, depthwise_filters, pointwise_filters, num_channels,
                      input_shape, depthwise_filter_shape, pointwise_filter_shape,
                      border_mode, subsample, filter_flip, filter_dilation)


def _spatial_shape(shape: Any, convdim: int, label: str, rank: int | None = None) -> Variable:
    """The spatial lengths (the last convdim) out of a full shape of `rank` entries (by
    default convdim + 2: batch, channels, *spatial)."""
    rank = convdim + 2 if rank is None else rank
    if isinstance(shape, Variable):
        return shape[-convdim:] if shape.type.ndim == 1 else shape
    shape = tuple(shape)
    if len(shape) != rank:
        raise ValueError(f"{label}: the shape must have {rank} entries, got {shape}")
    spatial = shape[-convdim:]
    if all(isinstance(v, (int, np.integer)) for v in spatial):
        return constant(np.array(spatial, dtype=np.int64))
    return as_tensor_variable(list(spatial)).astype("int64")


def _numeric(shape: Any) -> Any:
    """A full shape with its symbolic entries as None (a hint of what is known)."""
    if shape is None or isinstance(shape, Variable):
        return None
    return tuple(None if isinstance(entry, Variable) and not isinstance(entry, Constant)
                 else entry for entry in shape)


def _grad_wrt_inputs(convdim, output_grad, filters, input_shape, filter_shape, border_mode,
                     subsample, filter_flip, filter_dilation, num_groups, unshared=False):
    label = f"conv{convdim}d_grad_wrt_inputs"
    op = THEANO_CLASSES[convdim][2](_numeric(input_shape), filter_shape, border_mode,
                                     subsample, filter_flip, filter_dilation, num_groups,
                                     unshared)
    return op(filters, output_grad, _spatial_shape(input_shape, convdim, label))


def _grad_wrt_weights(convdim, input, output_grad, filter_shape, input_shape, border_mode,
                      subsample, filter_flip, filter_dilation, num_groups, unshared=False):
    label = f"conv{convdim}d_grad_wrt_weights"
    op = THEANO_CLASSES[convdim][1](input_shape, _numeric(filter_shape), border_mode,
                                     subsample, filter_flip, filter_dilation, num_groups,
                                     unshared)
    return op(input, output_grad, _spatial_shape(filter_shape, convdim, label, op.filters_ndim))


def conv2d_grad_wrt_inputs(output_grad, filters, input_shape, filter_shape=None,
                           border_mode="valid", subsample=(1, 1), filter_flip=True,
                           filter_dilation=(1, 1), num_groups=1, unshared=False):
    """The gradient of conv2d with respect to its input, for an input of shape input_shape
    (4 entries, ints or scalars, or a shape vector)."""
    return _grad_wrt_inputs(2, output_grad, filters, input_shape, filter_shape, border_mode,
                            subsample, filter_flip, filter_dilation, num_groups, unshared)


def conv2d_grad_wrt_weights(input, output_grad, filter_shape, input_shape=None,
                            border_mode="valid", subsample=(1, 1), filter_flip=True,
                            filter_dilation=(1, 1), num_groups=1, unshared=False):
    """The gradient of conv2d with respect to its filters, of shape filter_shape (6 entries
    for unshared filters)."""
    return _grad_wrt_weights(2, input, output_grad, filter_shape, input_shape, border_mode,
                             subsample, filter_flip, filter_dilation, num_groups, unshared)


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


def _constant_int(value: Any, label: str, name: str) -> int:
    try:
        value = get_scalar_constant_value(value)
    except NotScalarConstantError:
        raise TypeError(f"{label}: {name} must be a constant int") from None
    if np.asarray(value).dtype.kind not in "iu":
        raise TypeError(f"{label}: {name} must be an int, got {value!r}")
    return int(value)


def causal_conv1d(input, filters, filter_shape, input_shape=None, subsample=1,
                  filter_flip=True, filter_dilation=1, num_groups=1, unshared=False):
    """Theano's causal (dilated) 1d convolution, WaveNet's: input (batch, channels, length),
    filters (output channels, channels / num_groups, filter length; unshared: output
    channels, output length, channels / num_groups, filter length); the output at t sees
    the input up to t only: the input is padded by the dilated filter's length - 1 on the
    left and not on the right. filter_shape (required: its last length sets the padding;
    a constant) and input_shape are hints as conv2d's. Computed as a 2d convolution of
    columns of width 1, as Theano did."""
    label = "causal_conv1d"
    input = as_tensor_variable(input, op=label, argument="input")
    filters = as_tensor_variable(filters, op=label, argument="filters")
    rank = 4 if unshared else 3
    if input.type.ndim != 3 or filters.type.ndim != rank:
        raise TypeError(f"{label}: input must be 3-d (batch, channels, length) and filters "
                        f"{rank}-d, got {input.type} and {filters.type}")
    if filter_shape is None or len(filter_shape) != rank:
        raise ValueError(f"{label}: filter_shape must give the filters' {rank} lengths, got "
                         f"{filter_shape!r}")
    subsample = _constant_int(subsample, label, "subsample")
    dilation = _constant_int(filter_dilation, label, "filter_dilation")
    length = _constant_int(filter_shape[-1], label, "filter_shape's filter length")
    kernel = filters.dimshuffle(0, 1, "x", 2, 3, "x") if unshared else \
        filters.dimshuffle(0, 1, 2, "x")
    filter_hint = tuple(filter_shape[:1]) + ((filter_shape[1], 1) if unshared else ()) + \
        tuple(filter_shape[-2:]) + (1,)
    image_hint = None if input_shape is None else tuple(input_shape) + (1,)
    output = _conv(2, input.dimshuffle(0, 1, 2, "x"), kernel, image_hint,
                   tuple(_numeric(filter_hint)), (((length - 1) * dilation, 0), 0),
                   (subsample, 1), filter_flip, (dilation, 1), num_groups, unshared)
    return output[:, :, :, 0]


def conv2d_transpose(input, filters, output_shape, filter_shape=None, border_mode="valid",
                     input_dilation=(1, 1), filter_flip=True, filter_dilation=(1, 1),
                     num_groups=1):
    """The transpose of conv2d (a "deconvolution"): conv2d_grad_wrt_inputs of `input`, for
    an output of shape output_shape, the stride of the forward conv being input_dilation."""
    return conv2d_grad_wrt_inputs(input, filters, output_shape, filter_shape, border_mode,
                                  input_dilation, filter_flip, filter_dilation, num_groups)


# -- bilinear upsampling (Theano's) ------------------------------------------------------------

def _ratio(ratio: Any) -> int:
    if isinstance(ratio, Variable):
        try:
            ratio = get_scalar_constant_value(ratio)
        except NotScalarConstantError:
            raise TypeError("bilinear_upsampling: ratio must be a constant int (it sets the "
                            "convolution's padding and stride)") from None
    if isinstance(ratio, (bool, np.bool_)) or not isinstance(
            ratio, (int, np.integer, np.ndarray)) or np.asarray(ratio).dtype.kind not in "iu":
        raise TypeError(f"bilinear_upsampling: ratio must be an int, got {ratio!r}")
    if int(ratio) < 1:
        raise ValueError(f"bilinear_upsampling: ratio must be >= 1, got {int(ratio)}")
    return int(ratio)


def bilinear_kernel_1D(ratio, normalize=True):
    """The 1d kernel of bilinear upsampling by `ratio`: 1, 2, ..., ratio, ..., 2, 1 (divided
    by ratio if normalize), in floatX."""
    ratio = _ratio(ratio)
    half = np.arange(1, ratio + 1, dtype=config.floatX)
    kernel = np.concatenate([half, half[-2::-1]])
    return constant(kernel / ratio if normalize else kernel)


def bilinear_kernel_2D(ratio, normalize=True):
    """The 2d kernel of bilinear upsampling by `ratio`: the outer product of the 1d one with
    itself."""
    kernel = bilinear_kernel_1D(ratio, normalize).data
    return constant(np.outer(kernel, kernel))


def bilinear_upsampling(input, ratio, batch_size=None, num_input_channels=None,
                        use_1D_kernel=True):
    """input (batch, channels, rows, columns) upsampled by the int `ratio` with bilinear
    interpolation, as Theano's: (batch, channels, rows * ratio, columns * ratio). The border
    rows and columns are repeated once outside the image, then a transposed convolution with
    the bilinear kernel of stride `ratio` interpolates (for an even ratio the last row and
    column weigh once more than the first, as in Theano). batch_size and num_input_channels,
    if both given, are checked at run time; use_1D_kernel: two 1d passes (rows, then
    columns) or one 2d one, with the same values."""
    ratio = _ratio(ratio)
    input = as_tensor_variable(input, op="bilinear_upsampling", argument="input")
    if input.type.ndim != 4 or input.type.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"bilinear_upsampling: input must be a 4-d float tensor (batch, "
                        f"channels, rows, columns), got {input.type}")
    if batch_size is not None and num_input_channels is not None:
        input = specify_shape(input, (batch_size, num_input_channels, None, None))
    rows, columns = input.shape[2], input.shape[3]
    images = reshape(input, (-1, 1, rows, columns))
    padded = concatenate([images[:, :, :1], images, images[:, :, -1:]], axis=2)
    padded = concatenate([padded[:, :, :, :1], padded, padded[:, :, :, -1:]], axis=3)
    pad = 2 * ratio - (ratio - 1) // 2 - 1
    count = images.shape[0]
    if use_1D_kernel:
        kernel = bilinear_kernel_1D(ratio)
        by_rows = conv2d_grad_wrt_inputs(
            padded, kernel.dimshuffle("x", "x", 0, "x"), (count, 1, rows * ratio, columns + 2),
            border_mode=(pad, 0), subsample=(ratio, 1))
        result = conv2d_grad_wrt_inputs(
            by_rows, kernel.dimshuffle("x", "x", "x", 0),
            (count, 1, rows * ratio, columns * ratio), border_mode=(0, pad),
            subsample=(1, ratio))
    else:
        result = conv2d_grad_wrt_inputs(
            padded, bilinear_kernel_2D(ratio).dimshuffle("x", "x", 0, 1),
            (count, 1, rows * ratio, columns * ratio), border_mode=(pad, pad),
            subsample=(ratio, ratio))
    return reshape(result, (input.shape[0], input.shape[1], rows * ratio, columns * ratio))
