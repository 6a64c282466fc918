"""KServe's ServingRuntime / ClusterServingRuntime validating webhook
(``pkg/webhook/admission/servingruntime/servingruntime_webhook.go``), run over the runtimes of a compile.

The webhook admits one object at a time and compares it with the runtimes already in the cluster: ServingRuntimes
with the other ServingRuntimes of its namespace, ClusterServingRuntimes with the other ClusterServingRuntimes. Offline,
the inputs are admitted in input order (as ``kubectl apply`` creates them), against ``existing`` (the built-in
runtimes) and the inputs admitted before them; a runtime with the name of one already there is an update of it.
Messages keep KServe's wording; the first failure of each runtime is reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import constants as C
from ..errors import InputError
from ..kube.validation import blocked_env_problem, known_gpu_types, unknown_gpu_resource
from .config import DEFAULT_GPU_RESOURCE_TYPES
from .serving_types import ServingRuntime, ServingRuntimeSpec, SupportedModelFormat


def validate_runtimes(
    runtimes: Sequence[ServingRuntime],
    *,
    existing: Iterable[ServingRuntime] = (),
    gpu_resource_types: Sequence[str] = DEFAULT_GPU_RESOURCE_TYPES,
) -> list[tuple[ServingRuntime, InputError]]:
    """Every runtime of ``runtimes`` the webhook would deny, with its first error (``[]`` when all are admitted).

    ``gpu_resource_types``: the known GPU resource names (the ConfigMap's ``multiNode`` list plus KServe's defaults).
    """
    cluster = list(existing)
    denied: list[tuple[ServingRuntime, InputError]] = []
    for runtime in runtimes:
        error = admit(runtime, cluster, gpu_resource_types)
        if error is not None:
            denied.append((runtime, error))
            continue
        cluster = [r for r in cluster if _key(r) != _key(runtime)] + [runtime]
    return denied


def _key(runtime: ServingRuntime) -> tuple[str, str, str]:
    return runtime.kind, "" if runtime.is_cluster else runtime.metadata.namespace, runtime.metadata.name


def admit(
    runtime: ServingRuntime, cluster: Sequence[ServingRuntime], gpu_resource_types: Sequence[str]
) -> InputError | None:
    """The webhook's ``Handle`` for one runtime against the runtimes in ``cluster``."""
    spec = runtime.spec
    if spec.disabled:  # a disabled runtime is admitted without any check
        return None
    name = runtime.metadata.name
    namespace = runtime.metadata.namespace
    peers = [r for r in cluster if r.kind == runtime.kind and (runtime.is_cluster or r.metadata.namespace == namespace)]
    previous: ServingRuntimeSpec | None = None
    # KServe checks the runtime's own priorities inside its loop over the existing runtimes, so a runtime with no
    # peer of its kind (a namespace's first ServingRuntime) is never checked for them.
    for peer in peers:
        problem = _priorities_differ(spec)
        if problem is not None:
            message, path = problem
            kind = "clusterservingruntime" if runtime.is_cluster else "servingruntime"
            return InputError(f"{message} under the {kind} {name}", path)
        problem = _priority_clash(spec, peer.spec, name, peer.metadata.name)
        if problem is not None:
            message, path = problem
            if runtime.is_cluster:
                return InputError(f"{message} in the clusterservingruntimes {peer.metadata.name} and {name}", path)
            return InputError(
                f"{message} in the servingruntimes {peer.metadata.name} and {name} in namespace {namespace}", path
            )
        if peer.metadata.name == name:
            previous = peer.spec
    problem = _multi_node_problem(spec, previous, gpu_resource_types)
    if problem is not None:
        message, path = problem
        return InputError(f"the {runtime.kind} {name} is invalid: {message}", path)
    problem = _blocked_env(spec)
    if problem is not None:
        message, path = problem
        return InputError(f'the {runtime.kind} "{name}" is invalid: {message}', path)
    return None


def _auto_select(fmt: SupportedModelFormat) -> bool:
    return fmt.auto_select is True


def _priorities_differ(spec: ServingRuntimeSpec) -> tuple[str, str] | None:
    """``validateModelFormatPrioritySame``: one auto-selectable format name listed with two different priorities."""
    first_priority: dict[str, int | None] = {}
    for index, fmt in enumerate(spec.supported_model_formats or []):
        if not _auto_select(fmt):
            continue
        if fmt.name not in first_priority:
            first_priority[fmt.name] = fmt.priority
            continue
        earlier = first_priority[fmt.name]
        if earlier is not None and fmt.priority is not None and earlier != fmt.priority:
            return (
                f"different priorities assigned for the model format {fmt.name}",
                f"spec.supportedModelFormats[{index}].priority",
            )
    return None


def _same_format(a: SupportedModelFormat, b: SupportedModelFormat) -> bool:
    """``areSupportedModelFormatsEqual``: names equal ignoring case, versions both absent or equal."""
    return a.name.casefold() == b.name.casefold() and a.version == b.version


def _priority_clash(
    new: ServingRuntimeSpec, old: ServingRuntimeSpec, new_name: str, old_name: str
) -> tuple[str, str] | None:
    """``validateServingRuntimePriority``: an auto-selectable format+version with the same priority in two runtimes
    that share a protocol (skipped across single/multi-model runtimes, for a disabled peer, and for itself)."""
    if bool(new.multi_model) != bool(old.multi_model) or old.disabled or new_name == old_name:
        return None
    if not set(old.protocol_versions or []) & set(new.protocol_versions or []):
        return None
    for old_fmt in old.supported_model_formats or []:
        for index, new_fmt in enumerate(new.supported_model_formats or []):
            if not (_auto_select(old_fmt) and _auto_select(new_fmt) and _same_format(old_fmt, new_fmt)):
                continue
            if old_fmt.priority is not None and new_fmt.priority is not None and old_fmt.priority == new_fmt.priority:
                return (
                    f"same priority assigned for the model format {new_fmt.name}",
                    f"spec.supportedModelFormats[{index}].priority",
                )
    return None


def _gpu_problem(
    container: dict[str, Any], annotations: Mapping[str, str], gpu_resource_types: Sequence[str], path: str
) -> tuple[str, str] | None:
    """The GPU checks of one multi-node container (the head's ``kserve-container`` or the worker's): the
    annotation's extra GPU resource types readable, and no resource of an unknown GPU type."""
    gpu_types = known_gpu_types(annotations, gpu_resource_types)
    if isinstance(gpu_types, str):
        return gpu_types, f"spec.annotations[{C.ANN_GPU_RESOURCE_TYPES}]"
    unknown = unknown_gpu_resource(container.get("resources"), gpu_types)
    if unknown:
        return f"unknown GPU resource type in a container({container.get('name')})", f"{path}.resources.{unknown}"
    return None


def _multi_node_problem(
    spec: ServingRuntimeSpec, previous: ServingRuntimeSpec | None, gpu_resource_types: Sequence[str]
) -> tuple[str, str] | None:
    """``validateMultiNodeSpec``."""
    worker = spec.worker_spec
    if previous is not None and previous.worker_spec is not None and worker is None:
        return "removing workerSpec where it already exists is not allowed", "spec"
    if worker is None:
        return None
    worker_containers = list(worker.k8s.get("containers") or [])
    if len(worker_containers) > 1:
        return "setting multiple containers in workerSpec is not allowed", "spec.workerSpec.containers"
    annotations = spec.annotations or {}
    for index, container in enumerate(spec.containers):
        if container.get("name") != C.CONTAINER_KSERVE:
            continue
        found = _first_env(container, (C.ENV_PIPELINE_PARALLEL_SIZE, C.ENV_TENSOR_PARALLEL_SIZE))
        if found is not None:
            return (
                f"setting {found[0]} in environment variables is not allowed",
                f"spec.containers[{index}].env[{found[1]}]",
            )
        problem = _gpu_problem(container, annotations, gpu_resource_types, f"spec.containers[{index}]")
        if problem is not None:
            return problem
    if not worker_containers:
        # KServe indexes the first worker container here (and fails on an empty list); its type check's words:
        return "spec.workerSpec.containers: Required value", "spec.workerSpec.containers"
    container = worker_containers[0]
    if container.get("name") == C.CONTAINER_WORKER:
        problem = _gpu_problem(container, annotations, gpu_resource_types, "spec.workerSpec.containers[0]")
        if problem is not None:
            return problem
    for field, label, value in (
        ("pipelineParallelSize", "PipelineParallelSize", worker.pipeline_parallel_size),
        ("tensorParallelSize", "TensorParallelSize", worker.tensor_parallel_size),
    ):
        if value is not None and value < 1:
            return f"the WorkerSpec.{label} cannot be less than 1({value})", f"spec.workerSpec.{field}"
    return None


def _first_env(container: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, int] | None:
    """The first of ``names`` set in the container's env — KServe looks them up in this order, not env order."""
    env = container.get("env") or []
    for name in names:
        for index, entry in enumerate(env):
            if isinstance(entry, Mapping) and entry.get("name") == name:
                return name, index
    return None


def _blocked_env(spec: ServingRuntimeSpec) -> tuple[str, str] | None:
    """``validateBlockedEnvVars``: the runtime's containers, then its worker containers."""
    problem = blocked_env_problem(spec.containers, "spec.containers")
    if problem is None and spec.worker_spec is not None:
        problem = blocked_env_problem(list(spec.worker_spec.k8s.get("containers") or []), "spec.workerSpec.containers")
    return problem
