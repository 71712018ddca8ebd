"""Shape ops (Theano's theano.tensor.shape): shape, shape_i, specify_shape, reshape,
flatten, squeeze, expand_dims, size, and the length helpers every family's shape code uses.

  ops.py       the ops and the helpers (axis_length, shape_argument, static_int, ...)
  shape_c.py   the C of SpecifyShape, MakeVector and Reshape
"""

from sympile.tensor.shape.ops import *  # noqa: F403
from sympile.tensor.shape.ops import __all__  # noqa: F401 - the ops' public names
