"""Theano's module path `theano.gof.op`: the Op class (sympile.graph.op), which custom Ops
written for Theano subclass as `gof.op.Op`."""

from sympile.graph.op import Op

__all__ = ["Op"]
