"""Theano's path of MRG_RandomStreams (theano.sandbox.rng_mrg)."""

from sympile.tensor.random.mrg import guess_n_streams
from sympile.tensor.random.mrg_streams import MRG_RandomStreams

__all__ = ["MRG_RandomStreams", "guess_n_streams"]
