"""Theano's module path `theano.gof.null_type`: NullType, the type of a gradient that is
undefined or not implemented (sympile.graph.gradient_types)."""

from sympile.graph.gradient_types import NullType

__all__ = ["NullType"]
