"""Input checks with a "did you mean": unknown fields of KServe's structs, and the mistyped-deploymentMode
warning (KServe's ``GetDeploymentMode`` falls back to the configured default for a value it does not know; we keep
that output and say so)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from .. import constants as C
from ..errors import Problem, did_you_mean, unknown_field_message
from ..inputs.parse import Document

# Every value KServe's deployment-mode resolution recognises (current and legacy names).
KNOWN_DEPLOYMENT_MODES: tuple[str, ...] = (*C.DEPLOYMENT_MODES, *C.LEGACY_MODES)


def deployment_mode_warnings(docs: Sequence[Document]) -> list[Problem]:
    """A warning for each InferenceService or InferenceGraph whose deploymentMode annotation KServe does not know."""
    out = []
    for doc in docs:
        if doc.kind not in (C.KIND_ISVC, C.KIND_IG):
            continue
        annotations = (doc.data.get("metadata") or {}).get("annotations") or {}
        value = annotations.get(C.ANN_DEPLOYMENT_MODE) if isinstance(annotations, dict) else None
        if not isinstance(value, str) or value in KNOWN_DEPLOYMENT_MODES:
            continue
        out.append(
            doc.problem(
                f"deploymentMode {value!r} is not one KServe knows ({', '.join(KNOWN_DEPLOYMENT_MODES)}){did_you_mean(value, KNOWN_DEPLOYMENT_MODES)}; "
                "KServe ignores it and uses the config's defaultDeploymentMode, and so does this render",
                f"metadata.annotations[{C.ANN_DEPLOYMENT_MODE}]",
                severity="warning",
            )
        )
    return out


def unknown_fields(doc: Document) -> list[Problem]:
    """Every unknown field of a KServe input in the structs KServe defines (not inside inlined Kubernetes types,
    which the API server's schema and ``validate`` check), each with its did-you-mean."""
    from ..inputs.serving_types import InferenceService, ServingRuntime

    models: dict[str, type[InferenceService | ServingRuntime]] = {
        C.KIND_ISVC: InferenceService,
        C.KIND_SR: ServingRuntime,
        C.KIND_CSR: ServingRuntime,
    }
    model = models.get(doc.kind)
    if model is None or not isinstance(doc.data.get("spec"), dict):
        return []
    spec_model = model.model_fields["spec"].annotation
    assert isinstance(spec_model, type)  # the spec struct's class (pydantic has resolved the annotation)
    return [doc.problem(message, path) for path, message in _walk_model(spec_model, doc.data["spec"], "spec")]


@cache
def _fields(model: type) -> tuple[dict[str, type | None], frozenset[str], bool]:
    """A struct's fields by their YAML name → the KServe struct inside (or None); every known name; whether it
    rejects unknown fields (KServe's structs do; ObjectMeta-like ones here ignore them)."""
    from ..inputs.serving_types import Spec

    fields = {(f.alias or name): _struct(f.annotation) for name, f in model.model_fields.items()}  # type: ignore[attr-defined]
    return fields, frozenset(fields) | frozenset(getattr(model, "K8S_FIELDS", ())), issubclass(model, Spec)


def _walk_model(model: type, data: dict, path: str) -> list[tuple[str, str]]:
    fields, known, strict = _fields(model)
    out: list[tuple[str, str]] = []
    for key, value in data.items():
        sub = f"{path}.{key}"
        if key not in known:
            if strict:
                out.append((sub, unknown_field_message(str(key), known)))
            continue
        inner = fields.get(key)
        if inner is None:
            continue
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, dict):
                out += _walk_model(inner, item, f"{sub}[{i}]" if isinstance(value, list) else sub)
    return out


def _struct(annotation: object) -> type | None:
    """The KServe struct inside ``X``, ``X | None`` or ``list[X]``."""
    import typing

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _struct(arg)
        if found is not None:
            return found
    return None
