"""Theano's `theano.tensor.nnet` (T.nnet): neural-network ops.

- basic.py: softmax, log_softmax, their gradient, the cross-entropies and the fused
  softmax cross-entropy ops (Theano's `T.nnet.nnet`, also importable under that name);
  basic_c.py and rows_c.py: their C (vectorised row kernels).
- bn.py: batch normalization (T.nnet.bn), from tensor operations.
- abstract_conv.py: conv2d, conv3d, their gradients, conv2d_transpose (Theano's
  T.nnet.abstract_conv; conv2d, conv3d and conv2d_transpose also here).
- conv.py: Theano's old T.nnet.conv.conv2d, served by abstract_conv.
- corr.py: Theano's T.nnet.corr: CorrMM and its gradients (AbstractConv2d without flip);
  corr3d.py: T.nnet.corr3d, Corr3dMM and its gradients (the 3d ones).
- sigm.py: Theano's path T.nnet.sigm (the sigmoid family).
"""

from sympile.tensor.nnet import (
    abstract_conv,  # noqa: F401 - Theano's T.nnet.abstract_conv
    bn,  # noqa: F401 - Theano's T.nnet.bn
    conv,  # noqa: F401 - Theano's old T.nnet.conv
    corr,  # noqa: F401 - Theano's T.nnet.corr (CorrMM)
    corr3d,  # noqa: F401 - Theano's T.nnet.corr3d (Corr3dMM)
    nnet,  # noqa: F401 - Theano's path T.nnet.nnet.softmax
    sigm,  # noqa: F401 - Theano's path T.nnet.sigm
)
from sympile.tensor.nnet.abstract_conv import conv2d, conv2d_transpose, conv3d
from sympile.tensor.nnet.basic import *  # noqa: F403
from sympile.tensor.nnet.basic import __all__ as _basic_names

__all__ = ["conv2d", "conv2d_transpose", "conv3d"]
__all__.extend(_basic_names)
