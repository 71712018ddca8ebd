"""Random streams: RandomStreams (Philox4x32-10, also PyTensor's RandomStream) and
MRG_RandomStreams (Theano's MRG31k3p, bit for bit), their ops, C code and rewrites."""

from sympile.tensor.random.basic import RandomStream, RandomStreams
from sympile.tensor.random.mrg_streams import MRG_RandomStreams
from sympile.tensor.random.op import (
    ChoiceFromUniform,
    MRGUniform,
    MultinomialFromUniform,
    RandomDraw,
)

__all__ = ["RandomStreams", "RandomStream", "MRG_RandomStreams", "RandomDraw", "MRGUniform",
           "MultinomialFromUniform", "ChoiceFromUniform"]
