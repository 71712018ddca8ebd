"""The IR: Variables, Apply nodes, Ops, Types and FunctionGraph. Knows nothing of tensors."""

from sympile.graph.basic import (  # noqa: F401
    Apply,
    Constant,
    Variable,
    ancestors,
    applys_between,
    clone,
    clone_get_equiv,
    clone_replace,
    equal_computations,
    graph_inputs,
    io_toposort,
    is_in_ancestors,
    toposort,
)
from sympile.graph.fgraph import (  # noqa: F401
    OUTPUT,
    Feature,
    FunctionGraph,
    InconsistencyError,
    MissingInputError,
)
from sympile.graph.op import Op  # noqa: F401
from sympile.graph.type import Type  # noqa: F401
from sympile.graph.utils import MethodNotDefined  # noqa: F401
