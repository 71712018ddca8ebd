"""Theano's `theano.tensor.nnet.corr3d`: Corr3dMM and its two gradients, the 3d correlation
ops (NCDHW images, (out channels, in channels / groups, depth, rows, cols) filters): the 3d
abstract ops with filter_flip=False, as corr.py's CorrMM is the 2d one, with Theano's
constructor (border_mode, subsample, filter_dilation, openmp, num_groups: openmp before
num_groups, as Theano has it) and the gradients' optional `shape` (the filters' or the
image's spatial lengths, computed from the other two inputs where the geometry allows)."""

from __future__ import annotations

from typing import Any

from sympile.tensor.nnet.abstract_conv import (
    AbstractConv3d,
    AbstractConv3d_gradInputs,
    AbstractConv3d_gradWeights,
)
from sympile.tensor.nnet.corr import filters_shape, image_shape, theano_options

__all__ = ["Corr3dMM", "Corr3dMM_gradInputs", "Corr3dMM_gradWeights"]


class Corr3dMM(AbstractConv3d):
    """Theano's Corr3dMM(border_mode, subsample, filter_dilation, openmp, num_groups)(img,
    kern): the 3d correlation."""

    def __init__(self, border_mode: Any = "valid", subsample: Any = (1, 1, 1),
                 filter_dilation: Any = (1, 1, 1), openmp: Any = None, num_groups: int = 1,
                 **options: Any):
        super().__init__(**theano_options("Corr3dMM", border_mode, subsample,
                                          filter_dilation, num_groups, options))


class Corr3dMM_gradWeights(AbstractConv3d_gradWeights):
    """Theano's Corr3dMM_gradWeights(...)(img, topgrad, shape=None): the filters' gradient
    of Corr3dMM; shape: the filters' (depth, rows, cols), computed when omitted (subsample
    1, a border_mode other than 'half')."""

    def __init__(self, border_mode: Any = "valid", subsample: Any = (1, 1, 1),
                 filter_dilation: Any = (1, 1, 1), openmp: Any = None, num_groups: int = 1,
                 **options: Any):
        super().__init__(**theano_options("Corr3dMM_gradWeights", border_mode, subsample,
                                          filter_dilation, num_groups, options))

    def make_node(self, img, topgrad, shape=None):
        if shape is None:
            shape = filters_shape(self, img, topgrad)
        return super().make_node(img, topgrad, shape)


class Corr3dMM_gradInputs(AbstractConv3d_gradInputs):
    """Theano's Corr3dMM_gradInputs(...)(kern, topgrad, shape=None): the images' gradient
    of Corr3dMM; shape: the images' (depth, rows, cols), computed when omitted (subsample
    1)."""

    def __init__(self, border_mode: Any = "valid", subsample: Any = (1, 1, 1),
                 filter_dilation: Any = (1, 1, 1), openmp: Any = None, num_groups: int = 1,
                 **options: Any):
        super().__init__(**theano_options("Corr3dMM_gradInputs", border_mode, subsample,
                                          filter_dilation, num_groups, options))

    def make_node(self, kern, topgrad, shape=None):
        if shape is None:
            shape = image_shape(self, kern, topgrad)
        return super().make_node(kern, topgrad, shape)
