"""Container/PodSpec strategic merge, placeholders and image tags (ctl/utils/utils.go, pkg/utils/container_merge.go)."""

from __future__ import annotations

import pytest

from kserve_compile.errors import InputError
from kserve_compile.gotemplate import object_meta_data
from kserve_compile.kube.merge import merge_containers, merge_pod_specs
from kserve_compile.plan.components import _update_image_tag, replace_placeholders
from kserve_compile.plan.runtime_select import Selected

from .builders import runtime


def test_env_merged_by_name_resources_per_key_args_concatenated() -> None:
    # the shape of KServe's utils_test.go:707-787 MergeRuntimeContainers case
    rt = {
        "name": "kserve-container",
        "image": "rt:1",
        "args": ["--a=1"],
        "env": [{"name": "PORT", "value": "8080"}, {"name": "PORT2", "value": "8081"}],
        "resources": {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}},
    }
    isvc = {
        "args": ["--b=2"],
        "env": [{"name": "PORT2", "value": "8082"}, {"name": "Some", "value": "Var"}],
        "resources": {"limits": {"cpu": "2", "memory": "4Gi"}},
    }
    merged = merge_containers(rt, isvc)
    assert merged["env"] == [
        {"name": "PORT", "value": "8080"},
        {"name": "PORT2", "value": "8082"},
        {"name": "Some", "value": "Var"},
    ]
    assert merged["resources"] == {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}
    assert merged["args"] == ["--a=1", "--b=2"]
    assert merged["name"] == "kserve-container" and merged["image"] == "rt:1"


def test_command_replaced_not_concatenated() -> None:
    merged = merge_containers({"name": "c", "command": ["a"], "args": ["x"]}, {"command": ["b"]})
    assert merged["command"] == ["b"] and merged["args"] == ["x"]


def test_env_value_from_wins_over_runtime_value() -> None:
    secret = {"secretKeyRef": {"name": "s", "key": "k"}}
    merged = merge_containers(
        {"name": "c", "env": [{"name": "TOKEN", "value": "plain"}]}, {"env": [{"name": "TOKEN", "valueFrom": secret}]}
    )
    assert merged["env"] == [{"name": "TOKEN", "valueFrom": secret}]


def test_new_patch_item_goes_before_later_base_items() -> None:
    # strategicpatch keeps patch order and inserts base-only items by their base position
    merged = merge_containers(
        {"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"env": [{"name": "N", "value": "n"}]},
    )
    assert [e["name"] for e in merged["env"]] == ["N", "A", "B"]


def test_image_pull_secrets_isvc_first_then_runtime_only() -> None:
    # KServe controller_test.go:3756-3815
    merged = merge_pod_specs(
        {"imagePullSecrets": [{"name": "sr-secret"}]}, {"imagePullSecrets": [{"name": "isvc-secret"}]}
    )
    assert merged["imagePullSecrets"] == [{"name": "isvc-secret"}, {"name": "sr-secret"}]
    shared = merge_pod_specs(
        {"imagePullSecrets": [{"name": "rt"}, {"name": "both"}]},
        {"imagePullSecrets": [{"name": "own"}, {"name": "both"}]},
    )
    assert [s["name"] for s in shared["imagePullSecrets"]] == ["own", "rt", "both"]


def test_pod_maps_merge_and_null_deletes() -> None:
    merged = merge_pod_specs(
        {"nodeSelector": {"pool": "a", "zone": "x"}}, {"nodeSelector": {"zone": "y", "pool": None}}
    )
    assert merged["nodeSelector"] == {"zone": "y"}


def _meta(labels=None, annotations=None):
    return object_meta_data("demo", "ns1", labels or {}, annotations or {})


def test_placeholders_html_escaped_and_missing_keys_empty() -> None:
    container = {
        "name": "kserve-container",
        "args": ["--n={{.Name}}.{{.Namespace}}", "--o={{.Annotations.owner}}", "--x={{.Labels.absent}}"],
    }
    out = replace_placeholders(container, _meta(annotations={"owner": 'a&b<"c">'}), "rt")
    assert out["args"] == ["--n=demo.ns1", "--o=a&amp;b&lt;&#34;c&#34;&gt;", "--x="]


def test_container_without_placeholders_is_untouched() -> None:
    container = {"name": "c", "args": ["--plain"]}
    assert replace_placeholders(container, _meta(), "rt") is container


def test_bad_placeholder_names_runtime_and_container() -> None:
    with pytest.raises(InputError, match="failed to replace placeholders in serving runtime rt Container c"):
        replace_placeholders({"name": "c", "args": ["{{.Name"]}, _meta(), "rt")


def _selected(name: str, server_type: str | None = None) -> Selected:
    rt = runtime(name, [{"name": "x", "autoSelect": True}])
    if server_type is not None:
        meta = rt.metadata.model_copy(update={"annotations": {"serving.kserve.io/server-type": server_type}})
        rt = rt.model_copy(update={"metadata": meta})
    return Selected(rt, explicit=False)


@pytest.mark.parametrize(
    ("image", "version", "server_type", "limits", "expected"),
    [
        ("kserve/sklearnserver:latest", "1.2", None, {}, "kserve/sklearnserver:1.2"),
        ("registry:5000/sklearn", "1.2", None, {}, "registry:5000/sklearn:1.2"),
        (
            "tensorflow/serving:2.6.2",
            None,
            "tensorflow-serving",
            {"nvidia.com/gpu": "1"},
            "tensorflow/serving:2.6.2-gpu",
        ),
        ("tensorflow/serving:2.6.2", "2.7", "tensorflow-serving", {"nvidia.com/gpu": "1"}, "tensorflow/serving:2.7"),
        ("tensorflow/serving:2.6.2", None, "tensorflow-serving", {}, "tensorflow/serving:2.6.2"),
        ("pytorch/torchserve:0.9", None, "torchserve", {"nvidia.com/mig-1g.5gb": "1"}, "pytorch/torchserve:0.9-gpu"),
        ("vllm/vllm-openai:latest", None, "vllmserver", {}, "vllm/vllm-openai-cpu:latest"),
        ("vllm/vllm-openai:latest", None, "vllmserver", {"nvidia.com/gpu": "1"}, "vllm/vllm-openai:latest"),
        ("vllm/vllm-openai:latest", None, "vllmserver", {"amd.com/gpu": "1"}, "vllm/vllm-openai-cpu:latest"),
        ("vllm/vllm-openai", None, "vllmserver", {}, "vllm/vllm-openai"),
        ("repo/img@sha256:abc", "9", "tensorflow-serving", {"nvidia.com/gpu": "1"}, "repo/img@sha256:abc"),
        ("kserve/sklearnserver:latest", None, "sklearnserver", {"nvidia.com/gpu": "1"}, "kserve/sklearnserver:latest"),
    ],
)
def test_image_tag_rules(image, version, server_type, limits, expected) -> None:
    container = {"name": "kserve-container", "image": image, "resources": {"limits": limits}}
    _update_image_tag(container, version, _selected("rt", server_type))
    assert container["image"] == expected


def test_server_type_falls_back_to_runtime_name() -> None:
    container = {
        "name": "kserve-container",
        "image": "tensorflow/serving:2.6.2",
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
    }
    _update_image_tag(container, None, _selected("kserve-tensorflow-serving"))
    assert container["image"] == "tensorflow/serving:2.6.2-gpu"
