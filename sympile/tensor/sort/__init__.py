"""Sorting (Theano's theano.tensor.sort): sort and argsort with numpy's semantics, and
PermuteAlongAxis, their derivative.

  ops.py         the ops and their functions
  sort_c.py      sort's and argsort's C (numpy's own C sorts)
  permute_c.py   PermuteAlongAxis's C
"""

from sympile.tensor.sort.ops import *  # noqa: F403
from sympile.tensor.sort.ops import __all__  # noqa: F401 - the ops' public names
