"""Reductions (numpy's sum, prod, max, min, all, any, mean, var, std, argmax, argmin,
logsumexp): CAReduce, the arg-reductions, and the fused reduction of an elementwise graph.

  ops.py         the ops and their functions, shapes, gradients
  careduce_c.py  the C of one reduction (lane-parallel folds; extreme.c, the vectorised
                 max/min of floats with numpy's NaN rule) and of argmax/argmin
  fused_c.py     the C of a reduction fused with the elementwise graph it reads, one pass
"""

from sympile.tensor.reduction.ops import *  # noqa: F403
from sympile.tensor.reduction.ops import __all__  # noqa: F401 - the ops' public names
