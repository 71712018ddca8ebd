"""Building and joining tensors (Theano's theano.tensor.basic): alloc and its forms, eye,
arange, join/stack, split, tile, transpose.

  ops.py       the ops and the functions that build them
  alloc_c.py   Alloc's C (alloc.c: the shape checks, one broadcasting copy)
  join_c.py    Join's C (join.c: block copies into the output's slabs)
  arange_c.py  ARange's C (arange.c: numpy's length and fill)
  split_c.py   Split's C (split.c: each piece a view of x)
"""

from sympile.tensor.basic.ops import *  # noqa: F403
from sympile.tensor.basic.ops import __all__  # noqa: F401 - the ops' public names
from sympile.tensor.elemwise import DimShuffle  # noqa: F401 - Theano's T.basic.DimShuffle
