"""d3viz: a graph as one self-contained, interactive HTML page (Theano's theano.d3viz).

    from sympile.d3viz import d3viz
    d3viz(f, "graph.html")        # open it in a browser: drag to pan, wheel to zoom

The page needs nothing else: no graphviz, no JavaScript library, no network. The graph is
laid out here in layers (each node one layer below the deepest node it reads), ordered
within a layer to shorten edges, and drawn as SVG with pydotprint's shapes and colours;
hovering a node shows its op or type.
"""

from __future__ import annotations

import html
from typing import Any

from sympile.printing import NODE_COLOURS, GraphPicture

__all__ = ["d3viz", "layout"]

_LAYER_HEIGHT = 90
_GAP = 30
_CHAR_WIDTH = 7.2
_BOX_HEIGHT = 34


def layout(picture: GraphPicture) -> dict[str, tuple[float, float, float]]:
    """(x centre, y centre, width) of each node of `picture`."""
    parents: dict[str, list[str]] = {node: [] for node in picture.nodes}
    for source, target, _ in picture.edges:
        parents[target].append(source)
    layers: dict[str, int] = {}

    def layer_of(node: str) -> int:
        stack = [node]
        while stack:
            current = stack[-1]
            pending = [p for p in parents[current] if p not in layers]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            layers[current] = 1 + max((layers[p] for p in parents[current]), default=-1)
        return layers[node]

    rows: dict[int, list[str]] = {}
    for node in picture.nodes:
        rows.setdefault(layer_of(node), []).append(node)
    widths = {node: max(60.0, _CHAR_WIDTH * len(label) + 24)
              for node, (label, _, _) in picture.nodes.items()}
    x: dict[str, float] = {}

    def place(row: list[str]) -> None:
        position = 0.0
        for node in row:
            x[node] = position + widths[node] / 2
            position += widths[node] + _GAP

    for depth in sorted(rows):
        row = rows[depth]
        if depth:
            # Barycentre ordering: each node under the mean position of what it reads.
            row.sort(key=lambda node: sum(x[p] for p in parents[node]) / len(parents[node])
                     if parents[node] else 0.0)
        place(row)
    total = max(sum(widths[n] for n in row) + _GAP * (len(row) - 1) for row in rows.values())
    positions = {}
    for depth, row in rows.items():
        span = sum(widths[n] for n in row) + _GAP * (len(row) - 1)
        shift = (total - span) / 2
        for node in row:
            positions[node] = (x[node] + shift, depth * _LAYER_HEIGHT + _BOX_HEIGHT,
                               widths[node])
    return positions


def _svg(picture: GraphPicture) -> str:
    positions = layout(picture)
    width = max(x + w / 2 for x, _, w in positions.values()) + _GAP
    height = max(y for _, y, _ in positions.values()) + _BOX_HEIGHT * 1.5
    parts = [f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="{-_GAP / 2} 0 {width} {height}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>']
    half = _BOX_HEIGHT / 2
    for source, target, label in picture.edges:
        x1, y1, _ = positions[source]
        x2, y2, _ = positions[target]
        middle = (y1 + y2) / 2
        parts.append(f'<path class="edge" d="M {x1:.1f} {y1 + half:.1f} C {x1:.1f} '
                     f'{middle:.1f}, {x2:.1f} {middle:.1f}, {x2:.1f} {y2 - half:.1f}" '
                     f'marker-end="url(#arrow)"><title>{html.escape(label)}</title></path>')
    for node, (label, kind, details) in picture.nodes.items():
        x, y, w = positions[node]
        colour = NODE_COLOURS[kind]
        shape = (f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{w / 2:.1f}" ry="{half:.1f}" '
                 f'fill="{colour}"/>' if kind == "apply" else
                 f'<rect x="{x - w / 2:.1f}" y="{y - half:.1f}" width="{w:.1f}" '
                 f'height="{_BOX_HEIGHT}" rx="4" fill="{colour}"/>')
        parts.append(f'<g class="node {kind}"><title>{html.escape(details)}</title>{shape}'
                     f'<text x="{x:.1f}" y="{y + 4:.1f}">{html.escape(label)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ margin: 0; font-family: sans-serif; }}
#graph {{ width: 100vw; height: 100vh; cursor: grab; }}
.node text {{ font-size: 12px; text-anchor: middle; pointer-events: none; }}
.node ellipse, .node rect {{ stroke: #333; }}
.node:hover ellipse, .node:hover rect {{ stroke: red; stroke-width: 2; }}
.edge {{ fill: none; stroke: #555; }}
</style></head>
<body>
{svg}
<script>
// Pan by dragging, zoom with the wheel, around the pointer.
const svg = document.getElementById("graph");
let box = svg.viewBox.baseVal, drag = null;
svg.addEventListener("wheel", e => {{
  e.preventDefault();
  const f = e.deltaY > 0 ? 1.15 : 1 / 1.15, r = svg.getBoundingClientRect();
  const px = box.x + (e.clientX - r.left) / r.width * box.width;
  const py = box.y + (e.clientY - r.top) / r.height * box.height;
  box.x = px - (px - box.x) * f; box.y = py - (py - box.y) * f;
  box.width *= f; box.height *= f;
}});
svg.addEventListener("mousedown", e => {{ drag = [e.clientX, e.clientY]; }});
window.addEventListener("mouseup", () => {{ drag = null; }});
window.addEventListener("mousemove", e => {{
  if (!drag) return;
  const r = svg.getBoundingClientRect();
  box.x -= (e.clientX - drag[0]) / r.width * box.width;
  box.y -= (e.clientY - drag[1]) / r.height * box.height;
  drag = [e.clientX, e.clientY];
}});
</script>
</body></html>
"""


def d3viz(fct: Any, outfile: str, title: str = "sympile graph",
          max_label_size: int = 70) -> None:
    """Write the graph of `fct` (a compiled function, a Variable or a list of them) to
    `outfile` as an interactive HTML page."""
    picture = GraphPicture(fct, max_label_size)
    with open(outfile, "w", encoding="utf-8") as stream:
        stream.write(_PAGE.format(title=html.escape(title), svg=_svg(picture)))
