"""Theano's `theano.scan_module.scan_op`: the Scan op (sympile.scan.op)."""

from sympile.scan.op import Scan

__all__ = ["Scan"]
