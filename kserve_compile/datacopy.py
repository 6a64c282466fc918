"""Fast deep copies of JSON-shaped data (dicts, lists, str, int, float, bool, None) — the only shape objects have here.

``copy.deepcopy`` keeps a memo for cycles and arbitrary types and costs ~8× an orjson round trip on a pod spec;
rendering copies pod specs many times, so this matters for 1,000-isvc repositories. The C copy (``_datacopy_c``)
builds only the containers, sharing the strings and numbers, and is 2–4× faster again.
"""

from __future__ import annotations

from typing import Any, TypeVar

import orjson

from .provenance import is_tracing

try:
    from . import _datacopy_c  # the same copy in C, sharing the immutable leaves: optional, built with the package
except ImportError:  # built without a compiler
    _datacopy_c = None  # type: ignore[assignment]

T = TypeVar("T")


def clone(data: T) -> T:
    """A deep copy of JSON-shaped ``data`` (tuples come back as lists); while tracing, leaves keep their origins."""
    if not isinstance(data, (dict, list, tuple)):  # a leaf is immutable: no copy (merges clone many)
        return data
    if is_tracing():
        return _clone(data)
    if _datacopy_c is not None:
        try:
            return _datacopy_c.clone(data)
        except _datacopy_c.Unsupported:  # a type beyond JSON's (or nesting beyond 256): the general ways below
            pass
    try:
        return orjson.loads(orjson.dumps(data))
    except (TypeError, ValueError):  # e.g. an integer beyond 64 bits: copy it the slow, general way
        return _clone(data)


def _clone(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _clone(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_clone(v) for v in data]
    return data
