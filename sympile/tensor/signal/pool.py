"""Pooling (Theano's T.signal.pool): pool_2d and pool_3d over the last 2 or 3 axes, with
their gradients, the gradient of max pooling's gradient, and tangents (Rop).

    pool_2d(input, ws, ignore_border=True, stride=None, pad=(0, 0), mode='max')

mode: 'max', 'sum', 'average_inc_pad' (the window's sum over its size within the padded
input) or 'average_exc_pad' (over the number of input elements in the window). Windows of
size ws start every `stride` (ws by default) on the input padded by `pad` on both sides
(pad < ws, which needs ignore_border=True, as in Theano). ignore_border=True keeps only
whole windows; False also keeps the partial windows at the end, clipped to the input.
Output length per axis, Theano's: (n + 2 pad - ws) // stride + 1 with ignore_border, else
(n - 1) // stride + 1 when stride >= ws and max(0, (n - 1 - ws + stride) // stride) + 1
otherwise.

Ops: Pool(x), MaxPoolGrad(x, maxout, gz), AveragePoolGrad(x, gz) (sum and the averages),
DownsampleFactorMaxGradGrad(x, maxout, ggx) (max pooling's second derivative, a pooling of
ggx at the maxima), MaxPoolRop(x, v) (v at each window's first maximum). The gradient of
max pooling goes to every position equal to the window's maximum (Theano's rule). perform()
works on windows of the padded input (sliding_window_view); on the C backend, 2d pooling
and its first derivatives on float32/float64 run pool_c.py's loops, the rest perform().
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.gradient_types import disconnected_type, is_disconnected
from sympile.graph.op import Op
from sympile.tensor.math import maximum
from sympile.tensor.signal.pool_c import pool_c_code
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["Pool", "MaxPoolGrad", "AveragePoolGrad", "DownsampleFactorMaxGradGrad",
           "MaxPoolRop", "MaxPoolRopGrad", "pool_2d", "pool_3d", "max_pool_2d_same_size"]

MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def _tuple(value: Any, nd: int, name: str, label: str, minimum: int) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (value,) * nd
    if not (isinstance(value, (tuple, list)) and len(value) == nd and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"{label}: {name} must be {nd} ints, got {value!r}")
    if any(v < minimum for v in value):
        raise ValueError(f"{label}: {name} must be >= {minimum}, got {tuple(value)}")
    return tuple(int(v) for v in value)


def _constant_window(value: Any, name: str, label: str) -> Any:
    """A window, stride or pad given as an input in Theano's call form, as Python ints:
    numbers, sequences or constant tensors (sympile's pooling has static windows)."""
    if isinstance(value, Variable):
        if not isinstance(value, Constant):
            raise TypeError(f"{label}: {name} must be constant (ints, a tuple or a constant "
                            f"tensor): sympile's pooling windows are static, got {value}")
        value = value.data
    array = np.asarray(value)
    return tuple(int(v) for v in array.ravel()) if array.ndim else int(array)


class _PoolBase(Op):
    """The pooling ops' common part. Two forms: sympile's, `Pool(nd, ws, stride, pad,
    ignore_border, mode)(x)`, and Theano's, `Pool(ignore_border=False, mode='max',
    ndim=2)(x, ws, stride, pad)`, whose window, stride and pad come after the tensors
    (`data_inputs` of them) and must be constants: the call builds the node of the op in
    sympile's form."""

    __props__ = ("nd", "ws", "stride", "pad", "ignore_border", "mode")
    data_inputs = 1

    def __init__(self, nd: Any = None, ws: Any = None, stride: Any = None, pad: Any = 0,
                 ignore_border: bool | None = None, mode: str = "max",
                 ndim: int | None = None):
        if isinstance(nd, bool):
            # Theano's positional form: Pool(ignore_border, mode, ndim).
            nd, ignore_border, mode, ws = ndim, nd, ws if isinstance(ws, str) else mode, None
        if ws is None:
            self.nd = int(ndim or nd or 2)
            self.ws = self.stride = self.pad = None
            if mode not in MODES:
                raise ValueError(f"{self.label}: mode must be one of {MODES}, got {mode!r}")
            self.mode = mode
            self.ignore_border = bool(ignore_border)  # Theano's default: False
            return
        if ndim is not None and nd is not None and ndim != nd:
            raise ValueError(f"{type(self).__name__}: nd={nd} and ndim={ndim} differ")
        nd = nd if nd is not None else ndim
        label = f"pool_{nd}d"
        self.nd = nd
        if ignore_border is None:
            ignore_border = True
        self.ws = _tuple(ws, nd, "ws", label, 1)
        self.stride = self.ws if stride is None else _tuple(stride, nd, "stride", label, 1)
        self.pad = _tuple(pad, nd, "pad", label, 0)
        if mode not in MODES:
            raise ValueError(f"{label}: mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.ignore_border = bool(ignore_border)
        if any(self.pad) and not self.ignore_border:
            raise ValueError(f"{label}: padding works only with ignore_border=True")
        if any(p >= w for p, w in zip(self.pad, self.ws)):
            raise ValueError(f"{label}: pad {self.pad} must be smaller than ws {self.ws}")

    def __call__(self, *inputs, **kwargs):
        if self.ws is not None:
            return super().__call__(*inputs, **kwargs)
        data, window = inputs[:self.data_inputs], inputs[self.data_inputs:]
        if not 1 <= len(window) <= 3:
            raise TypeError(f"{type(self).__name__}: in Theano's form the op takes "
                            f"{self.data_inputs} tensor(s), then ws and optionally stride and "
                            f"pad; got {len(inputs)} inputs")
        ws, stride, pad = [*window, None, None][:3]
        label = self.label
        bound = type(self)(self.nd, _constant_window(ws, "ws", label),
                           None if stride is None else _constant_window(stride, "stride", label),
                           0 if pad is None else _constant_window(pad, "pad", label),
                           self.ignore_border, self.mode)
        return bound(*data, **kwargs)

    @property
    def label(self) -> str:
        return f"pool_{self.nd}d"

    def _options(self) -> dict:
        return {name: getattr(self, name) for name in self.__props__}

    def output_length(self, length, axis: int):
        """Theano's output length along a pooled axis (ints or symbolic scalars)."""
        ws, stride, pad = self.ws[axis], self.stride[axis], self.pad[axis]
        if self.ignore_border:
            return (length + 2 * pad - ws) // stride + 1
        if stride >= ws:
            return (length - 1) // stride + 1
        if isinstance(length, (int, np.integer)):
            return max(0, (length - 1 - ws + stride) // stride) + 1
        return maximum(0, (length - 1 - ws + stride) // stride) + 1

    def _input(self, x: Any, name: str = "input"):
        x = as_tensor_variable(x, op=self.label, argument=name)
        if x.type.ndim < self.nd:
            raise TypeError(f"{self.label}: {name} must have at least {self.nd} dimensions, "
                            f"got {x.type}")
        return x

    def pooled_shape(self, shape) -> tuple:
        """The output's shape for an input of shape `shape` (None entries stay None);
        ValueError where a window does not fit (ignore_border=True)."""
        lengths = []
        for axis in range(self.nd):
            length = shape[-self.nd + axis]
            if length is None:
                lengths.append(None)
                continue
            self._check_fits(length, axis, shape[-self.nd:])
            lengths.append(self.output_length(length, axis))
        return (*shape[:-self.nd], *lengths)

    def _check_fits(self, length: int, axis: int, spatial) -> None:
        """With ignore_border, a window must fit in the padded input along each axis."""
        if self.ignore_border and length + 2 * self.pad[axis] < self.ws[axis]:
            raise ValueError(f"{self.label}: the window {self.ws} is larger than the input's "
                             f"last axes {tuple(spatial)} (padded by {self.pad}) with "
                             f"ignore_border=True")

    def _pooled_symbolic_shape(self, shape) -> tuple:
        """infer_shape's output shape for an input of (symbolic) shape `shape`."""
        return (*shape[:-self.nd], *(self.output_length(shape[-self.nd + axis], axis)
                                     for axis in range(self.nd)))

    # -- numpy ---------------------------------------------------------------------------
    def _layout(self, shape: tuple[int, ...]):
        """(output lengths, padded lengths): windows of the padded input, extended at the
        end (for ignore_border=False) so that every output window fits."""
        spatial = shape[-self.nd:]
        outputs, padded = [], []
        for axis, length in enumerate(spatial):
            self._check_fits(length, axis, spatial)
            out = int(self.output_length(length, axis))
            outputs.append(out)
            padded.append(max(length + 2 * self.pad[axis],
                              (out - 1) * self.stride[axis] + self.ws[axis]))
        return outputs, padded

    def _padded(self, x: np.ndarray, fill, padded_lengths) -> np.ndarray:
        widths = [(0, 0)] * (x.ndim - self.nd) + [
            (p, total - n - p) for p, total, n in zip(self.pad, padded_lengths,
                                                      x.shape[-self.nd:])]
        return np.pad(x, widths, constant_values=fill)

    def _windows(self, padded: np.ndarray, outputs) -> np.ndarray:
        """(..., *outputs, *ws) views of `padded`."""
        axes = tuple(range(padded.ndim - self.nd, padded.ndim))
        windows = sliding_window_view(padded, self.ws, axis=axes)
        steps = tuple(slice(0, o * s, s) for o, s in zip(outputs, self.stride))
        return windows[(Ellipsis,) + steps + (slice(None),) * self.nd]

    def _counts(self, shape, outputs, padded_lengths) -> np.ndarray:
        """The divisor of each window (averages): the window's size within the padded input
        (inc_pad) or within the input (exc_pad)."""
        spatial = shape[-self.nd:]
        inside = np.zeros(padded_lengths)
        if self.mode == "average_inc_pad":
            region = tuple(slice(0, n + 2 * p) for n, p in zip(spatial, self.pad))
        else:
            region = tuple(slice(p, p + n) for n, p in zip(spatial, self.pad))
        inside[region] = 1
        windows = self._windows(inside, outputs)
        return windows.sum(axis=tuple(range(-self.nd, 0)))

    def _fill(self, dtype) -> Any:
        return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min

    def _scatter(self, contributions: np.ndarray, shape, padded_lengths, dtype) -> np.ndarray:
        """Add each window's (..., *outputs, *ws) contributions back onto the input."""
        result = np.zeros((*shape[:-self.nd], *padded_lengths), dtype=dtype)
        outputs = contributions.shape[-2 * self.nd:-self.nd]
        for tap in np.ndindex(*self.ws):
            target = tuple(slice(t, t + (o - 1) * s + 1, s) for t, o, s in
                           zip(tap, outputs, self.stride))
            result[(Ellipsis,) + target] += contributions[(Ellipsis,) + tap]
        crop = tuple(slice(p, p + n) for p, n in zip(self.pad, shape[-self.nd:]))
        return result[(Ellipsis,) + crop]

    def _max_mask(self, x: np.ndarray, maxout: np.ndarray):
        outputs, padded_lengths = self._layout(x.shape)
        windows = self._windows(self._padded(x, self._fill(x.dtype), padded_lengths), outputs)
        expanded = maxout.reshape(maxout.shape + (1,) * self.nd)
        return windows == expanded, padded_lengths


class Pool(_PoolBase):
    """pool_2d / pool_3d's op: see the module docstring."""

    @staticmethod
    def out_shape(imgshape, ws=None, ignore_border=False, stride=None, pad=None, ndim=2,
                  ds=None, st=None, padding=None) -> list:
        """Theano's Pool.out_shape: the shape (a list; ints or symbolic lengths) of pooling
        an input of shape `imgshape` over its last `ndim` axes. ds, st and padding are
        Theano's old names of ws, stride and pad."""
        ws, stride, pad = (ds if ws is None else ws), (st if stride is None else stride), \
            (padding if pad is None else pad)
        if ws is None:
            raise TypeError("Pool.out_shape: ws (the window) is required")
        if len(imgshape) < ndim:
            raise ValueError(f"Pool.out_shape: imgshape {tuple(imgshape)} has fewer than "
                             f"ndim={ndim} axes")
        op = Pool(ndim, ws, stride, 0 if pad is None else pad, ignore_border)
        return [*imgshape[:-ndim], *(op.output_length(imgshape[-ndim + axis], axis)
                                     for axis in range(ndim))]

    def make_node(self, x):
        x = self._input(x)
        return Apply(self, [x], [tensor_type(x.type.dtype, self.pooled_shape(x.type.shape))()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [self._pooled_symbolic_shape(input_shapes[0])]

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        outputs, padded_lengths = self._layout(x.shape)
        axes = tuple(range(-self.nd, 0))
        if self.mode == "max":
            windows = self._windows(self._padded(x, self._fill(x.dtype), padded_lengths),
                                    outputs)
            result = windows.max(axis=axes) if windows.size else \
                np.zeros(windows.shape[:-self.nd], x.dtype)
        else:
            windows = self._windows(self._padded(x, 0, padded_lengths), outputs)
            result = windows.sum(axis=axes)
            if self.mode != "sum":
                result = result / self._counts(x.shape, outputs, padded_lengths)
        output_storage[0][0] = np.asarray(result, dtype=x.dtype)

    def c_code(self, node, names):
        return pool_c_code(self, node, names, "forward")

    def L_op(self, inputs, outputs, output_grads):
        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if is_disconnected(gz):
            return [disconnected_type()]
        if self.mode == "max":
            return [MaxPoolGrad(**self._options())(x, out, gz)]
        return [AveragePoolGrad(**self._options())(x, gz)]

    def R_op(self, inputs, eval_points):
        (x,), (v,) = inputs, eval_points
        if v is None:
            return [None]
        if self.mode == "max":
            return [MaxPoolRop(**self._options())(x, v)]
        return [self(v)]


class MaxPoolGrad(_PoolBase):
    """The gradient of max pooling: gz of each window added at every position of the window
    equal to its maximum."""

    data_inputs = 3

    def make_node(self, x, maxout, gz):
        x = self._input(x)
        maxout, gz = self._input(maxout, "maxout"), self._input(gz, "gz")
        return Apply(self, [x, maxout, gz], [x.type()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def perform(self, node, inputs, output_storage):
        x, maxout, gz = inputs
        mask, padded_lengths = self._max_mask(x, maxout)
        # where, not a product: gz is added only at the maxima (an inf or NaN gz elsewhere
        # in the window would make 0 * gz NaN), as pool.c adds it.
        contributions = np.where(mask, gz.reshape(gz.shape + (1,) * self.nd), 0)
        output_storage[0][0] = self._scatter(contributions, x.shape, padded_lengths, x.dtype)

    def c_code(self, node, names):
        return pool_c_code(self, node, names, "max_grad")

    def connection_pattern(self, node):
        return [[False], [False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        x, maxout, _ = inputs
        (ggx,) = output_grads
        if is_disconnected(ggx):
            return [disconnected_type()] * 3
        ggz = DownsampleFactorMaxGradGrad(**self._options())(x, maxout, ggx)
        return [disconnected_type(), disconnected_type(), ggz]

    def R_op(self, inputs, eval_points):
        x, maxout, _ = inputs
        v_gz = eval_points[2]
        return [None if v_gz is None else self(x, maxout, v_gz)]


class DownsampleFactorMaxGradGrad(_PoolBase):
    """The transpose of MaxPoolGrad in gz: for each window, the sum of ggx over the window's
    positions equal to its maximum."""

    data_inputs = 3

    def make_node(self, x, maxout, ggx):
        x = self._input(x)
        maxout, ggx = self._input(maxout, "maxout"), self._input(ggx, "ggx")
        return Apply(self, [x, maxout, ggx], [maxout.type()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def perform(self, node, inputs, output_storage):
        x, maxout, ggx = inputs
        mask, padded_lengths = self._max_mask(x, maxout)
        outputs, _ = self._layout(x.shape)
        windows = self._windows(self._padded(ggx, 0, padded_lengths), outputs)
        picked = np.where(mask, windows, 0).sum(axis=tuple(range(-self.nd, 0)))
        output_storage[0][0] = np.asarray(picked, dtype=maxout.dtype)

    def connection_pattern(self, node):
        return [[False], [False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        x, maxout, _ = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 3
        return [disconnected_type(), disconnected_type(),
                MaxPoolGrad(**self._options())(x, maxout, g)]

    def R_op(self, inputs, eval_points):
        x, maxout, _ = inputs
        v = eval_points[2]
        return [None if v is None else self(x, maxout, v)]


class AveragePoolGrad(_PoolBase):
    """The gradient of sum and average pooling: gz of each window (over its divisor) added at
    every position of the window."""

    data_inputs = 2

    def make_node(self, x, gz):
        x = self._input(x)
        gz = self._input(gz, "gz")
        return Apply(self, [x, gz], [x.type()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def perform(self, node, inputs, output_storage):
        x, gz = inputs
        outputs, padded_lengths = self._layout(x.shape)
        share = gz if self.mode == "sum" else gz / self._counts(x.shape, outputs,
                                                                 padded_lengths)
        contributions = np.broadcast_to(share.reshape(share.shape + (1,) * self.nd),
                                        share.shape + self.ws)
        output_storage[0][0] = self._scatter(contributions, x.shape, padded_lengths, x.dtype)

    def c_code(self, node, names):
        return pool_c_code(self, node, names, "average_grad")

    def connection_pattern(self, node):
        return [[False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        x, _ = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        return [disconnected_type(), Pool(**self._options())(g)]

    def R_op(self, inputs, eval_points):
        x, _ = inputs
        v = eval_points[1]
        return [None if v is None else self(x, v)]


class MaxPoolRop(_PoolBase):
    """The tangent of max pooling: v at each window's first maximum (in window order)."""

    data_inputs = 2

    def make_node(self, x, v):
        x = self._input(x)
        v = self._input(v, "eval_point")
        return Apply(self, [x, v], [tensor_type(v.type.dtype,
                                                self.pooled_shape(x.type.shape))()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [self._pooled_symbolic_shape(input_shapes[0])]

    def _first_maxima(self, x: np.ndarray):
        """(the flat index of each window's first maximum, the layout)."""
        outputs, padded_lengths = self._layout(x.shape)
        x_windows = self._windows(self._padded(x, self._fill(x.dtype), padded_lengths), outputs)
        flat_shape = x_windows.shape[:-self.nd] + (-1,)
        return x_windows.reshape(flat_shape).argmax(axis=-1)[..., None], outputs, padded_lengths

    def perform(self, node, inputs, output_storage):
        x, v = inputs
        first, outputs, padded_lengths = self._first_maxima(x)
        v_windows = self._windows(self._padded(v, 0, padded_lengths), outputs)
        flat = v_windows.reshape(v_windows.shape[:-self.nd] + (-1,))
        picked = np.take_along_axis(flat, first, axis=-1)[..., 0]
        output_storage[0][0] = np.asarray(picked, dtype=v.dtype)

    def connection_pattern(self, node):
        return [[False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        x, v = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        return [disconnected_type(), MaxPoolRopGrad(**self._options())(x, g)]


class MaxPoolRopGrad(MaxPoolRop):
    """The transpose of MaxPoolRop in v: g of each window added at its first maximum."""

    def make_node(self, x, g):
        x = self._input(x)
        g = self._input(g, "g")
        return Apply(self, [x, g], [tensor_type(g.type.dtype, x.type.shape)()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def perform(self, node, inputs, output_storage):
        x, g = inputs
        first, _, padded_lengths = self._first_maxima(x)
        taps = int(np.prod(self.ws))
        one_hot = np.arange(taps) == first
        contributions = (one_hot * g[..., None]).reshape(g.shape + self.ws)
        output_storage[0][0] = self._scatter(contributions, x.shape, padded_lengths, g.dtype)

    def L_op(self, inputs, outputs, output_grads):
        x, _ = inputs
        (g,) = output_grads
        if is_disconnected(g):
            return [disconnected_type()] * 2
        return [disconnected_type(), MaxPoolRop(**self._options())(x, g)]


def _pool(nd, input, ws, ignore_border, stride, pad, mode):
    if ws is None:
        raise TypeError(f"pool_{nd}d: ws (the window size) is required")
    op = Pool(nd, ws, stride, pad, ignore_border, mode)
    return op(input)


def pool_2d(input, ws=None, ignore_border=True, stride=None, pad=(0, 0), mode="max", ds=None,
            st=None, padding=None):
    """Pooling over the last two axes; see the module docstring. ds, st and padding are
    Theano's old names of ws, stride and pad."""
    ws, stride, pad = _old_names("pool_2d", ws, ds, stride, st, pad, padding)
    return _pool(2, input, ws, ignore_border, stride, pad, mode)


def _old_names(function: str, ws, ds, stride, st, pad, padding) -> tuple:
    """(ws, stride, pad) from Theano's new or old (ds, st, padding) names; both is an error,
    as in Theano (for pad, which has a default of zeros: a padding beside a non-zero pad)."""
    pad_given = pad is not None and any(length != 0 for length in pad)
    for given, old, new_name, old_name in ((ws is not None, ds, "ws", "ds"),
                                           (stride is not None, st, "stride", "st"),
                                           (pad_given, padding, "pad", "padding")):
        if given and old is not None:
            raise ValueError(f"{function}: give {new_name} or its old name {old_name}, not both")
    return (ws if ws is not None else ds, stride if stride is not None else st,
            pad if padding is None else padding)


def max_pool_2d_same_size(input, patch_size):
    """Theano's max_pool_2d_same_size: input (at least 2-D) with every value that is not the
    maximum of its non-overlapping patch_size window over the last two axes set to zero
    (ties keep every maximum; rows and columns past the last whole window become zero)."""
    pooled = Pool(2, patch_size, ignore_border=True)(input)
    return MaxPoolGrad(2, patch_size, ignore_border=True)(input, pooled, pooled)


def pool_3d(input, ws=None, ignore_border=True, stride=None, pad=(0, 0, 0), mode="max",
            ds=None, st=None, padding=None):
    """Pooling over the last three axes. ds, st and padding are Theano's old names of ws,
    stride and pad."""
    ws, stride, pad = _old_names("pool_3d", ws, ds, stride, st, pad, padding)
    return _pool(3, input, ws, ignore_border, stride, pad, mode)
