"""The compile pipeline, top to bottom.

    parse → default and validate → resolve mode, config and runtime → build each component → ingress → emit

``compile_documents`` takes parsed documents and returns every object KServe's controller (with its pod webhook
inlined) would create, in apply order, plus warnings. Each InferenceService compiles on its own; the problems of all
of them are gathered and raised together, so a bad isvc never yields partial output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from . import constants as C
from .canary import Canary, build_canaries, canary_objects, route_canaries
from .components import Component, build_explainer, build_predictor, build_transformer, is_multi_model
from .config import KServeConfig, parse_config
from .defaulting import default_isvc
from .errors import CompileError, InputError, Problem
from .mode import legacy_warning, resolve_mode
from .multinode import MultiNode, expand_multinode, multinode_objects
from .models import InferenceService, ServingRuntime
from .parse import Document
from .render.cluster_state import ClusterState
from .graph import (
    InferenceGraph,
    IsvcTarget,
    TrainedModel,
    check_trained_models,
    group_by_isvc,
    isvc_target,
    model_config_json,
    predictor_memory_limit,
    render_graph,
    validate_trained_model,
)
from .knative import knative_service, revision_template
from .render.ingress import RoutedComponent, RouteInput, standard_ingress, standard_status
from .render.knative_ingress import knative_ingress, knative_status
from .render.pod_webhook import inject_pod
from .render.storage import apply_storage_uris
from .standard.autoscaler import autoscaler
from .standard.deployment import deployment, pod_template
from .standard.otel import otel_collector
from .standard.service import service
from .runtime_validation import validate_runtimes
from .validation import validate_isvc

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

SUPPORTED_KINDS: dict[tuple[str, str], str] = {
    (C.ISVC_API_VERSION, C.KIND_ISVC): "isvc",
    (C.V1ALPHA1, C.KIND_SR): "runtime",
    (C.V1ALPHA1, C.KIND_CSR): "runtime",
    (C.V1ALPHA1, C.KIND_CSC): "cluster",
    ("v1", "ServiceAccount"): "cluster",
    ("v1", "Secret"): "cluster",
    ("v1", "ConfigMap"): "configmap",
    (C.V1ALPHA1, C.KIND_IG): "graph",
    (C.V1ALPHA1, C.KIND_TM): "trained",
}


@dataclass
class Result:
    objects: list[dict[str, Any]]
    warnings: list[Problem] = field(default_factory=list)


# --- embedded defaults ---------------------------------------------------------------------------------------------


def _data_text(*parts: str) -> str:
    return resources.files("kserve_compile").joinpath("data", *parts).read_text("utf-8")


@cache
def embedded_configmap() -> dict[str, Any]:
    return yaml.load(_data_text("inferenceservice-config.yaml"), Loader=_Loader)


@cache
def embedded_runtimes() -> tuple[ServingRuntime, ...]:
    folder = resources.files("kserve_compile").joinpath("data", "runtimes")
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            out.append(ServingRuntime.model_validate(yaml.load(entry.read_text("utf-8"), Loader=_Loader)))
    return tuple(out)


@cache
def embedded_storage_containers() -> tuple[dict[str, Any], ...]:
    docs = yaml.load_all(_data_text("storagecontainers.yaml"), Loader=_Loader)
    return tuple(d for d in docs if d)


# --- the pipeline --------------------------------------------------------------------------------------------------


def _model(doc: Document, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-after", "function-before")))]
            path = ""
            for part in loc:
                path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
            message = _pydantic_message(err)
            inner = _INNER_PATH.match(message) if err["type"] == "value_error" else None
            if inner:  # a shape error inside inlined Kubernetes fields names its own sub-path
                path, message = f"{path}.{inner.group(1)}" if path else inner.group(1), inner.group(2)
            problems.append(doc.problem(message, path))
        raise CompileError(problems) from None


_INNER_PATH = re.compile(r"^([\w\[\]./-]+): ((?:value )?must be .*)$")


def _pydantic_message(err: Any) -> str:
    kind = err["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        return f"must be {err['ctx']['expected']}"
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    return f"{err['msg']} (got {err.get('input')!r:.80})"


def classify(docs: Sequence[Document]) -> dict[str, list[Document]]:
    groups: dict[str, list[Document]] = {group: [] for group in {*SUPPORTED_KINDS.values(), "other_configmap"}}
    problems = []
    for doc in docs:
        group = SUPPORTED_KINDS.get((doc.api_version, doc.kind))
        if group is None:
            problems.append(doc.problem(f"unsupported apiVersion/kind {doc.api_version or '<none>'}/{doc.kind or '<none>'}; "
                                        "kserve-compile reads InferenceService (serving.kserve.io/v1beta1), ServingRuntime, "
                                        "ClusterServingRuntime, ClusterStorageContainer, InferenceGraph, TrainedModel "
                                        "(serving.kserve.io/v1alpha1), "
                                        "the inferenceservice-config ConfigMap, ServiceAccount and Secret", "kind"))
            continue
        if group == "configmap" and doc.name != C.CONFIGMAP_NAME:
            group = "other_configmap"  # the CA-bundle source, once the config says which one it is
        if group in ("isvc", "runtime", "graph", "trained") and not doc.name:
            problems.append(doc.problem("metadata.name is required", "metadata.name"))
            continue
        groups.setdefault(group, []).append(doc)
    if problems:
        raise CompileError(problems)
    return groups


def load_config(configmaps: Sequence[Document]) -> KServeConfig:
    if len(configmaps) > 1:
        raise CompileError([d.problem(f"more than one {C.CONFIGMAP_NAME} ConfigMap in the inputs", "metadata.name") for d in configmaps[1:]])
    if configmaps:
        doc = configmaps[0]
        data = doc.data.get("data") or {}
        if not isinstance(data, dict):
            raise CompileError([doc.problem("data must be a mapping of strings", "data")])
        try:
            return parse_config(data)
        except InputError as exc:
            raise CompileError([doc.problem(exc.message, exc.path)]) from None
    return parse_config(embedded_configmap()["data"])


@dataclass
class Context:
    """What every isvc of a run compiles against: config, runtimes, live-object stand-ins, and the isvcs."""

    config: KServeConfig
    runtimes: list[ServingRuntime]
    cluster: ClusterState
    isvcs: list[tuple[InferenceService, Document]]
    problems: list[Problem]
    graphs: list[tuple[InferenceGraph, Document]] = field(default_factory=list)
    trained: dict[tuple[str, str], list[TrainedModel]] = field(default_factory=dict)
    ca_bundle: dict[str, Any] | None = None  # the CA-bundle source ConfigMap named by storageInitializer config


def prepare(docs: Sequence[Document]) -> Context:
    groups = classify(docs)
    config = load_config(groups["configmap"])
    problems: list[Problem] = []
    runtimes = list(embedded_runtimes())
    given: list[ServingRuntime] = []
    given_docs: dict[int, Document] = {}
    for doc in groups["runtime"]:
        try:
            rt = _model(doc, ServingRuntime)
        except CompileError as exc:
            problems.extend(exc.problems)
            continue
        if not rt.is_cluster and not rt.metadata.namespace:
            rt = rt.model_copy(update={"metadata": rt.metadata.model_copy(update={"namespace": "default"})})
        given.append(rt)
        given_docs[id(rt)] = doc
    for rt, exc in validate_runtimes(given, existing=runtimes, gpu_resource_types=config.gpu_resource_types):
        problems.append(given_docs[id(rt)].problem(exc.message, exc.path))
    # a ClusterServingRuntime given as input replaces the built-in one of the same name
    replaced = {r.metadata.name for r in given if r.is_cluster}
    runtimes = [r for r in runtimes if r.metadata.name not in replaced] + given
    cluster_docs = [d.data for d in groups["cluster"]]
    if not any(d.kind == C.KIND_CSC for d in groups["cluster"]):
        cluster_docs += list(embedded_storage_containers())
    try:
        cluster = ClusterState.from_manifests(cluster_docs)
    except InputError as exc:
        raise CompileError([Problem(exc.message, exc.path)]) from None

    isvcs: list[tuple[InferenceService, Document]] = []
    seen: dict[tuple[str, str], Document] = {}
    for doc in groups["isvc"]:
        try:
            isvc = _model(doc, InferenceService)
        except CompileError as exc:
            problems.extend(exc.problems)
            continue
        if not isvc.metadata.namespace:
            isvc = isvc.model_copy(update={"metadata": isvc.metadata.model_copy(update={"namespace": "default"})})
        key = (isvc.metadata.namespace, isvc.metadata.name)
        if key in seen:
            problems.append(doc.problem(f"InferenceService {key[0]}/{key[1]} is defined twice (also in {seen[key].file})", "metadata.name"))
            continue
        seen[key] = doc
        isvcs.append((isvc, doc))
    graphs = _typed(groups["graph"], InferenceGraph, problems)
    trained = _trained_models(_typed(groups["trained"], TrainedModel, problems), seen, problems)
    ca_bundle = _ca_bundle_source(groups["other_configmap"], config, problems)
    return Context(config, runtimes, cluster, isvcs, problems, graphs, trained, ca_bundle)


def _ca_bundle_source(docs: Sequence[Document], config: KServeConfig, problems: list[Problem]) -> dict[str, Any] | None:
    """The ConfigMap ``kserve/<caBundleConfigMapName>``; any other ConfigMap input is an error."""
    wanted = config.storage_initializer.ca_bundle_config_map_name
    found = None
    for doc in docs:
        if wanted and doc.name == wanted and (doc.namespace or C.KSERVE_NAMESPACE) == C.KSERVE_NAMESPACE:
            found = doc.data
            continue
        problems.append(
            doc.problem(
                f"kserve-compile reads only the {C.CONFIGMAP_NAME} ConfigMap and the CA-bundle ConfigMap named by "
                f'storageInitializer.caBundleConfigMapName ({wanted or "not set"}) in namespace {C.KSERVE_NAMESPACE}',
                "metadata.name",
            )
        )
    return found


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
    data = (ctx.ca_bundle.get("data") or {}).get(CA_BUNDLE_FILE_NAME)
    if not data:
        raise CompileError([Problem(f"specified cabundle file {CA_BUNDLE_FILE_NAME} not found in cabundle configmap {wanted}", "data")])
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP, "namespace": ns}, "data": {CA_BUNDLE_FILE_NAME: data}}
        for ns in sorted(namespaces)
    ]


CA_BUNDLE_FILE_NAME = "cabundle.crt"


def _typed(docs: Sequence[Document], model: type[BaseModel], problems: list[Problem]) -> list[tuple[Any, Document]]:
    out = []
    for doc in docs:
        try:
            out.append((_model(doc, model), doc))
        except CompileError as exc:
            problems.extend(exc.problems)
    return out


def _trained_models(
    items: Sequence[tuple[TrainedModel, Document]], isvcs: dict[tuple[str, str], Document], problems: list[Problem]
) -> dict[tuple[str, str], list[TrainedModel]]:
    """TrainedModels by parent isvc, after KServe's admission rules; an unknown parent is an error."""
    grouped: dict[tuple[str, str], list[TrainedModel]] = {}
    for tm, doc in items:
        try:
            validate_trained_model(tm)
            [(key, models)] = group_by_isvc([tm], isvcs.keys()).items()
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
            continue
        grouped.setdefault(key, []).extend(models)
    return grouped


def compile_documents(docs: Sequence[Document]) -> Result:
    ctx = prepare(docs)
    problems = list(ctx.problems)
    objects: list[dict[str, Any]] = []
    warnings: list[Problem] = []
    targets: dict[tuple[str, str], IsvcTarget] = {}
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
        targets[key] = compiled.target(ctx.config, ctx.runtimes)
    for graph, doc in ctx.graphs:
        try:
            mode = resolve_mode(graph.metadata.annotations, (graph.status or {}).get("deploymentMode"), ctx.config)
            objects.extend(render_graph(graph, ctx.config, mode, targets))
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
    try:
        objects += ca_bundle_config_maps(ctx, {ns for ns, _ in targets})
    except CompileError as exc:
        problems.extend(exc.problems)
    if problems:
        raise CompileError(problems + warnings)
    from .emit import sort_objects

    return Result(sort_objects(objects), warnings)


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
            multinode = expand_multinode(isvc, stable, config, labels)
            components[0] = multinode.head
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
    return RouteInput(meta.name, meta.namespace, dict(meta.labels), dict(meta.annotations), routed, route_canaries(plan.canaries))


@dataclass
class Compiled:
    plan: Plan
    objects: list[dict[str, Any]]
    notes: list[str]

    def target(self, config: KServeConfig, runtimes: Sequence[ServingRuntime]) -> IsvcTarget:
        """How an InferenceGraph step reaches this isvc (its address, protocol and model name)."""
        if self.plan.stopped:
            return IsvcTarget("", None, self.plan.isvc.metadata.name, error="InferenceService is stopped")
        return isvc_target(self.plan.isvc, isvc_address(self.plan, config), runtimes)


def isvc_address(plan: Plan, config: KServeConfig) -> str:
    route = route_input(plan, config)
    status = knative_status(route, config) if plan.mode == C.MODE_KNATIVE else standard_status(route, config)
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
        check_trained_models(
            plan.isvc.metadata.name, trained_models, multi_model=multi_model, memory_limit=predictor_memory_limit(plan.isvc)
        )
    if multi_model:
        objects.append(_model_config_map(plan.isvc, trained_models))
    route = route_input(plan, config)
    objects += knative_ingress(route, config) if plan.mode == C.MODE_KNATIVE else standard_ingress(route, config)
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
    template, more = inject_pod(template, namespace=component.namespace, config=config, cluster=cluster, isvc=isvc)
    notes += more
    return template, notes


def _model_config_map(isvc: InferenceService, trained_models: Sequence[TrainedModel]) -> dict[str, Any]:
    """``modelconfig-<isvc>-0``: the model list (its TrainedModels) the multi-model agent reads."""
    meta: dict[str, Any] = {"name": f"modelconfig-{isvc.metadata.name}-0", "namespace": isvc.metadata.namespace}
    if isvc.metadata.labels:
        meta["labels"] = dict(isvc.metadata.labels)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"models.json": model_config_json(trained_models)}}
