"""Tensor rewrite rules, registered in rewrite_db (which modes query by tag)."""

from sympile.tensor.rewriting import stabilize  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting.basic import (  # noqa: F401
    MAX_FOLDED_SIZE,
    MergeRewriter,
    local_constant_folding,
    rewrite_db,
)
from sympile.tensor.rewriting.canonicalize import canonicalize_db  # noqa: F401
from sympile.tensor.rewriting import shape  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting import blas  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting import fusion  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting import zeros  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting import inplace  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting import nnet  # noqa: E402,F401 - registers its rules
from sympile.tensor.rewriting import specialize  # noqa: E402,F401 - registers its rules
