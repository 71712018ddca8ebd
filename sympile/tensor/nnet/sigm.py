"""Theano's module path `theano.tensor.nnet.sigm`: the sigmoid family (defined in
sympile.tensor.nnet.basic and sympile.tensor.math) and its scalar ops (ScalarSigmoid and
ScalarSoftplus, Theano's names of their classes)."""

from sympile.scalar.basic import Sigmoid as ScalarSigmoid
from sympile.scalar.basic import Softplus as ScalarSoftplus
from sympile.scalar.basic import sigmoid as scalar_sigmoid
from sympile.scalar.basic import softplus as scalar_softplus
from sympile.tensor.nnet.basic import hard_sigmoid, sigmoid, softplus, ultra_fast_sigmoid

__all__ = ["ScalarSigmoid", "ScalarSoftplus", "hard_sigmoid", "scalar_sigmoid",
           "scalar_softplus", "sigmoid", "softplus", "ultra_fast_sigmoid"]
