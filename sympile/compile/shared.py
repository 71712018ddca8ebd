"""Shared variables, at Theano's `theano.compile.sharedvalue` path; they live in the tensor
layer (sympile.tensor.sharedvar) so that ops below compile, the random streams, can own one."""

from sympile.tensor.sharedvar import (
    Container,
    SharedVariable,
    TensorSharedVariable,
    shared,
    shared_constructor,
)

__all__ = ["SharedVariable", "TensorSharedVariable", "shared", "shared_constructor",
           "Container"]
