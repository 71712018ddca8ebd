"""tools/check_doc_links.py, which CI runs on the built documentation: it finds a link to a
missing page and to a missing anchor, and passes links that resolve."""

from __future__ import annotations

import runpy
from pathlib import Path

CHECKER = runpy.run_path(str(Path(__file__).resolve().parent.parent / "tools" /
                             "check_doc_links.py"))


def test_the_link_check_finds_missing_pages_and_anchors(tmp_path):
    (tmp_path / "api").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="api/page.html#here">ok</a> <a href="api/page.html#gone">bad anchor</a>'
        '<a href="missing.html">bad page</a> <a href="https://example.org/x">external</a>'
        '<a href="#top">self</a><h1 id="top">t</h1>')
    (tmp_path / "api" / "page.html").write_text('<p id="here">x</p><a href="../">up</a>')
    broken = CHECKER["broken_links"](tmp_path)
    assert sorted(broken) == [("index.html", "api/page.html#gone"),
                              ("index.html", "missing.html")]
    assert CHECKER["main"]([str(tmp_path)]) == 1
    (tmp_path / "index.html").write_text('<a href="api/page.html#here">ok</a>')
    assert CHECKER["main"]([str(tmp_path)]) == 0
    # viewcode's source pages: the page a back-link names is checked, not its anchor.
    (tmp_path / "_modules").mkdir()
    (tmp_path / "_modules" / "m.html").write_text(
        '<a href="../api/page.html#other_pages_anchor">docs</a><a href="../gone.html">x</a>')
    assert CHECKER["broken_links"](tmp_path) == [("_modules/m.html", "../gone.html")]
