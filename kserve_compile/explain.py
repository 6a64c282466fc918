"""``kserve-compile explain``: the rendered objects with the origin of every value.

Renders with :func:`provenance.tracing` on, then reads each leaf's origin: as trailing comments on the rendered
YAML (the same bytes ``render`` prints, plus comments), as JSON (field path → origin chain), or for one field with
its whole chain ("the runtime's default, then overridden by the isvc's field").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .emit import dump_yaml
from .emit.order import object_ref
from .errors import UsageError
from .inputs import read_inputs
from .parse import parse_text, split_path
from .pipeline import compile_documents
from .provenance import Origin, Path, origin_of, origins, path_text, tracing

UNTRACED = "not traced (booleans and nulls cannot carry an origin)"


@dataclass(frozen=True)
class FieldOrigin:
    path: str
    value: Any
    chain: tuple[Origin, ...]  # most recent first; empty when the value is not traced


def explain_paths(paths: Sequence[str], config_file: str | None = None) -> list[dict[str, Any]]:
    """The rendered objects, each scalar carrying its origin."""
    with tracing():
        return compile_documents(read_inputs(paths, config_file)).objects


def select(objects: Sequence[dict[str, Any]], wanted: str | None) -> list[dict[str, Any]]:
    """Objects named ``Kind/name`` or ``Kind/namespace/name`` (all when ``wanted`` is None)."""
    if wanted is None:
        return list(objects)
    kind, _, rest = wanted.partition("/")
    namespace, _, name = rest.rpartition("/")
    found = [
        o for o in objects
        if o.get("kind") == kind and o["metadata"].get("name") == name
        and (not namespace or o["metadata"].get("namespace") == namespace)
    ]
    if not found:
        refs = ", ".join(sorted({f"{o.get('kind')}/{o['metadata'].get('name')}" for o in objects}))
        raise UsageError(f"--object {wanted}: no such rendered object (rendered: {refs})")
    return found


def field_origins(obj: dict[str, Any]) -> list[FieldOrigin]:
    out = []
    for path, value in origins(obj):
        origin = origin_of(value)
        out.append(FieldOrigin(path_text(path), _plain(value), tuple(origin.chain()) if origin else ()))
    return out


def field_origin(obj: dict[str, Any], field: str) -> FieldOrigin:
    path = split_path(field)
    value: Any = obj
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            raise UsageError(f"--field {field}: {object_ref(obj)} has no such field") from None
    if isinstance(value, (dict, list)):
        raise UsageError(f"--field {field}: {object_ref(obj)} holds a {'mapping' if isinstance(value, dict) else 'list'} there; name one value")
    origin = origin_of(value)
    return FieldOrigin(path_text(path), _plain(value), tuple(origin.chain()) if origin else ())


def as_json(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"object": object_ref(o), "fields": {f.path: [c.as_dict() for c in f.chain] for f in field_origins(o)}}
        for o in objects
    ]


def annotated_yaml(objects: Sequence[dict[str, Any]]) -> str:
    """The YAML ``render`` prints for ``objects``, each scalar line ending in ``# <origin>``."""
    plain = [_plain(o) for o in objects]
    text = dump_yaml(plain)
    lines = text.split("\n")
    for doc, obj in zip(parse_text(text, "<explain>"), objects):
        for line, path in _leaf_lines(doc.positions, obj).items():
            origin = origin_of(_at(obj, path))
            lines[line - 1] += f"  # {origin.describe() if origin else UNTRACED}"
    return "\n".join(lines)


def describe_field(obj: dict[str, Any], found: FieldOrigin) -> str:
    head = f"{object_ref(obj)} {found.path} = {orjson.dumps(found.value).decode()}"
    if not found.chain:
        return f"{head}\n  {UNTRACED}\n"
    steps = [f"  set by      {found.chain[0].describe()}"]
    steps += [f"  replacing   {o.describe()}" for o in found.chain[1:]]
    return head + "\n" + "\n".join(steps) + "\n"


def _leaf_lines(positions: dict[Path, tuple[int, int]], obj: Any) -> dict[int, Path]:
    """Line → the path of the scalar that line shows (the deepest node starting on it)."""
    by_line: dict[int, Path] = {}
    for path, (line, _col) in positions.items():
        if path and (line not in by_line or len(path) > len(by_line[line])):
            by_line[line] = path
    return {line: path for line, path in by_line.items() if not isinstance(_at(obj, path), (dict, list))}


def _at(obj: Any, path: Path) -> Any:
    for part in path:
        obj = obj[part]
    return obj


def _plain(data: Any) -> Any:
    return orjson.loads(orjson.dumps(data))
