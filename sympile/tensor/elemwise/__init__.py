"""Elementwise ops (Theano's theano.tensor.elemwise): Elemwise, a scalar op lifted to
broadcasting tensors, and DimShuffle.

  ops.py         the ops and their shapes
  elemwise_c.py  their C: the flat and strided loop kernels around the scalar op's C, and
                 DimShuffle's view

Their derivatives are built with sum, fill and cast, which build on Elemwise: they live in
sympile/tensor/derivatives.py, which binds them onto the ops.
"""

from sympile.tensor.elemwise.ops import *  # noqa: F403
from sympile.tensor.elemwise.ops import __all__  # noqa: F401 - the ops' public names
