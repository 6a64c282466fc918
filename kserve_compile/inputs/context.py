"""The compiled documents of a run, typed: what every InferenceService of the run compiles against.

:func:`prepare` turns the documents the pass-through split kept for compiling into a :class:`Context`: the config
(parsed once, by the driver), the built-in runtimes with the inputs' runtimes over them (after KServe's ServingRuntime
webhook), the live objects the pod webhook would read (ServiceAccounts, Secrets, ClusterStorageContainers), the other
ConfigMaps the compiler reads, the typed InferenceServices, and each feature's documents for the feature to collect.
Every problem found is kept, located in its document.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..errors import CompileError, InputError, Problem
from .cluster_state import ClusterState
from .config import KServeConfig
from .defaults import builtin_runtimes, shipped_storage_containers
from .kinds import CLUSTER, CONFIGMAP, ISVC, RUNTIME, KindTable
from .parse import Document
from .passthrough import configmap_key, is_config
from .runtime_webhook import validate_runtimes
from .serving_types import InferenceService, ServingRuntime
from .typed import typed, typed_all


@dataclass
class Context:
    """What every isvc of a run compiles against: config, runtimes, live-object stand-ins, and the isvcs."""

    config: KServeConfig
    config_data: Mapping[str, Any]  # the inferenceservice-config data as given (or KServe's shipped one)
    runtimes: tuple[ServingRuntime, ...]  # a tuple: runtime selection remembers its answers per runtime tuple
    cluster: ClusterState
    isvcs: list[tuple[InferenceService, Document]]
    problems: list[Problem]
    configmaps: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # read ConfigMaps, (ns, name)
    features: dict[str, list[Document]] = field(default_factory=dict)  # each feature's documents, by its name

    @property
    def ca_bundle(self) -> dict[str, Any] | None:
        """The CA-bundle source ConfigMap named by ``storageInitializer.caBundleConfigMapName`` (in ``kserve``)."""
        wanted = self.config.storage_initializer.ca_bundle_config_map_name
        return self.configmaps.get((C.KSERVE_NAMESPACE, wanted)) if wanted else None


def ca_bundle_keys(config: KServeConfig) -> set[tuple[str, str]]:
    """Where the CA-bundle source may be among the inputs: in ``kserve``, or with no namespace."""
    name = config.storage_initializer.ca_bundle_config_map_name
    return {(C.KSERVE_NAMESPACE, name), ("", name)} if name else set()


def prepare(
    docs: Sequence[Document],
    kinds: KindTable,
    config: KServeConfig,
    config_data: Mapping[str, Any],
    *,
    runtimes_for: Collection[str] = (ISVC, RUNTIME),
) -> Context:
    """The typed run from the documents to compile (every one of a kind in ``kinds``, or a read ConfigMap). The
    runtimes are loaded only when a group of ``runtimes_for`` is among them (given runtimes are still checked)."""
    groups = _classify(docs, kinds)
    problems: list[Problem] = []
    needs_runtimes = any(groups.get(g) for g in runtimes_for)
    runtimes = _runtimes(groups[RUNTIME], config, problems) if needs_runtimes else ()
    return Context(
        config,
        config_data,
        runtimes,
        _cluster_state(groups[CLUSTER]),
        _isvcs(groups[ISVC], problems),
        problems,
        _read_configmaps(groups[CONFIGMAP], ca_bundle_keys(config)),
        {name: found for name, found in groups.items() if name not in (ISVC, RUNTIME, CLUSTER, CONFIGMAP)},
    )


def _classify(docs: Sequence[Document], kinds: KindTable) -> dict[str, list[Document]]:
    groups: dict[str, list[Document]] = {group: [] for group in kinds.values()}
    problems = []
    for doc in docs:
        group = kinds[(doc.api_version, doc.kind)]
        if group in (ISVC, RUNTIME) and not doc.name:
            problems.append(doc.problem("metadata.name is required", "metadata.name"))
            continue
        if group != CONFIGMAP or not is_config(doc):
            groups[group].append(doc)
    if problems:
        raise CompileError(problems)
    return groups


def _read_configmaps(docs: Sequence[Document], ca_keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    """The read ConfigMaps by (namespace, name); the CA-bundle source under ``kserve`` whatever namespace it gave."""
    out = {}
    for doc in docs:
        key = configmap_key(doc)
        out[(C.KSERVE_NAMESPACE, doc.name) if key in ca_keys else (key[0] or "default", key[1])] = doc.data
    return out


def _runtimes(docs: Sequence[Document], config: KServeConfig, problems: list[Problem]) -> tuple[ServingRuntime, ...]:
    """The built-in runtimes with the given ones over them, after KServe's ServingRuntime webhook."""
    runtimes = builtin_runtimes()
    given: list[ServingRuntime] = []
    given_docs: dict[int, Document] = {}
    for rt, doc in typed_all(docs, ServingRuntime, problems):
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
        cluster_docs += shipped_storage_containers()
    try:
        return ClusterState.from_manifests(cluster_docs)
    except InputError as exc:
        raise CompileError([Problem(exc.message, exc.path)]) from None


def _isvcs(docs: Sequence[Document], problems: list[Problem]) -> list[tuple[InferenceService, Document]]:
    """Typed InferenceServices (namespace ``default`` when unset), each defined once."""
    isvcs: list[tuple[InferenceService, Document]] = []
    seen: dict[tuple[str, str], Document] = {}
    for doc in docs:
        try:
            isvc = typed(doc, InferenceService)
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
    return isvcs
