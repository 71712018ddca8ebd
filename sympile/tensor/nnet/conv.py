"""Theano's old `theano.tensor.nnet.conv` (before abstract_conv), which libraries of Theano
0.7-0.9's time still import: conv.conv2d, the convolution of a 4-D batch of images by 4-D
filters (flipped, as a convolution). It is abstract_conv.conv2d under Theano's old
signature, with one DeprecationWarning per process."""

from __future__ import annotations

import warnings
from typing import Any

from sympile.graph.basic import Variable
from sympile.tensor.nnet import abstract_conv

__all__ = ["conv2d"]

_warned: list[bool] = []


def conv2d(input: Any, filters: Any, image_shape: Any = None, filter_shape: Any = None,
           border_mode: str = "valid", subsample: Any = (1, 1)) -> Variable:
    """Theano's conv.conv2d: image_shape and filter_shape are the 4-D shape hints (checked
    when the function runs), border_mode 'valid' or 'full'."""
    if not _warned:
        _warned.append(True)
        warnings.warn("theano.tensor.nnet.conv.conv2d is Theano's old convolution: use "
                      "sympile.tensor.nnet.conv2d (input_shape= for image_shape=)",
                      DeprecationWarning, stacklevel=2)
    if border_mode not in ("valid", "full"):
        raise ValueError(f"conv.conv2d: border_mode must be 'valid' or 'full', got "
                         f"{border_mode!r}")
    return abstract_conv.conv2d(input, filters, input_shape=image_shape,
                                filter_shape=filter_shape, border_mode=border_mode,
                                subsample=subsample)
