"""Theano's `theano.gof.optdb`: Query, the selection of a rewrite database's entries by tag
(sympile's RewriteQuery under Theano's signature), for optdb.query(Query(...))."""

from __future__ import annotations

from collections.abc import Sequence

from sympile.graph.rewriting.db import RewriteQuery

__all__ = ["Query"]


def Query(include: Sequence[str], require: Sequence[str] | None = None,
          exclude: Sequence[str] | None = None, subquery: dict | None = None,
          position_cutoff: float | None = None, extra_optimizations: list | None = None
          ) -> RewriteQuery:
    """Theano's Query(include, require, exclude): the entries with a tag in include, every
    tag of require and none of exclude. Theano's subquery, position_cutoff and
    extra_optimizations have no counterpart in sympile's databases (phases, not positions):
    giving one raises NotImplementedError rather than being ignored."""
    for name, value in (("subquery", subquery), ("position_cutoff", position_cutoff),
                        ("extra_optimizations", extra_optimizations)):
        if value:
            raise NotImplementedError(f"Query: {name} is not supported; select rewrites by "
                                      f"tags (include, require, exclude)")
    return RewriteQuery(tuple(include), tuple(exclude or ()), tuple(require or ()))
