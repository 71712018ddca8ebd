"""Tensors: types, variables and every tensor Op, with numpy's semantics.

    import sympile.tensor as T
    x = T.dmatrix("x"); y = T.exp(x).sum(axis=1)
"""

import sys as _sys

from sympile import scalar as scal  # noqa: F401 - Theano's T.scal
from sympile.tensor import nnet  # noqa: F401 - T.nnet.softmax, as in Theano
from sympile.tensor.arrays import *  # noqa: F403
from sympile.tensor.basic import *  # noqa: F403
from sympile.tensor.blas.basic import *  # noqa: F403
from sympile.tensor.constant_value import *  # noqa: F403
from sympile.tensor.elemwise import DimShuffle, Elemwise  # noqa: F401
from sympile.tensor.extra_ops import *  # noqa: F403
from sympile.tensor.math import *  # noqa: F403
from sympile.tensor.reduction import *  # noqa: F403
from sympile.tensor.shape import *  # noqa: F403
from sympile.tensor.sharedvar import tensor_constructor as _shared  # noqa: F401 - Theano's
from sympile.tensor.sort import *  # noqa: F403
from sympile.tensor.subtensor import *  # noqa: F403
from sympile.tensor.type import *  # noqa: F403
from sympile.tensor.type_other import NoneConst  # noqa: F401
from sympile.tensor.variable import (  # noqa: F401
    TensorConstant,
    TensorVariable,
    as_tensor_variable,
    constant,
)

as_tensor = as_tensor_variable

# After the names they use: Theano's and PyTensor's T.nlinalg, T.slinalg and T.linalg; the
# derivatives that need ops built on their own (Elemwise's, DimShuffle's, Alloc's, ARange's),
# bound onto those ops; and methods, which binds the operators and methods onto
# TensorVariable (x + y, x.sum(), ...).
from sympile.tensor import (  # noqa: E402, F401
    basic,
    constant_value,
    derivatives,
    elemwise,
    linalg,
    methods,
    nlinalg,
    slinalg,
)

# Theano's T.elemwise also held the reductions (T.elemwise.CAReduce, Prod): the reduction
# package sits above elemwise, so this package, above both, hands them down.
for _name in ("CAReduce", "Prod", "ProdWithoutZeros"):
    setattr(elemwise, _name, globals()[_name])
del _name
# And theano.tensor.basic.NotScalarConstantError (constant_value sits above basic).
basic.NotScalarConstantError = constant_value.NotScalarConstantError
# Theano's theano.tensor.basic held most of theano.tensor (its constructors, elementwise
# functions, reductions, shape functions and products), which code imports from there.
for _module in ("type", "math", "reduction", "shape", "arrays", "blas.basic",
                "constant_value"):
    for _name in _sys.modules[f"{__name__}.{_module}"].__all__:
        if not hasattr(basic, _name):
            setattr(basic, _name, globals()[_name])
for _name in ("as_tensor_variable", "as_tensor", "constant", "TensorConstant",
              "TensorVariable"):
    setattr(basic, _name, globals()[_name])
del _module, _name
