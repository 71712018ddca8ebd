"""Theano's `theano.tensor.nnet` (T.nnet): neural-network ops.

- basic.py: softmax, log_softmax, their gradient, the cross-entropies and the fused
  softmax cross-entropy ops (Theano's `T.nnet.nnet`, also importable under that name);
  basic_c.py and rows_c.py: their C (vectorised row kernels).
"""

from sympile.tensor.nnet import nnet  # noqa: F401 - Theano's path T.nnet.nnet.softmax
from sympile.tensor.nnet.basic import *  # noqa: F403
from sympile.tensor.nnet.basic import __all__ as __all__
