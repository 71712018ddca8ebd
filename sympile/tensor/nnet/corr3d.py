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
from sympile.tensor.nnet.corr import ImpliedFiltersShape, ImpliedImageShape, theano_options

__all__ = ["Corr3dMM", "Corr3dMM_gradInputs", "Corr3dMM_gradWeights"]


class _Correlation3d:
    """Theano's constructor of the 3d correlation ops, labelled by the class's name."""

    def __init__(self, border_mode: Any = "valid", subsample: Any = (1, 1, 1),
                 filter_dilation: Any = (1, 1, 1), openmp: Any = None, num_groups: int = 1,
                 **options: Any):
        super().__init__(**theano_options(type(self).__name__, border_mode, subsample,
                                          filter_dilation, num_groups, options))


class Corr3dMM(_Correlation3d, AbstractConv3d):
    """Theano's Corr3dMM(border_mode, subsample, filter_dilation, openmp, num_groups)(img,
    kern): the 3d correlation."""


class Corr3dMM_gradWeights(_Correlation3d, ImpliedFiltersShape, AbstractConv3d_gradWeights):
    """Theano's Corr3dMM_gradWeights(...)(img, topgrad, shape=None): the filters' gradient
    of Corr3dMM; shape: the filters' (depth, rows, cols), computed when omitted (subsample
    1, a border_mode other than 'half')."""


class Corr3dMM_gradInputs(_Correlation3d, ImpliedImageShape, AbstractConv3d_gradInputs):
    """Theano's Corr3dMM_gradInputs(...)(kern, topgrad, shape=None): the images' gradient
    of Corr3dMM; shape: the images' (depth, rows, cols), computed when omitted (subsample
    1)."""
