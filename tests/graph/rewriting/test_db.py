"""Tests of sympile/graph/rewriting/db.py: registration, queries by tag and by name."""

from __future__ import annotations

import pytest

from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    node_rewriter,
)
from sympile.graph.rewriting.db import EquilibriumDatabase, RewriteDatabase, RewriteQuery
from tests.graph.rewriting.test_basic import combine_scales, op_names, remove_scale_by_one
from tests.graph.test_basic import MyType, Scale


class Log(GraphRewriter):
    """Appends its name to `ran` and changes nothing."""

    def __init__(self, name, ran):
        self.name = name
        self.ran = ran

    def apply(self, fgraph):
        self.ran.append(self.name)
        return False


def small_fgraph() -> FunctionGraph:
    x = MyType()("x")
    return FunctionGraph([x], [Scale(2.0)(Scale(1.0)(x))])


@pytest.fixture
def database():
    ran: list[str] = []
    db = RewriteDatabase("test_db")
    # Registered out of position order: queries follow positions.
    db.register("late", Log("late", ran), "fast_run", position=10)
    db.register("early", Log("early", ran), "fast_run", "fast_compile", position=1)
    db.register("middle", Log("middle", ran), "fast_run", "unsafe", position=5)
    db.register("also_middle", Log("also_middle", ran), "fast_run", position=5)
    db.register("off", Log("off", ran), "experimental", position=0)
    return db, ran


def run_query(db, ran, **query):
    ran.clear()
    rewriter = db.query(**query)
    assert isinstance(rewriter, SequentialGraphRewriter)
    rewriter.apply(small_fgraph())
    return list(ran)


def test_register_and_look_up(database):
    db, _ = database
    assert db.names() == ["off", "early", "middle", "also_middle", "late"]
    assert "middle" in db and "nope" not in db
    assert db["early"].name == "early"
    assert db.tags_of("middle") == {"fast_run", "unsafe"}
    with pytest.raises(KeyError, match="no rewriter named 'nope'"):
        db["nope"]
    with pytest.raises(KeyError, match="no rewriter named 'nope'"):
        db.tags_of("nope")
    with pytest.raises(ValueError, match="'early' is already registered"):
        db.register("early", Log("again", []))
    with pytest.raises(TypeError, match="expected a NodeRewriter, a GraphRewriter"):
        db.register("bad", print)
    with pytest.raises(TypeError, match="non-empty string"):
        db.register("", Log("x", []))
    with pytest.raises(TypeError, match="tags must be strings"):
        db.register("tagged", Log("tagged", []), 3)
    # Without a position, an entry goes after every entry so far.
    db.register("last", Log("last", []), "fast_run")
    assert db.names()[-1] == "last"
    assert "test_db" in repr(db)


def test_query_include_exclude_require(database):
    db, ran = database
    assert run_query(db, ran, include=["fast_run"]) == ["early", "middle", "also_middle",
                                                        "late"]
    assert run_query(db, ran, include=["fast_compile"]) == ["early"]
    assert run_query(db, ran, include=["fast_run"], exclude=["unsafe"]) == \
        ["early", "also_middle", "late"]
    assert run_query(db, ran, include=["fast_run"], require=["unsafe"]) == ["middle"]
    assert run_query(db, ran, include=["fast_run", "experimental"]) == \
        ["off", "early", "middle", "also_middle", "late"]
    assert run_query(db, ran) == []


def test_query_by_name(database):
    db, ran = database
    assert run_query(db, ran, include=["fast_run"], exclude=["late", "early"]) == \
        ["middle", "also_middle"]
    assert run_query(db, ran, include=["fast_compile", "off"]) == ["off", "early"]
    assert run_query(db, ran, include=["fast_run"], require=["also_middle"]) == ["also_middle"]


def test_node_rewriters_run_as_walks_and_nested_databases_are_queried():
    inner = EquilibriumDatabase("inner", max_use_ratio=4)
    inner.register("combine_scales", combine_scales, "fast_run")
    inner.register("remove_scale_by_one", remove_scale_by_one, "fast_run", "cleanup")
    outer = RewriteDatabase("outer")
    outer.register("inner", inner, "fast_run", position=1)
    outer.register("walk", remove_scale_by_one, "fast_run", "walk", position=2)

    walk = outer.query(include=["walk"]).rewriters[0]
    assert isinstance(walk, WalkingGraphRewriter) and str(walk) == "walk"
    assert walk.rewriters == [remove_scale_by_one]

    equilibrium = outer.query(include=["fast_run"], exclude=["cleanup"]).rewriters[0]
    assert isinstance(equilibrium, EquilibriumGraphRewriter)
    assert equilibrium.node_rewriters == [combine_scales] and equilibrium.max_use_ratio == 4
    fgraph = small_fgraph()
    outer.query(include=["fast_run"], exclude=["cleanup"]).apply(fgraph)
    assert op_names(fgraph) == ["Scale{factor=2.0}"]
    # Excluding the nested database by name drops it whole.
    assert [str(r) for r in outer.query(include=["fast_run"], exclude=["inner"]).rewriters] \
        == ["walk"]


def test_rewrite_query():
    query = RewriteQuery(include="fast_run")
    assert query.include == ("fast_run",)
    assert query.excluding("a").including("b").requiring("c") == \
        RewriteQuery(("fast_run", "b"), ("a",), ("c",))
    assert query.selects("x", frozenset({"fast_run"}))
    assert query.selects("fast_run", frozenset())
    assert not query.excluding("x").selects("x", frozenset({"fast_run"}))
    with pytest.raises(TypeError, match="include tags must be strings"):
        RewriteQuery(include=[1])


def test_query_results_rewrite_like_their_rewriters():
    @node_rewriter([Scale], name="double_factor")
    def double_factor(fgraph, node):
        """Scale(a)(x) -> Scale(2a)(x) while a < 4"""
        if node.op.factor >= 4:
            return None
        return [Scale(node.op.factor * 2)(node.inputs[0])]

    db = EquilibriumDatabase("db")
    db.register("double_factor", double_factor, "fast_run")
    fgraph = small_fgraph()
    db.query(include=["fast_run"]).apply(fgraph)
    assert op_names(fgraph) == ["Scale{factor=4.0}", "Scale{factor=4.0}"]
