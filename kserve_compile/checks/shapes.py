"""The type of every field of a KServe kind, read from its authored CRD schema (``kserve_compile/schemas/``), checked
on the documents a feature keeps as plain data (an LLMInferenceService's spec is merged as data, never typed).

The schema's ``type``s become a :mod:`kserve_compile.kube.shapes` table (objects, lists, maps, scalars; the core
PodSpec and Container by that module's own tables), so the check is the same fast walk the typed kinds use, and it
names the first field of the wrong type — what the API server's structural schema refuses (``must be a string``).
Values, patterns and bounds are left to the admission checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import orjson

from ..errors import Problem
from ..inputs.parse import Document
from ..kube import shapes
from .schema import GVK_KEY, SCHEMA_DIR

ANY: Any = (str, int, float, bool, dict, list)
_K8S = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s."
_CORE_SHAPES: dict[str, Any] = {
    "api.core.v1.PodSpec": shapes.POD_SPEC,
    "api.core.v1.Container": shapes.CONTAINER,
    "api.core.v1.EnvVar": shapes.ENV_VAR,
    "api.core.v1.LocalObjectReference": {"name": shapes.STR},
}
_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": (int, float), "boolean": bool}


# A kind whose fields may be Go templates standing for values of any type: the kind its spec becomes once merged.
TEMPLATED = {"LLMInferenceServiceConfig": "LLMInferenceService"}


def shape_problems(doc: Document) -> list[Problem]:
    """The first field of ``doc`` whose type its kind's schema does not allow, located; none for other kinds. A
    templated kind is checked as the kind it merges into, any string standing for any value."""
    templated = doc.kind in TEMPLATED
    shape = kind_shape(doc.api_version, TEMPLATED.get(doc.kind, doc.kind))
    if shape is None:
        return []
    data = {**doc.data, "kind": TEMPLATED[doc.kind]} if templated else doc.data
    found = shapes.check(data, shape, "", templated=templated)
    return [] if found is None else [doc.problem(*_message_and_path(found))]


def spec_problem(api_version: str, kind: str, spec: Any) -> tuple[str, str] | None:
    """``(field path, message)`` for the first field of a kind's ``spec`` (e.g. merged) of the wrong type."""
    shape = kind_shape(api_version, kind)
    found = shapes.check(spec, shape["spec"], "spec") if shape is not None else None
    return None if found is None else _message_and_path(found)[::-1]


def _message_and_path(found: str) -> tuple[str, str]:
    path, _, message = found.partition(": ")
    return message, path.lstrip(".")


@cache
def kind_shape(api_version: str, kind: str) -> Any:
    path = _schema_files().get((api_version, kind))
    if path is None:
        return None
    schema = orjson.loads((SCHEMA_DIR / path).read_bytes())
    return _Builder(schema, path).shape(schema)


@cache
def _schema_files() -> dict[tuple[str, str], str]:
    index = {}
    for file in sorted((SCHEMA_DIR / "serving.kserve.io").glob("*.json")):
        for gvk in orjson.loads(file.read_bytes()).get(GVK_KEY, []):
            index[(f"{gvk['group']}/{gvk['version']}", gvk["kind"])] = f"serving.kserve.io/{file.name}"
    return index


@cache
def _common() -> Mapping[str, Any]:
    return orjson.loads((SCHEMA_DIR / "_common.json").read_bytes())


class _Builder:
    """One schema file turned into a shape table; a ``$ref`` met twice is built once (recursive types terminate)."""

    def __init__(self, schema: Mapping[str, Any], file: str) -> None:
        self.files = {file: schema, "_common.json": _common()}
        self.file = file
        self.built: dict[str, Any] = {}

    def shape(self, node: Any, file: str | None = None) -> Any:
        file = file or self.file
        if not isinstance(node, Mapping):
            return ANY
        if "$ref" in node:
            return self._ref(node["$ref"], file)
        if "anyOf" in node or "oneOf" in node:
            options = [self.shape(n, file) for n in node.get("anyOf") or node.get("oneOf") or []]
            flat = tuple(
                t for o in options if isinstance(o, (type, tuple)) for t in (o if isinstance(o, tuple) else (o,))
            )
            return flat if flat and len(options) == len([o for o in options if isinstance(o, (type, tuple))]) else ANY
        kind = node.get("type")
        if kind == "array":
            return ("list", self.shape(node.get("items"), file))
        if kind == "object":
            return self._object(node, file)
        if "const" in node:
            return type(node["const"])
        return _TYPES.get(kind, ANY) if isinstance(kind, str) else ANY

    def _object(self, node: Mapping[str, Any], file: str) -> Any:
        props = node.get("properties")
        extra = node.get("additionalProperties")
        if not props and isinstance(extra, Mapping):
            return ("map", self.shape(extra, file))
        out: dict[str, Any] = {}
        for key, sub in (props or {}).items():
            out[key] = self.shape(sub, file)
        return out

    def _ref(self, ref: str, file: str) -> Any:
        if ref.startswith(_K8S):
            return _CORE_SHAPES.get(ref.removeprefix(_K8S), ANY)
        target, _, pointer = ref.partition("#")
        where = "_common.json" if target.endswith("_common.json") else file
        key = f"{where}#{pointer}"
        if key in self.built:
            return self.built[key]
        node: Any = self.files[where]
        for part in pointer.strip("/").split("/"):
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping) and node.get("type") == "object" and "properties" in node:
            table: dict[str, Any] = {}
            self.built[key] = table  # filled after: a type that contains itself refers to this very table
            table.update(self._object(node, where))
            return table
        self.built[key] = self.shape(node, where)
        return self.built[key]
