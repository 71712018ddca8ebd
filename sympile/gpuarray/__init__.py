"""Theano's module path `theano.gpuarray` (its GPU backend): sympile.gpu's types and transfer
ops under that name, so `from theano import gpuarray` ports with the import changed. The
backend is sympile.gpu's; see docs/guide/gpu.md."""

from sympile.gpu import *  # noqa: F403
from sympile.gpu import __all__  # noqa: F401
