"""ServingRuntime / ClusterServingRuntime admission, ported from KServe's
``pkg/webhook/admission/servingruntime/servingruntime_webhook.go`` (SRW) and its ``servingruntime_webhook_test.go``
(SRWT: TestValidateServingRuntimePriority, TestValidateModelFormatPrioritySame, TestValidateMultiNodeVariables,
TestServingRuntimeValidator_Handle, TestValidateBlockedEnvVars)."""

from __future__ import annotations

from typing import Any

import pytest

from kserve_compile.inputs.defaults import embedded_runtimes
from kserve_compile.inputs.runtime_webhook import validate_runtimes
from kserve_compile.inputs.serving_types import ServingRuntime


def fmt(name: str, priority: int | None = 1, version: str | None = None, auto: bool | None = True) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if version is not None:
        out["version"] = version
    if auto is not None:
        out["autoSelect"] = auto
    if priority is not None:
        out["priority"] = priority
    return out


def runtime(
    name: str,
    formats: list[dict[str, Any]] | None = None,
    *,
    cluster: bool = False,
    namespace: str = "default",
    protocols: list[str] | None = ("v1",),  # type: ignore[assignment]
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> ServingRuntime:
    body: dict[str, Any] = {
        "supportedModelFormats": formats if formats is not None else [fmt("sklearn")],
        "containers": containers
        if containers is not None
        else [{"name": "kserve-container", "image": "example.com/server:1"}],
        **spec,
    }
    if protocols is not None:
        body["protocolVersions"] = list(protocols)
    meta = {"name": name} if cluster else {"name": name, "namespace": namespace}
    kind = "ClusterServingRuntime" if cluster else "ServingRuntime"
    return ServingRuntime.model_validate(
        {"apiVersion": "serving.kserve.io/v1alpha1", "kind": kind, "metadata": meta, "spec": body}
    )


def errors(*runtimes: ServingRuntime, existing: tuple[ServingRuntime, ...] = ()) -> list[tuple[str, str, str]]:
    return [
        (rt.metadata.name, err.message, err.path) for rt, err in validate_runtimes(list(runtimes), existing=existing)
    ]


# --- built-ins ----------------------------------------------------------------------------------------------------------


def test_builtin_runtimes_are_valid() -> None:
    builtins = embedded_runtimes()
    assert len(builtins) > 10
    assert validate_runtimes(builtins) == []
    assert validate_runtimes(builtins, existing=builtins) == []  # re-applying them is an update of each


# --- same priority across runtimes (SRW:160-189, SRWT TestValidateServingRuntimePriority) ---------------------------------


def test_same_priority_same_format_shared_protocol() -> None:
    first, second = runtime("first"), runtime("second")
    assert errors(first, second) == [
        (
            "second",
            "same priority assigned for the model format sklearn in the servingruntimes first and second in namespace default",
            "spec.supportedModelFormats[0].priority",
        ),
    ]


def test_same_priority_cluster_runtimes() -> None:
    first, second = runtime("first", cluster=True), runtime("second", cluster=True)
    assert errors(first, second) == [
        (
            "second",
            "same priority assigned for the model format sklearn in the clusterservingruntimes first and second",
            "spec.supportedModelFormats[0].priority",
        ),
    ]


def test_format_names_compare_ignoring_case_versions_exactly() -> None:
    assert errors(runtime("a", [fmt("sklearn", version="1")]), runtime("b", [fmt("SKLearn", version="1")]))[0][0] == "b"
    assert errors(runtime("a", [fmt("sklearn", version="1")]), runtime("b", [fmt("sklearn", version="2")])) == []
    assert errors(runtime("a", [fmt("sklearn", version="1")]), runtime("b", [fmt("sklearn")])) == []


@pytest.mark.parametrize(
    "second",
    [
        runtime("b", [fmt("sklearn", priority=2)]),  # different priority
        runtime("b", [fmt("sklearn", priority=None)]),  # no priority
        runtime("b", [fmt("sklearn", auto=False)]),  # not auto-selectable
        runtime("b", [fmt("sklearn", auto=None)]),  # autoSelect unset is off
        runtime("b", protocols=["v2"]),  # no shared protocol
        runtime("b", protocols=None),  # no protocol listed shares nothing
        runtime("b", multiModel=True),  # single vs multi-model
        runtime("b", namespace="other"),  # another namespace
        runtime("b", cluster=True),  # a ClusterServingRuntime is not compared with ServingRuntimes
        runtime("a"),  # the same name is an update of the runtime itself
    ],
)
def test_no_priority_clash(second: ServingRuntime) -> None:
    assert errors(runtime("a"), second) == []


def test_disabled_existing_runtime_is_skipped() -> None:
    assert errors(runtime("a", disabled=True), runtime("b")) == []


def test_disabled_new_runtime_is_admitted_without_checks() -> None:
    """SRW:88-91: a disabled runtime is allowed before any check (even PYTHONPATH)."""
    env = [{"name": "kserve-container", "image": "x", "env": [{"name": "PYTHONPATH", "value": "/x"}]}]
    assert errors(runtime("a"), runtime("b", disabled=True, containers=env)) == []


def test_denied_runtime_does_not_join_the_cluster() -> None:
    """A denied runtime is not created, so the next one is compared without it."""
    result = errors(runtime("a"), runtime("b"), runtime("c", [fmt("sklearn", priority=2)]))
    assert [r[0] for r in result] == ["b"]


def test_an_update_replaces_the_runtime_it_updates() -> None:
    """Re-applying ``a`` with another priority frees priority 1 for ``b``; the old ``a`` is gone."""
    updated = runtime("a", [fmt("sklearn", priority=2)])
    assert errors(updated, runtime("b"), existing=(runtime("a"),)) == []


def test_clash_with_a_builtin_cluster_runtime() -> None:
    builtins = embedded_runtimes()
    sklearn = next(r for r in builtins if r.metadata.name == "kserve-sklearnserver")
    formats = [f.model_dump(by_alias=True, exclude_none=True) for f in sklearn.spec.supported_model_formats or []]
    mine = runtime("my-sklearn", formats, cluster=True, protocols=sklearn.spec.protocol_versions)
    result = errors(mine, existing=builtins)
    assert len(result) == 1 and result[0][1].startswith(
        "same priority assigned for the model format sklearn in the clusterservingruntimes "
    )
    assert result[0][1].endswith(" and my-sklearn")


# --- different priorities within one runtime (SRW:140-158, SRWT TestValidateModelFormatPrioritySame) ---------------------


def test_different_priorities_for_one_format() -> None:
    bad = runtime(
        "b", [fmt("sklearn", priority=1, version="1"), fmt("sklearn", priority=2, version="2")], protocols=["v2"]
    )
    assert errors(runtime("a"), bad) == [
        (
            "b",
            "different priorities assigned for the model format sklearn under the servingruntime b",
            "spec.supportedModelFormats[1].priority",
        ),
    ]


def test_different_priorities_cluster_wording() -> None:
    bad = runtime("b", [fmt("xgb", priority=1), fmt("xgb", priority=3)], cluster=True)
    assert (
        errors(runtime("a", cluster=True, protocols=["v2"]), bad)[0][1]
        == "different priorities assigned for the model format xgb under the clusterservingruntime b"
    )


def test_same_priority_or_non_auto_select_within_one_runtime_passes() -> None:
    ok = runtime(
        "b",
        [fmt("sklearn", 1, "1"), fmt("sklearn", 1, "2"), fmt("sklearn", 5, "3", auto=False), fmt("sklearn", None, "4")],
        protocols=["v2"],
    )
    assert errors(runtime("a"), ok) == []


def test_own_priorities_are_only_checked_when_a_peer_exists() -> None:
    """SRW:95-97 run the check inside the loop over existing runtimes: a namespace's first ServingRuntime skips it."""
    bad = runtime("b", [fmt("sklearn", priority=1), fmt("sklearn", priority=2)])
    assert errors(bad) == []
    assert errors(runtime("other", [fmt("x")], protocols=["v2"]), bad)[0][0] == "b"


# --- multi-node (SRW:192-267, SRWT TestValidateMultiNodeVariables) -----------------------------------------------------------


WORKER = {"containers": [{"name": "worker-container", "image": "x"}]}


def multinode(**spec: Any) -> ServingRuntime:
    return runtime("mn", [fmt("huggingface")], **{"workerSpec": WORKER, **spec})


def test_multinode_runtime_valid() -> None:
    assert errors(multinode()) == []
    assert errors(multinode(workerSpec={**WORKER, "pipelineParallelSize": 2, "tensorParallelSize": 1})) == []


@pytest.mark.parametrize(
    ("spec", "message", "path"),
    [
        (
            {"workerSpec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}},
            "setting multiple containers in workerSpec is not allowed",
            "spec.workerSpec.containers",
        ),
        (
            {"workerSpec": {**WORKER, "pipelineParallelSize": 0}},
            "the WorkerSpec.PipelineParallelSize cannot be less than 1(0)",
            "spec.workerSpec.pipelineParallelSize",
        ),
        (
            {"workerSpec": {**WORKER, "tensorParallelSize": 0}},
            "the WorkerSpec.TensorParallelSize cannot be less than 1(0)",
            "spec.workerSpec.tensorParallelSize",
        ),
        (
            {
                "containers": [
                    {"name": "kserve-container", "image": "x", "env": [{"name": "TENSOR_PARALLEL_SIZE", "value": "2"}]}
                ]
            },
            "setting TENSOR_PARALLEL_SIZE in environment variables is not allowed",
            "spec.containers[0].env[0]",
        ),
        (
            {
                "containers": [
                    {
                        "name": "kserve-container",
                        "image": "x",
                        "env": [{"name": "TENSOR_PARALLEL_SIZE"}, {"name": "PIPELINE_PARALLEL_SIZE"}],
                    }
                ]
            },
            "setting PIPELINE_PARALLEL_SIZE in environment variables is not allowed",
            "spec.containers[0].env[1]",
        ),
        (
            {
                "containers": [
                    {"name": "kserve-container", "image": "x", "resources": {"limits": {"unknown.com/gpu": "1"}}}
                ]
            },
            "unknown GPU resource type in a container(kserve-container)",
            "spec.containers[0].resources.limits[unknown.com/gpu]",
        ),
        (
            {
                "workerSpec": {
                    "containers": [
                        {"name": "worker-container", "image": "x", "resources": {"requests": {"unknown.com/gpu": "1"}}}
                    ]
                }
            },
            "unknown GPU resource type in a container(worker-container)",
            "spec.workerSpec.containers[0].resources.requests[unknown.com/gpu]",
        ),
        (
            {"annotations": {"serving.kserve.io/gpu-resource-types": "[]"}},
            "invalid GPU format([]) for serving.kserve.io/gpu-resource-types annotation: must be a valid JSON array",
            "spec.annotations[serving.kserve.io/gpu-resource-types]",
        ),
        (
            {"workerSpec": {"containers": []}},
            "spec.workerSpec.containers: Required value",
            "spec.workerSpec.containers",
        ),
    ],
)
def test_multinode_runtime_invalid(spec: dict, message: str, path: str) -> None:
    assert errors(multinode(**spec)) == [("mn", f"the ServingRuntime mn is invalid: {message}", path)]


def test_multinode_custom_gpu_types() -> None:
    """The runtime's spec.annotations and the ConfigMap's multiNode list extend the known GPU types."""
    gpu = [{"name": "kserve-container", "image": "x", "resources": {"limits": {"unknown.com/gpu": "1"}}}]
    assert (
        errors(multinode(containers=gpu, annotations={"serving.kserve.io/gpu-resource-types": '["unknown.com/gpu"]'}))
        == []
    )
    assert (
        validate_runtimes([multinode(containers=gpu)], gpu_resource_types=["unknown.com/gpu", "nvidia.com/gpu"]) == []
    )


def test_worker_container_gpu_only_checked_when_named_worker_container() -> None:
    worker = {"containers": [{"name": "other", "image": "x", "resources": {"limits": {"unknown.com/gpu": "1"}}}]}
    assert errors(multinode(workerSpec=worker)) == []


def test_removing_worker_spec_from_an_existing_runtime() -> None:
    builtins = embedded_runtimes()
    multi = next(r for r in builtins if r.spec.worker_spec is not None)
    body = multi.spec.model_dump(by_alias=True, exclude_none=True)
    body.pop("workerSpec")
    replacement = ServingRuntime.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "ClusterServingRuntime",
            "metadata": {"name": multi.metadata.name},
            "spec": body,
        }
    )
    assert [(m, p) for _, m, p in errors(replacement, existing=builtins)] == [
        (
            f"the ClusterServingRuntime {multi.metadata.name} is invalid: removing workerSpec where it already exists is not allowed",
            "spec",
        ),
    ]


# --- blocked env vars (SRW:270-282, SRWT TestValidateBlockedEnvVars) -----------------------------------------------------


def test_pythonpath_in_runtime_container() -> None:
    containers = [
        {"name": "kserve-container", "image": "x", "env": [{"name": "A"}, {"name": "PYTHONPATH", "value": "/x"}]}
    ]
    assert errors(runtime("rt", containers=containers)) == [
        (
            "rt",
            'the ServingRuntime "rt" is invalid: setting PYTHONPATH in container "kserve-container" is not allowed for security reasons',
            "spec.containers[0].env[1]",
        ),
    ]


def test_pythonpath_in_runtime_worker_container() -> None:
    worker = {
        "containers": [{"name": "worker-container", "image": "x", "env": [{"name": "PYTHONPATH", "value": "/x"}]}]
    }
    result = errors(runtime("rt", [fmt("huggingface")], cluster=True, workerSpec=worker))
    assert result == [
        (
            "rt",
            'the ClusterServingRuntime "rt" is invalid: setting PYTHONPATH in container "worker-container" is not allowed for security reasons',
            "spec.workerSpec.containers[0].env[0]",
        ),
    ]


def test_multinode_checked_before_blocked_env() -> None:
    containers = [
        {"name": "kserve-container", "image": "x", "env": [{"name": "PYTHONPATH"}, {"name": "TENSOR_PARALLEL_SIZE"}]}
    ]
    assert (
        errors(multinode(containers=containers))[0][1]
        == "the ServingRuntime mn is invalid: setting TENSOR_PARALLEL_SIZE in environment variables is not allowed"
    )
