"""scan: symbolic loops (Theano's `theano.scan`). See sympile.scan.basic."""

from sympile.scan import (
    gradient,  # noqa: F401 - binds Scan.L_op and Scan.R_op
    memory,  # noqa: F401 - registers scan_keep_last_steps
    merge,  # noqa: F401 - registers scan_merge
    rewriting,  # noqa: F401 - registers the scan rewrites
)
from sympile.scan.basic import scan, until
from sympile.scan.op import Scan
from sympile.scan.views import foldl, foldr, map, reduce, scan_checkpoints

__all__ = ["Scan", "scan", "until", "map", "reduce", "foldl", "foldr", "scan_checkpoints"]
