"""Theano's `theano.scan_module.scan_utils`: the graph comparison libraries use."""

from sympile.graph.basic import clone_replace, equal_computations

__all__ = ["clone_replace", "equal_computations"]
