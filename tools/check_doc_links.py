"""Check the links between the pages of the built documentation: every relative href of every
HTML page must name a file of the build, and its #fragment an id or name in that file.

    python tools/check_doc_links.py build/docs

Exits 1 listing each broken link (page, link). External links (http:, https:, mailto:) are
not fetched: CI has no network. The fragments of the back-links on the source pages that
sphinx.ext.viewcode writes (_modules/) are not checked: for an object two API pages
document (re-exported by both sympile.tensor.nlinalg and .slinalg), viewcode names one
page with the other's anchor, a limitation of viewcode; the page they name is checked.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag, attributes):
        values = dict(attributes)
        for name in ("id", "name"):
            if values.get(name):
                self.anchors.add(values[name])
        if tag == "a" and values.get("href"):
            self.links.append(values["href"])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def page_name(path: Path, root: Path) -> str:
    return path.relative_to(root.resolve()).as_posix()


def broken_links(root: Path) -> list[tuple[str, str]]:
    """(page, link) for each relative link under `root` whose file or fragment is missing."""
    pages = {path.resolve(): _parse(path) for path in root.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((page_name(path, root), link))
            elif parts.fragment and target.suffix == ".html" \
                    and not page_name(path, root).startswith("_modules/"):
                anchors = pages[target].anchors if target in pages else _parse(target).anchors
                if unquote(parts.fragment) not in anchors:
                    broken.append((page_name(path, root), link))
    return broken


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1 or not Path(arguments[0]).is_dir():
        print(__doc__)
        return 2
    broken = broken_links(Path(arguments[0]))
    for page, link in broken:
        print(f"{page}: broken link {link}")
    print(f"{len(broken)} broken links" if broken else "no broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
