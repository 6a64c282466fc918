"""One LLMInferenceService → every object KServe's llmisvc controller creates for it.

Mirrors the reconcile order of ``pkg/controller/v1alpha2/llmisvc/controller.go``: ``reconcileBaseRefs`` (merge and
dry-run validation), ``reconcileWorkload`` (self-signed certificates, multi-node, single-node, workload Service,
scaling) and ``reconcileRouter`` (scheduler, HTTPRoute). A stopped service (``serving.kserve.io/stop: "true"``)
keeps none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..checks.shapes import spec_problem
from ..errors import InputError
from . import names as N
from .combine import combine, tokenizer_enabled
from .common import Obj, finish, meta
from .dra import claim_template
from .dra import enabled as dra_enabled
from .dra import validate as validate_dra
from .llm_types import LLMService, Spec, get_path, has_managed_scheduler
from .multinode import main_lws, prefill_lws
from .options import LLMOptions
from .presets import ConfigStore
from .router import http_route
from .scaling import scaling_objects
from .scheduler import scheduler_objects
from .validation import validate_spec
from .workload import (
    main_deployment,
    prefill_deployment,
    sidecar_rbac,
    workload_service,
)

STOP = "serving.kserve.io/stop"


@dataclass
class RenderedService:
    objects: list[Obj] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    spec: Spec = field(default_factory=dict)
    applied: list[dict[str, str]] = field(default_factory=list)


class ValidationFailed(Exception):
    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def render_service(
    svc: LLMService, ctx: Any, store: ConfigStore, options: LLMOptions, peers: list[LLMService] | None = None
) -> RenderedService:
    problems = validate_spec(svc.spec, svc.name) + validate_dra(svc.annotations)
    if problems:
        raise ValidationFailed(problems)
    combined = combine(svc, store, options, ctx.configmaps)
    spec = combined.spec
    # the service was checked as written; a config from the inputs may be templated: its merge is checked again
    wrong_type = spec_problem(C.V1ALPHA2, C.KIND_LLMISVC, spec) if combined.given_configs else None
    merged_problems = [wrong_type] if wrong_type else validate_spec(spec, svc.name)
    if merged_problems:
        refs = ", ".join(f"{a['source']}:{a['namespace']}/{a['name']}" for a in combined.applied)
        raise ValidationFailed(
            [(p, f"dry-run validation failed after merging configs [{refs}]: {p}: {m}") for p, m in merged_problems]
        )
    out = RenderedService(spec=spec, applied=combined.applied)
    if svc.annotations.get(STOP, "").lower() == "true":
        return out
    out.objects += self_signed_certificate(svc, spec, options)
    if dra_enabled(svc):
        out.objects.append(claim_template(svc))
    out.objects += _workloads(svc, spec, ctx, out.notes)
    out.objects.append(workload_service(svc, spec, options.enable_tls))
    out.objects += scaling_objects(svc, spec, options)
    if has_managed_scheduler(spec):
        out.objects += scheduler_objects(svc, spec, ctx, options, out.notes)
    if get_path(spec, "router", "route", "http", "spec") is not None:
        out.objects.append(http_route(svc, spec, options, peers))
    return out


def _workloads(svc: LLMService, spec: Spec, ctx: Any, notes: list[str]) -> list[Obj]:
    objects: list[Obj] = []
    prefill = spec.get("prefill")
    if spec.get("worker") is not None:
        objects += main_lws(svc, spec, ctx, notes)[0]
    if isinstance(prefill, dict) and prefill.get("worker") is not None:
        objects += prefill_lws(svc, spec, ctx, notes)
    deployment, sidecar = main_deployment(svc, spec, ctx, notes)
    if sidecar:
        objects += sidecar_rbac(svc, spec, ctx.cluster)
    if spec.get("worker") is None:
        objects.append(deployment)
    if isinstance(prefill, dict) and prefill.get("worker") is None:
        objects.append(prefill_deployment(svc, spec, ctx, notes))
    return objects


def self_signed_certificate(svc: LLMService, spec: Spec, options: LLMOptions) -> list[Obj]:
    """The ``<name>-kserve-self-signed-certs`` Secret the presets mount, as a cert-manager Certificate when asked.

    KServe's controller generates a self-signed key pair in-process (``workload_tls_self_signed.go``): random, so
    not renderable. With ``selfSignedCertificate: cert-manager`` a Certificate with the same Secret name, labels and
    the DNS names of ``collectDNSNames`` (plus ``127.0.0.1``; pod IPs are live) is emitted; with ``none`` (default)
    the Secret is left to the cluster (see docs/llmisvc.md).
    """
    if options.self_signed_certificate != "cert-manager":
        return []
    hosts = [N.workload_service(svc.name)]
    picker = get_path(spec, "router", "scheduler", "pool", "spec", "endpointPickerRef", "name")
    if get_path(spec, "router", "scheduler", "pool") is not None and picker:
        hosts.append(str(picker))
    if tokenizer_enabled(spec):
        hosts.append(N.tokenizer(svc.name))
    dns = ["localhost"] + [
        name
        for h in hosts
        for name in (f"{h}.{svc.namespace}.svc.{options.cluster_domain}", f"{h}.{svc.namespace}.svc")
    ]
    kind, issuer = options.cert_manager_issuer
    secret = N.self_signed_secret(svc.name)
    return [finish({
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": meta(secret, svc.namespace, N.base_labels(svc.name, N.WORKLOAD)),
        "spec": {"dnsNames": sorted(dns), "ipAddresses": ["127.0.0.1"], "issuerRef": {"group": "cert-manager.io", "kind": kind, "name": issuer},
                 "secretName": secret},
    })]  # fmt: skip


__all__ = ["InputError", "RenderedService", "ValidationFailed", "render_service"]
