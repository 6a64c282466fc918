"""Shared helpers for the schema tests: the valid fixtures and a path-based mutator."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parent / "data"
FIXTURE_FILES = (
    "valid_inputs.yaml",
    "valid_standard.yaml",
    "valid_knative.yaml",
    "valid_localmodel.yaml",
    "valid_llmisvc.yaml",
    "valid_scale_to_zero.yaml",
)


def load_fixtures() -> list[dict]:
    objs: list[dict] = []
    for name in FIXTURE_FILES:
        objs.extend(o for o in yaml.safe_load_all((DATA / name).read_text()) if o)
    return objs


def fixture_id(obj: dict) -> str:
    return f"{obj['apiVersion']}/{obj['kind']}/{obj['metadata']['name']}"


def fixtures_by_id() -> dict[str, dict]:
    return {fixture_id(o): o for o in load_fixtures()}


def mutate(obj: dict, path: str, value: Any = None, *, delete: bool = False) -> dict:
    """A deep copy of ``obj`` with the dotted ``path`` (``a.b[0].c``) set to ``value`` or deleted."""
    out = copy.deepcopy(obj)
    parts: list[Any] = []
    for piece in path.split("."):
        name, _, rest = piece.partition("[")
        if name:
            parts.append(name)
        for idx in filter(None, rest.replace("[", "").split("]")):
            parts.append(int(idx))
    node = out
    for part in parts[:-1]:
        node = node[part]
    if delete:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return out
