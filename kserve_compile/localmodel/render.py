"""A run's local-model objects: the ``localmodel`` controller's (``controller.py``) for every cache, then the node
agent's download Jobs (``agent.py``), with warnings located in the input documents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import constants as C
from ..errors import CompileError, InputError, Problem
from ..inputs.cluster_state import ClusterState
from ..inputs.config import KServeConfig
from .agent import download_jobs
from .cache_types import AnyCache, LocalModelInfo, LocalModelNodeGroup, Node
from .collection import LocalModelInputs
from .controller import (
    Consumer,
    ControllerOutput,
    check_job_namespace,
    local_model_node,
    merged_node_models,
    reconcile_cache,
)
from .node_affinity import matches


def render(
    inputs: LocalModelInputs, consumers: Sequence[Consumer], config: KServeConfig, cluster: ClusterState
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Every cache's objects and the download Jobs, plus warnings; ``CompileError`` (located) on a bad input."""
    caches = inputs.all_caches()
    if not caches:
        return [], []
    local = config.local_model
    try:
        check_job_namespace(local.job_namespace)
    except InputError as exc:
        raise CompileError([Problem(exc.message, exc.path, "ConfigMap", C.CONFIGMAP_NAME)]) from None
    out = ControllerOutput()
    problems: list[Problem] = []
    nodes = sorted(inputs.nodes, key=lambda n: n.name)
    for cache in caches:
        if any(g not in inputs.node_groups for g in cache.spec.node_groups):
            continue  # reported while collecting: the controller stops at the missing group
        try:
            reconcile_cache(
                cache, inputs.node_groups, nodes, consumers, local.job_namespace, local.disable_volume_management, out
            )
        except InputError as exc:
            problems.append(_group_problem(inputs, cache, exc))
    if problems:
        raise CompileError(problems)
    warnings = [inputs.docs[id(c)].problem(m, severity="warning") for c, m in out.warnings]
    if not local.enabled:
        warnings.append(
            inputs.docs[id(caches[0])].problem(
                "localModel.enabled is false in inferenceservice-config: KServe's webhooks do not point InferenceServices "
                "or LLMInferenceServices at the caches (the controller still creates their volumes and LocalModelNodes)",
                severity="warning",
            )
        )
    node_models = merged_node_models(out.node_models, inputs.live_nodes)
    objects = [*out.objects.values(), *(local_model_node(name, models) for name, models in node_models.items())]
    objects += _jobs(inputs, node_models, config, cluster, warnings)
    return objects, warnings


def _group_problem(inputs: LocalModelInputs, cache: AnyCache, exc: InputError) -> Problem:
    """A node-selector error belongs to the node group whose affinity it is in."""
    for name in cache.spec.node_groups:
        group = inputs.node_groups.get(name)
        if group is not None and exc.path.startswith("spec.persistentVolumeSpec"):
            return inputs.docs[id(group)].problem(exc.message, exc.path)
    return inputs.docs[id(cache)].problem(exc.message, exc.path)


def _jobs(
    inputs: LocalModelInputs,
    node_models: dict[str, list[LocalModelInfo]],
    config: KServeConfig,
    cluster: ClusterState,
    warnings: list[Problem],
) -> list[dict[str, Any]]:
    """The node agent's Jobs on every node that gets a LocalModelNode and runs the agent."""
    by_name = {n.name: n for n in inputs.nodes}
    jobs: list[dict[str, Any]] = []
    notes: list[str] = []
    for node_name, models in node_models.items():
        node = by_name[node_name]
        if not node.runs_agent:
            key, value = C.LOCAL_MODEL_AGENT_NODE_LABEL
            warnings.append(
                inputs.docs[id(node)].problem(
                    f"Node {node_name} lacks the label {key}={value} the node agent DaemonSet selects: no download Job is rendered for it",
                    "metadata.labels",
                    severity="warning",
                )
            )
            continue
        jobs += download_jobs(node_name, _with_node_groups(node, models, inputs, notes), config, cluster, notes)
    first = inputs.all_caches()[0]
    warnings += [inputs.docs[id(first)].problem(n, severity="warning") for n in dict.fromkeys(notes)]
    return jobs


def _with_node_groups(
    node: Node, models: list[LocalModelInfo], inputs: LocalModelInputs, notes: list[str]
) -> list[LocalModelInfo]:
    """``launchJob``'s fallback for an entry without ``nodeGroup`` (a live LocalModelNode written by an older
    controller): the first LocalModelNodeGroup, by name, whose affinity selects the node. Without one the agent
    fails that reconcile and makes no Job for the entry."""
    out = []
    for info in models:
        if not info.node_group:
            group = next((g for _, g in sorted(inputs.node_groups.items()) if _selects(g, node)), None)
            if group is None:
                notes.append(
                    f"did not find matching nodegroup for node: {node.name} (LocalModelNode entry {info.status_key}): no download Job"
                )
                continue
            info = info.model_copy(update={"node_group": group.name})
        out.append(info)
    return out


def _selects(group: LocalModelNodeGroup, node: Node) -> bool:
    try:
        return matches(group.spec.persistent_volume_spec, node.name, node.metadata.labels)
    except InputError:
        return False  # the agent's lookup fails on it too; the entry then gets no Job
