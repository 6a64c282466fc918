"""Render one planned InferenceService: what KServe's component reconcilers create, with the pod webhook inlined.

    plan → workloads (each component; Standard-mode multi-node workers and canaries) → modelconfig ConfigMap
         → ingress (→ through KEDA's HTTP add-on, kserve-compile's opt-in scale to zero)

Each step returns objects plus notes (:class:`Rendered`); sources: ``components/predictor.go``, ``transformer.go``,
``explainer.go``, ``reconcilers/raw/raw_kube_reconciler.go``, ``reconcilers/knative/ksvc_reconciler.go``,
``pkg/webhook/admission/pod/mutator.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..inputs.cluster_state import ClusterState
from ..inputs.config import KServeConfig
from ..inputs.serving_types import InferenceService
from ..plan.components import Component, is_multi_model
from ..plan.isvc import Plan
from ..plan.status import route_input
from ..provenance import is_tracing, stamp
from ..provenance.sources import pod_template_origin
from .ingress.standard import standard_ingress
from .pod_webhook.inject import inject_pod
from .pod_webhook.storage import apply_storage_uris
from .workloads.standard import standard_workload
from .workloads.standard.deployment import pod_template
from .workloads.standard.service import service


@dataclass
class Rendered:
    """What every step of an isvc's flow returns: objects, and notes (warnings) about them."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __iadd__(self, other: Rendered) -> Rendered:
        self.objects += other.objects
        self.notes += other.notes
        return self


def render_isvc(plan: Plan, config: KServeConfig, cluster: ClusterState) -> Rendered:
    """Everything KServe creates for one planned InferenceService, and the notes about it."""
    out = Rendered(notes=list(plan.notes))
    out += workloads(plan, config, cluster)
    out += model_config(plan)
    routed = ingress(plan, config)
    if plan.scale_to_zero is not None and not plan.stopped:
        out += scale_to_zero(plan, routed.objects)
    out += routed
    return out


def workloads(plan: Plan, config: KServeConfig, cluster: ClusterState) -> Rendered:
    """Each component's workload, then (Standard mode) the multi-node workers and the canaries; none when stopped."""
    out = Rendered()
    if plan.stopped:
        return out
    logger = _predictor_logger(plan.isvc)
    build = _knative_workload if plan.mode == C.MODE_KNATIVE else _standard_workload
    for component in plan.components:
        out += build(component, plan, logger, config, cluster)
    if plan.multinode is not None:
        out += _multinode_workers(plan, logger, config, cluster)
    for canary in plan.canaries:
        template, notes = finished_pod_template(
            canary.component, pod_template(canary.component), logger, config, cluster
        )
        out += Rendered(standard_workload(canary.component, template, config, otel=False), notes)
    return out


def model_config(plan: Plan) -> Rendered:
    """A multi-model predictor's ``modelconfig-<isvc>-0`` ConfigMap, empty as the isvc controller creates it (the
    TrainedModel controller fills in its models)."""
    return Rendered([_model_config_map(plan.isvc)] if is_multi_model(plan.isvc.spec.predictor) else [])


def ingress(plan: Plan, config: KServeConfig) -> Rendered:
    route = route_input(plan)
    if plan.mode == C.MODE_KNATIVE:
        from .ingress.virtualservice import knative_ingress

        return Rendered(knative_ingress(route, config))
    return Rendered(standard_ingress(route, config))


def scale_to_zero(plan: Plan, routed: list[dict[str, Any]]) -> Rendered:
    """kserve-compile's opt-in (``plan.scale_to_zero``): ``routed`` pointed at KEDA's HTTP add-on's interceptor, and
    per scaled component the HTTPScaledObject and proxy Service (and the ReferenceGrant HTTPRoutes need)."""
    from ..plan.scale_to_zero import ORIGIN
    from .ingress.interceptor import reference_grant, through_interceptor
    from .workloads.standard.scale_to_zero import http_scaled_object, proxy_service

    stz = plan.scale_to_zero
    assert stz is not None
    meta = plan.isvc.metadata
    rerouted = through_interceptor(routed, stz, meta.namespace)
    objects = []
    for component in plan.components:
        scaled = stz.components.get(component.kind)
        if scaled is not None:
            objects.append(http_scaled_object(component, scaled, stz, rerouted.hosts.get(scaled.name, [])))
            objects.append(proxy_service(component, scaled, stz.interceptor))
    if rerouted.cross_namespace:
        objects.append(reference_grant(meta.name, meta.namespace, stz))
    if is_tracing():
        for obj in objects:
            stamp(obj, ORIGIN)
    return Rendered(objects)


# --- workloads -----------------------------------------------------------------------------------------------------


def _predictor_logger(isvc: InferenceService) -> dict[str, Any] | None:
    """``spec.predictor.logger`` as data: all the pod webhook reads of the InferenceService."""
    logger = isvc.spec.predictor.logger
    return None if logger is None else logger.model_dump(by_alias=True, exclude_none=True)


def _standard_workload(
    component: Component, plan: Plan, logger: dict[str, Any] | None, config: KServeConfig, cluster: ClusterState
) -> Rendered:
    """Standard mode: Service, OpenTelemetryCollector, Deployment (pod webhook inlined) and the autoscaler."""
    template, notes = finished_pod_template(component, pod_template(component), logger, config, cluster)
    scaled = plan.scale_to_zero is not None and component.kind in plan.scale_to_zero.components
    return Rendered(standard_workload(component, template, config, autoscale=not scaled), notes)


def _multinode_workers(
    plan: Plan, logger: dict[str, Any] | None, config: KServeConfig, cluster: ClusterState
) -> Rendered:
    from .workloads.multinode import multinode_objects

    assert plan.multinode is not None
    worker = plan.multinode.worker
    template, notes = finished_pod_template(worker, pod_template(worker), logger, config, cluster)
    return Rendered(multinode_objects(plan.multinode, service(plan.multinode.head, config), template, config), notes)


def _knative_workload(
    component: Component, plan: Plan, logger: dict[str, Any] | None, config: KServeConfig, cluster: ClusterState
) -> Rendered:
    """Knative mode: one Knative Service; a canary split needs the live rolled-out revision from status."""
    from .workloads.knative import knative_service, revision_template

    annotations = plan.isvc.metadata.annotations
    revision = revision_template(component, annotations, config)
    template, notes = finished_pod_template(component, revision, logger, config, cluster, knative=True)
    rolled_out = _rolled_out_revision(plan.isvc, component.kind)
    if component.spec.canary_traffic_percent is not None and rolled_out is None:
        notes.append(
            f"{component.kind}: canaryTrafficPercent needs the previously rolled-out revision "
            f"(status.components.{component.kind}.latestRolledoutRevision), which the input does not carry; "
            "rendering the steady state (100% to the latest revision)"
        )
    return Rendered([knative_service(component, template, annotations, config, rolled_out_revision=rolled_out)], notes)


def _rolled_out_revision(isvc: InferenceService, kind: str) -> str | None:
    status = isvc.status if isinstance(isvc.status, dict) else {}
    components = status.get("components")
    entry = components.get(kind) if isinstance(components, dict) else None
    value = entry.get("latestRolledoutRevision") if isinstance(entry, dict) else None
    return value if isinstance(value, str) and value else None


def finished_pod_template(
    component: Component,
    template: dict[str, Any],
    logger: dict[str, Any] | None,
    config: KServeConfig,
    cluster: ClusterState,
    *,
    knative: bool = False,
) -> tuple[dict[str, Any], list[str]]:
    """A workload's pod template: the controller's own (with ``storageUris``), then the pod webhook inlined."""
    notes: list[str] = []
    if component.spec.storage_uris:
        template, notes = _with_storage_uris(component, template, config, cluster)
    # The webhook sees the Pod a ReplicaSet or Knative makes from the template: it has no name yet at admission.
    pod_name = template.get("metadata", {}).get("name")
    unnamed = {**template, "metadata": {k: v for k, v in template.get("metadata", {}).items() if k != "name"}}
    if is_tracing():
        stamp(unnamed, pod_template_origin(knative))
    template, more = inject_pod(
        unnamed, namespace=component.namespace, config=config, cluster=cluster, logger=logger, copy=False
    )
    if pod_name is not None:
        template["metadata"] = {"name": pod_name, **template["metadata"]}
    return template, notes + more


def _with_storage_uris(
    component: Component, template: dict[str, Any], config: KServeConfig, cluster: ClusterState
) -> tuple[dict[str, Any], list[str]]:
    uris = [u.model_dump(by_alias=True) for u in component.spec.storage_uris or []]
    model = getattr(component.spec, "model", None)
    storage = (
        model.storage.model_dump(by_alias=True, exclude_none=True) if model is not None and model.storage else None
    )
    spec, notes = apply_storage_uris(
        template["spec"],
        uris,
        annotations=component.annotations,
        namespace=component.namespace,
        config=config,
        cluster=cluster,
        storage_container_name=getattr(component.spec, "storage_container_name", None),
        storage_spec=storage,
    )
    return {**template, "spec": spec}, notes


def _model_config_map(isvc: InferenceService) -> dict[str, Any]:
    """``modelconfig-<isvc>-0`` with no models (``pkg/modelconfig/configmap.go`` ``CreateEmptyModelConfig``)."""
    meta: dict[str, Any] = {"name": f"modelconfig-{isvc.metadata.name}-0", "namespace": isvc.metadata.namespace}
    if isvc.metadata.labels:
        meta["labels"] = dict(isvc.metadata.labels)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {C.MODEL_CONFIG_FILE: "[]"}}
