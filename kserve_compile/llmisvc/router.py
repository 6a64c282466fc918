"""The managed HTTPRoute: ``expectedHTTPRoute`` in ``pkg/controller/v1alpha2/llmisvc/router.go``.

The merged ``router.route.http.spec`` (from the ``config-llm-router-route`` preset unless the user wrote one),
model-based routing header matches kept and expanded per LoRA adapter — or stripped when routing is disabled
(``config_merge.go``: ``isModelBasedRoutingEnabled``, ``expandLoRAAdapterMatches``, ``stripModelBasedRoutingRules``)
— and the InferencePool backendRefs' API group as the cluster's migration state says (an explicit option offline).
"""

from __future__ import annotations

from typing import Any

from ..datacopy import clone
from . import names as N
from .combine import is_default_pool_ref
from .common import Obj, finish, meta
from .llm_types import LLMService, Spec, get_path, has_managed_scheduler, pool_has_ref
from .options import LLMOptions


def router_labels(svc: LLMService, spec: Spec) -> dict[str, str]:
    labels = N.base_labels(svc.name, N.ROUTER)
    group = get_path(spec, "router", "route", "group")
    if group is not None:
        labels[N.ROUTING_GROUP] = str(group)
    return labels


def _referenced_gateways(svc: LLMService, spec: Spec) -> set[str]:
    """``CollectReferencedGateways``: only with ``router.gateway.refs`` (the managed default Gateway is never
    consulted); the Gateways of referenced live routes are unknown offline."""
    refs = get_path(spec, "router", "gateway", "refs") or []
    return {f"{r.get('namespace') or svc.namespace}/{r.get('name', '')}" for r in refs if isinstance(r, dict)}


def model_routing_enabled(svc: LLMService, spec: Spec, options: LLMOptions) -> bool:
    """``isModelBasedRoutingEnabled``; Gateways' opt-out annotations come from the options."""
    if not options.routing_header or (spec.get("annotations") or {}).get(N.ANN_MODEL_BASED_ROUTING) != "true":
        return False
    if options.routing_mode in ("disabled", "forced"):
        return options.routing_mode == "forced"
    return not (_referenced_gateways(svc, spec) & options.model_routing_disabled_gateways)


def _is_routing_match(match: Any, header: str) -> bool:
    return isinstance(match, dict) and any(
        isinstance(h, dict) and h.get("name") == header for h in match.get("headers") or []
    )


def _strip(rules: list[Any], header: str) -> list[Any]:
    """The rules with their model-routing matches dropped (a rule left with none goes): new rule mappings over the
    same values, so the caller copies only what is kept."""
    out = []
    for rule in rules:
        kept = [m for m in rule.get("matches") or [] if not _is_routing_match(m, header)]
        if kept:
            out.append({**rule, "matches": kept})
    return out


def _expand_lora(rules: list[Any], namespace: str, adapters: list[Any], header: str) -> None:
    named = sorted(str(a["name"]) for a in adapters if isinstance(a, dict) and a.get("name"))
    for rule in rules:
        extra = []
        for match in rule.get("matches") or []:
            if not _is_routing_match(match, header):
                continue
            for adapter in named:
                copy = clone(match)
                for h in copy["headers"]:
                    if h.get("name") == header:
                        h["value"] = f"publishers/{namespace}/models/{adapter}"
                extra.append(copy)
        if extra:
            rule["matches"] = list(rule.get("matches") or []) + extra


def http_route(svc: LLMService, spec: Spec, options: LLMOptions, peers: list[LLMService] | None = None) -> Obj:
    route: Obj = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                  "metadata": meta(N.http_route(svc.name), svc.namespace, router_labels(svc, spec)), "spec": {}}  # fmt: skip
    route_spec = get_path(spec, "router", "route", "http", "spec")
    if isinstance(route_spec, dict):
        if model_routing_enabled(svc, spec, options):
            body = clone(route_spec)
            adapters = get_path(spec, "model", "lora", "adapters")
            if get_path(spec, "model", "lora") is not None and adapters:
                _expand_lora(body.get("rules") or [], svc.namespace, adapters, options.routing_header)
        elif options.routing_header:
            # stripped before the copy: the preset's model-routing rules are half of what a copy would take
            body = clone({**route_spec, "rules": _strip(route_spec.get("rules") or [], options.routing_header)})
        else:
            body = clone(route_spec)
        route["spec"] = body
    if get_path(spec, "router", "scheduler") is not None and not pool_has_ref(spec):
        for rule in route["spec"].get("rules") or []:
            for ref in rule.get("backendRefs") or []:
                if is_default_pool_ref(ref, svc.name):
                    ref["group"] = options.pool_group
        if options.pool_group == N.POOL_GROUP_V1:
            route["metadata"]["annotations"] = {N.ANN_POOL_MIGRATED: "v1"}
    if get_path(spec, "router", "route", "group") is not None:
        from .groups import matching_members, rewrite_rules

        rewrite_rules(route["spec"], svc, spec, matching_members(svc, peers or [svc]))
    return finish(route)


__all__ = ["has_managed_scheduler", "http_route"]
