"""Theano's path of MRG_RandomStreams (theano.sandbox.rng_mrg), with Theano's names of its
op class (mrg_uniform: sympile's MRGUniform) and of the 2^134-step jump between streams
(ff_2p134)."""

from sympile.tensor.random.mrg import guess_n_streams
from sympile.tensor.random.mrg import jump_2p134 as ff_2p134
from sympile.tensor.random.mrg_streams import MRG_RandomStreams
from sympile.tensor.random.op import MRGUniform as mrg_uniform

__all__ = ["MRG_RandomStreams", "ff_2p134", "guess_n_streams", "mrg_uniform"]
