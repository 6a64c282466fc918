"""Readable diffs of normalised objects, and the offline diff of two rendered outputs."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence

from kserve_compile.apply.objects import Obj, ObjKey


def to_text(obj: Obj | None) -> list[str]:
    import yaml

    if obj is None:
        return []
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False, width=4096).splitlines(keepends=True)


def unified(key: ObjKey, before: Obj | None, after: Obj | None) -> str:
    a = "/dev/null" if before is None else f"live/{key}"
    b = "/dev/null" if after is None else f"merged/{key}"
    return "".join(difflib.unified_diff(to_text(before), to_text(after), a, b))


class ManifestError(Exception):
    pass


def load_manifests(paths: Sequence[str]) -> list[Obj]:
    """Every object in the YAML/JSON files given (directories recursively, sorted; ``-`` is stdin)."""
    import sys

    import yaml

    out: list[Obj] = []
    for path in paths:
        if path == "-":
            sources: Iterable[tuple[str, str]] = [("<stdin>", sys.stdin.read())]
        elif os.path.isdir(path):
            sources = [(f, _read(f)) for f in _walk(path)]
        elif os.path.exists(path):
            sources = [(path, _read(path))]
        else:
            raise FileNotFoundError(path)
        for name, text in sources:
            try:
                docs = list(yaml.safe_load_all(text))
            except yaml.YAMLError as err:
                raise ManifestError(f"{name}: not valid YAML: {err}") from None
            for index, doc in enumerate(docs):
                if doc is None:
                    continue
                if not isinstance(doc, dict):
                    raise ManifestError(f"{name}: document {index + 1} is not a mapping")
                if doc.get("kind", "").endswith("List") and isinstance(doc.get("items"), list):
                    out.extend(doc["items"])
                elif doc.get("kind") == "Kustomization":
                    continue
                else:
                    out.append(doc)
    return out


def _walk(root: str) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith((".yaml", ".yml", ".json")) and f != "kustomization.yaml":
                found.append(os.path.join(dirpath, f))
    return found


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()
