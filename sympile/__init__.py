"""sympile: an optimizing compiler for symbolic tensor math, with Theano's API.

    import sympile
    import sympile.tensor as T

    x = T.dvector("x")
    f = sympile.function([x], (x ** 2).sum())
    f([1.0, 2.0])  # array(5.)
    g = sympile.function([x], sympile.grad((x ** 2).sum(), x))
    g([1.0, 2.0])  # array([2., 4.])
"""

import scipy.sparse

# sympile.sparse registers its shared constructor: sympile.shared(a scipy.sparse matrix);
# sympile.gpu its placement rewrite and the device shared constructor. gof and scan_module
# are Theano's theano.gof and theano.scan_module, attributes after `import theano` as
# Theano's __init__ made them.
from sympile import (  # noqa: F401
    configdefaults,
    gof,
    gpu,
    gradient,
    printing,
    sandbox,
    scan_module,
    sparse,
    tensor,
)
from sympile.builders import OpFromGraph  # noqa: F401
from sympile.compile import (  # noqa: F401
    Function,
    In,
    Mode,
    Out,
    Param,
    ProfileMode,
    SharedVariable,
    UnusedInputError,
    function,
    get_mode,
    shared,
)
from sympile.config import config
from sympile.gradient import Lop, Rop, grad  # noqa: F401
from sympile.graph import Apply, Constant, FunctionGraph, Op, Type, Variable  # noqa: F401
from sympile.graph.basic import clone_replace
from sympile.graph.fgraph import MissingInputError  # noqa: F401
from sympile.ifelse import ifelse  # noqa: F401
from sympile.misc import pkl_utils  # noqa: F401 - theano.misc.pkl_utils
from sympile.misc.safe_asarray import asarray_of_dtype as _asarray  # noqa: F401 - Theano's
from sympile.printing import debugprint, pp, pprint  # noqa: F401
from sympile.sandbox import rng_mrg  # noqa: F401
from sympile.scan import (  # noqa: F401
    foldl,
    foldr,
    map,
    reduce,
    scan,
    scan_checkpoints,
    until,
)
from sympile.scan.derivatives import hessian, jacobian
from sympile.sparse.type import is_sparse

# Imported so that Theano's T.opt, T.shared_randomstreams, T.signal and sandbox.rng_mrg, and
# PyTensor's tensor.random, are attributes once sympile is imported.
from sympile.tensor import opt, random, shared_randomstreams, signal  # noqa: F401


def clone(output, replace=None, strict=True, share_inputs=True):
    """Theano's theano.clone: a copy of the graph of `output` (a variable or a list) with the
    substitutions `replace` (a dict or pairs); the copy shares the original's inputs.
    strict=True requires each replacement to have the type of what it replaces; False lets
    it have another type the graph accepts (make_node rebuilds the nodes after it)."""
    if not share_inputs:
        raise NotImplementedError("clone: share_inputs=False (copies of the inputs) is not "
                                  "supported; the copy shares the original's inputs")
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace or [])
    if strict:
        for old, new in pairs:
            if getattr(new, "type", None) != old.type:
                raise TypeError(f"clone: {new} replaces {old} but its type "
                                f"{getattr(new, 'type', type(new).__name__)} is not "
                                f"{old.type} (pass strict=False to allow it)")
    return clone_replace(output, pairs)


# Theano users write T.grad, T.verify_grad and theano.gradient.jacobian. The gradient layer
# sits above the tensor layer, and jacobian and hessian build a scan, above the gradient
# layer; this package, above all of them and imported before any, hands the names down.
for _name in ("Lop", "Rop", "grad", "verify_grad", "numeric_grad"):
    setattr(tensor, _name, getattr(gradient, _name))
for _name, _function in (("hessian", hessian), ("jacobian", jacobian)):
    setattr(tensor, _name, _function)
    setattr(gradient, _name, _function)
del _name, _function

# theano.change_flags (Theano's module-level name of config.change_flags).
change_flags = config.change_flags


def dot(l, r):  # noqa: E741 - Theano's parameter names
    """Theano's theano.dot: the product of l and r, sparse.dot when either is sparse (a
    sparse variable or a scipy.sparse matrix), else tensor.dot."""
    if any(is_sparse(x) or scipy.sparse.issparse(x) for x in (l, r)):
        return sparse.dot(l, r)
    return tensor.dot(l, r)

__version__ = "0.1.0"
