"""Stage 2, inputs: gather a run's documents, sort them by kind, load the config and runtimes, type every object.

``prepare`` turns a run's documents into a :class:`Context`: the ``inferenceservice-config`` (or KServe's shipped
one), the built-in runtimes with the inputs' runtimes over them, the live objects the pod webhook would read
(ServiceAccounts, Secrets, ClusterStorageContainers), and the typed InferenceServices, InferenceGraphs and
TrainedModels. Every problem found is kept, located in its document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from .. import constants as C
from .. import embedded
from ..errors import CompileError, InputError, Problem
from ..provenance import is_tracing
from ..provenance.sources import tag_document, tag_embedded
from ..provenance.typed import retag_model
from .cluster_state import ClusterState
from .config import KServeConfig, parse_config
from .parse import Document, parse_paths
from .resources import InferenceService, ServingRuntime
from .runtime_webhook import validate_runtimes

if TYPE_CHECKING:  # graph support loads only when an InferenceGraph or TrainedModel is among the inputs
    from ..graph import InferenceGraph, TrainedModel
    from ..localmodel.collect import LocalModelInputs

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
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_CACHE): "localmodel",
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_NAMESPACE_CACHE): "localmodel",
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_NODE_GROUP): "localmodel",
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_NODE): "localmodel",
    ("v1", C.KIND_NODE): "localmodel",
    (C.V1ALPHA2, C.KIND_LLMISVC): "llm",
    (C.V1ALPHA1, C.KIND_LLMISVC): "llm",
    (C.V1ALPHA2, C.KIND_LLMISVC_CONFIG): "llm",
    (C.V1ALPHA1, C.KIND_LLMISVC_CONFIG): "llm",
}


# --- embedded defaults ---------------------------------------------------------------------------------------------


@cache
def embedded_configmap() -> dict[str, Any]:
    return embedded.documents(embedded.CONFIGMAP)[0]


@cache
def _embedded_runtime_data() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple((path.rsplit("/", 1)[1], embedded.documents(path)[0]) for path in embedded.runtime_files())


@cache
def embedded_runtimes() -> tuple[ServingRuntime, ...]:
    return tuple(ServingRuntime.model_validate(data) for _, data in _embedded_runtime_data())


def _traced_embedded_runtimes() -> list[ServingRuntime]:
    """The built-in runtimes with every field tagged (fresh models: the cached ones stay plain)."""
    out = []
    for name, data in _embedded_runtime_data():
        tagged = tag_embedded(
            data, f"built-in ClusterServingRuntime {data['metadata']['name']}", f"data/runtimes/{name}"
        )
        out.append(retag_model(ServingRuntime.model_validate(tagged), tagged))
    return out


@cache
def embedded_storage_containers() -> tuple[dict[str, Any], ...]:
    return tuple(embedded.documents(embedded.STORAGE_CONTAINERS))


# --- gathering: the one way every command and the daemon assemble a run's documents ---------------------------------


def _is_kserve_config(doc: Document) -> bool:
    return doc.api_version == "v1" and doc.kind == "ConfigMap" and doc.name == C.CONFIGMAP_NAME


def assemble(inputs: Sequence[Document], config: Sequence[Document] | None = None) -> list[Document]:
    """A run's documents: ``inputs``, with ``config`` (the ``--config`` file's ConfigMaps, or the cluster's
    ``inferenceservice-config``) in place of any ``inferenceservice-config`` among them. Other ConfigMaps of the
    inputs (the CA-bundle source) stay; without either, :func:`load_config` falls back to KServe's shipped one."""
    if config is None:
        return list(inputs)
    return [d for d in inputs if not _is_kserve_config(d)] + list(config)


def config_documents(path: str) -> list[Document]:
    """The ConfigMaps of a ``--config`` file, which must hold the ``inferenceservice-config`` one."""
    maps = [d for d in parse_paths([path]) if d.api_version == "v1" and d.kind == "ConfigMap"]
    if not any(_is_kserve_config(d) for d in maps):
        raise CompileError([Problem(f"--config file holds no {C.CONFIGMAP_NAME} ConfigMap", file=path)])
    return maps


def read_inputs(paths: Sequence[str], config_file: str | None = None) -> list[Document]:
    """Files, directories or ``-``, with the ``--config`` file applied: what render, status, validate and diff read."""
    return assemble(parse_paths(paths), config_documents(config_file) if config_file is not None else None)


def cluster_inputs(objects: Sequence[dict[str, Any]], configmap: dict[str, Any] | None, source: str) -> list[Document]:
    """The same from live objects (the daemon's informer caches); ``configmap`` is the cluster's config."""
    docs = [Document(obj, source, i) for i, obj in enumerate(objects)]
    return assemble(docs, [Document(configmap, source, len(docs))] if configmap is not None else None)


# --- the pipeline --------------------------------------------------------------------------------------------------


def _model(doc: Document, model: type[BaseModel]) -> Any:
    try:
        typed = model.model_validate(doc.data)
        return retag_model(typed, doc.data) if is_tracing() else typed
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [
                p
                for p in err["loc"]
                if not (isinstance(p, str) and p.startswith(("function-after", "function-before")))
            ]
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
            problems.append(
                doc.problem(
                    f"unsupported apiVersion/kind {doc.api_version or '<none>'}/{doc.kind or '<none>'}; "
                    "kserve-compile reads InferenceService (serving.kserve.io/v1beta1), ServingRuntime, "
                    "ClusterServingRuntime, ClusterStorageContainer, InferenceGraph, TrainedModel, "
                    "LocalModelCache, LocalModelNamespaceCache, LocalModelNodeGroup, LocalModelNode "
                    "(serving.kserve.io/v1alpha1), LLMInferenceService, LLMInferenceServiceConfig "
                    "(serving.kserve.io/v1alpha2, v1alpha1), "
                    "the inferenceservice-config ConfigMap, ServiceAccount, Secret and Node",
                    "kind",
                )
            )
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
        raise CompileError(
            [
                d.problem(f"more than one {C.CONFIGMAP_NAME} ConfigMap in the inputs", "metadata.name")
                for d in configmaps[1:]
            ]
        )
    if configmaps:
        doc = configmaps[0]
        data = doc.data.get("data") or {}
        if not isinstance(data, dict):
            raise CompileError([doc.problem("data must be a mapping of strings", "data")])
        try:
            return parse_config(data)
        except InputError as exc:
            raise CompileError([doc.problem(exc.message, exc.path)]) from None
    data = embedded_configmap()["data"]
    if is_tracing():
        data = tag_embedded(
            data, "KServe's shipped inferenceservice-config", "data/inferenceservice-config.yaml", ("data",)
        )
    return parse_config(data)


@dataclass
class Context:
    """What every isvc of a run compiles against: config, runtimes, live-object stand-ins, and the isvcs."""

    config: KServeConfig
    runtimes: tuple[ServingRuntime, ...]  # a tuple: runtime selection remembers its answers per runtime tuple
    cluster: ClusterState
    isvcs: list[tuple[InferenceService, Document]]
    problems: list[Problem]
    graphs: list[tuple[InferenceGraph, Document]] = field(default_factory=list)
    trained: dict[tuple[str, str], list[TrainedModel]] = field(default_factory=dict)
    ca_bundle: dict[str, Any] | None = None  # the CA-bundle source ConfigMap named by storageInitializer config
    local_models: LocalModelInputs | None = None  # caches, node groups, Nodes; None when the inputs have none
    llm_docs: list[Document] = field(default_factory=list)  # LLMInferenceService(Config) documents
    llm_configmaps: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # scheduler config ConfigMaps
    config_data: dict[str, Any] | None = None  # the inferenceservice-config data as given (or KServe's shipped one)


def prepare(docs: Sequence[Document]) -> Context:
    if is_tracing():
        docs = [replace(d, data=tag_document(d)) for d in docs]
    groups = classify(docs)
    config = load_config(groups["configmap"])
    problems: list[Problem] = []
    # only InferenceServices (and the graph's TrainedModels) select runtimes; given runtimes are still checked
    needs_runtimes = any(groups[g] for g in ("runtime", "isvc", "graph", "trained"))
    runtimes = _runtimes(groups["runtime"], config, problems) if needs_runtimes else ()
    cluster = _cluster_state(groups["cluster"])
    isvcs, seen = _isvcs(groups["isvc"], problems)
    graphs: list[tuple[InferenceGraph, Document]] = []
    trained: dict[tuple[str, str], list[TrainedModel]] = {}
    if groups["graph"] or groups["trained"]:
        from ..graph import InferenceGraph, TrainedModel

        graphs = _typed(groups["graph"], InferenceGraph, problems)
        trained = _trained_models(_typed(groups["trained"], TrainedModel, problems), seen, problems)
    llm_configmaps, other_configmaps = _llm_configmaps(groups["llm"], groups["other_configmap"])
    ca_bundle = _ca_bundle_source(other_configmaps, config, problems)
    config_data = (
        (groups["configmap"][0].data.get("data") or {}) if groups["configmap"] else embedded_configmap()["data"]
    )
    local_models = None
    if groups["localmodel"]:
        from ..localmodel.collect import collect

        local_models = collect(groups["localmodel"], _model, problems)
    return Context(
        config,
        runtimes,
        cluster,
        isvcs,
        problems,
        graphs,
        trained,
        ca_bundle,
        local_models,
        groups["llm"],
        llm_configmaps,
        config_data,
    )


def _runtimes(docs: Sequence[Document], config: KServeConfig, problems: list[Problem]) -> tuple[ServingRuntime, ...]:
    """The built-in runtimes with the given ones over them, after KServe's ServingRuntime webhook."""
    runtimes = _traced_embedded_runtimes() if is_tracing() else list(embedded_runtimes())
    given: list[ServingRuntime] = []
    given_docs: dict[int, Document] = {}
    for doc in docs:
        try:
            rt = _model(doc, ServingRuntime)
        except CompileError as err:
            problems.extend(err.problems)
            continue
        if not rt.is_cluster and not rt.metadata.namespace:
            rt = rt.model_copy(update={"metadata": rt.metadata.model_copy(update={"namespace": "default"})})
        given.append(rt)
        given_docs[id(rt)] = doc
    for rt, exc in validate_runtimes(given, existing=runtimes, gpu_resource_types=config.gpu_resource_types):
        problems.append(given_docs[id(rt)].problem(exc.message, exc.path))
    # a ClusterServingRuntime given as input replaces the built-in one of the same name
    replaced = {r.metadata.name for r in given if r.is_cluster}
    return (*(r for r in runtimes if r.metadata.name not in replaced), *given)


def _cluster_state(docs: Sequence[Document]) -> ClusterState:
    """ServiceAccounts, Secrets and ClusterStorageContainers (KServe's shipped ones when none is given)."""
    cluster_docs = [d.data for d in docs]
    if not any(d.kind == C.KIND_CSC for d in docs):
        shipped = list(embedded_storage_containers())
        if is_tracing():
            shipped = [
                tag_embedded(
                    d,
                    f"KServe's shipped ClusterStorageContainer {d['metadata']['name']}",
                    "data/storagecontainers.yaml",
                )
                for d in shipped
            ]
        cluster_docs += shipped
    try:
        return ClusterState.from_manifests(cluster_docs)
    except InputError as exc:
        raise CompileError([Problem(exc.message, exc.path)]) from None


def _isvcs(
    docs: Sequence[Document], problems: list[Problem]
) -> tuple[list[tuple[InferenceService, Document]], dict[tuple[str, str], Document]]:
    """Typed InferenceServices (namespace ``default`` when unset), each defined once."""
    isvcs: list[tuple[InferenceService, Document]] = []
    seen: dict[tuple[str, str], Document] = {}
    for doc in docs:
        try:
            isvc = _model(doc, InferenceService)
        except CompileError as exc:
            problems.extend(exc.problems)
            continue
        if not isvc.metadata.namespace:
            isvc = isvc.model_copy(update={"metadata": isvc.metadata.model_copy(update={"namespace": "default"})})
        key = (isvc.metadata.namespace, isvc.metadata.name)
        if key in seen:
            problems.append(
                doc.problem(
                    f"InferenceService {key[0]}/{key[1]} is defined twice (also in {seen[key].file})", "metadata.name"
                )
            )
            continue
        seen[key] = doc
        isvcs.append((isvc, doc))
    return isvcs, seen


def _llm_configmaps(
    llm: Sequence[Document], configmaps: Sequence[Document]
) -> tuple[dict[tuple[str, str], dict[str, Any]], list[Document]]:
    """ConfigMaps an LLMInferenceService's scheduler ``config.ref`` names, and the rest."""
    if not llm:
        return {}, list(configmaps)
    from ..llmisvc import referenced_configmaps

    wanted = referenced_configmaps(llm)
    found = {
        (d.namespace or "default", d.name): d.data for d in configmaps if (d.namespace or "default", d.name) in wanted
    }
    return found, [d for d in configmaps if (d.namespace or "default", d.name) not in found]


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
                f"storageInitializer.caBundleConfigMapName ({wanted or 'not set'}) in namespace {C.KSERVE_NAMESPACE}",
                "metadata.name",
            )
        )
    return found


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
    from ..graph import group_by_isvc, validate_trained_model

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
