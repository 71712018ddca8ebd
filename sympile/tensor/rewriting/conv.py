"""The abstract convolutions lowered to Theano's correlation ops, in specialize_db (tags
specialize, fast_run, conv_gemm), as Theano's optimizer lowered them on the CPU (its
conv_gemm rewrites, which optimizer_excluding='conv_gemm' leaves out):

  local_abstractconv_gemm             AbstractConv{2,3}d(img, kern)
                                        -> Corr(3d)MM(img, flip(kern))
  local_abstractconv_gradweight_gemm  AbstractConv{2,3}d_gradWeights(img, top, shape)
                                        -> flip(Corr(3d)MM_gradWeights(img, top, shape))
  local_abstractconv_gradinputs_gemm  AbstractConv{2,3}d_gradInputs(kern, top, shape)
                                        -> Corr(3d)MM_gradInputs(flip(kern), top, shape)

flip(k) reverses k's spatial axes (k[:, :, ::-1, ::-1]) when the abstract op has filter_flip
(a convolution), else is k (a correlation: the rewrite only renames the op). The correlation
ops are the abstract ones without flip and share their kernels, so the values are the same;
a graph that looks for CorrMM, as Theano's programs and tests do, finds it. The reversed
filters are a view, which the kernels read through a contiguous copy (filters are small).
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.tensor.nnet.abstract_conv import THEANO_CLASSES
from sympile.tensor.nnet.corr import CorrMM, CorrMM_gradInputs, CorrMM_gradWeights
from sympile.tensor.nnet.corr3d import Corr3dMM, Corr3dMM_gradInputs, Corr3dMM_gradWeights
from sympile.tensor.rewriting.matching import as_type_of
from sympile.tensor.rewriting.specialize import specialize_db

__all__ = ["local_abstractconv_gemm", "local_abstractconv_gradinputs_gemm",
           "local_abstractconv_gradweight_gemm"]

# convdim -> the correlation classes, in THEANO_CLASSES' order (forward, weights, inputs).
CORRELATION_CLASSES = {2: (CorrMM, CorrMM_gradWeights, CorrMM_gradInputs),
                       3: (Corr3dMM, Corr3dMM_gradWeights, Corr3dMM_gradInputs)}


def _correlation(node: Apply, kind: int):
    """The correlation op standing for `node`'s op (of THEANO_CLASSES[convdim][kind]
    exactly), or None."""
    op = node.op
    classes = THEANO_CLASSES.get(getattr(op, "convdim", None))
    if classes is None or type(op) is not classes[kind]:
        return None
    return CORRELATION_CLASSES[op.convdim][kind](
        border_mode=op.border_mode, subsample=op.subsample,
        filter_dilation=op.filter_dilation, num_groups=op.num_groups, unshared=op.unshared,
        imshp=op.imshp, kshp=op.kshp)


def _flipped(filters, flip: bool, convdim: int):
    """filters with their kernel's axes (the last convdim) reversed when `flip`."""
    if not flip:
        return filters
    return filters[(Ellipsis,) + (slice(None, None, -1),) * convdim]


@node_rewriter(list(THEANO_CLASSES[2][:1] + THEANO_CLASSES[3][:1]))
def local_abstractconv_gemm(fgraph: FunctionGraph, node: Apply):
    """AbstractConv{2,3}d(img, kern) -> Corr(3d)MM(img, flip(kern))."""
    op = _correlation(node, 0)
    if op is None:
        return None
    img, kern = node.inputs
    return as_type_of(op(img, _flipped(kern, node.op.filter_flip, node.op.convdim)),
                      node.outputs[0])


@node_rewriter(list(THEANO_CLASSES[2][1:2] + THEANO_CLASSES[3][1:2]))
def local_abstractconv_gradweight_gemm(fgraph: FunctionGraph, node: Apply):
    """AbstractConv{2,3}d_gradWeights(img, top, shape)
    -> flip(Corr(3d)MM_gradWeights(img, top, shape))."""
    op = _correlation(node, 1)
    if op is None:
        return None
    img, topgrad, shape = node.inputs
    return as_type_of(_flipped(op(img, topgrad, shape), node.op.filter_flip, node.op.convdim),
                      node.outputs[0])


@node_rewriter(list(THEANO_CLASSES[2][2:] + THEANO_CLASSES[3][2:]))
def local_abstractconv_gradinputs_gemm(fgraph: FunctionGraph, node: Apply):
    """AbstractConv{2,3}d_gradInputs(kern, top, shape)
    -> Corr(3d)MM_gradInputs(flip(kern), top, shape)."""
    op = _correlation(node, 2)
    if op is None:
        return None
    kern, topgrad, shape = node.inputs
    return as_type_of(op(_flipped(kern, node.op.filter_flip, node.op.convdim), topgrad, shape),
                      node.outputs[0])


for _rule in (local_abstractconv_gemm, local_abstractconv_gradweight_gemm,
              local_abstractconv_gradinputs_gemm):
    specialize_db.register(_rule.name, _rule, "specialize", "fast_run", "conv_gemm")
del _rule
