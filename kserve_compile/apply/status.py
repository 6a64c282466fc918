"""InferenceService status as KServe reports it, computed from the objects the daemon applied.

Condition types are KServe's (``PredictorReady``, ``TransformerReady``, ``ExplainerReady``,
``IngressReady``, ``Ready``) so Argo CD's health check, kstatus and ``kubectl wait --for=condition=Ready``
keep working. ``lastTransitionTime`` changes only when a condition's status flips, so a resync that
finds nothing new produces an identical status and no write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kserve_compile import constants as C
from kserve_compile.apply import kstatus
from kserve_compile.apply.objects import Obj

_WORKLOAD_KINDS = ("Deployment", "Service.serving.knative.dev", "LeaderWorkerSet", "StatefulSet")
_INGRESS_KINDS = ("Ingress", "HTTPRoute", "VirtualService")
_COND_TYPE = {C.PREDICTOR: "PredictorReady", C.TRANSFORMER: "TransformerReady", C.EXPLAINER: "ExplainerReady"}


def _kind(obj: Obj) -> str:
    api = str(obj.get("apiVersion", ""))
    group = api.split("/", 1)[0] if "/" in api else ""
    return f"{obj.get('kind')}.{group}" if obj.get("kind") == "Service" and group else str(obj.get("kind"))


def components_of(isvc: Obj) -> list[str]:
    spec = isvc.get("spec") or {}
    return [c for c in C.COMPONENTS if spec.get(c)]


def _condition(ctype: str, ok: bool, reason: str, message: str, generation: int | None) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": ctype, "status": "True" if ok else "False"}
    if not ok:
        cond["reason"] = reason
        cond["message"] = message
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


def compute_status(
    isvc: Obj,
    applied: Sequence[Obj],
    urls: dict[str, Any] | None,
    error: str = "",
    error_reason: str = "ApplyFailed",
    now: str = "",
) -> dict[str, Any]:
    """The ``status`` block to write; ``applied`` is the server's view of every member after the apply."""
    generation = (isvc.get("metadata") or {}).get("generation")
    conditions: list[dict[str, Any]] = []
    all_ok = not error
    for comp in components_of(isvc):
        workloads = [
            o
            for o in applied
            if _kind(o) in _WORKLOAD_KINDS
            and ((o.get("metadata") or {}).get("labels") or {}).get(C.LABEL_COMPONENT) == comp
        ]
        states = [(o, kstatus.compute(o)) for o in workloads]
        bad = [(o, s) for o, s in states if s.state != kstatus.CURRENT]
        ok = bool(workloads) and not bad and not error
        if error:
            reason, message = error_reason, error
        elif not workloads:
            reason, message = "NotRendered", f"no workload was rendered for the {comp}"
        elif not bad:
            reason, message = "", ""
        else:
            o, s = bad[0]
            reason = "Failed" if s.state == kstatus.FAILED else "InProgress"
            message = f"{o.get('kind')}/{o['metadata']['name']}: {s.message}"
        conditions.append(_condition(_COND_TYPE[comp], ok, reason, message, generation))
        all_ok = all_ok and ok
    ingress = [(o, kstatus.compute(o)) for o in applied if _kind(o) in _INGRESS_KINDS]
    bad_ingress = [(o, s) for o, s in ingress if s.state != kstatus.CURRENT]
    ingress_ok = not bad_ingress and not error
    message = error or (
        f"{bad_ingress[0][0].get('kind')}/{bad_ingress[0][0]['metadata']['name']}: {bad_ingress[0][1].message}"
        if bad_ingress
        else ""
    )
    conditions.append(
        _condition("IngressReady", ingress_ok, error_reason if error else "InProgress", message, generation)
    )
    all_ok = all_ok and ingress_ok
    not_ready = next((c for c in conditions if c["status"] != "True"), None)
    conditions.append(
        _condition(
            "Ready", all_ok, (not_ready or {}).get("reason", ""), (not_ready or {}).get("message", ""), generation
        )
    )
    conditions.sort(key=lambda c: c["type"])
    previous = {c.get("type"): c for c in ((isvc.get("status") or {}).get("conditions") or [])}
    for cond in conditions:
        old = previous.get(cond["type"])
        if old and old.get("status") == cond["status"] and old.get("lastTransitionTime"):
            cond["lastTransitionTime"] = old["lastTransitionTime"]
        else:
            cond["lastTransitionTime"] = now
    status: dict[str, Any] = {"observedGeneration": generation, "conditions": conditions}
    for key in ("url", "address", "components", "deploymentMode"):
        if urls and urls.get(key):
            status[key] = urls[key]
    return status


def status_changed(live_status: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    live_status = live_status or {}
    return any(live_status.get(k) != v for k, v in new.items())
