"""Theano's `theano.gof.fg`: FunctionGraph and the errors it raises (sympile.graph.fgraph's)."""

from sympile.graph.fgraph import FunctionGraph, InconsistencyError, MissingInputError

__all__ = ["FunctionGraph", "InconsistencyError", "MissingInputError"]
