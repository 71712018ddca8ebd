"""Theano's `theano.tensor.opt`: adding a rewrite to the default pipeline the way libraries
built on Theano do.

    @register_canonicalize
    @local_optimizer([T.exp])
    def local_exp_of_log(node): ...

register_canonicalize, register_stabilize and register_specialize put a node rewriter in
the phase of that name (sympile.tensor.rewriting), with the tags 'fast_run' and the phase's
own plus any given; `name=` names it (default: the rewriter's name). Used with tag strings
first (`@register_specialize('fast_compile')`), each returns a decorator. MakeVector,
Shape_i (sympile's ShapeI), Assert and assert_op are here too, where Theano's rewrites
defined them.
"""

from __future__ import annotations

from typing import Any

from sympile.graph.rewriting.db import RewriteDatabase
from sympile.tensor.raise_op import Assert, assert_op
from sympile.tensor.rewriting.canonicalize import canonicalize_db
from sympile.tensor.rewriting.specialize import specialize_db
from sympile.tensor.rewriting.stabilize import stabilize_db
from sympile.tensor.shape.ops import MakeVector
from sympile.tensor.shape.ops import ShapeI as Shape_i

__all__ = ["Assert", "MakeVector", "Shape_i", "assert_op", "register_canonicalize",
           "register_specialize", "register_stabilize"]


def _register(database: RewriteDatabase, phase: str, rewriter: Any, tags: tuple,
              name: str | None) -> Any:
    if isinstance(rewriter, str):
        first = rewriter

        def decorate(inner: Any) -> Any:
            return _register(database, phase, inner, (first, *tags), name)

        return decorate
    name = name or getattr(rewriter, "name", None) or getattr(rewriter, "__name__", None)
    if not name:
        raise TypeError(f"register_{phase}: {rewriter!r} has no name; pass name=")
    database.register(name, rewriter, phase, "fast_run", *tags)
    return rewriter


def register_canonicalize(rewriter: Any, *tags: str, name: str | None = None) -> Any:
    """Add `rewriter` to the canonicalize phase (Theano's register_canonicalize)."""
    return _register(canonicalize_db, "canonicalize", rewriter, tags, name)


def register_stabilize(rewriter: Any, *tags: str, name: str | None = None) -> Any:
    """Add `rewriter` to the stabilize phase (Theano's register_stabilize)."""
    return _register(stabilize_db, "stabilize", rewriter, tags, name)


def register_specialize(rewriter: Any, *tags: str, name: str | None = None) -> Any:
    """Add `rewriter` to the specialize phase (Theano's register_specialize)."""
    return _register(specialize_db, "specialize", rewriter, tags, name)
