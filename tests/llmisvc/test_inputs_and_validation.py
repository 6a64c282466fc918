"""LLMInferenceService inputs: presets and baseRefs lookup, v1alpha1 conversion, options and validation messages."""

from __future__ import annotations

from .helpers import configmap, container, find, llmisvc, problems, render


def _config(name: str, namespace: str, spec: dict) -> dict:
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def test_missing_base_ref_names_both_namespaces() -> None:
    # config_merge.go getConfig / configNotFoundError
    [p] = problems(llmisvc("svc", baseRefs=[{"name": "nope"}]))
    assert p.message == 'LLMInferenceServiceConfig "nope" not found in namespaces [llm-test kserve]'
    assert p.kind == "LLMInferenceService" and p.name == "svc" and p.path == "spec.baseRefs" and p.line > 1


def test_pipeline_parallel_preset_is_not_shipped() -> None:
    [p] = problems(llmisvc("svc", parallelism={"pipeline": 2}, worker={"containers": []}))
    assert "kserve-config-llm-worker-pipeline-parallel" in p.message


def test_namespace_config_wins_over_kserve_and_shipped() -> None:
    image = {"template": {"containers": [{"name": "main", "image": "mine"}]}}
    objects = render(llmisvc("svc", baseRefs=[{"name": "cfg"}]), _config("cfg", "kserve", {"labels": {"from": "kserve"}}),
                     _config("cfg", "llm-test", {"labels": {"from": "ns"}}), _config("kserve-config-llm-template", "kserve", image))  # fmt: skip
    dep = find(objects, "Deployment", "svc-kserve")
    assert dep["spec"]["template"]["metadata"]["labels"]["from"] == "ns"
    assert container(dep["spec"]["template"]["spec"])["image"] == "mine"


def test_validation_messages_are_located() -> None:
    # llm_inference_service_validation.go
    manifest = llmisvc("svc", worker={"containers": []}, replicas=1, scaling={"maxReplicas": 2, "wva": {"hpa": {}}})
    found = {(p.path, p.message) for p in problems(manifest)}
    assert (
        "spec.worker",
        "when worker is specified, parallelism must be configured for either data parallelism or pipeline parallelism",
    ) in found
    exclusive = "scaling and replicas are mutually exclusive; use scaling for autoscaled deployments or replicas for static deployments"
    assert ("spec.scaling", exclusive) in found
    manifest = llmisvc("svc", parallelism={"data": 2})
    [p] = problems(manifest)
    assert (p.path, p.message) == ("spec.parallelism.dataLocal", "dataLocal must be set when data is set")
    assert p.file == "in.yaml" and p.line > 1 and p.col > 0


def test_route_refs_and_spec_conflict() -> None:
    router = {"route": {"http": {"refs": [{"name": "r"}], "spec": {"rules": []}}}}
    [p] = problems(llmisvc("svc", router=router))
    assert p.message.startswith(
        "unsupported configuration: cannot use both custom HTTPRoute refs ('spec.router.route.http.refs')"
    )


def test_merged_spec_is_validated_again() -> None:
    # reconcileBaseRefs dry-runs the merged spec: a baseRef may make it invalid
    [p] = problems(llmisvc("svc", baseRefs=[{"name": "bad"}]), _config("bad", "llm-test", {"parallelism": {"data": 2}}))
    assert (
        "dry-run validation failed after merging configs" in p.message
        and "dataLocal must be set when data is set" in p.message
    )


def test_v1alpha1_is_converted() -> None:
    manifest = llmisvc("svc", router={"scheduler": {"pool": {"spec": {"selector": {"app": "x"}, "targetPortNumber": 8000,
                                                                   "extensionRef": {"name": "epp", "portNumber": 9002}}}}})  # fmt: skip
    manifest["apiVersion"] = "serving.kserve.io/v1alpha1"
    manifest["spec"]["model"]["criticality"] = "Critical"
    objects = render(manifest)
    pool = find(objects, "InferencePool", "svc-inference-pool", "inference.networking.k8s.io/v1")
    # converted to the v1 shape, then merged over the scheduler preset (maps merge per key)
    assert pool["spec"]["selector"]["matchLabels"]["app"] == "x"
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]
    assert pool["spec"]["endpointPickerRef"] == {
        "failureMode": "FailOpen",
        "kind": "Service",
        "name": "epp",
        "port": {"number": 9002},
    }
    assert find(objects, "Service", "epp")["metadata"]["name"] == "epp"


def test_bad_options_name_the_configmap_key() -> None:
    cm = configmap()
    cm["data"]["llmisvcCompile"] = '{"inferencePoolAPIGroup": "nope"}'
    [p] = problems(cm, llmisvc("svc"))
    assert p.path == "data.llmisvcCompile.inferencePoolAPIGroup" and "inference.networking" in p.message


def test_scheduler_config_ref_needs_the_configmap() -> None:
    [p] = problems(llmisvc("svc", router={"scheduler": {"config": {"ref": {"name": "epp-cfg"}}}}))
    assert p.path == "spec.router.scheduler.config.ref.name" and "epp-cfg" in p.message


def test_storage_uris() -> None:
    pod = find(render(llmisvc("svc", model={"uri": "pvc://claim/a/b"})), "Deployment", "svc-kserve")["spec"][
        "template"
    ]["spec"]
    assert {"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": "claim"}} in pod["volumes"]
    assert {"mountPath": "/mnt/models", "name": "kserve-pvc-source", "readOnly": True, "subPath": "a/b"} in container(
        pod
    )["volumeMounts"]
    assert "initContainers" not in pod
    pod = find(render(llmisvc("svc", model={"uri": "hf://org/m"})), "Deployment", "svc-kserve")["spec"]["template"][
        "spec"
    ]
    init = pod["initContainers"][0]
    assert init["name"] == "storage-initializer" and init["args"] == ["hf://org/m", "/mnt/models"]
    assert {"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "1"} in init["env"]
    [p] = problems(llmisvc("svc", model={"uri": "gs://bucket/m"}))
    assert p.message == "unsupported schema in model URI: gs://bucket/m"


def _has_header_rules(*manifests: dict) -> bool:
    rules = find(render(*manifests), "HTTPRoute", "svc-kserve-route")["spec"]["rules"]
    return any("headers" in m for r in rules for m in r["matches"])


def test_gateway_opt_out_strips_model_routing_in_enabled_mode() -> None:
    # router.go CollectReferencedGateways: only gateway.refs are consulted
    cm = configmap()
    cm["data"]["llmisvcCompile"] = (
        '{"gatewaysWithModelRoutingDisabled": ["gw-ns/my-gw", "kserve/kserve-ingress-gateway"]}'
    )
    refs = {"route": {}, "gateway": {"refs": [{"name": "my-gw", "namespace": "gw-ns"}]}}
    assert not _has_header_rules(cm, llmisvc("svc", router=refs))
    assert _has_header_rules(cm, llmisvc("svc", router={"route": {}, "gateway": {}}))  # the managed Gateway: not read
    forced = configmap(modelBasedRoutingMode="forced")
    forced["data"]["llmisvcCompile"] = cm["data"]["llmisvcCompile"]
    assert _has_header_rules(forced, llmisvc("svc", router=refs))


def test_templated_map_key_renders_through_the_merged_document() -> None:
    cfg = _config("keys", "llm-test", {"labels": {"{{ .ObjectMeta.Name }}-team": "ml"}})
    dep = find(render(llmisvc("svc", baseRefs=[{"name": "keys"}]), cfg), "Deployment", "svc-kserve")
    assert dep["spec"]["template"]["metadata"]["labels"]["svc-team"] == "ml"


def test_prefix_option_and_pinned_names() -> None:
    cm = configmap()
    cm["data"]["llmisvcCompile"] = '{"configPrefix": "v3-"}'
    [p] = problems(cm, llmisvc("svc"))
    assert p.message == 'LLMInferenceServiceConfig "v3-config-llm-template" not found in namespaces [llm-test kserve]'


def test_lora_adapters_download_with_the_base_model() -> None:
    # workload_storage.go attachMultiStorageDownloads; workload_lora.go addLoRAVLLMArgs
    model = {"uri": "hf://org/base", "name": "base", "lora": {"maxRank": 8, "adapters": [
        {"name": "b", "uri": "s3://bucket/b"}, {"name": "a", "uri": "hf://org/a"}]}}  # fmt: skip
    pod = find(render(llmisvc("svc", model=model)), "Deployment", "svc-kserve")["spec"]["template"]["spec"]
    init = pod["initContainers"][0]
    assert init["args"] == ["hf://org/base", "/mnt/models", "hf://org/a", "/mnt/lora/a", "s3://bucket/b", "/mnt/lora/b"]
    assert {"mountPath": "/mnt", "name": "kserve-provision-location"} in init["volumeMounts"]
    main = container(pod)
    assert {"mountPath": "/mnt", "name": "kserve-provision-location", "readOnly": True} in main["volumeMounts"]
    assert main["args"][:3] == ["--enable-lora", "--max-lora-rank=8", "--lora-modules"]
    assert main["args"][3] == """'{"name":"a","path":"/mnt/lora/a"}'"""


def test_lora_oci_adapter_is_refused() -> None:
    model = {"uri": "pvc://m/base", "lora": {"adapters": [{"name": "x", "uri": "oci://reg/x"}]}}
    [p] = problems(llmisvc("svc", model=model))
    assert p.message.startswith(
        'LoRA adapter "x": oci:// is not supported for LoRA adapters; use hf://, s3://, or pvc://'
    )


def test_user_lora_modules_are_kept() -> None:
    model = {"uri": "pvc://m/base", "lora": {"adapters": [{"name": "x", "uri": "pvc://m/x"}]}}
    template = {"containers": [{"name": "main", "args": ["--lora-modules", "mine=/x"]}]}
    pod = find(render(llmisvc("svc", model=model, template=template)), "Deployment", "svc-kserve")["spec"]["template"][
        "spec"
    ]
    assert container(pod)["args"] == ["--lora-modules", "mine=/x"]
    assert any(v["name"] == "lora-pvc-x" for v in pod["volumes"])


def test_confidential_model_sets_the_storage_initializer_env() -> None:
    # workload_storage_confidential_test.go
    model = {"uri": "hf://org/m", "confidential": {"enabled": True, "resourceId": "kbs:///default/key/1"}}
    pod = find(render(llmisvc("svc", model=model)), "Deployment", "svc-kserve")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["initContainers"][0]["env"]}
    assert env["CONFIDENTIAL_ENABLED"] == "true" and env["CONFIDENTIAL_RESOURCE_ID"] == "kbs:///default/key/1"


def test_s3_storage_initializer_mounts_the_ca_bundle() -> None:
    # workload_storage.go injectCaBundle: global-ca-bundle outside the kserve namespace
    cm = configmap()
    cm["data"]["storageInitializer"] = (
        '{"image": "kserve/storage-initializer:latest", "memoryRequest": "100Mi", "memoryLimit": "1Gi", '
        '"cpuRequest": "100m", "cpuLimit": "1", "caBundleConfigMapName": "my-certs"}'
    )
    ca = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "my-certs", "namespace": "kserve"},
        "data": {"cabundle.crt": "x"},
    }
    objects = render(cm, ca, llmisvc("svc", model={"uri": "s3://bucket/m"}))
    pod = find(objects, "Deployment", "svc-kserve")["spec"]["template"]["spec"]
    init = pod["initContainers"][0]
    assert {"name": "CA_BUNDLE_CONFIGMAP_NAME", "value": "global-ca-bundle"} in init["env"]
    assert {"name": "CA_BUNDLE_VOLUME_MOUNT_POINT", "value": "/etc/ssl/custom-certs"} in init["env"]
    assert {"configMap": {"name": "global-ca-bundle"}, "name": "cabundle-cert"} in pod["volumes"]
    assert {"mountPath": "/etc/ssl/custom-certs", "name": "cabundle-cert", "readOnly": True} in init["volumeMounts"]
    # and the llmisvc controller copies the bundle into the service's namespace (cabundleconfigmap reconciler)
    copy = find(objects, "ConfigMap", "global-ca-bundle")
    assert copy["metadata"]["namespace"] == "llm-test" and copy["data"] == {"cabundle.crt": "x"}
