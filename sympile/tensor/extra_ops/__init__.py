"""Array ops with numpy's names (Theano's theano.tensor.extra_ops): cumsum/cumprod,
repeat, diag/diagonal/trace, triu/tril, fill_diagonal, searchsorted, nonzero, choose,
compress, to_one_hot, isclose/allclose; bincount, bartlett, unique, cpu_contiguous and
fill_diagonal_offset.

  ops.py           the ops and their functions
  numpy_ops.py     the ops that run numpy's function of their name, and fill_diagonal_offset
  cumulative_c.py  CumOp's C (numpy's sequential accumulate)
  repeat_c.py      Repeat's C; group_sum_c.py the C of its gradient, GroupSum
  diag_c.py        the diagonal ops' C (numpy.diagonal's strided view)
  triangle_c.py    Tril's and Triu's C
"""

from sympile.tensor.extra_ops import numpy_ops, ops
from sympile.tensor.extra_ops.numpy_ops import *  # noqa: F403
from sympile.tensor.extra_ops.ops import *  # noqa: F403

# The ops' public names.
__all__ = ops.__all__ + numpy_ops.__all__
