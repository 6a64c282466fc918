"""The objects KServe's InferenceGraph controller creates (``pkg/controller/v1alpha1/inferencegraph/``).

* ``serviceName`` steps get ``serviceUrl`` = the isvc's address URL + predict path (``controller.go``).
* The router container runs ``--graph-json <spec>``, the spec written as Go's ``json.Marshal`` writes it.
* Standard mode (``raw_ig.go``): Deployment, Service and HPA/KEDA/none through the same builders as isvc components.
* Knative mode (``knative_reconciler.go``): one Knative Service, no traffic block.
* ``serving.kserve.io/stop: "true"``: KServe deletes the workload, so nothing is rendered.

Ours, only when configured (:mod:`kserve_compile.graph.router_options`): retries in ``--graph-json`` where
kserve/kserve PR #5386 puts them; with metrics on, ``ROUTER_METRICS_PORT`` in the container's environment, the port
declared after the graph's (Standard mode, so the Service serves both: Knative allows a container one port, its
serving port) and the pod annotated for
Prometheus' pod discovery (``prometheus.io/scrape``, ``/port``, ``/path``); an in-flight limit as
``ROUTER_MAX_INFLIGHT``. Environment variables, not flags: KServe's Go router ignores them, a flag would stop it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import constants as C
from ..errors import InputError
from ..inputs.config import KServeConfig, RouterConfig
from ..inputs.serving_types import ComponentExtension
from ..kube.quantity import QUANTITY_FORMAT_ERROR, canonical_quantity, is_quantity
from ..plan.components import Component
from ..plan.domain import generate_domain_name
from ..render.workloads.knative.autoscaling import (
    initial_scale_allowed,
    set_autoscaling_annotations,
)
from ..render.workloads.standard.autoscaler import autoscaler
from ..render.workloads.standard.deployment import deployment, pod_template
from ..render.workloads.standard.service import service
from .gojson import go_dumps, normalize
from .graph_types import GraphSpec, InferenceGraph
from .router_options import (
    ENV_ROUTER_MAX_INFLIGHT,
    ENV_ROUTER_METRICS_PORT,
    PROMETHEUS_SCRAPE,
    ROUTER_METRICS_PORT,
    ROUTER_METRICS_PORT_NAME,
    ROUTER_PORT_NAME,
    RouterOptions,
    retry_data,
    router_options,
    with_retries,
)
from .targets import IsvcTarget
from .validation import validate_graph

_NO_OPTIONS = RouterOptions(metrics=False, max_inflight=0)


def is_stopped(graph: InferenceGraph) -> bool:
    """``GetForceStopRuntime``: the stop annotation, case-insensitively ``true``."""
    return graph.metadata.annotations.get(C.ANN_STOP, "").lower() == "true"


def resolve_service_urls(graph: InferenceGraph, isvc_urls: Mapping[tuple[str, str], IsvcTarget]) -> GraphSpec:
    """The spec with every ``serviceName`` step's empty ``serviceUrl`` filled; unknown isvcs raise, naming the step."""
    namespace = graph.namespace
    nodes = {}
    for node_name, node in (graph.spec.nodes or {}).items():
        steps = []
        for i, step in enumerate(node.steps or []):
            if step.service_name:
                target = isvc_urls.get((namespace, step.service_name))
                where = f'step {i} ("{step.name}") in node "{node_name}" of InferenceGraph "{graph.metadata.name}"'
                path = f"spec.nodes.{node_name}.steps[{i}].serviceName"
                if target is None:
                    raise InputError(
                        f"Failed to find graph service {step.service_name}: {where} names InferenceService "
                        f'"{namespace}/{step.service_name}", which is not among the inputs',
                        path,
                    )
                if not step.service_url:
                    if target.error:
                        raise InputError(f"service {step.service_name} is not ready: {target.error} ({where})", path)
                    step = step.model_copy(update={"service_url": target.service_url})
            steps.append(step)
        nodes[node_name] = node.model_copy(update={"steps": steps if node.steps is not None else None})
    return graph.spec.model_copy(update={"nodes": nodes if graph.spec.nodes is not None else None})


def graph_json(spec: GraphSpec) -> str:
    """``json.Marshal(graph.Spec)``: Go field order, sorted maps, omitempty, ``"resources":{}`` always."""
    return go_dumps(_spec_data(spec))


def _spec_data(spec: GraphSpec) -> dict[str, Any]:
    nodes = None
    if spec.nodes is not None:
        nodes = {}
        for name in sorted(spec.nodes):
            node = spec.nodes[name]
            router: dict[str, Any] = {"routerType": node.router_type}
            if node.steps:
                router["steps"] = [_step_data(step) for step in node.steps]
            nodes[name] = router
    out: dict[str, Any] = {
        "nodes": nodes,
        "resources": normalize(spec.resources or {}, "ResourceRequirements", "spec.resources"),
    }
    if spec.affinity is not None:
        out["affinity"] = normalize(spec.affinity, "Affinity", "spec.affinity")
    if spec.timeout is not None:
        out["timeout"] = spec.timeout
    if spec.router_timeouts is not None:
        t = spec.router_timeouts
        fields = (
            ("serverRead", t.server_read),
            ("serverWrite", t.server_write),
            ("serverIdle", t.server_idle),
            ("serviceClient", t.service_client),
        )
        out["routerTimeouts"] = {k: v for k, v in fields if v is not None}
    if spec.min_replicas is not None:
        out["minReplicas"] = spec.min_replicas
    if spec.max_replicas:
        out["maxReplicas"] = spec.max_replicas
    if spec.scale_target is not None:
        out["scaleTarget"] = spec.scale_target
    if spec.scale_metric is not None:
        out["scaleMetric"] = spec.scale_metric
    if spec.tolerations:
        out["tolerations"] = normalize(spec.tolerations, ["Toleration"], "spec.tolerations")
    if spec.node_selector:
        out["nodeSelector"] = {k: spec.node_selector[k] for k in sorted(spec.node_selector)}
    if spec.node_name:
        out["nodeName"] = spec.node_name
    if spec.service_account_name:
        out["serviceAccountName"] = spec.service_account_name
    if spec.default_retry is not None:
        out["defaultRetry"] = retry_data(spec.default_retry)
    return out


def _step_data(step: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (
        ("name", step.name),
        ("nodeName", step.node_name),
        ("serviceName", step.service_name),
        ("serviceUrl", step.service_url),
        ("data", step.data),
    ):
        if value:
            out[key] = value
    if step.map_predictions_to_instances:
        out["mapPredictionsToInstances"] = True
    if step.weight is not None:
        out["weight"] = step.weight
    if step.condition:
        out["condition"] = step.condition
    if step.dependency:
        out["dependency"] = step.dependency
    if step.retry is not None:
        out["retry"] = retry_data(step.retry)
    return out


# --- the router container and pod ---------------------------------------------------------------------------------


def check_router_config(router: RouterConfig) -> None:
    """``getRouterConfigs``: all four resource defaults must be quantities, whatever the graph asks for."""
    for key, value in (
        ("memoryRequest", router.memory_request),
        ("memoryLimit", router.memory_limit),
        ("cpuRequest", router.cpu_request),
        ("cpuLimit", router.cpu_limit),
    ):
        if not is_quantity(value):
            raise InputError(
                f'Failed to parse resource configuration for router: "{QUANTITY_FORMAT_ERROR}"', f"data.router.{key}"
            )


def router_resources(spec: GraphSpec, router: RouterConfig) -> dict[str, Any]:
    """``constructResourceRequirements``: the spec's limits/requests if it sets any field, else the router defaults."""
    if spec.resources:
        given = normalize(spec.resources, "ResourceRequirements", "spec.resources")
        return {k: given[k] for k in ("limits", "requests") if k in given}
    return {
        "limits": {"cpu": canonical_quantity(router.cpu_limit), "memory": canonical_quantity(router.memory_limit)},
        "requests": {
            "cpu": canonical_quantity(router.cpu_request),
            "memory": canonical_quantity(router.memory_request),
        },
    }


def readiness_probe() -> dict[str, Any]:
    """``GetRouterReadinessProbe``."""
    return {
        "httpGet": {"path": C.ROUTER_READINESS_PATH, "port": C.ROUTER_PORT, "scheme": "HTTP"},
        "initialDelaySeconds": 5,
        "timeoutSeconds": 2,
        "periodSeconds": 5,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def router_container(
    spec: GraphSpec,
    router: RouterConfig,
    name: str | None,
    options: RouterOptions = _NO_OPTIONS,
    *,
    declare_metrics_port: bool = True,
) -> dict[str, Any]:
    container: dict[str, Any] = {}
    if name:
        container["name"] = name
    if router.image:
        container["image"] = router.image
    container["args"] = ["--graph-json", graph_json(spec)]
    env_list: list[dict[str, Any]] = []
    headers = router.headers or {}
    if "propagate" in headers:
        env: dict[str, Any] = {"name": C.ENV_ROUTER_PROPAGATE_HEADERS}
        value = ",".join(headers["propagate"] or [])
        if value:
            env["value"] = value
        env_list.append(env)
    if options.metrics:
        env_list.append({"name": ENV_ROUTER_METRICS_PORT, "value": str(ROUTER_METRICS_PORT)})
    if options.max_inflight:
        env_list.append({"name": ENV_ROUTER_MAX_INFLIGHT, "value": str(options.max_inflight)})
    if env_list:
        container["env"] = env_list
    if options.metrics and declare_metrics_port:
        # the graph's port first: the Service maps port 80 to the first one (createDefaultSvc), and adds the rest
        container["ports"] = [
            {"containerPort": C.ROUTER_PORT, "name": ROUTER_PORT_NAME, "protocol": "TCP"},
            {"containerPort": ROUTER_METRICS_PORT, "name": ROUTER_METRICS_PORT_NAME, "protocol": "TCP"},
        ]
    resources = router_resources(spec, router)
    container["resources"] = {k: v for k, v in resources.items() if v}
    container["readinessProbe"] = readiness_probe()
    if router.image_pull_policy:
        container["imagePullPolicy"] = router.image_pull_policy
    container["securityContext"] = {
        "privileged": False,
        "runAsNonRoot": True,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    return container


def router_pod_spec(
    spec: GraphSpec,
    router: RouterConfig,
    container_name: str | None,
    options: RouterOptions = _NO_OPTIONS,
    *,
    declare_metrics_port: bool = True,
) -> dict[str, Any]:
    """The pod spec both modes share (``createInferenceGraphPodSpec`` / the ksvc's PodSpec)."""
    container = router_container(spec, router, container_name, options, declare_metrics_port=declare_metrics_port)
    pod: dict[str, Any] = {"containers": [container]}
    if spec.affinity is not None:
        pod["affinity"] = normalize(spec.affinity, "Affinity", "spec.affinity")
    pod["automountServiceAccountToken"] = False
    if spec.tolerations:
        pod["tolerations"] = normalize(spec.tolerations, ["Toleration"], "spec.tolerations")
    if router.image_pull_secrets:
        pod["imagePullSecrets"] = [{"name": s} for s in router.image_pull_secrets]
    if spec.node_selector:
        pod["nodeSelector"] = dict(spec.node_selector)
    if spec.node_name:
        pod["nodeName"] = spec.node_name
    if spec.service_account_name:
        pod["serviceAccountName"] = spec.service_account_name
    return pod


# --- the two modes ------------------------------------------------------------------------------------------------


def render_graph(
    graph: InferenceGraph,
    config: KServeConfig,
    mode: str,
    isvc_urls: Mapping[tuple[str, str], IsvcTarget],
    *,
    allow_zero_initial_scale: bool = False,
) -> list[dict[str, Any]]:
    """Every object KServe creates for ``graph`` in ``mode`` (``Standard`` or ``Knative``).

    ``graph`` is validated first (:func:`validate_graph`). ``isvc_urls`` maps ``(namespace, name)`` of each isvc
    of the run to its :class:`IsvcTarget`. ``allow_zero_initial_scale`` mirrors Knative's ``config-autoscaler``
    (Knative mode only). Raises :class:`InputError` with the field path of the offending input.
    """
    validate_graph(graph)
    if mode not in (C.MODE_STANDARD, C.MODE_KNATIVE):
        raise InputError(
            f"deployment mode {mode} is not supported for an InferenceGraph",
            f"metadata.annotations[{C.ANN_DEPLOYMENT_MODE}]",
        )
    if is_stopped(graph):
        return []
    check_router_config(config.router)
    spec = with_retries(graph, resolve_service_urls(graph, isvc_urls))
    options = router_options(graph)
    if mode == C.MODE_STANDARD:
        return _standard(graph, spec, config, options)
    return [_knative_service(graph, spec, config, allow_zero_initial_scale, options)]


def scrape_annotations(options: RouterOptions) -> dict[str, str]:
    """What Prometheus' pod discovery reads (KServe's pod webhook sets the last two on an isvc's pods)."""
    if not options.metrics:
        return {}
    return {
        PROMETHEUS_SCRAPE: "true",
        C.ANN_PROMETHEUS_IO_PORT: str(ROUTER_METRICS_PORT),
        C.ANN_PROMETHEUS_IO_PATH: C.DEFAULT_PROMETHEUS_PATH,
    }


def _extension(spec: GraphSpec) -> ComponentExtension:
    return ComponentExtension(
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
        scale_target=spec.scale_target,
        scale_metric=spec.scale_metric,
    )


def _standard(
    graph: InferenceGraph, spec: GraphSpec, config: KServeConfig, options: RouterOptions
) -> list[dict[str, Any]]:
    name = graph.metadata.name
    component = Component(
        kind=C.KIND_IG,
        name=name,
        namespace=graph.namespace,
        labels={**graph.metadata.labels, C.LABEL_IG: name},
        annotations=dict(graph.metadata.annotations),
        pod_spec=router_pod_spec(spec, config.router, name, options),
        spec=_extension(spec),
    )
    template = pod_template(component)
    scrape = scrape_annotations(options)
    if scrape:
        template_meta = template.setdefault("metadata", {})
        template_meta["annotations"] = {**template_meta.get("annotations", {}), **scrape}
    dep = deployment(component, template, config)
    return [service(component, config), dep, *autoscaler(component, dict(dep["metadata"]["labels"]), config)]


def _knative_service(
    graph: InferenceGraph, spec: GraphSpec, config: KServeConfig, allow_zero: bool, options: RouterOptions
) -> dict[str, Any]:
    meta = graph.metadata
    annotations = dict(meta.annotations)
    value = annotations.get(C.ANN_KNATIVE_INITIAL_SCALE)
    if value is not None and not initial_scale_allowed(value, allow_zero=allow_zero):
        del annotations[C.ANN_KNATIVE_INITIAL_SCALE]
    set_autoscaling_annotations(annotations, _extension(spec))
    annotations.update(scrape_annotations(options))
    ksvc_annotations = {}
    if C.ANN_KNATIVE_OPENSHIFT_PASSTHROUGH in annotations:
        ksvc_annotations[C.ANN_KNATIVE_OPENSHIFT_PASSTHROUGH] = annotations.pop(C.ANN_KNATIVE_OPENSHIFT_PASSTHROUGH)
    labels = {k: v for k, v in meta.labels.items() if k not in C.DEFAULT_LABEL_DISALLOWED}
    labels[C.LABEL_IG] = meta.name
    labels[C.LABEL_KIND] = C.KIND_IG
    revision: dict[str, Any] = {}
    if spec.timeout is not None:
        revision["timeoutSeconds"] = spec.timeout
    revision.update(router_pod_spec(spec, config.router, None, options, declare_metrics_port=False))
    metadata: dict[str, Any] = {"name": meta.name, "namespace": graph.namespace}
    if meta.labels:
        metadata["labels"] = dict(meta.labels)
    if ksvc_annotations:
        metadata["annotations"] = ksvc_annotations
    return {
        "apiVersion": C.KNATIVE_SERVING_API_VERSION,
        "kind": C.KIND_KNATIVE_SERVICE,
        "metadata": metadata,
        "spec": {"template": {"metadata": {"labels": labels, "annotations": annotations}, "spec": revision}},
    }


def graph_status_url(graph: InferenceGraph, config: KServeConfig) -> str:
    """Standard mode's ``status.url`` (``createRawURL``): ``http://`` + the domain template for the graph's name.

    The template sees the graph's labels plus ``serving.kserve.io/inferencegraph`` and its annotations.
    """
    meta = graph.metadata
    labels = {**meta.labels, C.LABEL_IG: meta.name}
    return "http://" + generate_domain_name(meta.name, graph.namespace, config.ingress, labels, meta.annotations)
