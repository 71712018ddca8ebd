"""Theano's `theano.compile.io`: In and Out (sympile.compile.function)."""

from sympile.compile.function import In, Out

__all__ = ["In", "Out"]
