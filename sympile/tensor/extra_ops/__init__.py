"""Array ops with numpy's names (Theano's theano.tensor.extra_ops): cumsum/cumprod,
repeat, diag/diagonal/trace, triu/tril, fill_diagonal, searchsorted, nonzero, choose,
compress, to_one_hot, isclose/allclose.

  ops.py           the ops and their functions
  cumulative_c.py  CumOp's C (numpy's sequential accumulate)
  repeat_c.py      Repeat's C; group_sum_c.py the C of its gradient, GroupSum
  diag_c.py        the diagonal ops' C (numpy.diagonal's strided view)
  triangle_c.py    Tril's and Triu's C
"""

from sympile.tensor.extra_ops.ops import *  # noqa: F403
from sympile.tensor.extra_ops.ops import __all__  # noqa: F401 - the ops' public names
