"""Theano's `theano.gof.graph`: the graph classes and walks, under Theano's names."""

from __future__ import annotations

from collections.abc import Mapping

from sympile.graph.basic import (
    Apply,
    Constant,
    Variable,
    ancestors,
    clone,
    clone_get_equiv,
    equal_computations,
    io_toposort,
)
from sympile.graph.basic import graph_inputs as inputs

__all__ = ["Apply", "Constant", "Variable", "ancestors", "clone", "clone_get_equiv",
           "equal_computations", "inputs", "io_toposort", "is_same_graph"]


def is_same_graph(var1: Variable, var2: Variable,
                  givens: Mapping[Variable, Variable] | None = None) -> bool:
    """Theano's is_same_graph: True if var1 and var2 compute the same thing, where each key
    of `givens` (a variable of one graph) stands for its value (one of the other graph's),
    in either direction."""
    if not isinstance(var1, Variable) or not isinstance(var2, Variable):
        raise TypeError(f"is_same_graph: expected two Variables, got {var1!r} and {var2!r}")
    pairs = list((givens or {}).items())
    # A given may map either graph's variable to the other's: try both readings.
    in_1 = [a for a, _ in pairs]
    in_2 = [b for _, b in pairs]
    return equal_computations([var1], [var2], in_1, in_2) \
        or equal_computations([var1], [var2], in_2, in_1)
