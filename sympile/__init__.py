"""sympile: an optimizing compiler for symbolic tensor math, with Theano's API.

    import sympile
    import sympile.tensor as T

    x = T.dvector("x")
    f = sympile.function([x], (x ** 2).sum())
    f([1.0, 2.0])  # array(5.)
    g = sympile.function([x], sympile.grad((x ** 2).sum(), x))
    g([1.0, 2.0])  # array([2., 4.])
"""

from sympile import (  # noqa: F401
    gradient,
    printing,
    sandbox,
    tensor,
)
from sympile.compile import (  # noqa: F401
    Function,
    In,
    Mode,
    Out,
    SharedVariable,
    UnusedInputError,
    function,
    get_mode,
    shared,
)
from sympile.config import config  # noqa: F401
from sympile.gradient import Lop, Rop, grad, hessian, jacobian  # noqa: F401
from sympile.graph import Apply, Constant, FunctionGraph, Op, Type, Variable  # noqa: F401
from sympile.graph.basic import clone_replace  # noqa: F401
from sympile.graph.fgraph import MissingInputError  # noqa: F401
from sympile.ifelse import ifelse  # noqa: F401
from sympile.printing import debugprint, pp  # noqa: F401
from sympile.sandbox import rng_mrg  # noqa: F401
from sympile.scan import scan, until  # noqa: F401

# Imported so that Theano's T.shared_randomstreams, T.signal and sandbox.rng_mrg, and
# PyTensor's tensor.random, are attributes once sympile is imported.
from sympile.tensor import random, shared_randomstreams, signal  # noqa: F401

# Theano users write T.grad. The gradient layer sits above the tensor layer, which must not
# import it; this package, above both and imported before either, hands the names down.
for _name in ("Lop", "Rop", "grad", "hessian", "jacobian"):
    setattr(tensor, _name, getattr(gradient, _name))
del _name

__version__ = "0.1.0"
