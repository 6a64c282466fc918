"""``kserve-compile explain``: the rendered objects with the origin of every value.

Reads each leaf's origin of objects rendered with tracing on (the driver's ``CompileOptions(trace=True)``): as trailing comments on the rendered
YAML (the same bytes ``render`` prints, plus comments), as JSON (field path → origin chain), or for one field with
its whole chain ("the runtime's default, then overridden by the isvc's field").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import UsageError
from ..kube.fields import split_path
from ..provenance import Origin, origin_of, origins, path_text
from .order import object_ref
from .yaml_text import dump_yaml, key_line_count, scalar_line_count

UNTRACED = "not traced (booleans and nulls cannot carry an origin)"


@dataclass(frozen=True)
class FieldOrigin:
    path: str
    value: Any
    chain: tuple[Origin, ...]  # most recent first; empty when the value is not traced


def select(objects: Sequence[dict[str, Any]], wanted: str | None) -> list[dict[str, Any]]:
    """Objects named ``Kind/name`` or ``Kind/namespace/name`` (all when ``wanted`` is None)."""
    if wanted is None:
        return list(objects)
    kind, _, rest = wanted.partition("/")
    namespace, _, name = rest.rpartition("/")
    found = [
        o
        for o in objects
        if o.get("kind") == kind
        and o["metadata"].get("name") == name
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
        raise UsageError(
            f"--field {field}: {object_ref(obj)} holds a {'mapping' if isinstance(value, dict) else 'list'} there; name one value"
        )
    origin = origin_of(value)
    return FieldOrigin(path_text(path), _plain(value), tuple(origin.chain()) if origin else ())


def as_json(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"object": object_ref(o), "fields": {f.path: [c.as_dict() for c in f.chain] for f in field_origins(o)}}
        for o in objects
    ]


def annotated_yaml(objects: Sequence[dict[str, Any]]) -> str:
    """The YAML ``render`` prints for ``objects``, each scalar line ending in ``# <origin>``."""
    lines = dump_yaml([_plain(o) for o in objects]).split("\n")
    shown: list[Any] = []
    for obj in objects:
        shown.append(_NO_LEAF)  # the "---" line
        _mapping_lines(obj, shown)
    for i, value in enumerate(shown):
        if value is not _NO_LEAF:
            origin = origin_of(value)
            lines[i] += f"  # {origin.describe() if origin else UNTRACED}"
    return "\n".join(lines)


_NO_LEAF = object()


def _mapping_lines(d: dict[str, Any], shown: list[Any]) -> None:
    """The leaf each line of the emitter's output shows, in the emitter's order (sorted keys, one line per entry)."""
    if not d:
        shown.append(_NO_LEAF)  # "{}"
    for key in sorted(d):
        shown.extend([_NO_LEAF] * (key_line_count(key) - 1))
        _value_lines(d[key], shown)


def _value_lines(value: Any, shown: list[Any]) -> None:
    if isinstance(value, dict) and value:
        shown.append(_NO_LEAF)  # "key:"
        _mapping_lines(value, shown)
    elif isinstance(value, list) and value:
        shown.append(_NO_LEAF)
        _sequence_lines(value, shown)
    else:
        _leaf_lines(value, shown)


def _sequence_lines(items: list[Any], shown: list[Any]) -> None:
    for item in items:
        if isinstance(item, dict) and item:
            _mapping_lines(item, shown)  # its first entry shares the dash line
        elif isinstance(item, list) and item:
            _sequence_lines(item, shown)
        else:
            _leaf_lines(item, shown)


def _leaf_lines(value: Any, shown: list[Any]) -> None:
    if isinstance(value, (dict, list)):
        shown.append(_NO_LEAF)  # "{}" or "[]"
        return
    shown.append(value)
    shown.extend([_NO_LEAF] * (scalar_line_count(value) - 1))


def describe_field(obj: dict[str, Any], found: FieldOrigin) -> str:
    head = f"{object_ref(obj)} {found.path} = {orjson.dumps(found.value).decode()}"
    if not found.chain:
        return f"{head}\n  {UNTRACED}\n"
    steps = [f"  set by      {found.chain[0].describe()}"]
    steps += [f"  replacing   {o.describe()}" for o in found.chain[1:]]
    return head + "\n" + "\n".join(steps) + "\n"


def _plain(data: Any) -> Any:
    return orjson.loads(orjson.dumps(data))
