"""Already-rendered manifests (``--rendered``) read with the project's one loader, ``kserve_compile.inputs.parse``.

Files, directories (recursively, sorted) and ``-`` as ``render`` reads them, so a bad file is reported as ``render``
reports it (``file:line:col: message``, exit 1). A ``v1`` ``List`` (``kubectl get -o yaml``, ``render -o json``)
contributes its items, as ``kubectl apply -f`` reads one; a ``Kustomization`` is not an object and is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kserve_compile.apply.objects import Obj
from kserve_compile.errors import CompileError, Problem
from kserve_compile.inputs.parse import Document, parse_paths

__all__ = ["read_manifests"]


def read_manifests(paths: Sequence[str]) -> list[Obj]:
    """Every object in ``paths``; one CompileError naming every document that is not one, with its position."""
    objects: list[Obj] = []
    problems: list[Problem] = []
    for doc in parse_paths(paths):
        if doc.kind == "Kustomization":
            continue
        for at, obj in _objects_of(doc):
            problem = _not_an_object(doc, obj, at)
            if problem:
                problems.append(problem)
            else:
                objects.append(obj)
    if problems:
        raise CompileError(problems)
    return objects


def _objects_of(doc: Document) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(position path, object) for the document itself, or for each item of a List."""
    items = doc.data.get("items")
    if doc.kind.endswith("List") and isinstance(items, list):
        yield from ((("items", i), item) for i, item in enumerate(items))
    else:
        yield (), doc.data


def _not_an_object(doc: Document, obj: Any, at: tuple[str | int, ...]) -> Problem | None:
    """What the API server would refuse before anything else: no mapping, or no apiVersion, kind or name."""
    line, col = doc.locate(at)
    path = f"items[{at[1]}]" if at else ""
    if not isinstance(obj, dict):
        return Problem(
            f"not a Kubernetes object (a mapping) but a {type(obj).__name__}", path, "", "", doc.file, line, col
        )
    meta = obj.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
    absent = [f for f in ("apiVersion", "kind") if not obj.get(f)] + ([] if name else ["metadata.name"])
    if not absent:
        return None
    return Problem(f"{', '.join(absent)} required", path, str(obj.get("kind") or ""), name, doc.file, line, col)
