"""Offline schema validation of Kubernetes objects: core kinds and the CRDs kserve-compile touches.

Core kinds (Deployment, Service, HPA, ...) are checked against the JSON schemas bundled with the
``kubernetes-validate`` package (its ``-local-strict`` flavour, so unknown fields are errors, as with
``kubectl --validate=strict``). CRD kinds (KServe, Knative, Istio, Gateway API, KEDA, OpenTelemetry)
are checked against the schemas authored in ``kserve_compile/schemas/``; their pod templates and
other embedded core types ``$ref`` into the same bundled definitions, so one ``kube_version`` picks
the core types everywhere.

``jsonschema`` and ``kubernetes_validate`` are imported inside the functions: ``render`` never pays
for them. Loaded schemas and built validators are cached per Kubernetes version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kserve_compile.errors import Problem

DEFAULT_KUBE_VERSION = "1.32"

SCHEMA_DIR = Path(__file__).parent.parent / "schemas"  # package data: kserve_compile/schemas/
K8S_DEFS_ID = "https://kubernetes.io/api/_definitions.json"
# Go's `json:",inline"` embedding: a schema object carrying this key gets, at load time, a
# ``properties`` entry for each field of the named definitions, each a $ref to that field's schema.
# This keeps ``additionalProperties: false`` exact for types such as KServe's PredictorSpec.
INLINE_KEY = "x-kserve-compile-inline"
GVK_KEY = "x-kubernetes-group-version-kind"

_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class SchemaIssue:
    kind: str
    name: str
    path: str  # dotted field path, e.g. "spec.template.spec.containers[0].ports[0].containerPort"
    message: str

    def __str__(self) -> str:
        where = f"{self.kind}/{self.name}" if self.kind else "<object>"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"

    def to_problem(self) -> Problem:
        return Problem(message=self.message, path=self.path, kind=self.kind, name=self.name)


def check_object(obj: dict, kube_version: str = DEFAULT_KUBE_VERSION) -> list[SchemaIssue]:
    """Every schema violation of one object; an empty list when it is valid.

    Raises ``ValueError`` for a ``kube_version`` the bundled schemas do not cover, and
    ``SchemaCheckUnavailable`` when the ``validate`` extra is not installed.
    """
    if not isinstance(obj, dict):
        return [SchemaIssue("", "", "", f"expected a mapping, got {type(obj).__name__}")]
    kind = given if isinstance(given := obj.get("kind"), str) else ""
    meta = obj.get("metadata")
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    name = name if isinstance(name, str) else str(name)
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        return [SchemaIssue(kind, name, "apiVersion", "apiVersion is required")]
    if not kind:
        return [SchemaIssue(kind, name, "kind", "kind is required")]
    validator = _validator(_schema_version(kube_version), api_version, kind)
    if validator is None:
        msg = f"no schema is known for apiVersion {api_version!r} kind {kind!r}"
        return [SchemaIssue(kind, name, "", msg)]
    issues: set[SchemaIssue] = set()
    for error in validator.iter_errors(obj):
        for path, message in _describe(error):
            issues.add(SchemaIssue(kind, name, path, message))
    return sorted(issues, key=lambda i: (i.path, i.message))


def check_objects(objs: Iterable[dict], kube_version: str = DEFAULT_KUBE_VERSION) -> list[SchemaIssue]:
    """The issues of every object, in input order."""
    issues: list[SchemaIssue] = []
    for obj in objs:
        issues.extend(check_object(obj, kube_version))
    return issues


def known_kinds() -> list[tuple[str, str]]:
    """(apiVersion, kind) of every CRD kind with an authored schema, sorted."""
    return sorted(_crd_index())


# --- versions ---------------------------------------------------------------------------------


class SchemaCheckUnavailable(RuntimeError):
    """The optional schema packages (the ``validate`` extra) are not installed."""


def _k8s_schema_root() -> Path:
    try:
        import jsonschema  # noqa: F401
        import kubernetes_validate
    except ImportError as exc:
        raise SchemaCheckUnavailable(
            f"schema validation needs the 'validate' extra (pip install 'kserve-compile[validate]'): {exc}"
        ) from exc

    return Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"


@cache
def _available_versions() -> tuple[tuple[int, int], ...]:
    found = set()
    for entry in _k8s_schema_root().iterdir():
        m = re.match(r"^v(\d+)\.(\d+)\.\d+-local-strict$", entry.name)
        if m:
            found.add((int(m.group(1)), int(m.group(2))))
    return tuple(sorted(found))


def _schema_version(kube_version: str) -> tuple[int, int]:
    """The newest bundled (major, minor) not newer than ``kube_version`` ("1.32", "v1.32.4")."""
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.\d+)?$", str(kube_version).strip())
    if not m:
        raise ValueError(f"invalid Kubernetes version {kube_version!r} (expected e.g. 1.32)")
    wanted = (int(m.group(1)), int(m.group(2)))
    versions = _available_versions()
    usable = [v for v in versions if v <= wanted]
    if not usable or wanted > versions[-1]:
        lo, hi = versions[0], versions[-1]
        raise ValueError(
            f"Kubernetes version {kube_version} is not covered by the bundled schemas "
            f"({lo[0]}.{lo[1]} to {hi[0]}.{hi[1]})"
        )
    return usable[-1]


def _version_dir(version: tuple[int, int]) -> Path:
    return _k8s_schema_root() / f"v{version[0]}.{version[1]}.0-local-strict"


# --- schema loading ---------------------------------------------------------------------------


@cache
def _crd_index() -> dict[tuple[str, str], Path]:
    """(apiVersion, kind) → authored schema file, from each file's group-version-kind list."""
    index: dict[tuple[str, str], Path] = {}
    for path in sorted(SCHEMA_DIR.rglob("*.json")):
        doc = json.loads(path.read_text())
        for gvk in doc.get(GVK_KEY, []):
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            index[(api_version, gvk["kind"])] = path
    return index


@cache
def _k8s_definitions(version: tuple[int, int]) -> dict:
    return json.loads((_version_dir(version) / "_definitions.json").read_text())


def _expand_inline(node: Any, k8s_defs: dict, local_defs: dict) -> Any:
    """Copy of ``node`` with every ``INLINE_KEY`` turned into per-field $refs (see INLINE_KEY).

    Each entry names a core definition (``{"definition": ..., "fields": [...]}``, all fields when
    ``fields`` is absent) or one of the document's own ``$defs`` (``{"local": name}``: that schema's
    properties, or, when it holds ``definition``, that shared entry). A field the object already
    declares keeps its own schema.
    """
    if isinstance(node, list):
        return [_expand_inline(n, k8s_defs, local_defs) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _expand_inline(v, k8s_defs, local_defs) for k, v in node.items() if k != INLINE_KEY}
    for entry in node.get(INLINE_KEY, []):
        if "local" in entry and "definition" in local_defs[entry["local"]]:
            entry = local_defs[entry["local"]]  # a shared inline entry kept in $defs
        if "local" in entry:
            base, source = f"#/$defs/{entry['local']}", local_defs[entry["local"]]
        else:
            base, source = f"{K8S_DEFS_ID}#/$defs/{entry['definition']}", k8s_defs[entry["definition"]]
        fields = source.get("properties", {})
        props = out.setdefault("properties", {})
        for field in entry.get("fields") or sorted(fields):
            # A field the chosen Kubernetes version lacks stays undeclared, so it is rejected.
            if field in fields and field not in props:
                props[field] = {"$ref": f"{base}/properties/{field}"}
    return out


@cache
def _registry(version: tuple[int, int]) -> Any:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    defs = _k8s_definitions(version)
    resources = [(K8S_DEFS_ID, Resource.from_contents(defs, default_specification=DRAFT202012))]
    for path in sorted(SCHEMA_DIR.rglob("*.json")):
        raw = json.loads(path.read_text())
        doc = _expand_inline(raw, defs["$defs"], raw.get("$defs", {}))
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


def _core_schema(version: tuple[int, int], api_version: str, kind: str) -> dict | None:
    group, _, ver = api_version.rpartition("/")
    # Only Kubernetes' own groups; a CRD group never borrows a core schema by name.
    if group and "." in group and not group.endswith(".k8s.io"):
        return None
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", kind) or not re.fullmatch(r"v\d+[a-z0-9]*", ver):
        return None
    prefix = group.split(".")[0] + "-" if group else ""
    path = _version_dir(version) / f"{kind.lower()}-{prefix}{ver}.json"
    if not path.is_file():
        return None
    doc = json.loads(path.read_text())
    # The bundled files say "/api/_definitions.json"; give them a base so that resolves.
    doc["$id"] = f"https://kubernetes.io/api/{path.name}"
    return doc


@cache
def _validator(version: tuple[int, int], api_version: str, kind: str) -> Any:
    from jsonschema import Draft202012Validator

    registry = _registry(version)
    crd = _crd_index().get((api_version, kind))
    if crd is not None:
        schema = registry.contents(json.loads(crd.read_text())["$id"])
    else:
        schema = _core_schema(version, api_version, kind)
        if schema is None:
            return None
    return Draft202012Validator(schema, registry=registry)


# --- error description ------------------------------------------------------------------------


def _join(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _SIMPLE_KEY.match(str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def _unexpected_keys(error: Any) -> list[str]:
    schema, instance = error.schema, error.instance
    known = set(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    if error.validator == "unevaluatedProperties":
        # Properties matched by sibling subschemas are fine; jsonschema names the rest.
        return sorted(re.findall(r"'([^']+)'", error.message.split("(")[-1]))
    return sorted(k for k in instance if k not in known and not any(p.search(k) for p in patterns))


def _describe(error: Any) -> list[tuple[str, str]]:
    path = list(error.absolute_path)
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
        keys = _unexpected_keys(error)
        if keys:
            from kserve_compile.errors import unknown_field_message

            known = list(error.schema.get("properties", {}))
            return [(_join([*path, k]), unknown_field_message(k, known)) for k in keys]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [r for r in error.validator_value if r not in error.instance]
        return [(_join([*path, r]), "required field is missing") for r in missing]  # the path names it
    if error.validator == "type":
        return [(_join(path), _type_message(error.instance, [error.validator_value]))]
    if error.validator == "enum":
        from kserve_compile.errors import enum_message

        return [(_join(path), enum_message(error.instance, error.validator_value))]
    if error.validator in ("oneOf", "anyOf") and error.context:
        types = [c.validator_value for c in error.context if c.validator == "type"]
        if len(types) == len(error.context):
            return [(_join(path), _type_message(error.instance, types))]
        from jsonschema.exceptions import best_match

        # The branches whose type fits the value say what is wrong with it.
        inner = best_match(c for c in error.context if c.validator != "type")
        if inner is not None:
            return _describe(inner)
    return [(_join(path), error.message)]


def _type_message(instance: Any, types: list[Any]) -> str:
    # The bundled core schemas allow null nearly everywhere; naming it only adds noise.
    names = sorted({t for ts in types for t in ([ts] if isinstance(ts, str) else ts)} - {"null"})
    return f"{instance!r} is not of type {' or '.join(names)}"


def check_kube_version(kube_version: str) -> None:
    """``--kube-version`` as a usage error when the bundled schemas do not cover it."""
    from kserve_compile.errors import UsageError

    try:
        _schema_version(kube_version)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
