"""Multi-node predictors (``predictor.workerSpec``), planned: a Ray (or multiprocessing) head plus a worker.

KServe sources: ``components/predictor.go`` (``reconcileWorker``, ``multiNodeProcess``, ``computeRayNodeAndGPUs``,
``computeMpNodeAndGPUs``), ``reconcilers/deployment/deployment_reconciler.go`` (``createRawWorkerDeployment``,
``addGPUResourceToDeployment``) and ``reconcilers/service/service_reconciler.go`` (the headless head/worker Services).

How the driver uses it (Standard mode; the objects are ``render/workloads/multinode.py``'s):

1. ``mn = expand_multinode(isvc, predictor_component, config, labels)`` once the predictor ``Component`` is built;
   ``mn.head`` replaces the predictor component (head env, GPU resources and the ``isvc.generation`` label are in it).
2. The head goes through the usual Service / Deployment path; the worker's pod template is made like any component's
   (``mn.worker`` is a ``Component``: storage and pod-webhook steps apply to it) and turned into a Deployment by
   ``worker_deployment(mn.worker, template, config, mn.worker_replicas)``.
3. ``headless_services(head_service)`` adds ``<isvc>-head-<generation>`` and ``<isvc>-workers-<generation>`` next to
   the head's Service.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import constants as C
from ..datacopy import clone
from ..errors import InputError
from ..inputs.config import DEFAULT_GPU_RESOURCE_TYPES, KServeConfig
from ..inputs.serving_types import InferenceService
from ..kube.fields import set_env
from ..kube.merge import merge_containers, merge_pod_specs
from ..kube.quantity import parse_quantity
from .components import RUNTIME_POD_MERGED, Component, component_metadata, predictor_annotations

PATH = "spec.predictor.workerSpec"


@dataclass(frozen=True)
class GpuPlan:
    """How many nodes the Ray/mp cluster has and how many GPUs the head and each worker get."""

    node_count: int
    head_gpus: int
    worker_gpus: int


@dataclass(frozen=True)
class MultiNode:
    head: Component
    worker: Component
    generation: str
    pipeline_parallel_size: int
    tensor_parallel_size: int
    gpus: GpuPlan

    @property
    def worker_replicas(self) -> int:
        return self.gpus.node_count - 1


# --- names -------------------------------------------------------------------------------------------------------


def generation(isvc: InferenceService) -> str:
    """``metadata.generation`` as KServe formats it; a rendered input has none, so 1 (the first generation)."""
    return str(isvc.metadata.generation or 1)


def _trim_predictor(service: str) -> str:
    return service.removesuffix(f"-{C.PREDICTOR}")


def head_service_name(service: str, gen: str) -> str:
    """``GetHeadServiceName``: the predictor Service name without ``-predictor``, then ``-head-<generation>``."""
    return f"{_trim_predictor(service)}-{C.MULTINODE_HEAD}-{gen}"


def worker_service_name(service: str, gen: str) -> str:
    """``GetWorkerServiceName``: the predictor Service name without ``-predictor``, then ``-workers-<generation>``."""
    return f"{_trim_predictor(service)}-{C.MULTINODE_WORKERS}-{gen}"


def worker_app_label(predictor_service: str) -> str:
    return f"{C.app_label(predictor_service)}-{C.MULTINODE_WORKER}"


# --- GPU arithmetic ----------------------------------------------------------------------------------------------


def gpu_request(container: Mapping[str, Any], gpu_types: Sequence[str]) -> int:
    """The first known GPU resource in the container's *requests* (``GetGPUResourceQtyByType(.., "Request")``),
    as ``Quantity.Value()`` (rounded up); 0 when none is requested."""
    requests = ((container.get("resources") or {}).get("requests")) or {}
    for name, value in requests.items():
        if name in gpu_types:
            try:
                return math.ceil(parse_quantity(value))
            except ValueError as exc:
                raise InputError(str(exc), f"{PATH}.containers[0].resources.requests[{name}]") from None
    return 0


def ray_gpu_plan(total: int, head_gpus: int, worker_gpus: int) -> GpuPlan:
    """``computeRayNodeAndGPUs``: nodes and per-node GPUs for ``total`` = TP × PP GPUs with the Ray backend.

    ``head_gpus``/``worker_gpus`` are what the head and worker containers request (0 = not set)."""

    def nodes_for(gpus: int, per_node: int) -> int:
        return 1 if per_node == 0 else math.ceil(gpus / per_node)

    def checked(nodes: int, head: int, worker: int) -> GpuPlan:
        if total > head + worker * (nodes - 1):
            raise InputError(
                f"the total required number of GPUs({total}) is less than the number of GPUs assigned to the head "
                f"node({head}) + worker node({worker * (nodes - 1)})",
                PATH,
            )
        return GpuPlan(nodes, head, worker)

    if worker_gpus > 0:
        nodes = nodes_for(total, worker_gpus)
        if head_gpus > 0:
            if nodes_for(total, head_gpus) == 1:
                nodes = 1
        else:
            head_gpus = total - worker_gpus * (nodes - 1)
        if nodes == 1:  # the head alone can hold every GPU
            worker_gpus, head_gpus = 0, total
        return checked(nodes, head_gpus, worker_gpus)
    if head_gpus > 0:
        remaining = total - head_gpus
        nodes = nodes_for(remaining, 1) + 1 if remaining > 0 else 1
        return checked(nodes, head_gpus, 1)
    return GpuPlan(total, 1, 1)


def mp_gpu_plan(pipeline_parallel_size: int, tensor_parallel_size: int) -> GpuPlan:
    """``computeMpNodeAndGPUs``: one node per pipeline stage, TP GPUs on every node."""
    return GpuPlan(pipeline_parallel_size, tensor_parallel_size, tensor_parallel_size)


def gpu_resource_types(annotations: Mapping[str, str], config: KServeConfig) -> list[str]:
    """``UpdateGPUResourceTypeListByAnnotation``: the known GPU resources, then the ConfigMap's and the annotation's."""
    types = list(DEFAULT_GPU_RESOURCE_TYPES)
    extra = list(config.multi_node.custom_gpu_resource_type_list or [])
    text = annotations.get(C.ANN_GPU_RESOURCE_TYPES, "")
    if text:
        try:
            custom = json.loads(text)
        except json.JSONDecodeError:
            custom = None
        if not isinstance(custom, list) or not custom or not all(isinstance(t, str) and t for t in custom):
            raise InputError(
                f"invalid GPU format({text}) for {C.ANN_GPU_RESOURCE_TYPES} annotation: must be a valid JSON array",
                f"metadata.annotations[{C.ANN_GPU_RESOURCE_TYPES}]",
            )
        extra += custom
    for t in extra:
        if t not in types:
            types.append(t)
    return types


def set_gpu(container: dict[str, Any], count: int, gpu_types: Sequence[str]) -> None:
    """``addGPUResourceToDeployment``: the container's GPU type (a non-zero limit or request, nvidia by default) gets
    ``count`` as both limit and request."""
    resources = container.setdefault("resources", {})
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    chosen = C.NVIDIA_GPU_RESOURCE
    for gpu in gpu_types:
        if _nonzero(limits.get(gpu)) or _nonzero(requests.get(gpu)):
            chosen = gpu
            break
    resources["limits"] = {**limits, chosen: str(count)}
    resources["requests"] = {**requests, chosen: str(count)}


def _nonzero(value: Any) -> bool:
    if value is None:
        return False
    try:
        return parse_quantity(value) != 0
    except ValueError:
        return True


# --- head and worker ---------------------------------------------------------------------------------------------


def expand_multinode(
    isvc: InferenceService, predictor: Component, config: KServeConfig, labels: Mapping[str, str]
) -> MultiNode:
    """The head (``predictor`` with multi-node env, GPUs and the generation label) and the worker component.

    ``isvc`` is the defaulted isvc, ``predictor`` the built predictor component (its runtime must have a
    ``workerSpec``), ``labels`` the isvc labels after runtime defaults (what the predictor was built with)."""
    spec = isvc.spec.predictor
    worker_spec = spec.worker_spec
    if worker_spec is None:
        raise InputError("the predictor has no workerSpec", PATH)
    runtime = predictor.runtime
    runtime_worker = runtime.spec.worker_spec if runtime is not None else None
    if runtime is None or runtime_worker is None:
        raise InputError(
            "you cannot set WorkerSpec in the InferenceService if the ServingRuntime does not have a WorkerSpec", PATH
        )
    pp = _first_set(
        worker_spec.pipeline_parallel_size, runtime_worker.pipeline_parallel_size, C.DEFAULT_PIPELINE_PARALLEL_SIZE
    )
    tp = _first_set(
        worker_spec.tensor_parallel_size, runtime_worker.tensor_parallel_size, C.DEFAULT_TENSOR_PARALLEL_SIZE
    )
    worker_pod = _worker_pod(runtime_worker.k8s, worker_spec.k8s)
    worker_container = worker_pod["containers"][0]
    head_pod = clone(predictor.pod_spec)
    head_container = next((c for c in head_pod.get("containers") or [] if c.get("name") == C.CONTAINER_KSERVE), None)
    if head_container is None:
        raise InputError(f"target container({C.CONTAINER_KSERVE}) does not exist", "spec.predictor")
    known_gpus = gpu_resource_types({}, config)
    if (runtime.spec.annotations or {}).get(C.ANN_MULTINODE_EXECUTOR_BACKEND) == C.MULTINODE_EXECUTOR_MP:
        gpus = mp_gpu_plan(pp, tp)
    else:
        gpus = ray_gpu_plan(
            tp * pp, gpu_request(head_pod["containers"][0], known_gpus), gpu_request(worker_container, known_gpus)
        )
    gen, name = generation(isvc), isvc.metadata.name
    annotations = predictor_annotations(isvc, spec, config)
    _set_head_env(head_container, pp, tp, gpus, name, annotations)
    _set_worker_env(
        worker_container, pp, tp, gpus, name, head_service_name(name, gen), worker_service_name(predictor.name, gen)
    )
    set_gpu(head_container, gpus.head_gpus, gpu_resource_types(predictor.annotations, config))
    head = replace(predictor, labels={**predictor.labels, C.LABEL_GENERATION: gen}, pod_spec=head_pod)
    worker_labels, worker_annotations = component_metadata(
        name,
        C.PREDICTOR,
        spec,
        config,
        labels,
        annotations,
        runtime_worker.labels,
        runtime_worker.annotations,
        {C.LABEL_GENERATION: gen},
    )
    set_gpu(worker_container, gpus.worker_gpus, gpu_resource_types(worker_annotations, config))
    worker = Component(
        C.PREDICTOR,
        f"{name}-{C.PREDICTOR}-{C.MULTINODE_WORKER}",
        isvc.metadata.namespace,
        worker_labels,
        worker_annotations,
        worker_pod,
        predictor.spec,
        runtime,
        app=worker_app_label(predictor.name),
    )
    return MultiNode(head, worker, gen, pp, tp, gpus)


def _first_set(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _worker_pod(runtime_pod_spec: Mapping[str, Any], isvc_pod_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The worker's pod: the runtime's workerSpec pod fields under the isvc's, with the merged worker container."""
    runtime_containers = list(runtime_pod_spec.get("containers") or [])
    if not runtime_containers:
        raise InputError("No workerSpec container configuration found in selected serving runtime", PATH)
    runtime_container = next((c for c in runtime_containers if c.get("name") == C.CONTAINER_WORKER), None)
    if runtime_container is None:
        raise InputError(f"failed to find {C.CONTAINER_WORKER} in ServingRuntime containers", PATH)
    isvc_containers = list(isvc_pod_spec.get("containers") or [])
    container = merge_containers(runtime_container, isvc_containers[0] if isvc_containers else {})
    pod = merge_pod_specs(
        {k: clone(v) for k, v in runtime_pod_spec.items() if k in RUNTIME_POD_MERGED}, dict(isvc_pod_spec)
    )
    pod["containers"] = [container]
    if container.get("name") != C.CONTAINER_WORKER:
        raise InputError(
            f"failed to add {C.ENV_RAY_NODE_COUNT} environment to the container({C.CONTAINER_WORKER}): "
            f"target container({C.CONTAINER_WORKER}) does not exist",
            f"{PATH}.containers[0].name",
        )
    return pod


def _set_head_env(
    container: dict[str, Any], pp: int, tp: int, gpus: GpuPlan, name: str, annotations: Mapping[str, str]
) -> None:
    for env_name, value in (
        (C.ENV_PIPELINE_PARALLEL_SIZE, str(pp)),
        (C.ENV_TENSOR_PARALLEL_SIZE, str(tp)),
        (C.ENV_RAY_NODE_COUNT, str(gpus.node_count)),
        (C.ENV_REQUEST_GPU_COUNT, str(gpus.head_gpus)),
        ("MODEL_NAME", name),
    ):
        set_env(container, env_name, value)
    if annotations.get(C.ANN_STORAGE_SOURCE_URI, "").split("://")[0] in ("pvc", "oci"):
        set_env(container, "MODEL_DIR", C.DEFAULT_MODEL_DIR)


def _set_worker_env(
    container: dict[str, Any], pp: int, tp: int, gpus: GpuPlan, name: str, head_svc: str, worker_svc: str
) -> None:
    for env_name, value in (
        (C.ENV_RAY_NODE_COUNT, str(gpus.node_count)),
        (C.ENV_REQUEST_GPU_COUNT, str(gpus.worker_gpus)),
        (C.ENV_PIPELINE_PARALLEL_SIZE, str(pp)),
        (C.ENV_TENSOR_PARALLEL_SIZE, str(tp)),
        ("ISVC_NAME", name),
        ("HEAD_SVC", head_svc),
        ("WORKER_SVC", worker_svc),
    ):
        set_env(container, env_name, value)
