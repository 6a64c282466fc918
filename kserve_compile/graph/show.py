"""``kserve-compile graph show``: an InferenceGraph as Mermaid text or as an SVG picture.

Both are pure functions of the parsed graph (deterministic: nodes in sorted name order from ``root``, steps in
their order). Mermaid is a standard text format that GitHub, GitLab and most documentation tools draw; the SVG is
laid out here (no Graphviz binary is needed, and none is pip-installable): one column per depth from ``root``,
each router node a box listing its steps, each step an arrow to the node or service it calls.

Drawn: router type, step names, ``weight`` (Splitter), ``condition`` (Switch/Sequence), ``data: $response``,
``mapPredictionsToInstances``, and the dependency (``Hard`` a solid arrow, ``Soft``/unset dashed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from xml.sax.saxutils import escape

from .graph_types import GraphStep, InferenceGraph
from .validation import ROOT_NODE

# --- the graph as drawable parts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edge:
    source: str  # node id
    target: str  # node id
    label: str
    hard: bool


@dataclass(frozen=True)
class Box:
    id: str
    title: str
    lines: tuple[str, ...]
    kind: str  # "router" or "service"


def step_label(index: int, step: GraphStep) -> str:
    parts = [step.name or f"step {index}"]
    if step.weight is not None:
        parts.append(f"weight {step.weight}")
    if step.condition:
        parts.append(f"if {step.condition}")
    if step.data:
        parts.append(f"data {step.data}")
    if step.map_predictions_to_instances:
        parts.append("predictions→instances")
    parts.append(step.dependency or "Soft")
    return ", ".join(parts)


def step_target(step: GraphStep) -> tuple[str, str]:
    """(id, title) of what a step calls: a node, an InferenceService or a URL."""
    if step.node_name:
        return f"node:{step.node_name}", step.node_name
    if step.service_name:
        return f"isvc:{step.service_name}", f"InferenceService {step.service_name}"
    return f"url:{step.service_url}", step.service_url


def node_order(graph: InferenceGraph) -> list[str]:
    """``root`` first, then the other nodes breadth-first by reference, then unreferenced nodes by name."""
    nodes = graph.spec.nodes or {}
    order: list[str] = []
    queue = [ROOT_NODE] if ROOT_NODE in nodes else []
    while queue:
        name = queue.pop(0)
        if name in order or name not in nodes:
            continue
        order.append(name)
        queue += [s.node_name for s in nodes[name].steps or [] if s.node_name]
    return order + sorted(n for n in nodes if n not in order)


def parts(graph: InferenceGraph) -> tuple[list[Box], list[Edge]]:
    nodes = graph.spec.nodes or {}
    boxes: dict[str, Box] = {}
    edges: list[Edge] = []
    for name in node_order(graph):
        node = nodes[name]
        steps = node.steps or []
        boxes[f"node:{name}"] = Box(
            f"node:{name}",
            f"{name} ({node.router_type})",
            tuple(f"{i}: {step_label(i, s)}" for i, s in enumerate(steps)),
            "router",
        )
        for i, step in enumerate(steps):
            target, title = step_target(step)
            if target not in boxes and not step.node_name:
                boxes[target] = Box(target, title, (), "service")
            edges.append(Edge(f"node:{name}", target, step_label(i, step), step.dependency == "Hard"))
    return list(boxes.values()), edges


# --- Mermaid ------------------------------------------------------------------------------------------------------


def to_mermaid(graph: InferenceGraph) -> str:
    boxes, edges = parts(graph)
    ids = {box.id: f"n{i}" for i, box in enumerate(boxes)}
    lines = [f"%% InferenceGraph {graph.namespace}/{graph.metadata.name}", "flowchart LR"]
    for box in boxes:
        text = _mermaid_text(box.title)
        lines.append(f'  {ids[box.id]}{{{{"{text}"}}}}' if box.kind == "router" else f'  {ids[box.id]}["{text}"]')
    for edge in edges:
        arrow = "==>" if edge.hard else "-.->"
        target = ids.get(edge.target, ids.get(edge.target, ""))
        if not target:  # a nodeName the graph does not define (validation reports it first)
            continue
        lines.append(f'  {ids[edge.source]} {arrow}|"{_mermaid_text(edge.label)}"| {target}')
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Mermaid's quoted label: ``"`` and the characters it parses as markup as HTML entities."""
    return "".join(_MERMAID_ENTITIES.get(c, c) for c in text)


_MERMAID_ENTITIES = {'"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;", "|": "#124;", "{": "#123;", "}": "#125;"}


# --- SVG ----------------------------------------------------------------------------------------------------------

CHAR_W, LINE_H, PAD, COL_GAP, ROW_GAP = 7.2, 18, 10, 220, 30


@dataclass(frozen=True)
class _Placed:
    box: Box
    x: float
    y: float
    w: float
    h: float


def _depths(boxes: list[Box], edges: list[Edge]) -> dict[str, int]:
    depth = {boxes[0].id: 0} if boxes else {}
    changed = True
    while changed:  # longest path from root, bounded by the number of boxes (cycles do not grow it further)
        changed = False
        for edge in edges:
            if edge.source in depth and edge.target in {b.id for b in boxes}:
                want = depth[edge.source] + 1
                if depth.get(edge.target, -1) < want <= len(boxes):
                    depth[edge.target] = want
                    changed = True
    return {b.id: depth.get(b.id, 0) for b in boxes}


def _layout(boxes: list[Box], edges: list[Edge]) -> list[_Placed]:
    depth = _depths(boxes, edges)
    columns: dict[int, list[Box]] = {}
    for box in boxes:
        columns.setdefault(depth[box.id], []).append(box)
    widths = {d: max(_box_size(b)[0] for b in col) for d, col in columns.items()}
    placed: list[_Placed] = []
    x: float = PAD
    for d in sorted(columns):
        y: float = PAD
        for box in columns[d]:
            h = _box_size(box)[1]
            placed.append(_Placed(box, x, y, widths[d], h))
            y += h + ROW_GAP
        x += widths[d] + COL_GAP
    return placed


def _box_size(box: Box) -> tuple[float, float]:
    longest = max([len(box.title)] + [len(line) for line in box.lines])
    return longest * CHAR_W + 2 * PAD, (1 + len(box.lines)) * LINE_H + 2 * PAD - (4 if box.lines else 0)


def to_svg(graph: InferenceGraph) -> str:
    boxes, edges = parts(graph)
    placed = {p.box.id: p for p in _layout(boxes, edges)}
    width = max((p.x + p.w for p in placed.values()), default=0) + PAD
    height = max((p.y + p.h for p in placed.values()), default=0) + PAD
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">'
        ),
        f"<title>InferenceGraph {escape(graph.namespace)}/{escape(graph.metadata.name)}</title>",
        (
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>'
        ),
    ]
    for p in placed.values():
        out += _svg_box(p)
    for i, edge in enumerate(edges):
        if edge.target in placed:
            out += _svg_edge(placed[edge.source], placed[edge.target], edge, i)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_box(p: _Placed) -> list[str]:
    fill = "#e8f0fe" if p.box.kind == "router" else "#f1f3f4"
    out = [
        f'<g class="{p.box.kind}">',
        f'<rect x="{p.x:.1f}" y="{p.y:.1f}" width="{p.w:.1f}" height="{p.h:.1f}" rx="6" fill="{fill}" stroke="#333"/>',
        f'<text x="{p.x + PAD:.1f}" y="{p.y + PAD + 12:.1f}" font-weight="bold">{escape(p.box.title)}</text>',
    ]
    for i, line in enumerate(p.box.lines):
        out.append(f'<text x="{p.x + PAD:.1f}" y="{p.y + PAD + 12 + (i + 1) * LINE_H:.1f}">{escape(line)}</text>')
    out.append("</g>")
    return out


def _svg_edge(a: _Placed, b: _Placed, edge: Edge, index: int) -> list[str]:
    x1, y1 = a.x + a.w, a.y + a.h / 2
    x2, y2 = b.x, b.y + b.h / 2
    if b.x <= a.x:  # back or same-column edge: leave from the bottom, enter at the bottom
        x1, y1, x2, y2 = a.x + a.w / 2, a.y + a.h, b.x + b.w / 2, b.y + b.h
    dash = "" if edge.hard else ' stroke-dasharray="6 4"'
    width = 2 if edge.hard else 1.2
    label = escape(edge.label.split(", ")[0] + (", Hard" if edge.hard else ""))
    return [
        f'<g class="edge {"hard" if edge.hard else "soft"}">',
        (
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#333" stroke-width="{width}"{dash} '
            'marker-end="url(#arrow)"/>'
        ),
        (
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 4 - (index % 2) * 12:.1f}" text-anchor="middle" '
            f'font-size="10">{label}</text>'
        ),
        "</g>",
    ]


FORMATS: dict[str, Callable[[InferenceGraph], str]] = {"mermaid": to_mermaid, "svg": to_svg}
