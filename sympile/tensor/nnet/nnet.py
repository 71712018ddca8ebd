"""Theano's module path `theano.tensor.nnet.nnet`: the softmax and cross-entropy family,
defined in sympile.tensor.nnet.basic."""

from sympile.tensor.nnet.basic import *  # noqa: F403
from sympile.tensor.nnet.basic import __all__  # noqa: F401
