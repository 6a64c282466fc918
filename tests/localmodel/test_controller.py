"""The localmodel controller's objects and the node agent's Jobs, through the pipeline (controller_test.go shapes)."""

from __future__ import annotations

from pathlib import Path

from .helpers import by_kind, cache, config, isvc, names, node, node_group, render

URI = "s3://mybucket/mymodel"
KEY = "89da10faf446bbf1"  # GetStorageKey(URI)


def test_download_volumes_nodes_and_jobs(tmp_path: Path) -> None:
    # controller_test.go:126: two groups, one node in each
    result = render(
        tmp_path,
        config(),
        node_group("gpu1"),
        node_group("gpu2"),
        cache("iris", URI, ["gpu1", "gpu2"]),
        node("node-1", "gpu1"),
        node("node-2", "gpu2"),
    )
    assert names(result, "PersistentVolume") == [("", "iris-gpu1-download"), ("", "iris-gpu2-download")]
    assert names(result, "PersistentVolumeClaim") == [
        ("kserve-localmodel-jobs", "iris-gpu1"),
        ("kserve-localmodel-jobs", "iris-gpu2"),
    ]
    pvc = by_kind(result, "PersistentVolumeClaim")[0]
    assert pvc["spec"]["volumeName"] == "iris-gpu1-download"
    pv = by_kind(result, "PersistentVolume")[0]
    assert pv["spec"]["capacity"] == {"storage": "2Gi"}  # 2048Mi written back canonically
    lmns = {o["metadata"]["name"]: o["spec"]["localModels"] for o in by_kind(result, "LocalModelNode")}
    assert lmns == {
        "node-1": [{"modelName": "iris", "sourceModelUri": URI, "nodeGroup": "gpu1"}],
        "node-2": [{"modelName": "iris", "sourceModelUri": URI, "nodeGroup": "gpu2"}],
    }
    jobs = by_kind(result, "Job")
    assert [j["metadata"]["generateName"] for j in jobs] == ["iris-node-1", "iris-node-2"]
    spec = jobs[0]["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"kubernetes.io/hostname": "node-1"}
    assert spec["containers"][0]["volumeMounts"][0]["subPath"] == f"models/{KEY}"
    assert spec["volumes"][0]["persistentVolumeClaim"]["claimName"] == "iris-gpu1"
    assert spec["securityContext"] == {"fsGroup": 1000} and jobs[0]["spec"]["ttlSecondsAfterFinished"] == 3600


def test_not_ready_and_agentless_nodes(tmp_path: Path) -> None:
    result = render(
        tmp_path,
        config(),
        node_group("gpu1"),
        cache("iris", URI, ["gpu1"]),
        node("down", "gpu1", ready=False),
        node("plain", "gpu1", agent=False),
    )
    assert [o["metadata"]["name"] for o in by_kind(result, "LocalModelNode")] == ["plain"]
    assert by_kind(result, "Job") == []
    assert any("lacks the label kserve/localmodel=worker" in w.message for w in result.warnings)


def test_serving_volumes_per_consumer_namespace(tmp_path: Path) -> None:
    # controller_test.go:277: no annotation → first group; the annotation picks its group
    result = render(
        tmp_path,
        config(),
        node_group("gpu1"),
        node_group("gpu2"),
        cache("iris2", URI, ["gpu1", "gpu2"]),
        isvc("foo", URI),
        isvc("bar", URI, annotations={"serving.kserve.io/nodegroup": "gpu2"}),
        isvc("baz", URI, namespace="team"),
    )
    pvs = [n for _, n in names(result, "PersistentVolume")]
    assert pvs == [
        "iris2-gpu1-default",
        "iris2-gpu1-download",
        "iris2-gpu1-team",
        "iris2-gpu2-default",
        "iris2-gpu2-download",
    ]
    assert ("team", "iris2-gpu1") in names(result, "PersistentVolumeClaim")
    team_pvc = next(o for o in by_kind(result, "PersistentVolumeClaim") if o["metadata"]["namespace"] == "team")
    assert team_pvc["spec"]["volumeName"] == "iris2-gpu1-team"
    dep = next(o for o in by_kind(result, "Deployment") if o["metadata"]["name"] == "bar-predictor")
    pod = dep["spec"]["template"]["spec"]
    assert "initContainers" not in pod
    assert pod["volumes"] == [{"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": "iris2-gpu2"}}]
    assert pod["containers"][0]["volumeMounts"][0]["subPath"] == f"models/{KEY}/"


def test_disable_volume_management(tmp_path: Path) -> None:
    result = render(
        tmp_path,
        config(disableVolumeManagement=True),
        node_group("gpu1"),
        cache("iris3", URI, ["gpu1"]),
        isvc("foo", URI),
    )
    assert names(result, "PersistentVolume") == [("", "iris3-gpu1-download")]
    assert names(result, "PersistentVolumeClaim") == [("kserve-localmodel-jobs", "iris3-gpu1")]


def test_shared_uri_is_downloaded_once_per_node(tmp_path: Path) -> None:
    result = render(
        tmp_path,
        config(),
        node_group("gpu1"),
        cache("cluster-model", URI, ["gpu1"]),
        cache("ns-model", URI, ["gpu1"], namespace="team"),
        node("n", "gpu1"),
    )
    models = by_kind(result, "LocalModelNode")[0]["spec"]["localModels"]
    assert [(m["modelName"], m.get("namespace")) for m in models] == [("cluster-model", None), ("ns-model", "team")]
    assert [j["metadata"]["generateName"] for j in by_kind(result, "Job")] == ["cluster-model-n"]
    assert ("kserve-localmodel-jobs", "ns-model-gpu1-team-download") in names(result, "PersistentVolumeClaim")


def test_overlapping_groups_take_the_first_listed_with_a_warning(tmp_path: Path) -> None:
    result = render(
        tmp_path,
        config(),
        node_group("a", "gpu"),
        node_group("b", "gpu"),
        cache("m", URI, ["b", "a"]),
        node("n", "gpu"),
    )
    assert by_kind(result, "LocalModelNode")[0]["spec"]["localModels"][0]["nodeGroup"] == "b"
    assert any("Go map order" in w.message for w in result.warnings)


def test_live_local_model_node_is_patched_in_place(tmp_path: Path) -> None:
    live = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "LocalModelNode",
        "metadata": {"name": "n"},
        "spec": {
            "localModels": [
                {"modelName": "other", "sourceModelUri": "gs://x/y"},
                {"modelName": "iris", "sourceModelUri": "s3://old/uri", "nodeGroup": "gpu1"},
            ]
        },
    }
    result = render(tmp_path, config(), node_group("gpu1"), cache("iris", URI, ["gpu1"]), node("n", "gpu1"), live)
    models = by_kind(result, "LocalModelNode")[0]["spec"]["localModels"]
    assert models == [
        {"modelName": "other", "sourceModelUri": "gs://x/y"},
        {"modelName": "iris", "sourceModelUri": URI, "nodeGroup": "gpu1"},
    ]
    # the live entry without nodeGroup gets the agent's fallback: the first group selecting the node
    claims = {
        j["metadata"]["labels"]["model"]: j["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"][
            "claimName"
        ]
        for j in by_kind(result, "Job")
    }
    assert claims == {"other": "other-gpu1", "iris": "iris-gpu1"}


def test_job_settings_from_config(tmp_path: Path) -> None:
    cm = config(fsGroup=None, jobTTLSecondsAfterFinished=60, jobNamespace="downloads")
    cm["data"]["storageInitializer"] = cm["data"]["storageInitializer"].replace(
        "kserve/storage-initializer:latest", "example.com/si:2"
    )
    result = render(tmp_path, cm, node_group("gpu1"), cache("iris", URI, ["gpu1"]), node("n", "gpu1"))
    job = by_kind(result, "Job")[0]
    assert job["metadata"]["namespace"] == "downloads" and job["spec"]["ttlSecondsAfterFinished"] == 60
    assert job["spec"]["template"]["spec"]["securityContext"] == {}
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "example.com/si:2"


def test_knative_revision_mounts_the_cache_too(tmp_path: Path) -> None:
    served = isvc("kn", URI + "/v1", annotations={"serving.kserve.io/deploymentMode": "Knative"})
    result = render(tmp_path, config(), node_group("gpu1"), cache("c", URI, ["gpu1"]), served)
    ksvc = next(o for o in result.objects if o["apiVersion"] == "serving.knative.dev/v1")
    pod = ksvc["spec"]["template"]["spec"]
    assert "initContainers" not in pod
    assert pod["volumes"] == [{"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": "c-gpu1"}}]
    assert pod["containers"][0]["volumeMounts"][0]["subPath"] == f"models/{KEY}/v1"
    assert ksvc["spec"]["template"]["metadata"]["labels"]["internal.serving.kserve.io/localmodel"] == "c"
