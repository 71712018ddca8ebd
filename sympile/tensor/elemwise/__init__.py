"""Elementwise ops (Theano's theano.tensor.elemwise): Elemwise, a scalar op lifted to
broadcasting tensors, and DimShuffle.

  ops.py         the ops, their shapes and gradients
  elemwise_c.py  their C: the flat and strided loop kernels around the scalar op's C, and
                 DimShuffle's view
"""

from sympile.tensor.elemwise.ops import *  # noqa: F403
from sympile.tensor.elemwise.ops import __all__  # noqa: F401 - the ops' public names
