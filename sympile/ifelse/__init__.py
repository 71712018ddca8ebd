"""ifelse: a lazy conditional (Theano's `theano.ifelse`).

- basic.py: the IfElse op and `ifelse(condition, then_branch, else_branch)`.
- rewriting.py: its rewrites (lifting, merging and pruning conditionals), registered in the
  tensor rewrite database when this package is imported.
"""

from sympile.ifelse import rewriting  # noqa: F401 - registers its rules
from sympile.ifelse.basic import IfElse, ifelse

__all__ = ["IfElse", "ifelse"]
