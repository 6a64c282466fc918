"""Routing groups: services sharing ``router.route.group`` share the traffic of their model's routes.

Mirrors ``injectGroupBackendRefs`` (``pkg/controller/v1alpha2/llmisvc/router_group.go``) and ``rewriteRulesForGroup``
(``router_group_routing.go``). KServe lists the group's members from the cluster and reads their status (routable
members: ``RouterReady`` true and ready replicas; their InferencePool from ``status.router.scheduler``); offline
the members are the run's LLMInferenceService inputs of the same namespace and group, read with the status they
are given (a member given without status is not routable yet, as right after its creation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .combine import is_default_pool_ref
from .common import Obj
from .llm_types import LLMService, get_path
from .names import POOL_GROUP_V1ALPHA2, workload_service

STOP = "serving.kserve.io/stop"


@dataclass(frozen=True)
class Member:
    name: str
    models: tuple[str, ...]
    weight: int
    stopped: bool
    backend: Obj


def _stopped(svc: LLMService) -> bool:
    return svc.annotations.get(STOP, "").lower() == "true"


def _routable(svc: LLMService) -> bool:
    """``isMemberRoutable``: RouterReady true and every observed workload with ready replicas."""
    conditions = found if isinstance(found := svc.status.get("conditions"), list) else []
    ready = any(
        isinstance(c, dict) and c.get("type") == "RouterReady" and c.get("status") == "True" for c in conditions
    )
    workloads = svc.status.get("workloads") or {}
    if not ready or not isinstance(workloads, dict) or not workloads.get("primary"):
        return False
    return all(
        not w or (isinstance(w, dict) and _count(w.get("readyReplicas")) > 0)
        for w in (workloads.get(k) for k in ("primary", "prefill", "scheduler"))
    )


def _listed(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: object) -> int:
    """A status count as observed; one of the wrong type was never written by KServe's controller: none observed."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def model_names(svc: LLMService) -> tuple[str, ...]:
    """``resolvedModelNames``: the models the status advertises, else the spec's model and adapter names."""
    advertised = [
        m.get("name")
        for a in _listed(svc.status.get("addresses"))
        if isinstance(a, dict)
        for m in _listed(a.get("models"))
        if isinstance(m, dict)
    ]
    names = [str(n) for n in advertised if n and isinstance(n, (str, int))]
    if not names:
        names = [str(get_path(svc.spec, "model", "name") or svc.name)]
        names += [
            str(a["name"])
            for a in get_path(svc.spec, "model", "lora", "adapters") or []
            if isinstance(a, dict) and a.get("name")
        ]
    return tuple(sorted(set(names)))


def _backend(svc: LLMService) -> Obj:
    """``resolveMemberBackendRef``."""
    ref = get_path(svc.spec, "router", "scheduler", "pool", "ref", "name")
    if ref:
        return {"group": POOL_GROUP_V1ALPHA2, "kind": "InferencePool", "name": str(ref), "port": 8000}
    pool = get_path(svc.status, "router", "scheduler", "inferencePool")
    if isinstance(pool, dict) and pool.get("name"):
        return {"group": pool.get("group", ""), "kind": pool.get("kind", ""), "name": pool["name"], "port": 8000}
    return {"kind": "Service", "name": workload_service(svc.name), "port": 8000}


def matching_members(svc: LLMService, peers: list[LLMService]) -> list[Member]:
    """The members whose models match this service's, by name (stopped ones matched on its model name)."""
    group = get_path(svc.spec, "router", "route", "group")
    members = [
        p for p in peers if p.namespace == svc.namespace and get_path(p.spec, "router", "route", "group") == group
    ]
    eligible = [p for p in members if p.name == svc.name or _stopped(p) or _routable(p)]
    mine, own_name = model_names(svc), str(get_path(svc.spec, "model", "name") or svc.name)
    out = []
    for p in sorted(eligible, key=lambda m: m.name):
        member = Member(
            p.name, model_names(p), int(get_path(p.spec, "router", "route", "weight") or 0), _stopped(p), _backend(p)
        )
        if (member.stopped and own_name in member.models) or (not member.stopped and member.models == mine):
            out.append(member)
    return out


def _managed(ref: Any, svc: LLMService, spec: Any) -> bool:
    """``isExpectedBackendRef``."""
    if not isinstance(ref, dict):
        return False
    if is_default_pool_ref(ref, svc.name):
        return True
    if ref.get("kind", "Service") == "Service" and ref.get("name") == workload_service(svc.name):
        return True
    pool_ref = get_path(spec, "router", "scheduler", "pool", "ref", "name")
    return bool(pool_ref) and ref.get("kind") == "InferencePool" and ref.get("name") == pool_ref


def rewrite_rules(route_spec: Obj, svc: LLMService, spec: Any, members: list[Member]) -> None:
    """``rewriteRulesForGroup``: every shared rule (not under ``/<ns>/<name>``) routed to all matching members."""
    refs = [{**m.backend, "weight": m.weight} for m in members if not m.stopped]
    prefix = f"/{svc.namespace}/{svc.name}"
    for rule in route_spec.get("rules") or []:
        paths = [get_path(m, "path", "value") for m in rule.get("matches") or []]
        if any(p == prefix or (isinstance(p, str) and p.startswith(prefix + "/")) for p in paths):
            continue
        if any(_managed(ref, svc, spec) for ref in rule.get("backendRefs") or []):
            rule["backendRefs"] = [dict(r) for r in refs]
