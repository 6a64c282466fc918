"""Managed Dynamic Resource Allocation: ``pkg/controller/v1alpha2/llmisvc/managed_dra.go`` and the annotation
rules of ``pkg/validation/managed_dra.go``.

With ``serving.kserve.io/exp-dra-device-class`` on the service, KServe creates a ResourceClaimTemplate
``<name>-managed-dra`` (one request ``device`` of that class; ``exp-dra-device-count`` devices when over 1;
``exp-dra-cel-selector``, one CEL expression per line) and adds the pod claim ``managed-device`` to every
model-server pod template, claimed by the first container or the one ``exp-dra-container-name`` names.
"""

from __future__ import annotations

import re
from typing import Any

from .common import Obj, finish, meta
from .llm_types import LLMService, Spec
from .names import child_name

PREFIX = "serving.kserve.io/exp-dra-"
DEVICE_CLASS, COUNT, CEL, CONTAINER = (
    PREFIX + s for s in ("device-class", "device-count", "cel-selector", "container-name")
)
CLAIM = "managed-device"
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def enabled(svc: LLMService) -> bool:
    return DEVICE_CLASS in svc.annotations


def validate(annotations: dict[str, str]) -> list[tuple[str, str]]:
    """``ValidateManagedDRAAnnotations``: (field path, message) pairs."""
    out: list[tuple[str, str]] = []

    def at(key: str) -> str:
        return f"metadata.annotations[{key}]"

    if DEVICE_CLASS not in annotations and any(k in annotations for k in (COUNT, CEL, CONTAINER)):
        out.append(
            (
                at(DEVICE_CLASS),
                f"Required value: {DEVICE_CLASS} is required to enable managed DRA when {COUNT}, {CEL}, or {CONTAINER} is set",
            )
        )
    device_class = annotations.get(DEVICE_CLASS)
    if device_class is not None:
        if not device_class.strip():
            out.append((at(DEVICE_CLASS), "device class must not be empty"))
        elif len(device_class.strip()) > 253 or not _SUBDOMAIN.match(device_class.strip()):
            out.append((at(DEVICE_CLASS), "device class must be a DNS subdomain"))
    if COUNT in annotations:
        try:
            device_count(annotations)
        except ValueError as exc:
            out.append((at(COUNT), str(exc)))
    if CEL in annotations and not cel_selectors(annotations):
        out.append((at(CEL), "cel selector must contain at least one non-empty CEL expression"))
    container = annotations.get(CONTAINER)
    if container is not None:
        if not container.strip():
            out.append((at(CONTAINER), "container name must not be empty"))
        elif len(container.strip()) > 63 or not _LABEL.match(container.strip()):
            out.append((at(CONTAINER), "container name must be a DNS label"))
    return out


def device_count(annotations: dict[str, str]) -> int:
    raw = annotations.get(COUNT, "").strip()
    if not raw:
        return 1
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f'invalid {COUNT} value "{annotations[COUNT]}": not an integer') from None
    if count < 1:
        raise ValueError(f'invalid {COUNT} value "{annotations[COUNT]}": must be >= 1')
    return count


def cel_selectors(annotations: dict[str, str]) -> list[str]:
    return [line.strip() for line in annotations.get(CEL, "").split("\n") if line.strip()]


def claim_template(svc: LLMService) -> Obj:
    """``expectedManagedDRATemplate``."""
    exactly: dict[str, Any] = {"deviceClassName": svc.annotations[DEVICE_CLASS].strip()}
    count = device_count(svc.annotations)
    if count > 1:
        exactly["count"] = count
    selectors = cel_selectors(svc.annotations)
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    spec = {"spec": {"devices": {"requests": [{"exactly": exactly, "name": "device"}]}}}
    return finish({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": meta(child_name(svc.name, "-managed-dra"), svc.namespace), "spec": spec})  # fmt: skip


def inject(svc: LLMService, spec: Spec) -> None:
    """``injectManagedDRAIntoConfig``: the pod claim and the container claim in every model-server pod."""
    if not enabled(svc):
        return
    prefill = found if isinstance(found := spec.get("prefill"), dict) else {}
    for pod in (spec.get("template"), spec.get("worker"), prefill.get("template"), prefill.get("worker")):
        if isinstance(pod, dict):
            _inject_pod(svc, pod)


def _inject_pod(svc: LLMService, pod: dict[str, Any]) -> None:
    template = child_name(svc.name, "-managed-dra")
    claims = pod.setdefault("resourceClaims", [])
    if not any(c.get("name") == CLAIM for c in claims):
        claims.append({"name": CLAIM, "resourceClaimTemplateName": template})
    containers = pod.get("containers") or []
    want = svc.annotations.get(CONTAINER, "").strip()
    target = (
        next((c for c in containers if c.get("name") == want), None)
        if want
        else (containers[0] if containers else None)
    )
    if target is None:
        return
    resource_claims = target.setdefault("resources", {}).setdefault("claims", [])
    if not any(c.get("name") == CLAIM for c in resource_claims):
        resource_claims.append({"name": CLAIM})
