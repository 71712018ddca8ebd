"""Theano's `theano.compile.sharedvalue`: shared variables (sympile.compile.shared)."""

from sympile.compile.shared import SharedVariable, shared, shared_constructor

__all__ = ["SharedVariable", "shared", "shared_constructor"]
