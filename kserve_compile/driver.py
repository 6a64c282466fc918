"""The compile pipeline, top to bottom.

    parse → inputs → plan (default, validate, mode, runtime, components) → workloads (pod webhook inlined)
          → ingress → emit

``compile_documents`` takes parsed documents (``parse.py``), prepares them (``inputs.py``) and returns every object
KServe's controller (with its pod webhook inlined) would create, in apply order, plus warnings. Each
InferenceService compiles on its own, as a straight sequence of steps that each return objects plus notes
(:class:`Rendered`); the problems of all of them are gathered and raised together, so a bad isvc never yields
partial output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import constants as C
from .emit import sort_objects
from .errors import CompileError, InputError, Problem
from .gcpause import gc_paused
from .inputs.cluster_state import ClusterState
from .inputs.config import KServeConfig
from .inputs.context import Context, prepare
from .inputs.parse import Document
from .inputs.resources import InferenceService, ServingRuntime
from .localmodel.rewrite import rewrite_isvc
from .plan.components import Component, is_multi_model
from .plan.isvc import Plan, isvc_address, plan_isvc, route_input
from .plan.mode import resolve_mode
from .provenance import is_tracing, stamp
from .provenance.sources import builder_origin, pod_template_origin
from .render.ingress.standard import standard_ingress
from .render.pod_webhook.inject import inject_pod
from .render.pod_webhook.storage import apply_storage_uris
from .render.workloads.standard import standard_workload
from .render.workloads.standard.deployment import pod_template
from .render.workloads.standard.service import service

if TYPE_CHECKING:  # graph and LLM support load only when an input needs them
    from .graph import IsvcTarget, TrainedModel
    from .llmisvc.models import LLMService


@dataclass
class Result:
    objects: list[dict[str, Any]]
    warnings: list[Problem] = field(default_factory=list)


@dataclass
class Rendered:
    """What every step of an isvc's flow returns: objects, and notes (warnings) about them."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __iadd__(self, other: Rendered) -> Rendered:
        self.objects += other.objects
        self.notes += other.notes
        return self


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


# --- the run -------------------------------------------------------------------------------------------------------


@gc_paused
def compile_documents(docs: Sequence[Document]) -> Result:
    ctx = prepare(docs)
    problems = list(ctx.problems)
    objects: list[dict[str, Any]] = []
    warnings: list[Problem] = []
    compiled_isvcs: list[Compiled] = []
    for isvc, doc in ctx.isvcs:
        key = (isvc.metadata.namespace, isvc.metadata.name)
        try:
            isvc = rewrite_isvc(isvc, ctx.local_models, ctx.config)
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
    llm_services: list[LLMService] = []  # filled first: they are local-model cache consumers too
    if ctx.llm_docs:
        objects += _llm_services(ctx, problems, warnings, llm_services)
    if ctx.local_models is not None:
        objects += _local_models(ctx, compiled_isvcs, llm_services, problems, warnings)
    llm_namespaces = {svc.namespace for svc in llm_services}
    try:
        objects += ca_bundle_config_maps(ctx, {c.plan.isvc.metadata.namespace for c in compiled_isvcs} | llm_namespaces)
    except CompileError as exc:
        problems.extend(exc.problems)
    if problems:
        raise CompileError(problems + warnings)
    if is_tracing():
        for obj in objects:
            stamp(obj, builder_origin(obj))
    return Result(sort_objects(objects), warnings)


def _graphs(ctx: Context, compiled: Sequence[Compiled], problems: list[Problem]) -> list[dict[str, Any]]:
    """InferenceGraphs, whose steps reach the isvcs of the same run through their rendered addresses."""
    from .graph import render_graph

    targets = {
        (c.plan.isvc.metadata.namespace, c.plan.isvc.metadata.name): c.target(ctx.config, ctx.runtimes)
        for c in compiled
    }
    objects: list[dict[str, Any]] = []
    for graph, doc in ctx.graphs:
        try:
            mode = resolve_mode(graph.metadata.annotations, (graph.status or {}).get("deploymentMode"), ctx.config)
            objects.extend(render_graph(graph, ctx.config, mode, targets))
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
    return objects


def _local_models(
    ctx: Context,
    compiled: Sequence[Compiled],
    llm_services: Sequence[LLMService],
    problems: list[Problem],
    warnings: list[Problem],
) -> list[dict[str, Any]]:
    """The caches' volumes, LocalModelNodes and download Jobs; the isvcs and LLMInferenceServices labelled for a cache
    are its consumers (``ReconcileForIsvcs`` lists both kinds)."""
    from .localmodel.controller import Consumer
    from .localmodel.render import render

    assert ctx.local_models is not None
    consumers = [
        Consumer(C.KIND_ISVC, m.namespace, m.name, m.labels, m.annotations)
        for m in (c.plan.isvc.metadata for c in compiled)
    ]
    consumers += [Consumer(C.KIND_LLMISVC, s.namespace, s.name, s.labels, s.annotations) for s in llm_services]
    try:
        objects, more = render(ctx.local_models, consumers, ctx.config, ctx.cluster)
    except CompileError as exc:
        problems.extend(exc.problems)
        return []
    warnings.extend(more)
    return objects


def _llm_services(
    ctx: Context, problems: list[Problem], warnings: list[Problem], services: list[LLMService]
) -> list[dict[str, Any]]:
    """LLMInferenceServices, rendered by ``kserve_compile.llmisvc`` against the same config, live objects and local
    model caches; ``services`` gets each rendered one, as its webhook left it (its namespace gets the CA bundle copy
    too: the llmisvc controller runs the same CA-bundle reconciler)."""
    from .llmisvc import LLMContext, render_llm_services

    llm_ctx = LLMContext(ctx.config, ctx.cluster, ctx.config_data, ctx.llm_configmaps, ctx.local_models)
    result = render_llm_services(ctx.llm_docs, llm_ctx)
    problems.extend(result.problems)
    warnings.extend(result.warnings)
    services.extend(svc for svc, _ in result.services)
    return result.objects


# --- one InferenceService ------------------------------------------------------------------------------------------


def compile_isvc(
    isvc: InferenceService,
    config: KServeConfig,
    runtimes: Sequence[ServingRuntime],
    cluster: ClusterState,
    trained_models: Sequence[TrainedModel] = (),
) -> Compiled:
    """Everything KServe creates for one InferenceService, and the warnings about it."""
    plan = plan_isvc(isvc, config, runtimes)
    out = Rendered(notes=list(plan.notes))
    out += workloads(plan, config, cluster)
    out += model_config(plan, trained_models)
    out += ingress(plan, config)
    return Compiled(plan, out.objects, out.notes)


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


def model_config(plan: Plan, trained_models: Sequence[TrainedModel]) -> Rendered:
    """A multi-model predictor's ``modelconfig-<isvc>-0`` ConfigMap, after the TrainedModels' controller checks."""
    multi_model = is_multi_model(plan.isvc.spec.predictor)
    if trained_models:
        from .graph import check_trained_models, predictor_memory_limit

        limit = predictor_memory_limit(plan.isvc)
        check_trained_models(plan.isvc.metadata.name, trained_models, multi_model=multi_model, memory_limit=limit)
    return Rendered([_model_config_map(plan.isvc, trained_models)] if multi_model else [])


def ingress(plan: Plan, config: KServeConfig) -> Rendered:
    route = route_input(plan, config)
    if plan.mode == C.MODE_KNATIVE:
        from .render.ingress.virtualservice import knative_ingress

        return Rendered(knative_ingress(route, config))
    return Rendered(standard_ingress(route, config))


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
    return Rendered(standard_workload(component, template, config), notes)


def _multinode_workers(
    plan: Plan, logger: dict[str, Any] | None, config: KServeConfig, cluster: ClusterState
) -> Rendered:
    from .render.workloads.multinode import multinode_objects

    assert plan.multinode is not None
    worker = plan.multinode.worker
    template, notes = finished_pod_template(worker, pod_template(worker), logger, config, cluster)
    return Rendered(multinode_objects(plan.multinode, service(plan.multinode.head, config), template, config), notes)


def _knative_workload(
    component: Component, plan: Plan, logger: dict[str, Any] | None, config: KServeConfig, cluster: ClusterState
) -> Rendered:
    """Knative mode: one Knative Service; a canary split needs the live rolled-out revision from status."""
    from .render.workloads.knative import knative_service, revision_template

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
    entry = (status.get("components") or {}).get(kind) or {}
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


def _model_config_map(isvc: InferenceService, trained_models: Sequence[TrainedModel]) -> dict[str, Any]:
    """``modelconfig-<isvc>-0``: the model list (its TrainedModels) the multi-model agent reads."""
    from .graph import model_config_json

    meta: dict[str, Any] = {"name": f"modelconfig-{isvc.metadata.name}-0", "namespace": isvc.metadata.namespace}
    if isvc.metadata.labels:
        meta["labels"] = dict(isvc.metadata.labels)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {C.MODEL_CONFIG_FILE: model_config_json(trained_models)},
    }


def ca_bundle_config_maps(ctx: Context, namespaces: set[str]) -> list[dict[str, Any]]:
    """KServe copies the CA bundle into each isvc namespace as ``global-ca-bundle`` (cabundleconfigmap reconciler)."""
    wanted = ctx.config.storage_initializer.ca_bundle_config_map_name
    if not wanted or not namespaces:
        return []
    if ctx.ca_bundle is None:
        raise CompileError(
            [
                Problem(
                    f"storageInitializer.caBundleConfigMapName is {wanted!r}: give the ConfigMap {C.KSERVE_NAMESPACE}/{wanted} "
                    "as an input (KServe copies its cabundle.crt into every InferenceService namespace)",
                    "data.storageInitializer",
                )
            ]
        )
    data = (ctx.ca_bundle.get("data") or {}).get(C.CA_BUNDLE_FILE_NAME)
    if not data:
        raise CompileError(
            [
                Problem(
                    f"specified cabundle file {C.CA_BUNDLE_FILE_NAME} not found in cabundle configmap {wanted}", "data"
                )
            ]
        )
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP, "namespace": ns},
            "data": {C.CA_BUNDLE_FILE_NAME: data},
        }
        for ns in sorted(namespaces)
    ]
