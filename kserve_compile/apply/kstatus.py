"""Readiness of live objects: kstatus rules (cli-utils) plus KServe/Knative failure reasons.

``compute(obj)`` returns a :class:`Status` whose ``state`` is one of CURRENT, IN_PROGRESS, FAILED,
TERMINATING or NOT_FOUND. kstatus never reports a Knative/KServe resource as Failed; we do when
``Ready=False`` carries a reason that does not heal by itself, so ``--wait`` fails fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CURRENT = "Current"
IN_PROGRESS = "InProgress"
FAILED = "Failed"
TERMINATING = "Terminating"
NOT_FOUND = "NotFound"

# Ready=False reasons that mean "broken until someone changes the spec".
TERMINAL_REASONS = frozenset(
    {
        "RevisionFailed",
        "ProgressDeadlineExceeded",
        "ContainerMissing",
        "ContainerCreating_Failed",
        "ImagePullBackOff",
        "ErrImagePull",
        "InvalidImageName",
        "CrashLoopBackOff",
        "ExitCode",
        "ModelLoadFailed",
        "RuntimeUnhealthy",
        "RuntimeDisabled",
        "NoSupportingRuntime",
        "RuntimeNotRecognized",
        "InvalidPredictorSpec",
        "InvalidSpec",
        "RevisionMissing",
        "ServingRuntimeNotFound",
    }
)


@dataclass(frozen=True)
class Status:
    state: str
    message: str = ""


def _conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    conds = (obj.get("status") or {}).get("conditions") or []
    return {str(c.get("type")): c for c in conds if isinstance(c, dict)}


def _generic(obj: dict[str, Any]) -> Status | None:
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return Status(TERMINATING, "object is being deleted")
    status = obj.get("status") or {}
    observed = status.get("observedGeneration")
    if observed is not None and meta.get("generation") is not None and observed != meta["generation"]:
        return Status(IN_PROGRESS, f"generation {meta['generation']} not observed yet (observed {observed})")
    conds = _conditions(obj)
    if conds.get("Reconciling", {}).get("status") == "True":
        return Status(IN_PROGRESS, conds["Reconciling"].get("message", "reconciling"))
    if conds.get("Stalled", {}).get("status") == "True":
        return Status(FAILED, conds["Stalled"].get("message", "stalled"))
    return None


def _deployment(obj: dict[str, Any]) -> Status:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    conds = _conditions(obj)
    progressing = conds.get("Progressing", {})
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return Status(FAILED, progressing.get("message") or "progress deadline exceeded")
    want = spec.get("replicas", 1)
    have = status.get("replicas", 0)
    updated = status.get("updatedReplicas", 0)
    ready = status.get("readyReplicas", 0)
    available = status.get("availableReplicas", 0)
    if want > have:
        return Status(IN_PROGRESS, f"replicas: {have}/{want}")
    if want > updated:
        return Status(IN_PROGRESS, f"updated replicas: {updated}/{want}")
    if have > want:
        return Status(IN_PROGRESS, f"pending termination: {have - want}")
    if updated > available:
        return Status(IN_PROGRESS, f"available replicas: {available}/{updated}")
    if want > ready:
        return Status(IN_PROGRESS, f"ready replicas: {ready}/{want}")
    if "progressDeadlineSeconds" in spec and not (
        progressing.get("status") == "True" and progressing.get("reason") == "NewReplicaSetAvailable"
    ):
        return Status(IN_PROGRESS, "new ReplicaSet not available yet")
    if conds.get("Available", {}).get("status") != "True":
        return Status(IN_PROGRESS, "Deployment not Available")
    return Status(CURRENT, f"{ready}/{want} ready")


def _service(obj: dict[str, Any]) -> Status:
    spec = obj.get("spec") or {}
    if spec.get("type") == "LoadBalancer" and not spec.get("clusterIP"):
        return Status(IN_PROGRESS, "clusterIP not assigned")
    return Status(CURRENT, "Service ready")


def _crd(obj: dict[str, Any]) -> Status:
    conds = _conditions(obj)
    if conds.get("NamesAccepted", {}).get("status") == "False":
        return Status(FAILED, conds["NamesAccepted"].get("message", "names not accepted"))
    if conds.get("Established", {}).get("status") == "True":
        return Status(CURRENT, "established")
    return Status(IN_PROGRESS, "not established")


def _httproute(obj: dict[str, Any]) -> Status:
    parents = (obj.get("status") or {}).get("parents") or []
    if not parents:
        return Status(IN_PROGRESS, "no parent has accepted the route yet")
    for parent in parents:
        accepted = {c.get("type"): c for c in parent.get("conditions") or []}.get("Accepted", {})
        if accepted.get("status") != "True":
            return Status(IN_PROGRESS, accepted.get("message") or "route not accepted")
    return Status(CURRENT, "accepted")


def _ready_condition(obj: dict[str, Any]) -> Status:
    conds = _conditions(obj)
    if not conds:
        return Status(CURRENT, "no conditions")
    ready = conds.get("Ready")
    if ready is None:
        return Status(CURRENT, "no Ready condition")
    if ready.get("status") == "True":
        return Status(CURRENT, "Ready")
    reason, message = ready.get("reason", ""), ready.get("message", "")
    if ready.get("status") == "False" and (reason in TERMINAL_REASONS or _terminal_message(message)):
        return Status(FAILED, f"{reason}: {message}".strip(": "))
    return Status(IN_PROGRESS, f"Ready={ready.get('status')} {reason} {message}".strip())


def _terminal_message(message: str) -> bool:
    return any(r in message for r in ("ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff"))


_ALWAYS_CURRENT = frozenset(
    {
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Namespace",
        "Ingress",
        "HorizontalPodAutoscaler",
        "VirtualService",
        "PodDisruptionBudget",
    }
)

_RULES: dict[str, Callable[[dict[str, Any]], Status]] = {
    "Deployment": _deployment,
    "Service": _service,
    "CustomResourceDefinition": _crd,
    "HTTPRoute": _httproute,
}


def compute(obj: dict[str, Any] | None) -> Status:
    if obj is None:
        return Status(NOT_FOUND, "not found")
    generic = _generic(obj)
    if generic is not None:
        return generic
    kind = str(obj.get("kind", ""))
    group = str(obj.get("apiVersion", "")).partition("/")[0] if "/" in str(obj.get("apiVersion", "")) else ""
    if kind == "Service" and group == "serving.knative.dev":
        return _ready_condition(obj)
    if kind in _RULES:
        return _RULES[kind](obj)
    if kind in _ALWAYS_CURRENT:
        return Status(CURRENT, "")
    return _ready_condition(obj)
