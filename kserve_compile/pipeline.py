"""The compile pipeline, top to bottom.

    parse → default and validate → resolve mode, config and runtime → build each component → ingress → emit

``compile_documents`` takes parsed documents (``parse.py``), prepares them (``inputs.py``) and returns every object
KServe's controller (with its pod webhook inlined) would create, in apply order, plus warnings. Each
InferenceService compiles on its own; the problems of all of them are gathered and raised together, so a bad isvc
never yields partial output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import constants as C
from .components import Component, build_explainer, build_predictor, build_transformer, is_multi_model
from .config import KServeConfig
from .defaulting import default_isvc
from .emit import sort_objects
from .errors import CompileError, InputError, Problem
from .inputs import Context, prepare
from .mode import legacy_warning, resolve_mode
from .models import InferenceService, ServingRuntime
from .parse import Document
from .render.cluster_state import ClusterState
from .render.ingress import RoutedComponent, RouteInput, standard_ingress, standard_status
from .render.pod_webhook import inject_pod
from .render.storage import apply_storage_uris
from .standard.autoscaler import autoscaler
from .standard.deployment import deployment, pod_template
from .standard.otel import otel_collector
from .standard.service import service
from .validation import validate_isvc

if TYPE_CHECKING:  # Knative, canary, multi-node and graph support load only when an input needs them
    from .canary import Canary
    from .graph import IsvcTarget, TrainedModel
    from .multinode import MultiNode

@dataclass
class Result:
    objects: list[dict[str, Any]]
    warnings: list[Problem] = field(default_factory=list)


def compile_documents(docs: Sequence[Document]) -> Result:
    ctx = prepare(docs)
    problems = list(ctx.problems)
    objects: list[dict[str, Any]] = []
    warnings: list[Problem] = []
    compiled_isvcs: list[Compiled] = []
    for isvc, doc in ctx.isvcs:
        key = (isvc.metadata.namespace, isvc.metadata.name)
        try:
            compiled = compile_isvc(isvc, ctx.config, ctx.runtimes, ctx.cluster, ctx.trained.get(key, []))
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
            continue
        except CompileError as exc:
            problems.extend(p.with_context(file=doc.file, kind=doc.kind, name=doc.name) for p in exc.problems)
            continue
        objects.extend(compiled.objects)
        warnings.extend(doc.problem(n, severity="warning") for n in compiled.notes)
        compiled_isvcs.append(compiled)
    if ctx.graphs:
        objects += _graphs(ctx, compiled_isvcs, problems)
    llm_namespaces: set[str] = set()
    if ctx.llm_docs:
        objects += _llm_services(ctx, problems, warnings, llm_namespaces)
    try:
        objects += ca_bundle_config_maps(ctx, {c.plan.isvc.metadata.namespace for c in compiled_isvcs} | llm_namespaces)
    except CompileError as exc:
        problems.extend(exc.problems)
    if problems:
        raise CompileError(problems + warnings)
    return Result(sort_objects(objects), warnings)


def _graphs(ctx: Context, compiled: Sequence[Compiled], problems: list[Problem]) -> list[dict[str, Any]]:
    """InferenceGraphs, whose steps reach the isvcs of the same run through their rendered addresses."""
    from .graph import render_graph

    targets = {(c.plan.isvc.metadata.namespace, c.plan.isvc.metadata.name): c.target(ctx.config, ctx.runtimes) for c in compiled}
    objects: list[dict[str, Any]] = []
    for graph, doc in ctx.graphs:
        try:
            mode = resolve_mode(graph.metadata.annotations, (graph.status or {}).get("deploymentMode"), ctx.config)
            objects.extend(render_graph(graph, ctx.config, mode, targets))
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
    return objects


def _llm_services(ctx: Context, problems: list[Problem], warnings: list[Problem], namespaces: set[str]) -> list[dict[str, Any]]:
    """LLMInferenceServices, rendered by ``kserve_compile.llmisvc`` against the same config and live objects; their
    namespaces get the CA bundle copy too (the llmisvc controller runs the same CA-bundle reconciler)."""
    from .llmisvc import LLMContext, render_llm_services

    result = render_llm_services(ctx.llm_docs, LLMContext(ctx.config, ctx.cluster, ctx.config_data, ctx.llm_configmaps))
    problems.extend(result.problems)
    warnings.extend(result.warnings)
    namespaces.update(svc.namespace for svc, _ in result.services)
    return result.objects


@dataclass
class Plan:
    """An isvc after defaulting, validation, mode resolution and component building — before any object exists."""

    isvc: InferenceService
    mode: str
    components: list[Component]
    notes: list[str]
    multinode: MultiNode | None = None
    canaries: list[Canary] = field(default_factory=list)

    @property
    def stopped(self) -> bool:
        return self.isvc.metadata.annotations.get(C.ANN_STOP, "").lower() == "true"


def plan_isvc(isvc: InferenceService, config: KServeConfig, runtimes: Sequence[ServingRuntime]) -> Plan:
    notes: list[str] = []
    warning = legacy_warning(isvc.metadata.annotations)
    if warning:
        notes.append(warning)
    written = isvc
    isvc = default_isvc(isvc, config)
    status_mode = (isvc.status or {}).get("deploymentMode") if isinstance(isvc.status, dict) else None
    mode = resolve_mode(isvc.metadata.annotations, status_mode, config)
    notes.extend(validate_isvc(isvc, mode, config, source=written))
    if mode == C.MODE_MODELMESH:
        raise InputError("deployment mode ModelMesh is not supported by kserve-compile", f"metadata.annotations[{C.ANN_DEPLOYMENT_MODE}]")
    labels = dict(isvc.metadata.labels)
    stable = build_predictor(isvc, isvc.spec.predictor, config, runtimes, labels)
    components = [stable]
    multinode = canaries = None
    if mode == C.MODE_STANDARD:
        if isvc.spec.predictor.worker_spec is not None:
            from .multinode import expand_multinode

            multinode = expand_multinode(isvc, stable, config, labels)
            components[0] = multinode.head
        if isvc.spec.canary:
            from .canary import build_canaries

            canaries = build_canaries(isvc, stable, config, runtimes, labels)
    if isvc.spec.transformer is not None:
        components.append(build_transformer(isvc, config, labels))
    if isvc.spec.explainer is not None:
        components.append(build_explainer(isvc, config, labels))
    return Plan(isvc, mode, components, notes, multinode, canaries or [])


def route_input(plan: Plan, config: KServeConfig) -> RouteInput:
    routed = {
        c.kind: RoutedComponent(c.kind, c.name, c.spec.timeout, tuple(service(c, config)["spec"]["ports"]))
        for c in plan.components
    }
    meta = plan.isvc.metadata
    canaries: tuple[tuple[str, int], ...] = ()
    if plan.canaries:
        from .canary import route_canaries

        canaries = route_canaries(plan.canaries)
    return RouteInput(meta.name, meta.namespace, dict(meta.labels), dict(meta.annotations), routed, canaries)


@dataclass
class Compiled:
    plan: Plan
    objects: list[dict[str, Any]]
    notes: list[str]

    def target(self, config: KServeConfig, runtimes: Sequence[ServingRuntime]) -> IsvcTarget:
        """How an InferenceGraph step reaches this isvc (its address, protocol and model name)."""
        from .graph import IsvcTarget, isvc_target

        if self.plan.stopped:
            return IsvcTarget("", None, self.plan.isvc.metadata.name, error="InferenceService is stopped")
        return isvc_target(self.plan.isvc, isvc_address(self.plan, config), runtimes)


def isvc_address(plan: Plan, config: KServeConfig) -> str:
    route = route_input(plan, config)
    if plan.mode == C.MODE_KNATIVE:
        from .render.knative_ingress import knative_status

        return str((knative_status(route, config).get("address") or {}).get("url", ""))
    status = standard_status(route, config)
    return str((status.get("address") or {}).get("url", ""))


def compile_isvc(
    isvc: InferenceService,
    config: KServeConfig,
    runtimes: Sequence[ServingRuntime],
    cluster: ClusterState,
    trained_models: Sequence[TrainedModel] = (),
) -> Compiled:
    """Everything KServe creates for one InferenceService, and the warnings about it."""
    plan = plan_isvc(isvc, config, runtimes)
    notes = list(plan.notes)
    objects: list[dict[str, Any]] = []
    isvc_data = plan.isvc.model_dump(by_alias=True, exclude_none=True)
    build = _knative_workloads if plan.mode == C.MODE_KNATIVE else _standard_workloads
    for component in [] if plan.stopped else plan.components:
        objects += build(component, plan, isvc_data, config, cluster, notes)
    if not plan.stopped and (plan.multinode is not None or plan.canaries):

        def template_for(component: Component) -> tuple[dict[str, Any], list[str]]:
            return _pod_template(component, pod_template(component), isvc_data, config, cluster)

        from .canary import canary_objects
        from .multinode import multinode_objects

        if plan.multinode is not None:
            head_service = service(plan.multinode.head, config)
            extra, more = multinode_objects(plan.multinode, head_service, config, template_for)
            objects += extra
            notes += more
        extra, more = canary_objects(plan.canaries, config, template_for)
        objects += extra
        notes += more
    multi_model = is_multi_model(plan.isvc.spec.predictor)
    if trained_models:
        from .graph import check_trained_models, predictor_memory_limit

        check_trained_models(
            plan.isvc.metadata.name, trained_models, multi_model=multi_model, memory_limit=predictor_memory_limit(plan.isvc)
        )
    if multi_model:
        objects.append(_model_config_map(plan.isvc, trained_models))
    route = route_input(plan, config)
    if plan.mode == C.MODE_KNATIVE:
        from .render.knative_ingress import knative_ingress

        objects += knative_ingress(route, config)
    else:
        objects += standard_ingress(route, config)
    return Compiled(plan, objects, notes)


def _standard_workloads(
    component: Component, plan: Plan, isvc_data: dict[str, Any], config: KServeConfig, cluster: ClusterState, notes: list[str]
) -> list[dict[str, Any]]:
    """Standard mode: Service, Deployment (pod webhook inlined) and the autoscaler."""
    svc = service(component, config)
    template, more = _pod_template(component, pod_template(component), isvc_data, config, cluster)
    notes.extend(more)
    dep = deployment(component, template, config)
    return [svc, *otel_collector(component, config), dep, *autoscaler(component, dict(dep["metadata"]["labels"]), config)]


def _knative_workloads(
    component: Component, plan: Plan, isvc_data: dict[str, Any], config: KServeConfig, cluster: ClusterState, notes: list[str]
) -> list[dict[str, Any]]:
    """Knative mode: one Knative Service; a canary split needs the live rolled-out revision from status."""
    from .knative import knative_service, revision_template

    annotations = plan.isvc.metadata.annotations
    template, more = _pod_template(component, revision_template(component, annotations, config), isvc_data, config, cluster)
    notes.extend(more)
    revision = _rolled_out_revision(plan.isvc, component.kind)
    if component.spec.canary_traffic_percent is not None and revision is None:
        notes.append(
            f"{component.kind}: canaryTrafficPercent needs the previously rolled-out revision "
            f"(status.components.{component.kind}.latestRolledoutRevision), which the input does not carry; "
            "rendering the steady state (100% to the latest revision)"
        )
    return [knative_service(component, template, annotations, config, rolled_out_revision=revision)]


def _rolled_out_revision(isvc: InferenceService, kind: str) -> str | None:
    status = isvc.status if isinstance(isvc.status, dict) else {}
    entry = (status.get("components") or {}).get(kind) or {}
    value = entry.get("latestRolledoutRevision") if isinstance(entry, dict) else None
    return value if isinstance(value, str) and value else None


def _pod_template(
    component: Component, template: dict[str, Any], isvc: dict[str, Any], config: KServeConfig, cluster: ClusterState
) -> tuple[dict[str, Any], list[str]]:
    """The workload's pod template: the controller's own (with ``storageUris``), then the pod webhook inlined."""
    notes: list[str] = []
    if component.spec.storage_uris:
        uris = [u.model_dump(by_alias=True) for u in component.spec.storage_uris]
        model = getattr(component.spec, "model", None)
        storage = model.storage.model_dump(by_alias=True, exclude_none=True) if model is not None and model.storage else None
        spec, more = apply_storage_uris(
            template["spec"],
            uris,
            annotations=component.annotations,
            namespace=component.namespace,
            config=config,
            cluster=cluster,
            storage_container_name=getattr(component.spec, "storage_container_name", None),
            storage_spec=storage,
        )
        template = {**template, "spec": spec}
        notes += more
    # The webhook sees the Pod a ReplicaSet or Knative makes from the template: it has no name yet at admission.
    pod_name = template.get("metadata", {}).get("name")
    unnamed = {**template, "metadata": {k: v for k, v in template.get("metadata", {}).items() if k != "name"}}
    template, more = inject_pod(unnamed, namespace=component.namespace, config=config, cluster=cluster, isvc=isvc)
    if pod_name is not None:
        template["metadata"] = {"name": pod_name, **template["metadata"]}
    notes += more
    return template, notes


def _model_config_map(isvc: InferenceService, trained_models: Sequence[TrainedModel]) -> dict[str, Any]:
    """``modelconfig-<isvc>-0``: the model list (its TrainedModels) the multi-model agent reads."""
    from .graph import model_config_json

    meta: dict[str, Any] = {"name": f"modelconfig-{isvc.metadata.name}-0", "namespace": isvc.metadata.namespace}
    if isvc.metadata.labels:
        meta["labels"] = dict(isvc.metadata.labels)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"models.json": model_config_json(trained_models)}}


def ca_bundle_config_maps(ctx: Context, namespaces: set[str]) -> list[dict[str, Any]]:
    """KServe copies the CA bundle into each isvc namespace as ``global-ca-bundle`` (cabundleconfigmap reconciler)."""
    wanted = ctx.config.storage_initializer.ca_bundle_config_map_name
    if not wanted or not namespaces:
        return []
    if ctx.ca_bundle is None:
        raise CompileError(
            [Problem(f"storageInitializer.caBundleConfigMapName is {wanted!r}: give the ConfigMap {C.KSERVE_NAMESPACE}/{wanted} "
                     "as an input (KServe copies its cabundle.crt into every InferenceService namespace)", "data.storageInitializer")]
        )
    data = (ctx.ca_bundle.get("data") or {}).get(C.CA_BUNDLE_FILE_NAME)
    if not data:
        raise CompileError([Problem(f"specified cabundle file {C.CA_BUNDLE_FILE_NAME} not found in cabundle configmap {wanted}", "data")])
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP, "namespace": ns}, "data": {C.CA_BUNDLE_FILE_NAME: data}}
        for ns in sorted(namespaces)
    ]

