"""The envelope every object shares — ``apiVersion``, ``kind``, ``metadata`` — checked before any stage reads it.

The API server's decoder refuses an object whose envelope has the wrong shape before any validation runs
(``k8s.io/apimachinery/pkg/apis/meta/v1`` ``TypeMeta`` and ``ObjectMeta``: ``cannot unmarshal ... into Go struct
field``). Here such a document is reported, located, and left out of the run, so that every later stage (namespacing,
pass-through, the checks, the compiler, the emitter) may read ``kind``, ``metadata.name`` and the labels as strings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import Problem
from .parse import Document

_STRING_FIELDS = ("apiVersion", "kind")
_META_STRINGS = ("name", "namespace", "generateName", "uid", "resourceVersion")
_META_MAPS = ("labels", "annotations")


def well_formed(docs: Sequence[Document]) -> tuple[list[Document], list[Problem]]:
    """The documents whose envelope is well formed, and a located problem for each wrong field of the others."""
    kept: list[Document] = []
    problems: list[Problem] = []
    for doc in docs:
        found = [doc.problem(message, path) for path, message in envelope_errors(doc.data)]
        if found:
            problems += found
        else:
            kept.append(doc)
    return kept, problems


def envelope_errors(data: Any) -> Iterator[tuple[str, str]]:
    """``(field path, message)`` for each envelope field of the wrong type (a document that is no mapping at all is
    not an object, which the pass-through step skips with a note)."""
    if not isinstance(data, dict):
        return
    for key in _STRING_FIELDS:
        if data.get(key) is not None and not isinstance(data[key], str):
            yield key, f"must be a string, got {_type_name(data[key])}"
    meta = data.get("metadata")
    if meta is None:
        return
    if not isinstance(meta, dict):
        yield "metadata", f"must be a mapping, got {_type_name(meta)}"
        return
    for key in _META_STRINGS:
        if meta.get(key) is not None and not isinstance(meta[key], str):
            yield f"metadata.{key}", f"must be a string, got {_type_name(meta[key])}"
    for key in _META_MAPS:
        yield from _string_map(meta.get(key), f"metadata.{key}")


def _string_map(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if value is None:
        return
    if not isinstance(value, dict):
        yield path, f"must be a mapping of strings, got {_type_name(value)}"
        return
    for key, item in value.items():
        if not isinstance(key, str):
            yield path, f"keys must be strings, got {_type_name(key)} {key!r}"
        elif not isinstance(item, str):
            yield f"{path}[{key}]", f"must be a string, got {_type_name(item)} (quote it in YAML)"


def _type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)
