"""The rewrite engine (node and graph rewriters, passes, history) and rewrite databases."""

from sympile.graph.rewriting.basic import (  # noqa: F401
    EquilibriumGraphRewriter,
    FromFunctionNodeRewriter,
    GraphRewriter,
    NodeRewriter,
    RewriteCycleError,
    RewriteErrorWarning,
    RewriteHistory,
    Rewriter,
    RewriteRecord,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    apply_node_rewriter,
    in2out,
    node_rewriter,
    out2in,
    record_rewrite,
)
from sympile.graph.rewriting.db import (  # noqa: F401
    EquilibriumDatabase,
    RewriteDatabase,
    RewriteQuery,
)
from sympile.graph.rewriting.pattern import PatternNodeRewriter, pattern_to_str  # noqa: F401
