"""Theano's `theano.scan_module`: scan, until and the Scan op under Theano's module paths
(scan_module.scan_op.Scan, scan_module.scan_utils.equal_computations). sympile's scan lives
in sympile.scan."""

from sympile.scan import Scan, foldl, foldr, map, reduce, scan, scan_checkpoints, until
from sympile.scan_module import scan_op, scan_utils  # noqa: F401

__all__ = ["Scan", "foldl", "foldr", "map", "reduce", "scan", "scan_checkpoints", "until"]
