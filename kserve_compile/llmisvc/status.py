"""What KServe writes into an LLMInferenceService's status, where it can be known offline.

Mirrors ``updateRoutingStatus`` (``pkg/controller/v1alpha2/llmisvc/router.go``), ``observeWorkloadStatus``
(``workload_status.go``), the applied-config list and pinned preset names (``config_merge.go``). KServe takes the
URLs of a routed service from the live Gateways' addresses: offline they come from the ``gatewayAddresses`` option
(docs/llmisvc.md); without one, ``url`` is absent and ``path`` says where the service is mounted.
"""

from __future__ import annotations

from typing import Any

from . import names as N
from .llm_types import LLMService, Spec, get_path, has_managed_scheduler, pool_name
from .options import LLMOptions
from .presets import pins
from .render import STOP, RenderedService


def _workload(kind: str, name: str) -> dict[str, str]:
    group = "apps" if kind == "Deployment" else "leaderworkerset.x-k8s.io"
    return {"apiGroup": group, "kind": kind, "name": name}


def workloads(svc: LLMService, spec: Spec) -> dict[str, Any]:
    """``observeWorkloadStatus``."""
    out: dict[str, Any] = {
        "primary": _workload("LeaderWorkerSet", N.main_lws(svc.name)) if spec.get("worker") is not None
        else _workload("Deployment", N.main_deployment(svc.name)),
        "service": {"kind": "Service", "name": N.workload_service(svc.name)},
    }  # fmt: skip
    prefill = spec.get("prefill")
    if isinstance(prefill, dict):
        out["prefill"] = (_workload("LeaderWorkerSet", N.prefill_lws(svc.name)) if prefill.get("worker") is not None
                          else _workload("Deployment", N.prefill_deployment(svc.name)))  # fmt: skip
    if has_managed_scheduler(spec):
        out["scheduler"] = _workload("Deployment", N.scheduler_deployment(svc.name))
    return out


def _gateways(svc: LLMService, spec: Spec) -> list[str]:
    refs = get_path(spec, "router", "route", "http", "spec", "parentRefs") or []
    return sorted({f"{r.get('namespace') or svc.namespace}/{r.get('name', '')}" for r in refs if isinstance(r, dict)})


def llm_status(svc: LLMService, rendered: RenderedService, options: LLMOptions) -> dict[str, Any]:
    spec = rendered.spec
    status: dict[str, Any] = {"kind": "LLMInferenceService", "appliedConfigs": rendered.applied}
    if pins(svc, options):
        status["annotations"] = pins(svc, options)
    if svc.annotations.get(STOP, "").lower() == "true":
        return status
    status["workloads"] = workloads(svc, spec)
    scheme = "https" if options.enable_tls else "http"
    if get_path(spec, "router", "route") is None:
        host = f"{N.workload_service(svc.name)}.{svc.namespace}.svc.{options.cluster_domain}"
        status["addresses"] = [{"url": f"{scheme}://{host}"}]
        return status
    gateways = _gateways(svc, spec)
    router: dict[str, Any] = {"gateways": gateways}
    if has_managed_scheduler(spec):
        router["scheduler"] = {"inferencePool": pool_name(spec, svc.name), "service": N.epp_service(svc.name)}
    status["router"] = router
    path = f"/{svc.namespace}/{svc.name}"
    urls = sorted(
        f"{options.gateway_addresses[g].rstrip('/')}{path}" for g in gateways if g in options.gateway_addresses
    )
    status["path"] = path
    if urls:
        status["url"] = urls[0]
        status["addresses"] = [{"url": u} for u in urls]
    return status
