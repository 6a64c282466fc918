"""Multi-node predictors: GPU arithmetic, head/worker env and metadata, worker Deployment, headless Services.

Ports KServe's ``components/predictor_test.go`` TestComputeMpNodeAndGPUs (lines 31-82), the workerSpec cases of
``ctl/rawkube_controller_test.go`` (8846-9660) and ``reconcilers/service/service_reconciler_test.go`` (76-215).
"""

from __future__ import annotations

from typing import Any

import pytest

from kserve_compile import constants as C
from kserve_compile.errors import InputError
from kserve_compile.inputs.config import load_config
from kserve_compile.inputs.defaults import embedded_runtimes
from kserve_compile.inputs.serving_types import ComponentExtension, InferenceService, ServingRuntime
from kserve_compile.plan.components import Component, build_predictor
from kserve_compile.plan.isvc import plan_isvc
from kserve_compile.plan.multinode import (
    GpuPlan,
    expand_multinode,
    gpu_resource_types,
    mp_gpu_plan,
    ray_gpu_plan,
    set_gpu,
)
from kserve_compile.render.workloads.multinode import headless_services, multinode_objects, worker_deployment
from kserve_compile.render.workloads.standard.deployment import pod_template
from kserve_compile.render.workloads.standard.service import service

CONFIG = load_config([])
ANNOTATIONS = {C.ANN_DEPLOYMENT_MODE: C.MODE_STANDARD, C.ANN_AUTOSCALER_CLASS: C.AUTOSCALER_NONE}
RESOURCES = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}


def hf_runtime(annotations: dict[str, str] | None = None, worker: dict[str, Any] | None = None) -> ServingRuntime:
    """The ServingRuntime of rawkube_controller_test.go:8790-8840."""
    spec: dict[str, Any] = {
        "supportedModelFormats": [{"name": "huggingface", "version": "2", "autoSelect": True}],
        "containers": [
            {
                "name": "kserve-container",
                "image": "kserve/huggingfaceserver:latest-gpu",
                "args": ["--model_name={{.Name}}"],
                "resources": RESOURCES,
            }
        ],
        "workerSpec": worker
        if worker is not None
        else {
            "pipelineParallelSize": 2,
            "tensorParallelSize": 1,
            "containers": [
                {
                    "name": "worker-container",
                    "image": "kserve/huggingfaceserver:latest-gpu",
                    "command": ["bash", "-c", "ray start --address=$RAY_HEAD_ADDRESS --block"],
                    "resources": RESOURCES,
                }
            ],
        },
    }
    if annotations:
        spec["annotations"] = annotations
    return ServingRuntime.model_validate(
        {
            "apiVersion": C.V1ALPHA1,
            "kind": C.KIND_SR,
            "metadata": {"name": "huggingface-server-multinode", "namespace": "kserve"},
            "spec": spec,
        }
    )


def make_isvc(
    worker_spec: dict[str, Any],
    model: dict[str, Any] | None = None,
    generation: int | None = None,
    predictor: dict[str, Any] | None = None,
    name: str = "raw-huggingface-multinode-1",
) -> InferenceService:
    meta: dict[str, Any] = {"name": name, "namespace": "kserve", "annotations": dict(ANNOTATIONS)}
    if generation is not None:
        meta["generation"] = generation
    return InferenceService.model_validate(
        {
            "apiVersion": C.ISVC_API_VERSION,
            "kind": C.KIND_ISVC,
            "metadata": meta,
            "spec": {
                "predictor": {
                    "model": {
                        "modelFormat": {"name": "huggingface"},
                        "storageUri": "pvc://llama-3-8b-pvc/hf/8b_instruction_tuned",
                        **(model or {}),
                    },
                    "workerSpec": worker_spec,
                    **(predictor or {}),
                }
            },
        }
    )


def expand(isvc: InferenceService, runtime: ServingRuntime | None = None):  # noqa: ANN201
    runtimes = [*embedded_runtimes(), runtime or hf_runtime()]
    plan = plan_isvc(isvc, CONFIG, runtimes)
    labels = dict(plan.isvc.metadata.labels)
    build_predictor(plan.isvc, plan.isvc.spec.predictor, CONFIG, runtimes, labels)
    return expand_multinode(plan.isvc, plan.components[0], CONFIG, labels)


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in container.get("env") or []}


def gpus(container: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    res = container["resources"]
    pick = lambda section: {k: v for k, v in res[section].items() if k not in ("cpu", "memory")}  # noqa: E731
    return pick("limits"), pick("requests")


# --- GPU arithmetic --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pp", "tp", "expected"),
    [(2, 2, GpuPlan(2, 2, 2)), (4, 8, GpuPlan(4, 8, 8)), (1, 4, GpuPlan(1, 4, 4)), (2, 1, GpuPlan(2, 1, 1))],
    ids=[
        "PP=2, TP=2: 2 nodes, 2 GPUs per node",
        "PP=4, TP=8: 4 nodes, 8 GPUs per node",
        "PP=1, TP=4: 1 node, 4 GPUs",
        "PP=2, TP=1: 2 nodes, 1 GPU per node",
    ],
)
def test_compute_mp_node_and_gpus(pp: int, tp: int, expected: GpuPlan) -> None:  # predictor_test.go:31-82
    assert mp_gpu_plan(pp, tp) == expected


@pytest.mark.parametrize(
    ("total", "head", "worker", "expected"),
    [
        (2, 0, 0, GpuPlan(2, 1, 1)),  # rawkube_controller_test.go:8846 (PP 2, no GPUs set)
        (5, 0, 0, GpuPlan(5, 1, 1)),  # :8951 (PP 5)
        (32, 0, 0, GpuPlan(32, 1, 1)),  # :9017 (TP 16 x PP 2)
        (8, 2, 0, GpuPlan(7, 2, 1)),  # :9078 head 2
        (8, 0, 2, GpuPlan(4, 2, 2)),  # :9151 worker 2
        (8, 8, 2, GpuPlan(1, 8, 0)),  # :9228 the head alone holds everything
        (8, 2, 8, GpuPlan(1, 8, 0)),  # :9317 one worker would hold everything: head only
        (32, 4, 3, GpuPlan(11, 4, 3)),  # :9495 more GPUs than needed is allowed
        (8, 8, 0, GpuPlan(1, 8, 1)),  # head request covers everything: no remaining GPUs
    ],
)
def test_compute_ray_node_and_gpus(total: int, head: int, worker: int, expected: GpuPlan) -> None:
    assert ray_gpu_plan(total, head, worker) == expected


def test_ray_insufficient_gpus_error() -> None:  # rawkube_controller_test.go:9406-9493
    with pytest.raises(InputError) as err:
        ray_gpu_plan(7, 2, 4)
    assert err.value.message == (
        "the total required number of GPUs(7) is less than the number of GPUs assigned to the head node(2) + worker node(4)"
    )


def test_set_gpu_picks_the_requested_type_or_nvidia() -> None:
    types = gpu_resource_types({}, CONFIG)
    c: dict[str, Any] = {
        "resources": {"limits": {"intel.com/gpu": "2"}, "requests": {"intel.com/gpu": "2", "cpu": "1"}}
    }
    set_gpu(c, 0, types)
    assert c["resources"] == {"limits": {"intel.com/gpu": "0"}, "requests": {"intel.com/gpu": "0", "cpu": "1"}}
    zero: dict[str, Any] = {"resources": {"limits": {"amd.com/gpu": "0"}}}  # a zero quantity does not choose the type
    set_gpu(zero, 3, types)
    assert zero["resources"] == {
        "limits": {"amd.com/gpu": "0", "nvidia.com/gpu": "3"},
        "requests": {"nvidia.com/gpu": "3"},
    }
    bare: dict[str, Any] = {}
    set_gpu(bare, 1, types)
    assert bare["resources"] == {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}


def test_gpu_resource_types_annotation() -> None:
    assert (
        gpu_resource_types({C.ANN_GPU_RESOURCE_TYPES: '["example.com/tpu", "nvidia.com/gpu"]'}, CONFIG)[-1]
        == "example.com/tpu"
    )
    with pytest.raises(InputError) as err:
        gpu_resource_types({C.ANN_GPU_RESOURCE_TYPES: "example.com/tpu"}, CONFIG)
    assert err.value.message == (
        "invalid GPU format(example.com/tpu) for serving.kserve.io/gpu-resource-types annotation: must be a valid JSON array"
    )


# --- head and worker ---------------------------------------------------------------------------------------------


def test_default_workerspec_head_and_worker() -> None:  # rawkube_controller_test.go:8846-8950
    mn = expand(make_isvc({}))
    head = mn.head.pod_spec["containers"][0]
    assert head["name"] == C.CONTAINER_KSERVE
    assert {
        k: env(head)[k]
        for k in (
            "PIPELINE_PARALLEL_SIZE",
            "TENSOR_PARALLEL_SIZE",
            "RAY_NODE_COUNT",
            "REQUEST_GPU_COUNT",
            "MODEL_NAME",
            "MODEL_DIR",
        )
    } == {
        "PIPELINE_PARALLEL_SIZE": "2",
        "TENSOR_PARALLEL_SIZE": "1",
        "RAY_NODE_COUNT": "2",
        "REQUEST_GPU_COUNT": "1",
        "MODEL_NAME": "raw-huggingface-multinode-1",
        "MODEL_DIR": "/mnt/models",
    }
    worker = mn.worker.pod_spec["containers"]
    assert [c["name"] for c in worker] == [C.CONTAINER_WORKER]
    assert env(worker[0]) == {
        "RAY_NODE_COUNT": "2",
        "REQUEST_GPU_COUNT": "1",
        "PIPELINE_PARALLEL_SIZE": "2",
        "TENSOR_PARALLEL_SIZE": "1",
        "ISVC_NAME": "raw-huggingface-multinode-1",
        "HEAD_SVC": "raw-huggingface-multinode-1-head-1",
        "WORKER_SVC": "raw-huggingface-multinode-1-workers-1",
    }
    assert gpus(head) == ({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})
    assert gpus(worker[0]) == ({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})
    assert mn.worker_replicas == 1
    assert mn.head.labels[C.LABEL_GENERATION] == "1" and mn.worker.labels[C.LABEL_GENERATION] == "1"
    assert mn.worker.name == "raw-huggingface-multinode-1-predictor-worker"
    assert mn.worker.app_label == "isvc.raw-huggingface-multinode-1-predictor-worker"
    assert mn.worker.annotations[C.ANN_STORAGE_SOURCE_URI] == "pvc://llama-3-8b-pvc/hf/8b_instruction_tuned"
    assert C.ANN_PROMETHEUS_PORT not in mn.worker.annotations  # runtime spec annotations are the head's only


@pytest.mark.parametrize(
    ("worker_spec", "model", "nodes", "head_gpu", "worker_gpu", "replicas"),
    [
        ({"pipelineParallelSize": 5}, None, "5", ("nvidia.com/gpu", "1"), ("nvidia.com/gpu", "1"), 4),  # :8951-9016
        ({"tensorParallelSize": 16}, None, "32", ("nvidia.com/gpu", "1"), ("nvidia.com/gpu", "1"), 31),  # :9017-9077
        (
            {"tensorParallelSize": 4},
            {"resources": {"limits": {"intel.com/gpu": "2"}, "requests": {"intel.com/gpu": "2"}}},
            "7",
            ("intel.com/gpu", "2"),
            ("nvidia.com/gpu", "1"),
            6,
        ),  # :9078-9150
        (
            {
                "tensorParallelSize": 4,
                "containers": [
                    {
                        "name": "worker-container",
                        "resources": {"limits": {"intel.com/gpu": "2"}, "requests": {"intel.com/gpu": "2"}},
                    }
                ],
            },
            None,
            "4",
            ("nvidia.com/gpu", "2"),
            ("intel.com/gpu", "2"),
            3,
        ),  # :9151-9227
        (
            {
                "tensorParallelSize": 4,
                "containers": [
                    {
                        "name": "worker-container",
                        "resources": {"limits": {"intel.com/gpu": "2"}, "requests": {"intel.com/gpu": "2"}},
                    }
                ],
            },
            {"resources": {"limits": {"intel.com/gpu": "8"}, "requests": {"intel.com/gpu": "8"}}},
            "1",
            ("intel.com/gpu", "8"),
            ("intel.com/gpu", "0"),
            0,
        ),  # :9228-9316
        (
            {
                "tensorParallelSize": 16,
                "containers": [
                    {
                        "name": "worker-container",
                        "resources": {"limits": {"intel.com/gpu": "3"}, "requests": {"intel.com/gpu": "3"}},
                    }
                ],
            },
            {"resources": {"limits": {"intel.com/gpu": "4"}, "requests": {"intel.com/gpu": "4"}}},
            "11",
            ("intel.com/gpu", "4"),
            ("intel.com/gpu", "3"),
            10,
        ),  # :9495-9581
        ({"pipelineParallelSize": 3}, None, "3", ("nvidia.com/gpu", "1"), ("nvidia.com/gpu", "1"), 2),  # :9582-9660
    ],
)
def test_rawkube_workerspec_cases(
    worker_spec: dict, model: dict | None, nodes: str, head_gpu: tuple, worker_gpu: tuple, replicas: int
) -> None:
    mn = expand(make_isvc(worker_spec, model))
    head, worker = mn.head.pod_spec["containers"][0], mn.worker.pod_spec["containers"][0]
    assert env(head)["RAY_NODE_COUNT"] == nodes == env(worker)["RAY_NODE_COUNT"]
    assert gpus(head) == ({head_gpu[0]: head_gpu[1]}, {head_gpu[0]: head_gpu[1]})
    assert gpus(worker) == ({worker_gpu[0]: worker_gpu[1]}, {worker_gpu[0]: worker_gpu[1]})
    assert mn.worker_replicas == replicas
    dep = worker_deployment(mn.worker, pod_template(mn.worker), CONFIG, mn.worker_replicas)
    assert dep["spec"]["replicas"] == replicas  # set even when 0


def test_insufficient_gpus_through_expand() -> None:  # rawkube_controller_test.go:9406-9493
    model = {"resources": {"limits": {"intel.com/gpu": "2"}, "requests": {"intel.com/gpu": "2"}}}
    worker = {
        "pipelineParallelSize": 1,
        "tensorParallelSize": 7,
        "containers": [
            {
                "name": "worker-container",
                "resources": {"limits": {"intel.com/gpu": "4"}, "requests": {"intel.com/gpu": "4"}},
            }
        ],
    }
    with pytest.raises(InputError, match=r"GPUs\(7\) is less than .* head node\(2\) \+ worker node\(4\)"):
        expand(make_isvc(worker, model))


def test_mp_backend_from_runtime_spec_annotation() -> None:
    mn = expand(
        make_isvc({"pipelineParallelSize": 4, "tensorParallelSize": 8}),
        hf_runtime(annotations={C.ANN_MULTINODE_EXECUTOR_BACKEND: C.MULTINODE_EXECUTOR_MP}),
    )
    assert mn.gpus == GpuPlan(4, 8, 8) and mn.worker_replicas == 3
    assert env(mn.worker.pod_spec["containers"][0])["REQUEST_GPU_COUNT"] == "8"


def test_generation_names_headless_services_and_labels() -> None:
    mn = expand(make_isvc({}, generation=7))
    assert mn.generation == "7"
    worker_env = env(mn.worker.pod_spec["containers"][0])
    assert (worker_env["HEAD_SVC"], worker_env["WORKER_SVC"]) == (
        "raw-huggingface-multinode-1-head-7",
        "raw-huggingface-multinode-1-workers-7",
    )
    head_svc = service(mn.head, CONFIG)
    assert [s["metadata"]["name"] for s in headless_services(head_svc)] == [
        "raw-huggingface-multinode-1-head-7",
        "raw-huggingface-multinode-1-workers-7",
    ]


def test_predictor_name_keeps_kserve_naming() -> None:
    # HEAD_SVC is built from the isvc name, the Services and WORKER_SVC from the predictor Service name, and the
    # worker Deployment name ignores predictor.name while its app label does not (constants.go:762-810).
    mn = expand(make_isvc({}, predictor={"name": "big"}, name="llm"))
    worker_env = env(mn.worker.pod_spec["containers"][0])
    assert worker_env["HEAD_SVC"] == "llm-head-1" and worker_env["WORKER_SVC"] == "llm-big-workers-1"
    assert mn.worker.name == "llm-predictor-worker" and mn.worker.app_label == "isvc.llm-big-predictor-worker"
    names = [s["metadata"]["name"] for s in headless_services(service(mn.head, CONFIG))]
    assert names == ["llm-big-head-1", "llm-big-workers-1"]


def test_worker_labels_annotations_and_pod_fields() -> None:
    worker = {
        "pipelineParallelSize": 2,
        "tensorParallelSize": 1,
        "containers": [{"name": "worker-container", "image": "w:1", "command": ["ray"]}],
        "labels": {"rt-worker": "yes"},
        "annotations": {"rt-worker-ann": "yes"},
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
    }
    isvc = make_isvc(
        {"nodeSelector": {"pool": "gpu"}}, predictor={"labels": {"team": "llm"}, "annotations": {"p": "1"}}
    )
    mn = expand(isvc, hf_runtime(worker=worker))
    assert mn.worker.labels == {
        "rt-worker": "yes",
        "team": "llm",
        C.LABEL_GENERATION: "1",
        C.LABEL_ISVC: "raw-huggingface-multinode-1",
        C.LABEL_COMPONENT: C.PREDICTOR,
    }
    assert mn.worker.annotations["rt-worker-ann"] == "yes" and mn.worker.annotations["p"] == "1"
    assert mn.worker.pod_spec["nodeSelector"] == {"pool": "gpu"}
    assert mn.worker.pod_spec["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert C.INFERENCE_SERVICE_NAME_ENV not in env(mn.worker.pod_spec["containers"][0])


def test_runtime_without_worker_spec_is_rejected() -> None:
    isvc = make_isvc({}, model={"runtime": "kserve-huggingfaceserver"})
    runtimes = list(embedded_runtimes())
    # the pipeline expands the worker while planning, so the error surfaces there
    with pytest.raises(InputError) as err:
        plan_isvc(isvc, CONFIG, runtimes)
    assert err.value.message == (
        "you cannot set WorkerSpec in the InferenceService if the ServingRuntime does not have a WorkerSpec"
    )


def test_runtime_worker_spec_without_worker_container() -> None:
    with pytest.raises(InputError, match="No workerSpec container configuration found in selected serving runtime"):
        expand(make_isvc({}), hf_runtime(worker={"pipelineParallelSize": 2}))
    with pytest.raises(InputError, match="failed to find worker-container in ServingRuntime containers"):
        expand(make_isvc({}), hf_runtime(worker={"containers": [{"name": "other", "image": "x"}]}))


# --- objects -----------------------------------------------------------------------------------------------------


def test_headless_services_port_service_reconciler_test() -> None:  # service_reconciler_test.go:76-215
    labels = {
        C.LABEL_APP: "isvc.default-predictor",
        C.LABEL_ISVC: "default-predictor",
        C.LABEL_COMPONENT: C.PREDICTOR,
        C.LABEL_GENERATION: "1",
    }
    head_service = {
        "metadata": {
            "name": "default-predictor",
            "namespace": "default-predictor-namespace",
            "labels": labels,
            "annotations": {"annotation": "annotation-value"},
        }
    }
    head, worker = headless_services(head_service)
    assert head == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "default-head-1",
            "namespace": "default-predictor-namespace",
            "labels": {**labels, C.LABEL_MULTINODE_ROLE: "head"},
            "annotations": {"annotation": "annotation-value"},
        },
        "spec": {
            "selector": {C.LABEL_APP: "isvc.default-predictor", C.LABEL_GENERATION: "1"},
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
        },
    }
    assert worker["metadata"]["name"] == "default-workers-1"
    assert worker["metadata"]["labels"] == {**labels, C.LABEL_MULTINODE_ROLE: "worker"}
    assert worker["spec"]["selector"] == {C.LABEL_APP: "isvc.default-predictor-worker", C.LABEL_GENERATION: "1"}
    assert head_service["metadata"]["labels"] == labels, "the head Service metadata must not be mutated"


def worker_component(strategy: dict | None) -> Component:
    ext = ComponentExtension.model_validate({"deploymentStrategy": strategy} if strategy else {})
    return Component(
        C.PREDICTOR,
        "m-predictor-worker",
        "ns",
        {C.LABEL_ISVC: "m"},
        {},
        {"containers": [{"name": "worker-container"}]},
        ext,
        app="isvc.m-predictor-worker",
    )


def test_worker_deployment_rollout() -> None:  # deployment_reconciler.go:177-220
    dep = worker_deployment(worker_component(None), pod_template(worker_component(None)), CONFIG, 2)
    assert dep["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": "0%"},
    }
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["selector"] == {"matchLabels": {C.LABEL_APP: "isvc.m-predictor-worker"}}
    assert dep["spec"]["template"]["metadata"]["labels"][C.LABEL_APP] == "isvc.m-predictor-worker"
    recreate = worker_component({"type": "Recreate"})
    assert worker_deployment(recreate, pod_template(recreate), CONFIG, 1)["spec"]["strategy"] == {"type": "Recreate"}
    user = worker_component({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}})
    assert worker_deployment(user, pod_template(user), CONFIG, 1)["spec"]["strategy"]["rollingUpdate"] == {
        "maxSurge": "100%",
        "maxUnavailable": "0%",
    }


def test_multinode_objects_take_the_workers_finished_template() -> None:
    mn = expand(make_isvc({}))
    template = pod_template(mn.worker)
    template["metadata"]["annotations"] = {"finished": "yes"}
    objects = multinode_objects(mn, service(mn.head, CONFIG), template, CONFIG)
    assert objects[2]["spec"]["template"]["metadata"]["annotations"] == {"finished": "yes"}
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Service", "raw-huggingface-multinode-1-head-1"),
        ("Service", "raw-huggingface-multinode-1-workers-1"),
        ("Deployment", "raw-huggingface-multinode-1-predictor-worker"),
    ]
