"""LLMInferenceServices through the whole pipeline with local model caches: the webhook labels them, the workloads read
the cache, and the controller counts them as consumers (localmodel/reconcilers/utils.go ReconcileForIsvcs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .helpers import by_kind, cache, config, isvc, names, node, node_group, render

URI = "hf://meta-llama/Llama-3.2-1B"
LM = "internal.serving.kserve.io/localmodel"


def llm(name: str, uri: str = URI, namespace: str = "llm", version: str = "v1alpha2", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"serving.kserve.io/{version}",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"model": {"uri": uri}, "template": {"containers": [{"name": "main"}]}},
    }


BASE = (config(), node_group("gpu1"), node("n1", "gpu1"))


def _pod(result: Any, kind: str = "Deployment") -> dict[str, Any]:
    return by_kind(result, kind)[0]["spec"]["template"]["spec"]


def test_an_llm_service_is_a_consumer_like_an_isvc(tmp_path: Path) -> None:
    # controller_test.go:426: the cache tracks the LLMInferenceService, and its namespace gets the serving PV/PVC
    result = render(tmp_path, *BASE, cache("llama", URI, ["gpu1"]), llm("a"))
    assert ("", "llama-gpu1-llm") in names(result, "PersistentVolume")
    assert ("llm", "llama-gpu1") in names(result, "PersistentVolumeClaim")
    claims = [v["persistentVolumeClaim"]["claimName"] for v in _pod(result)["volumes"] if "persistentVolumeClaim" in v]
    assert claims == ["llama-gpu1"]
    assert not _pod(result).get("initContainers")


def test_without_a_covered_service_no_serving_volumes(tmp_path: Path) -> None:
    result = render(tmp_path, *BASE, cache("llama", URI, ["gpu1"]), llm("a", uri="hf://other/model"))
    assert names(result, "PersistentVolume") == [("", "llama-gpu1-download")]
    assert [i["name"] for i in _pod(result)["initContainers"]] == ["storage-initializer"]


def test_disable_volume_management_skips_serving_volumes_for_llm_services_too(tmp_path: Path) -> None:
    result = render(tmp_path, config(disableVolumeManagement=True), *BASE[1:], cache("llama", URI, ["gpu1"]), llm("a"))
    assert names(result, "PersistentVolume") == [("", "llama-gpu1-download")]
    assert by_kind(result, "Deployment")[0]["metadata"]["labels"][LM] == "llama"  # the webhook still labels it


def test_an_isvc_and_an_llm_service_in_one_namespace_share_the_serving_pvc(tmp_path: Path) -> None:
    isvc_doc = isvc("s", "gs://bucket/m", namespace="llm")
    result = render(tmp_path, *BASE, cache("c", "gs://bucket/m", ["gpu1"]), isvc_doc, llm("a", uri="gs://bucket/m/x"))
    assert names(result, "PersistentVolumeClaim").count(("llm", "c-gpu1")) == 1
    llm_deployment = next(d for d in by_kind(result, "Deployment") if d["metadata"]["name"] == "a-kserve")
    mounts = llm_deployment["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    key = next(m["subPath"] for m in mounts if m["name"] == "kserve-pvc-source")
    assert key.startswith("models/") and key.endswith("/x")


def test_v1alpha1_services_are_labelled_too(tmp_path: Path) -> None:
    # defaulter_test.go TestDefault_V1Alpha1Object_DoesNotErrorAndSetsMetadata
    result = render(tmp_path, *BASE, cache("llama", URI, ["gpu1"]), llm("a", version="v1alpha1"))
    assert by_kind(result, "Deployment")[0]["metadata"]["labels"][LM] == "llama"
    assert ("llm", "llama-gpu1") in names(result, "PersistentVolumeClaim")


def test_an_uncovered_service_renders_as_without_caches(tmp_path: Path) -> None:
    stale = {"labels": {LM: "llama"}, "annotations": {"internal.serving.kserve.io/localmodel-pvc-name": "llama-gpu1"}}
    with_caches = render(tmp_path, *BASE, cache("llama", URI, ["gpu1"]), llm("a", uri="hf://other/model", **stale))
    plain = render(tmp_path, config(), llm("a", uri="hf://other/model"))
    kinds = {"Deployment", "Service"}
    assert [o for o in with_caches.objects if o["kind"] in kinds] == [o for o in plain.objects if o["kind"] in kinds]


def test_caches_off_warns_about_llm_services_too(tmp_path: Path) -> None:
    result = render(tmp_path, config(enabled=False), *BASE[1:], cache("llama", URI, ["gpu1"]), llm("a"))
    assert LM not in by_kind(result, "Deployment")[0]["metadata"].get("labels", {})
    assert any("LLMInferenceServices" in w.message for w in result.warnings)


def test_a_namespace_cache_serves_only_its_namespace(tmp_path: Path) -> None:
    ns_cache = cache("team", URI, ["gpu1"], namespace="llm")
    result = render(tmp_path, *BASE, ns_cache, llm("a"), llm("b", namespace="other"))
    labels = {d["metadata"]["namespace"]: d["metadata"].get("labels", {}) for d in by_kind(result, "Deployment")}
    assert labels["llm"][LM] == "team" and labels["llm"][LM + "-namespace"] == "llm"
    assert LM not in labels["other"]
    assert [n for n in names(result, "PersistentVolumeClaim") if n[1] == "team-gpu1"] == [("llm", "team-gpu1")]
