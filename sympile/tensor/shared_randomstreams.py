"""Theano's path of RandomStreams (theano.tensor.shared_randomstreams)."""

from sympile.tensor.random.basic import RandomStreams

__all__ = ["RandomStreams"]
