"""Knative's admission, offline: every Knative Service of a run checked as Knative's webhook would check it
(:mod:`.knative_podspec`), under the run's ``config-features`` (:mod:`kserve_compile.inputs.knative_features`).

What Knative would refuse is, in ``validate``, one error per Service and field, located in the input behind it (the
InferenceService field that made KServe write the refused field — ``storageUri`` for the storage initializer's init
container, ``logger`` for the agent, the component's own field for what the isvc carries — or the InferenceGraph, or
the Service itself when it is an input); elsewhere, one warning for the run with the count of Services. Each names
the flag that would allow the field and, where KServe's pod webhook adds it, the other remedy: ``--pod-webhook
cluster``, where that webhook adds it to the Pods Knative creates, after Knative's admission.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import constants as C
from ..errors import Problem
from ..inputs.knative_features import KnativeFeatures
from ..inputs.parse import Document
from .knative_podspec import SPEC, Refusal, pod_spec_refusals

PREREQUISITES = "docs/install.md, Knative prerequisites"
CLUSTER_REMEDY = "render with --pod-webhook cluster where KServe's pod webhook is installed"
# Containers KServe's pod webhook adds (the storage initializer only for a single storageUri: for storageUris the
# controller writes it into the Service).
WEBHOOK_CONTAINERS = frozenset({C.CONTAINER_AGENT, C.CONTAINER_MODELCAR, C.CONTAINER_MODELCAR_INIT})
_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class Placed:
    """A refusal of one Service, where it comes from in the inputs, and whether KServe's pod webhook adds it."""

    service: str  # namespace/name
    refusal: Refusal
    doc: Document | None
    path: str  # in ``doc``
    webhook: bool


def is_knative_service(obj: Mapping[str, Any]) -> bool:
    return obj.get("apiVersion") == C.KNATIVE_SERVING_API_VERSION and obj.get("kind") == C.KIND_KNATIVE_SERVICE


def knative_admission(
    objects: Sequence[Mapping[str, Any]],
    sources: Mapping[tuple[str, str], Document],
    features: KnativeFeatures,
    *,
    refuse: bool,
) -> list[Problem]:
    """``refuse`` (validate): an error per refused field of each Service; else one warning for the run.
    ``sources``: the input document behind each Service, by (namespace, name)."""
    services = [o for o in objects if is_knative_service(o)]
    placed: list[Placed] = []
    for service in services:
        meta = service.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        doc = sources.get(key)
        for refusal in pod_spec_refusals(service, features):
            path, webhook = place(refusal, service, doc)
            placed.append(Placed(f"{key[0]}/{key[1]}", refusal, doc, path, webhook))
    if not placed:
        return []
    if refuse:
        return _errors(placed)
    return [_run_warning(placed, len(services), features)]


# --- where a refused field comes from ------------------------------------------------------------------------------


def place(refusal: Refusal, service: Mapping[str, Any], doc: Document | None) -> tuple[str, bool]:
    """``(field path in doc, added by KServe's pod webhook)`` for a refusal of ``service``."""
    if doc is None:
        return "", False
    if doc.kind == C.KIND_KNATIVE_SERVICE:
        return refusal.path, False
    if doc.kind != C.KIND_ISVC:  # an InferenceGraph: its router's pod fields are the graph's own
        field = refusal.path.removeprefix(f"{SPEC}.").split(".")[0].split("[")[0]
        spec = doc.data.get("spec")
        return (f"spec.{field}" if isinstance(spec, dict) and field in spec else "spec"), False
    labels = (service.get("metadata") or {}).get("labels") or {}
    component = str(labels.get(C.LABEL_COMPONENT) or "predictor")
    return _IsvcPlaces(doc.data, component, _template_spec(service)).of(refusal)


def _template_spec(service: Mapping[str, Any]) -> Mapping[str, Any]:
    found: Any = service
    for key in ("spec", "template", "spec"):
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def _named(items: Any) -> list[str]:
    return [
        str(i.get("name") or "") if isinstance(i, Mapping) else "" for i in (items if isinstance(items, list) else [])
    ]


class _IsvcPlaces:
    """Where in an InferenceService's document the fields of its component's Knative Service come from."""

    def __init__(self, isvc: Any, component: str, rendered: Mapping[str, Any]) -> None:
        spec = isvc.get("spec") if isinstance(isvc, Mapping) else None
        found = spec.get(component) if isinstance(spec, Mapping) else None
        self.spec: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        self.base = f"spec.{component}"
        self.annotations = ((isvc.get("metadata") or {}).get("annotations") or {}) if isinstance(isvc, Mapping) else {}
        self.rendered = rendered
        self.storage_uris = bool(self.spec.get("storageUris"))

    def of(self, refusal: Refusal) -> tuple[str, bool]:
        rest = refusal.path.removeprefix(f"{SPEC}.")
        if refusal.container:
            return self.container(refusal.container, rest)
        if refusal.volume:
            return self.volume(refusal.volume, rest)
        field = rest.split(".")[0].split("[")[0]
        if field == "initContainers":
            names = _named(self.rendered.get("initContainers"))
            return self.container(names[0] if names else "", "initContainers[0]", whole=True)
        if field == "containers":
            return self.containers()
        if field in self.spec:
            return f"{self.base}.{field}", False
        if field == "nodeSelector" and C.ANN_GKE_ACCELERATOR in self.annotations:
            return f"metadata.annotations[{C.ANN_GKE_ACCELERATOR}]", True
        return self.base, False

    def storage(self) -> tuple[str, bool]:
        """The storage field behind the storage initializer: ``storageUris`` (the controller's) or ``storageUri``."""
        if self.storage_uris:
            return f"{self.base}.storageUris", False
        for holder in ("model", *sorted(k for k, v in self.spec.items() if isinstance(v, Mapping))):
            value = self.spec.get(holder)
            if isinstance(value, Mapping) and "storageUri" in value:
                return f"{self.base}.{holder}.storageUri", True
        return (f"{self.base}.storageUri" if "storageUri" in self.spec else self.base), True

    def container(self, name: str, rest: str, *, whole: bool = False) -> tuple[str, bool]:
        sub = rest.split("]", 1)[1] if "]" in rest and not whole else ""
        for field in ("initContainers", "containers"):
            names = _named(self.spec.get(field))
            if name in names:
                return f"{self.base}.{field}[{names.index(name)}]{sub}", False
        if name == C.CONTAINER_STORAGE_INITIALIZER:
            return self.storage()
        if name == C.CONTAINER_AGENT:
            return self.agent()
        if name in WEBHOOK_CONTAINERS:
            return self.storage()[0], True
        if name == C.CONTAINER_KSERVE and isinstance(self.spec.get("model"), Mapping):
            return f"{self.base}.model{sub}", False
        return self.base, False

    def agent(self) -> tuple[str, bool]:
        for field in ("logger", "batcher"):
            if field in self.spec:
                return f"{self.base}.{field}", True
        return self.base, True

    def volume(self, name: str, rest: str) -> tuple[str, bool]:
        names = _named(self.spec.get("volumes"))
        if name in names:
            sub = rest.split("]", 1)[1] if "]" in rest else ""
            return f"{self.base}.volumes[{names.index(name)}]{sub}", False
        return self.storage()

    def containers(self) -> tuple[str, bool]:
        """The container count or ports: the webhook's when its containers make the difference."""
        names = _named(self.rendered.get("containers"))
        own = [n for n in names if n not in WEBHOOK_CONTAINERS]
        if len(own) < len(names) and len(own) <= 1:
            return self.agent() if C.CONTAINER_AGENT in names else (self.storage()[0], True)
        return (f"{self.base}.containers" if "containers" in self.spec else self.base), False


# --- the problems --------------------------------------------------------------------------------------------------


def _remedy(flag: str, webhook: bool) -> str:
    if flag and webhook:
        return f"enable it ({PREREQUISITES}), or {CLUSTER_REMEDY} (it adds this to the Pods Knative creates)"
    if flag:
        return f"enable it ({PREREQUISITES})"
    if webhook:
        return f"{CLUSTER_REMEDY} (it adds this to the Pods Knative creates)"
    return "Knative refuses it whatever config-features says"


def _errors(placed: Sequence[Placed]) -> list[Problem]:
    """One error per Service and input field (several refusals there are said together: one problem per place)."""
    grouped: dict[tuple[str, str, int], list[Placed]] = {}
    for p in placed:
        grouped.setdefault((p.service, p.path, id(p.doc)), []).append(p)
    out = []
    for group in grouped.values():
        first = group[0]
        said = "; and ".join(
            f"{p.refusal.path}: {p.refusal.message}; {_remedy(p.refusal.flag, p.webhook)}" for p in group
        )
        message = f"Knative Service {first.service}: {said}"
        if first.doc is None:
            out.append(Problem(message, kind=C.KIND_KNATIVE_SERVICE, name=first.service.split("/")[1]))
        else:
            out.append(first.doc.problem(message, first.path))
    return out


def _run_warning(placed: Sequence[Placed], services: int, features: KnativeFeatures) -> Problem:
    """The run's one warning: how many Services Knative would refuse, for which fields, and the remedies."""
    by_field: dict[tuple[str, str], set[str]] = {}
    unindexed: dict[str, str] = {}
    for p in placed:
        path = unindexed.get(p.refusal.path) or unindexed.setdefault(p.refusal.path, _INDEX.sub("[]", p.refusal.path))
        by_field.setdefault((path, p.refusal.flag), set()).add(p.service)
    parts = [
        f"{path}{f' ({flag} is {chr(34)}{features.shown(flag)}{chr(34)})' if flag else ''} in {len(names)}"
        for (path, flag), names in by_field.items()
    ]
    refused = len({p.service for p in placed})
    flags = sorted({p.refusal.flag for p in placed if p.refusal.flag})
    remedies = [f"enable {', '.join(flags)} in config-features ({PREREQUISITES})"] if flags else []
    if any(p.webhook for p in placed):
        remedies.append(CLUSTER_REMEDY)
    message = (
        f"Knative's webhook would refuse {refused} of the {services} Knative Services "
        f"under {features.source}: {'; '.join(parts)}; {', or '.join(remedies) or 'change the inputs'} "
        "(validate names each Service and the field behind it)"
    )
    first = placed[0]
    if first.doc is None:
        return Problem(message, severity="warning")
    return first.doc.problem(message, first.path, "warning")
