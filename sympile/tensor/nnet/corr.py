"""Theano's `theano.tensor.nnet.corr`: CorrMM and its two gradients, the 2d correlation ops
that libraries built on Theano call directly (Lasagne's Conv2DMMLayer). They are
AbstractConv2d and its gradients with filter_flip=False (a correlation: the filters are not
flipped), which sympile computes by im2col and a product as Theano's CorrMM did, with
Theano's constructor (border_mode, subsample, filter_dilation, num_groups) and its optional
`shape` argument of the gradients: the filters' (or the image's) spatial lengths, computed
from the other two inputs where the geometry allows (subsample 1, and for the weights'
gradient a border_mode other than 'half'), else required, as in Theano. corr3d.py holds
the 3d ones (Corr3dMM), built from the same pieces. FAST_RUN lowers the abstract ops to
these (sympile.tensor.rewriting.conv), as Theano's optimizer did.
"""

from __future__ import annotations

from typing import Any

from sympile.tensor.basic import stack
from sympile.tensor.nnet.abstract_conv import (
    AbstractConv2d,
    AbstractConv2d_gradInputs,
    AbstractConv2d_gradWeights,
    get_conv_gradinputs_shape,
    get_conv_gradweights_shape,
)
from sympile.tensor.variable import as_tensor_variable

__all__ = ["CorrMM", "CorrMM_gradInputs", "CorrMM_gradWeights"]


def theano_options(label: str, border_mode: Any, subsample: Any, filter_dilation: Any,
                   num_groups: int, options: dict, unshared: bool = False) -> dict:
    """The abstract op's options of a correlation op built with Theano's arguments."""
    if options.pop("filter_flip", False):
        raise ValueError(f"{label}: a correlation does not flip its filters (filter_flip "
                         f"must be False); use AbstractConv2d for a convolution")
    return {"border_mode": border_mode, "subsample": subsample, "filter_flip": False,
            "filter_dilation": filter_dilation, "num_groups": num_groups,
            "unshared": unshared, **options}


def _needs_shape(op, what: str) -> None:
    raise ValueError(f"{type(op).__name__}: shape (the {what}'s spatial lengths) must be "
                     f"given when subsample is not 1 or border_mode is 'half'")


def _implied_lengths(op, what: str, given, topgrad, lengths_of):
    """The spatial lengths of the filters or the image (`what`) a gradient correlation op
    takes, from the other input `given` and topgrad, by `lengths_of` (abstract_conv's
    get_conv_gradweights_shape or get_conv_gradinputs_shape)."""
    given = as_tensor_variable(given, op=op, argument="img" if what == "filters" else "kern")
    topgrad = as_tensor_variable(topgrad, op=op, argument="topgrad")
    full = lengths_of([given.shape[axis] for axis in range(given.type.ndim)],
                      [topgrad.shape[axis] for axis in range(topgrad.type.ndim)],
                      op.border_mode, op.subsample, op.filter_dilation)
    return stack(list(full[-op.convdim:]))


def filters_shape(op, img, topgrad):
    """The filters' spatial lengths of a weights' gradient `op` (a correlation) on img and
    topgrad, where its geometry decides them (subsample 1, border_mode not 'half')."""
    if any(step != 1 for step in op.subsample) or op.border_mode == "half":
        _needs_shape(op, "filters")
    return _implied_lengths(op, "filters", img, topgrad, get_conv_gradweights_shape)


def image_shape(op, kern, topgrad):
    """The image's spatial lengths of an inputs' gradient `op` (a correlation) on kern and
    topgrad, where its geometry decides them (subsample 1)."""
    if any(step != 1 for step in op.subsample):
        _needs_shape(op, "image")
    return _implied_lengths(op, "image", kern, topgrad, get_conv_gradinputs_shape)


class ImpliedFiltersShape:
    """A weights' gradient correlation op's make_node(img, topgrad, shape=None): shape
    computed by filters_shape when omitted."""

    def make_node(self, img, topgrad, shape=None):
        if shape is None:
            shape = filters_shape(self, img, topgrad)
        return super().make_node(img, topgrad, shape)


class ImpliedImageShape:
    """An inputs' gradient correlation op's make_node(kern, topgrad, shape=None): shape
    computed by image_shape when omitted."""

    def make_node(self, kern, topgrad, shape=None):
        if shape is None:
            shape = image_shape(self, kern, topgrad)
        return super().make_node(kern, topgrad, shape)


class _Correlation2d:
    """Theano's constructor of the 2d correlation ops, labelled by the class's name."""

    def __init__(self, border_mode: Any = "valid", subsample: Any = (1, 1),
                 filter_dilation: Any = (1, 1), num_groups: int = 1, unshared: bool = False,
                 openmp: Any = None, **options: Any):
        super().__init__(**theano_options(type(self).__name__, border_mode, subsample,
                                          filter_dilation, num_groups, options, unshared))


class CorrMM(_Correlation2d, AbstractConv2d):
    """Theano's CorrMM(border_mode, subsample, filter_dilation, num_groups)(img, kern): the
    2d correlation of NCHW images with (out channels, in channels / groups, rows, cols)
    filters."""


class CorrMM_gradWeights(_Correlation2d, ImpliedFiltersShape, AbstractConv2d_gradWeights):
    """Theano's CorrMM_gradWeights(...)(img, topgrad, shape=None): the filters' gradient of
    CorrMM; shape: the filters' (rows, cols), computed when omitted (subsample 1, a
    border_mode other than 'half')."""


class CorrMM_gradInputs(_Correlation2d, ImpliedImageShape, AbstractConv2d_gradInputs):
    """Theano's CorrMM_gradInputs(...)(kern, topgrad, shape=None): the images' gradient of
    CorrMM; shape: the images' (rows, cols), computed when omitted (subsample 1)."""
