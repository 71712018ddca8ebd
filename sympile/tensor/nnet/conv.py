"""Theano's old `theano.tensor.nnet.conv` (before abstract_conv), which libraries of Theano
0.7-0.9's time still import: conv.conv2d, the convolution of a 4-D batch of images by 4-D
filters (flipped, as a convolution). It is abstract_conv.conv2d under Theano's old
signature, with one DeprecationWarning per process."""

from __future__ import annotations

import warnings
from typing import Any

from sympile.graph.basic import Variable
from sympile.tensor.nnet import abstract_conv

__all__ = ["conv2d", "imported_scipy_signal"]

# Theano's flag for "scipy.signal is importable" (its tests compare with
# scipy.signal.convolve2d): scipy is one of sympile's two dependencies.
imported_scipy_signal = True

_warned: set[str] = set()
# Theano's ConvOp's code-generation hints: they chose among its C loops, never the result.
_TUNING_HINTS = ("unroll_batch", "unroll_kern", "unroll_patch", "openmp", "verbose")


def conv2d(input: Any, filters: Any, image_shape: Any = None, filter_shape: Any = None,
           border_mode: str = "valid", subsample: Any = (1, 1), **hints: Any) -> Variable:
    """Theano's conv.conv2d: image_shape and filter_shape are the 4-D shape hints (checked
    when the function runs), border_mode 'valid' or 'full'. Theano's ConvOp tuning hints
    (unroll_batch, unroll_kern, unroll_patch, openmp, verbose) are accepted and ignored,
    with one warning: they picked among Theano's C loops and never changed a value."""
    unknown = sorted(set(hints) - set(_TUNING_HINTS))
    if unknown:
        raise TypeError(f"conv.conv2d: unexpected keyword argument(s) {', '.join(unknown)}")
    if "deprecated" not in _warned:
        _warned.add("deprecated")
        warnings.warn("theano.tensor.nnet.conv.conv2d is Theano's old convolution: use "
                      "sympile.tensor.nnet.conv2d (input_shape= for image_shape=)",
                      DeprecationWarning, stacklevel=2)
    if hints and "hints" not in _warned:
        _warned.add("hints")
        warnings.warn(f"conv.conv2d: {', '.join(sorted(hints))} tuned Theano's ConvOp C loops; "
                      f"sympile's convolution ignores them (the values are the same)",
                      UserWarning, stacklevel=2)
    if border_mode not in ("valid", "full"):
        raise ValueError(f"conv.conv2d: border_mode must be 'valid' or 'full', got "
                         f"{border_mode!r}")
    return abstract_conv.conv2d(input, filters, input_shape=image_shape,
                                filter_shape=filter_shape, border_mode=border_mode,
                                subsample=subsample)
