"""The enum fields of KServe's CRDs (``scaleMetric``, ``logger.mode``, ``routerType``, ...), checked on every KServe
input by ``render`` as ``validate``'s schema check does — the API server rejects these values before KServe's
webhooks see them. The allowed values are read from the authored CRD schemas in ``kserve_compile/schemas/``
(one source of truth; each names the upstream CRD it follows), following the file's own ``$ref``s and inlined
structs; only
``json``/``orjson`` are used, so ``render`` stays free of ``jsonschema``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

import orjson

from ..errors import Problem
from ..inputs.parse import Document
from .schema import GVK_KEY, INLINE_KEY, SCHEMA_DIR

Pattern = tuple[str, ...]  # field names, "[]" for a list item, "{}" for any map value


@cache
def _schema_files() -> dict[tuple[str, str], str]:
    index = {}
    for path in sorted((SCHEMA_DIR / "serving.kserve.io").glob("*.json")):
        doc = orjson.loads(path.read_bytes())
        for gvk in doc.get(GVK_KEY, []):
            index[(f"{gvk['group']}/{gvk['version']}", gvk["kind"])] = str(path)
    return index


@cache
def enum_fields(api_version: str, kind: str) -> tuple[tuple[Pattern, tuple[Any, ...]], ...]:
    """(field pattern, allowed values) for every enum of the kind's schema."""
    path = _schema_files().get((api_version, kind))
    if path is None:
        return ()
    with open(path, "rb") as fh:
        schema = orjson.loads(fh.read())
    return tuple(_enums(schema, schema.get("$defs", {}), (), frozenset()))


def _enums(
    node: Any, defs: dict[str, Any], at: Pattern, seen: frozenset[str]
) -> Iterator[tuple[Pattern, tuple[Any, ...]]]:
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in seen:
        yield from _enums(defs.get(ref.removeprefix("#/$defs/")), defs, at, seen | {ref})
    for entry in node.get(INLINE_KEY) or []:  # Go's inlined structs: their fields are this object's
        if isinstance(entry, dict) and isinstance(entry.get("local"), str):
            yield from _enums(defs.get(entry["local"]), defs, at, seen | {entry["local"]})
    if isinstance(node.get("enum"), list):
        yield at, tuple(node["enum"])
    for key, sub in (node.get("properties") or {}).items():
        yield from _enums(sub, defs, (*at, key), seen)
    yield from _enums(node.get("items"), defs, (*at, "[]"), seen)
    yield from _enums(node.get("additionalProperties"), defs, (*at, "{}"), seen)
    for combinator in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(combinator) or []:
            yield from _enums(sub, defs, at, seen)


def _values(data: Any, pattern: Pattern, path: str) -> Iterator[tuple[str, Any]]:
    if not pattern:
        yield path, data
        return
    head, rest = pattern[0], pattern[1:]
    if head == "[]" and isinstance(data, list):
        for i, item in enumerate(data):
            yield from _values(item, rest, f"{path}[{i}]")
    elif head == "{}" and isinstance(data, dict):
        for key, item in data.items():
            yield from _values(item, rest, f"{path}.{key}" if path else str(key))
    elif isinstance(data, dict) and head in data:
        yield from _values(data[head], rest, f"{path}.{head}" if path else head)


def check_enums(doc: Document) -> list[Problem]:
    """A problem for each enum field of a KServe input holding a value its CRD does not allow."""
    from ..errors import enum_message

    out = []
    for pattern, allowed in enum_fields(doc.api_version, doc.kind):
        for path, value in _values(doc.data, pattern, ""):
            if value is not None and value not in allowed:
                out.append(doc.problem(enum_message(value, allowed), path))
    return out
