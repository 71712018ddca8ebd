"""Indexing, one family (Theano's theano.tensor.subtensor): x[index], set_subtensor,
inc_subtensor and take.

  index_kinds.py   the kinds of an idx_list entry (SCALAR, ARRAY, MASK, IndexSlice): a leaf
  ops.py           the ops (Subtensor, AdvancedSubtensor, IncSubtensor, AdvancedIncSubtensor,
                   SliceLength) and the functions that build them from a user's index
  basic_c.py       Subtensor's C (a view: view.c, a library unit with view.h) and the C of
                   x[rows, columns] pairs
  inc_c.py         IncSubtensor's C, on a view of the region view.c takes, and SliceLength's
  advanced_c.py    the general C of advanced indexing, with advanced_slices.h and
                   advanced_broadcast_error.h
  canonical.py     Theano's get_canonical_form_slice (a slice as an increasing one and a
                   direction)
  rows_c.py        the C of x[rows] and its writes (an embedding's lookup), and what the
                   writes share: the value's broadcast check (value_shape_error.h), the
                   update target

The C modules import index_kinds.py only, never ops.py, which imports them.
"""

from sympile.tensor.subtensor.canonical import get_canonical_form_slice  # noqa: F401
from sympile.tensor.subtensor.index_kinds import (  # noqa: F401 - the idx_list kinds
    ARRAY,
    MASK,
    SCALAR,
)
from sympile.tensor.subtensor.ops import *  # noqa: F403
from sympile.tensor.subtensor.ops import __all__  # noqa: F401 - the ops' public names
