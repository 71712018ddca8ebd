"""Building and joining tensors (Theano's theano.tensor.basic): alloc and its forms, eye,
arange, join/stack, split, tile, transpose.

  ops.py       the ops and the functions that build them
  join_c.py    Join's C (block copies into the output's slabs)
  arange_c.py  ARange's C (numpy's length and fill)
  split_c.py   Split's C (each piece a view of x)
"""

from sympile.tensor.basic.ops import *  # noqa: F403
from sympile.tensor.basic.ops import __all__  # noqa: F401 - the ops' public names
