"""Theano's `theano.gof`: the graph classes under the names Theano's custom Ops and graph
code import (`theano.gof.Op`, `theano.gof.Apply`, `theano.gof.graph`, `theano.gof.opt`,
`theano.gof.null_type`, `theano.gof.op`, `theano.gof.fg`, `theano.gof.optdb`'s Query, the
linkers of `theano.gof.link` and `theano.gof.cc`).
The classes are sympile.graph's; see docs/guide/porting.md."""

from sympile.gof import fg, graph, link, null_type, op, opt, optdb  # noqa: F401
from sympile.gof.link import CLinker, DualLinker, Linker, OpWiseCLinker, PerformLinker  # noqa: F401
from sympile.gof.opt import (  # noqa: F401
    EquilibriumOptimizer,
    LocalOptimizer,
    OpRemove,
    OpSub,
    Optimizer,
    PatternSub,
    SeqOptimizer,
    TopoOptimizer,
    local_optimizer,
)
from sympile.gof.optdb import Query  # noqa: F401
from sympile.graph import (  # noqa: F401
    Apply,
    Constant,
    FunctionGraph,
    InconsistencyError,
    MethodNotDefined,
    MissingInputError,
    Op,
    Type,
    Variable,
)
