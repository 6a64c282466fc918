"""Render one planned InferenceService: what KServe's component reconcilers create, with the pod webhook inlined.

    plan → workloads (each component; Standard-mode multi-node workers and canaries) → modelconfig ConfigMap
         → ingress (→ through KEDA's HTTP add-on, kserve-compile's opt-in scale to zero)

``inline_webhook`` (``--pod-webhook inline``, the default) writes what KServe's pod webhook adds at Pod admission
into every pod template; off (``--pod-webhook cluster``: the cluster runs KServe's webhook), the templates are
exactly what the controllers write — the annotations the webhook reads included — and the webhook's additions
become notes, so that ``explain`` can say which injector adds what to the Pods.

Each step returns objects plus notes (:class:`Rendered`); sources: ``components/predictor.go``, ``transformer.go``,
``explainer.go``, ``reconcilers/raw/raw_kube_reconciler.go``, ``reconcilers/knative/ksvc_reconciler.go``,
``pkg/webhook/admission/pod/mutator.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..errors import InputError, WebhookNote
from ..inputs.cluster_state import ClusterState
from ..inputs.config import KServeConfig
from ..inputs.serving_types import InferenceService
from ..kube.quantity import quantities_as_strings
from ..plan.components import Component, is_multi_model
from ..plan.isvc import Plan
from ..plan.status import route_input
from ..provenance import is_tracing, stamp
from ..provenance.sources import INJECTORS, pod_template_origin
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


def render_isvc(plan: Plan, config: KServeConfig, cluster: ClusterState, *, inline_webhook: bool = True) -> Rendered:
    """Everything KServe creates for one planned InferenceService, and the notes about it."""
    out = Rendered(notes=list(plan.notes))
    out += workloads(plan, config, cluster, inline_webhook=inline_webhook)
    out += model_config(plan)
    routed = ingress(plan, config)
    if plan.scale_to_zero is not None and not plan.stopped:
        out += scale_to_zero(plan, routed.objects)
    out += routed
    return out


def workloads(plan: Plan, config: KServeConfig, cluster: ClusterState, *, inline_webhook: bool = True) -> Rendered:
    """Each component's workload, then (Standard mode) the multi-node workers and the canaries; none when stopped."""
    out = Rendered()
    if plan.stopped:
        return out
    pods = Pods(_predictor_logger(plan.isvc), config, cluster, inline_webhook)
    build = _knative_workload if plan.mode == C.MODE_KNATIVE else _standard_workload
    for component in plan.components:
        out += build(component, plan, pods)
    if plan.multinode is not None:
        out += _multinode_workers(plan, pods)
    for canary in plan.canaries:
        template, notes = pods.finished(canary.component, pod_template(canary.component))
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


@dataclass(frozen=True)
class Pods:
    """How an isvc's pod templates are finished: what the pod webhook reads, and whether it is inlined."""

    logger: dict[str, Any] | None
    config: KServeConfig
    cluster: ClusterState
    inline_webhook: bool = True

    def finished(
        self, component: Component, template: dict[str, Any], *, knative: bool = False
    ) -> tuple[dict[str, Any], list[str]]:
        """A workload's pod template: the controller's own (with ``storageUris``), then the pod webhook inlined —
        or, left to the cluster's webhook, as the controller writes it (what the webhook would add said in explain)."""
        notes: list[str] = []
        if component.spec.storage_uris:
            template, notes = _with_storage_uris(component, template, self.config, self.cluster)
        # The webhook sees the Pod a ReplicaSet or Knative makes from the template: it has no name yet at admission.
        pod_name = template.get("metadata", {}).get("name")
        unnamed = {**template, "metadata": {k: v for k, v in template.get("metadata", {}).items() if k != "name"}}
        if is_tracing():
            stamp(unnamed, pod_template_origin(knative))
        if not self.inline_webhook:
            quantities_as_strings(template.get("spec"))
            return template, notes + self._left_to_the_cluster(component, unnamed)
        finished, more = self._inject(component, unnamed, copy=False)
        if pod_name is not None:
            finished["metadata"] = {"name": pod_name, **finished["metadata"]}
        quantities_as_strings(finished.get("spec"))
        return finished, notes + more

    def _inject(
        self, component: Component, template: dict[str, Any], *, copy: bool, added: list | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        return inject_pod(
            template,
            namespace=component.namespace,
            config=self.config,
            cluster=self.cluster,
            logger=self.logger,
            copy=copy,
            added=added,
        )

    def _left_to_the_cluster(self, component: Component, template: dict[str, Any]) -> list[str]:
        """While tracing (explain): one note per injector saying what KServe's webhook will add to the Pods."""
        if not is_tracing():
            return []
        added: list[tuple[str, list[str]]] = []
        try:
            self._inject(component, template, copy=True, added=added)
        except InputError:
            return []  # the cluster's webhook would refuse the Pod; the output is still the controller's
        return [
            WebhookNote(
                f"{component.name}: at Pod admission, KServe's pod webhook ({injector}: {INJECTORS[injector][0]}) "
                f"adds {', '.join(parts)} (--pod-webhook cluster: not rendered)"
            )
            for injector, parts in added
        ]


def _standard_workload(component: Component, plan: Plan, pods: Pods) -> Rendered:
    """Standard mode: Service, OpenTelemetryCollector, Deployment (pod webhook inlined) and the autoscaler."""
    template, notes = pods.finished(component, pod_template(component))
    scaled = plan.scale_to_zero is not None and component.kind in plan.scale_to_zero.components
    return Rendered(standard_workload(component, template, pods.config, autoscale=not scaled), notes)


def _multinode_workers(plan: Plan, pods: Pods) -> Rendered:
    from .workloads.multinode import multinode_objects

    assert plan.multinode is not None
    worker = plan.multinode.worker
    template, notes = pods.finished(worker, pod_template(worker))
    head_service = service(plan.multinode.head, pods.config)
    return Rendered(multinode_objects(plan.multinode, head_service, template, pods.config), notes)


def _knative_workload(component: Component, plan: Plan, pods: Pods) -> Rendered:
    """Knative mode: one Knative Service; a canary split needs the live rolled-out revision from status."""
    from .workloads.knative import knative_service, revision_template

    annotations = plan.isvc.metadata.annotations
    revision = revision_template(component, annotations, pods.config)
    template, notes = pods.finished(component, revision, knative=True)
    rolled_out = _rolled_out_revision(plan.isvc, component.kind)
    if component.spec.canary_traffic_percent is not None and rolled_out is None:
        notes.append(
            f"{component.kind}: canaryTrafficPercent needs the previously rolled-out revision "
            f"(status.components.{component.kind}.latestRolledoutRevision), which the input does not carry; "
            "rendering the steady state (100% to the latest revision)"
        )
    service_ = knative_service(component, template, annotations, pods.config, rolled_out_revision=rolled_out)
    return Rendered([service_], notes)


def _rolled_out_revision(isvc: InferenceService, kind: str) -> str | None:
    status = isvc.status if isinstance(isvc.status, dict) else {}
    components = status.get("components")
    entry = components.get(kind) if isinstance(components, dict) else None
    value = entry.get("latestRolledoutRevision") if isinstance(entry, dict) else None
    return value if isinstance(value, str) and value else None


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
