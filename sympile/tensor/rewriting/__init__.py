"""Tensor rewrite rules, registered in rewrite_db (which modes query by tag)."""

from sympile.tensor.rewriting import (
    blas,  # noqa: F401 - registers its rules
    conv,  # noqa: F401 - registers its rules
    fusion,  # noqa: F401 - registers its rules
    inplace,  # noqa: F401 - registers its rules
    linalg,  # noqa: F401 - registers its rules
    nnet,  # noqa: F401 - registers its rules
    random,  # noqa: F401 - registers its rules
    shape,  # noqa: F401 - registers its rules
    specialize,  # noqa: F401 - registers its rules
    stabilize,  # noqa: F401 - registers its rules
    zeros,  # noqa: F401 - registers its rules
)
from sympile.tensor.rewriting.basic import (  # noqa: F401
    MAX_FOLDED_SIZE,
    MergeRewriter,
    local_constant_folding,
    rewrite_db,
)
from sympile.tensor.rewriting.canonicalize import canonicalize_db  # noqa: F401
