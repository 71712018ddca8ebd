"""The rewrite pipeline: the phases PIPELINE declares, the entries registered into them, and
the table of docs/architecture.md, which must show the same pipeline."""

from pathlib import Path

import pytest

import sympile  # noqa: F401 - imports every rule module, so every entry is registered
from sympile.graph.rewriting.basic import GraphRewriter
from sympile.graph.rewriting.db import Phase, RewriteDatabase
from sympile.tensor.rewriting.basic import PIPELINE, MergeRewriter, rewrite_db

ARCHITECTURE = Path(__file__).parents[3] / "docs" / "architecture.md"


def _documented_pipeline() -> list[tuple[str, list[str], str]]:
    lines = ARCHITECTURE.read_text().splitlines()
    start = lines.index("| phase | entries | what it does |") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        phase, entries, purpose = (cell.strip() for cell in line.strip("|").split(" | "))
        rows.append((phase, entries.split(", "), purpose))
    return rows


def test_the_architecture_page_shows_the_pipeline():
    print(rewrite_db.describe())
    actual = [(phase.name, names, phase.purpose) for phase, names in rewrite_db.pipeline()]
    assert actual == _documented_pipeline()


def test_every_entry_belongs_to_a_declared_phase_in_its_order():
    """No built-in entry is placed by a bare number, and every phase has an entry."""
    pipeline = rewrite_db.pipeline()
    assert [phase for phase, _ in pipeline] == list(PIPELINE)
    positions = [phase.position for phase in PIPELINE]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_a_phase_orders_its_entries_by_registration():
    ran = []

    class Log(GraphRewriter):
        def __init__(self, name):
            self.name = name

        def apply(self, fgraph):
            ran.append(self.name)

    db = RewriteDatabase("probe", (Phase("late", 2, "second"), Phase("early", 1, "first")))
    db.register("b", Log("b"), "on", phase="late")
    db.register("a", Log("a"), "on", phase="early")
    db.register("c", Log("c"), "on", phase="late")
    db.register("between", Log("between"), "on", position=1.5)
    assert [(phase and phase.name, names) for phase, names in db.pipeline()] == [
        ("early", ["a"]), (None, ["between"]), ("late", ["b", "c"])]
    db.query(["on"]).apply(None)
    assert ran == ["a", "between", "b", "c"]


def test_registering_into_an_unknown_phase_names_the_phases():
    db = RewriteDatabase("probe", (Phase("early", 1, "first"),))
    with pytest.raises(ValueError, match="'stabilise'; expected one of early"):
        db.register("x", MergeRewriter("x"), phase="stabilise")
    with pytest.raises(TypeError, match="give one of them"):
        db.register("x", MergeRewriter("x"), phase="early", position=3)
