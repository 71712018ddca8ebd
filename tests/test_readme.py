"""The README's and the documentation's code runs as written: each page's ```python blocks in
order, in one namespace per page, in a temporary working directory (a sketch that is not
meant to run is fenced ```py instead)."""

import re
from pathlib import Path

import pytest

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = pytest.mark.smoke

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))


def run_python_blocks(page: Path) -> dict:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)
    return namespace


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_python_blocks(README)["count"].get_value() == 11


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_documentation_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_python_blocks(page)

