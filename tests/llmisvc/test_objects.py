"""Objects rendered for LLMInferenceServices, checked against the facts KServe's own tests assert."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from .helpers import configmap, container, find, llmisvc, render

ROUTER = {"scheduler": {}, "route": {}, "gateway": {}}


def test_single_node_names_labels_and_selector() -> None:
    # controller_int_test.go:61 basic single node
    objects = render(llmisvc("svc", router=ROUTER, labels={"team": "a"}))
    dep = find(objects, "Deployment", "svc-kserve")
    labels = dep["metadata"]["labels"]
    assert labels["llm-d.ai/role"] == "both" and labels["kserve.io/component"] == "workload"
    # KServe at this snapshot shares one label map: spec.labels reach the selector too (fixed upstream by PR #6145)
    assert dep["spec"]["selector"]["matchLabels"]["team"] == "a"
    svc = find(objects, "Service", "svc-kserve-workload-svc")
    assert svc["spec"]["selector"] == {"app.kubernetes.io/name": "svc", "app.kubernetes.io/part-of": "llminferenceservice",
                                       "kserve.io/component": "workload"}  # fmt: skip
    assert svc["spec"]["ports"] == [
        {"appProtocol": "http", "name": "http", "port": 8000, "protocol": "TCP", "targetPort": 8000}
    ]
    find(objects, "Deployment", "svc-kserve-router-scheduler")


def test_vllm_command_renders_model_and_namespace() -> None:
    objects = render(llmisvc("svc", model={"uri": "pvc://m/x", "name": "org/model"}, parallelism={"tensor": 4}))
    script = container(find(objects, "Deployment", "svc-kserve")["spec"]["template"]["spec"])["command"][2]
    assert '--served-model-name "org/model" "publishers/llm-test/models/org/model"' in script
    assert "--tensor-parallel-size 4" in script  # TestSingleNodeTensorParallelRendered
    assert "--shutdown-timeout 40" in script  # shutdownTimeout .Spec.Template 15 with the default grace period


def test_decode_sidecar_and_rbac() -> None:
    # config_presets_test.go TestPresetFiles config-llm-decode-template.yaml; workload_single_node.go sidecar RBAC
    objects = render(llmisvc("test-llm-preset", "test-llm-preset-test", router=ROUTER,
                             prefill={"template": {"containers": [{"name": "main"}]}}))  # fmt: skip
    pod = find(objects, "Deployment", "test-llm-preset-kserve")["spec"]["template"]["spec"]
    sidecar = pod["initContainers"][0]
    assert sidecar["name"] == "llm-d-routing-sidecar" and sidecar["restartPolicy"] == "Always"
    assert sidecar["command"][:8] == ["/app/pd-sidecar", "--port=8000", "--vllm-port=8001", "--kv-connector=nixlv2",
                                      "--enable-ssrf-protection=true", "--pool-group=inference.networking.x-k8s.io",
                                      "--inference-pool=test-llm-preset-test/test-llm-preset-inference-pool",
                                      "--secure-proxy=false"]  # fmt: skip
    assert {"name": "INFERENCE_POOL_NAME", "value": "test-llm-preset-inference-pool"} in sidecar["env"]
    assert pod["serviceAccountName"] == "test-llm-preset-kserve"
    role = find(objects, "Role", "test-llm-preset-kserve-role")
    assert role["rules"][1]["resources"] == ["inferencepools"]
    binding = find(objects, "RoleBinding", "test-llm-preset-kserve-rb")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "test-llm-preset-kserve", "namespace": "test-llm-preset-test"}
    ]
    prefill = find(objects, "Deployment", "test-llm-preset-kserve-prefill")
    assert prefill["metadata"]["labels"]["llm-d.ai/role"] == "prefill"
    assert find(objects, "Deployment", "test-llm-preset-kserve")["metadata"]["labels"]["llm-d.ai/role"] == "decode"


def test_scheduler_objects_and_pool() -> None:
    # TestPresetFiles config-llm-scheduler.yaml; controller_int_test.go:794 EPP service ports
    objects = render(llmisvc("svc", router=ROUTER))
    service = find(objects, "Service", "svc-epp-service")
    assert [(p["name"], p["port"]) for p in service["spec"]["ports"]] == [
        ("grpc", 9002),
        ("grpc-health", 9003),
        ("metrics", 9090),
        ("zmq", 5557),
    ]
    pool = find(objects, "InferencePool", "svc-inference-pool", "inference.networking.k8s.io/v1")
    assert pool["spec"]["endpointPickerRef"] == {
        "failureMode": "FailOpen",
        "kind": "Service",
        "name": "svc-epp-service",
        "port": {"number": 9002},
    }
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]
    old = find(objects, "InferencePool", "svc-inference-pool", "inference.networking.x-k8s.io/v1alpha2")
    assert old["spec"]["targetPortNumber"] == 8000 and old["spec"]["extensionRef"]["portNumber"] == 9002
    crb = find(objects, "ClusterRoleBinding", "llm-test-svc-epp-auth-rb")
    assert crb["roleRef"]["name"] == "system:auth-delegator" and "namespace" not in crb["metadata"]
    deployment = find(objects, "Deployment", "svc-kserve-router-scheduler")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "svc-epp-sa"


def test_default_scheduler_config_text() -> None:
    # scheduler_test.go TestSchedulerConfigTextDefault: plugins, weights and order of the default profile
    objects = render(llmisvc("svc", router=ROUTER))
    args = container(find(objects, "Deployment", "svc-kserve-router-scheduler")["spec"]["template"]["spec"])["args"]
    config = yaml.safe_load(args[args.index("--config-text") + 1])
    assert config["apiVersion"] == "llm-d.ai/v1alpha1"
    profile = config["schedulingProfiles"][0]["plugins"]
    assert [(p["pluginRef"], p.get("weight")) for p in profile] == [
        ("queue-scorer", 2),
        ("kv-cache-utilization-scorer", 2),
        ("prefix-cache-scorer", 3),
        ("no-hit-lru-scorer", 2),
        ("max-score-picker", None),
    ]


def test_lora_scheduler_and_route() -> None:
    # scheduler_test.go TestSchedulerConfigTextLoRA; controller_int_test.go:1220 LoRA header expansion
    model = {
        "uri": "pvc://m/base",
        "name": "base",
        "lora": {"adapters": [{"name": "b-adapter", "uri": "pvc://m/b"}, {"name": "a-adapter", "uri": "pvc://m/a"}]},
    }
    objects = render(llmisvc("svc", model=model, router=ROUTER))
    args = container(find(objects, "Deployment", "svc-kserve-router-scheduler")["spec"]["template"]["spec"])["args"]
    config = yaml.safe_load(args[args.index("--config-text") + 1])
    assert {"pluginRef": "lora-affinity-scorer", "weight": 4} in config["schedulingProfiles"][0]["plugins"]
    route = find(objects, "HTTPRoute", "svc-kserve-route")
    values = [h["value"] for r in route["spec"]["rules"] for m in r.get("matches", []) for h in m.get("headers", [])]
    assert "publishers/llm-test/models/a-adapter" in values and values.index(
        "publishers/llm-test/models/a-adapter"
    ) < values.index("publishers/llm-test/models/b-adapter")


def test_route_without_scheduler_targets_workload_service() -> None:
    # controller_int_test.go:983
    objects = render(llmisvc("svc", router={"route": {}, "gateway": {}}))
    refs = [b for r in find(objects, "HTTPRoute", "svc-kserve-route")["spec"]["rules"] for b in r["backendRefs"]]
    assert {(b["kind"], b["name"]) for b in refs} == {("Service", "svc-kserve-workload-svc")}
    assert all(b.get("group", "") == "" for b in refs)


def test_model_routing_disabled_strips_header_rules() -> None:
    objects = render(configmap(modelBasedRoutingMode="disabled"), llmisvc("svc", router=ROUTER))
    rules = find(objects, "HTTPRoute", "svc-kserve-route")["spec"]["rules"]
    assert not any("headers" in m for r in rules for m in r["matches"])


def test_tls_config() -> None:
    objects = render(configmap(enableLLMInferenceServiceTLS=True), llmisvc("svc", router=ROUTER))
    assert find(objects, "Service", "svc-kserve-workload-svc")["spec"]["ports"][0]["name"] == "https"
    epp = container(find(objects, "Deployment", "svc-kserve-router-scheduler")["spec"]["template"]["spec"])
    assert "--secure-serving=true" in epp["command"] and not any(
        a.startswith("--model-server-metrics-scheme") for a in epp["command"]
    )
    config = yaml.safe_load(epp["args"][epp["args"].index("--config-text") + 1])
    assert {"type": "metrics-data-source", "parameters": {"scheme": "https"}} in config["plugins"]


def test_multi_node_data_parallel() -> None:
    # TestPresetFiles config-llm-worker-data-parallel.yaml; workload_multi_node.go
    objects = render(
        llmisvc("svc", parallelism={"data": 4, "dataLocal": 2}, worker={"containers": [{"name": "main"}]}, replicas=2)
    )
    lws = find(objects, "LeaderWorkerSet", "svc-kserve-mn")
    template = lws["spec"]["leaderWorkerTemplate"]
    assert lws["spec"]["replicas"] == 2 and template["size"] == 2
    assert template["restartPolicy"] == "RecreateGroupOnPodRestart" and lws["spec"]["startupPolicy"] == "LeaderCreated"
    assert (
        template["leaderTemplate"]["metadata"]["labels"]["app.kubernetes.io/component"]
        == "llminferenceservice-workload-leader"
    )
    assert template["workerTemplate"]["spec"]["serviceAccountName"] == "svc-kserve-mn"
    find(objects, "ServiceAccount", "svc-kserve-mn")
    assert not [o for o in objects if o["kind"] == "Deployment"]


def test_scaling_hpa_and_keda() -> None:
    # scaling_test.go TestExpectedHPA / TestExpectedDirectScaledObject
    objects = render(llmisvc("my-model", scaling={"maxReplicas": 5, "wva": {"hpa": {}}}, worker={"containers": [{"name": "main"}]},
                             parallelism={"pipeline": 2}),
                     {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceServiceConfig",
                      "metadata": {"name": "kserve-config-llm-worker-pipeline-parallel", "namespace": "kserve"}, "spec": {}})  # fmt: skip
    hpa = find(objects, "HorizontalPodAutoscaler", "my-model-kserve-hpa")
    assert hpa["spec"]["minReplicas"] == 1 and hpa["spec"]["maxReplicas"] == 5
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": "my-model-kserve-mn",
    }
    assert hpa["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"] == {
        "variant_name": "my-model-kserve-hpa"
    }
    assert hpa["metadata"]["labels"]["inference.optimization/acceleratorName"] == "unknown"
    trigger = {"type": "cpu", "metadata": {"value": "50"}}
    objects = render(llmisvc("m", scaling={"maxReplicas": 3, "keda": {"triggers": [trigger]}}))
    scaled = find(objects, "ScaledObject", "m-kserve-keda")
    assert scaled["spec"]["triggers"] == [trigger] and scaled["spec"]["minReplicaCount"] == 1
    assert "annotations" not in scaled["metadata"]


def test_stopped_service_renders_nothing() -> None:
    manifest = llmisvc("svc", router=ROUTER)
    manifest["metadata"]["annotations"] = {"serving.kserve.io/stop": "true"}
    assert render(manifest) == []


def test_input_order_does_not_matter() -> None:
    a, b = llmisvc("a", router=ROUTER), llmisvc("b", prefill={"template": {"containers": [{"name": "main"}]}})
    assert render(a, b) == render(b, a)


def test_precise_prefix_scorer_is_decomposed_with_the_tokenizer_url() -> None:
    # tokenizer_test.go TestDecomposePluginPipeline "decomposes and strips tokenizersPoolConfig-only indexerConfig"
    config = """apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: precise-prefix-cache-scorer
  parameters:
    indexerConfig:
      tokenizersPoolConfig:
        modelName: base
        uds:
          socketFile: /tmp/tokenizer/tokenizer-uds.socket
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: precise-prefix-cache-scorer
    weight: 3
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: max-score-picker
"""
    objects = render(llmisvc("my-llm", "default", router={"scheduler": {"config": {"inline": config}}}))
    args = container(find(objects, "Deployment", "my-llm-kserve-router-scheduler")["spec"]["template"]["spec"])["args"]
    text = args[args.index("--config-text") + 1]
    assert "tokenizersPoolConfig" not in text and "precise-prefix-cache-scorer" not in text
    parsed = yaml.safe_load(text)
    assert parsed["apiVersion"] == "llm-d.ai/v1alpha1"
    assert [p["type"] for p in parsed["plugins"]] == ["queue-scorer", "token-producer", "precise-prefix-cache-producer",
                                                      "prefix-cache-scorer", "max-score-picker"]  # fmt: skip
    assert parsed["plugins"][1]["parameters"] == {"modelName": "/mnt/models/base",
                                                  "vllm": {"url": "http://my-llm-tokenizer.default.svc.cluster.local:8000"}}  # fmt: skip
    assert "parameters" not in parsed["plugins"][2]
    assert [r["pluginRef"] for r in parsed["schedulingProfiles"][0]["plugins"]] == [
        "prefix-cache-scorer",
        "queue-scorer",
        "max-score-picker",
    ]
    find(objects, "Deployment", "my-llm-tokenizer")  # the plugin enables the tokenizer
    find(objects, "Service", "my-llm-tokenizer")


def test_routing_group_routes_shared_rules_to_routable_members() -> None:
    # router_group.go injectGroupBackendRefs / router_group_routing.go rewriteRulesForGroup
    ready = {"conditions": [{"type": "RouterReady", "status": "True"}],
             "workloads": {"primary": {"kind": "Deployment", "name": "a-kserve", "readyReplicas": 1}}}  # fmt: skip
    a = llmisvc(
        "a", model={"uri": "pvc://m/x", "name": "m"}, router={"route": {"group": "g", "weight": 70}, "gateway": {}}
    )
    a["status"] = ready
    b = llmisvc(
        "b", model={"uri": "pvc://m/y", "name": "m"}, router={"route": {"group": "g", "weight": 30}, "gateway": {}}
    )
    other = llmisvc(
        "c", model={"uri": "pvc://m/z", "name": "other"}, router={"route": {"group": "g", "weight": 5}, "gateway": {}}
    )
    other["status"] = ready
    objects = render(a, b, other)
    route = find(objects, "HTTPRoute", "b-kserve-route")
    assert route["metadata"]["labels"]["serving.kserve.io/routing-group"] == "g"
    shared = next(r for r in route["spec"]["rules"] if r["name"] == "v1-model-routing")
    assert [(x["name"], x["weight"]) for x in shared["backendRefs"]] == [
        ("a-kserve-workload-svc", 70),
        ("b-kserve-workload-svc", 30),
    ]
    own = next(r for r in route["spec"]["rules"] if r["name"] == "v1-completions-path")
    assert [x["name"] for x in own["backendRefs"]] == ["b-kserve-workload-svc"]
    # b is not routable yet (no status): a's route keeps only a
    shared_a = next(
        r for r in find(objects, "HTTPRoute", "a-kserve-route")["spec"]["rules"] if r["name"] == "v1-model-routing"
    )
    assert [x["name"] for x in shared_a["backendRefs"]] == ["a-kserve-workload-svc"]


@pytest.mark.parametrize(
    "status",
    [
        {"conditions": [{"type": "RouterReady", "status": "True"}], "workloads": {"primary": [1]}},
        {"conditions": [{"type": "RouterReady", "status": "True"}], "workloads": {"primary": {"readyReplicas": [1]}}},
        {"conditions": "RouterReady", "addresses": 3, "annotations": ["x"]},
        {"addresses": [{"models": "m"}, {"models": [1, {"name": ["m"]}]}]},
    ],
)
def test_a_peer_status_of_the_wrong_shape_is_not_routable(status: dict[str, Any]) -> None:
    # status is what the controller observed; one KServe's controller never wrote reads as nothing observed
    a = llmisvc("a", model={"uri": "pvc://m/x", "name": "m"}, router={"route": {"group": "g"}, "gateway": {}})
    a["status"] = status
    b = llmisvc("b", model={"uri": "pvc://m/y", "name": "m"}, router={"route": {"group": "g"}, "gateway": {}})
    route = find(render(a, b), "HTTPRoute", "b-kserve-route")
    shared = next(r for r in route["spec"]["rules"] if r["name"] == "v1-model-routing")
    assert [x["name"] for x in shared["backendRefs"]] == ["b-kserve-workload-svc"]


def test_managed_dra() -> None:
    # managed_dra_test.go: ResourceClaimTemplate <name>-managed-dra, pod claim managed-device on the first container
    manifest = llmisvc("svc")
    manifest["metadata"]["annotations"] = {"serving.kserve.io/exp-dra-device-class": "gpu.nvidia.com",
                                           "serving.kserve.io/exp-dra-device-count": "2",
                                           "serving.kserve.io/exp-dra-cel-selector": "device.attributes['a'] == 1\n\n"}  # fmt: skip
    objects = render(manifest)
    template = find(objects, "ResourceClaimTemplate", "svc-managed-dra")
    assert template["spec"]["spec"]["devices"]["requests"] == [{"name": "device", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "count": 2, "selectors": [{"cel": {"expression": "device.attributes['a'] == 1"}}]}}]  # fmt: skip
    pod = find(objects, "Deployment", "svc-kserve")["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "managed-device", "resourceClaimTemplateName": "svc-managed-dra"}]
    assert container(pod)["resources"]["claims"] == [{"name": "managed-device"}]


def test_managed_dra_annotations_are_validated() -> None:
    from .helpers import problems

    manifest = llmisvc("svc")
    manifest["metadata"]["annotations"] = {"serving.kserve.io/exp-dra-device-count": "0"}
    messages = {p.message for p in problems(manifest)}
    assert any("exp-dra-device-class is required to enable managed DRA" in m for m in messages)
    assert any("must be >= 1" in m for m in messages)


def test_shared_rendering_keeps_each_service_its_own_values() -> None:
    # rendered preset subtrees are reused between services only when every value their templates read is equal
    a = llmisvc("a", model={"uri": "pvc://m/x", "name": "same"})
    b = llmisvc("b", model={"uri": "pvc://m/x", "name": "same"})
    c = llmisvc("c", "other-ns", model={"uri": "pvc://m/x", "name": "different"})
    objects = render(a, b, c)
    pods = {n: find(objects, "Deployment", f"{n}-kserve")["spec"]["template"]["spec"] for n in "abc"}
    secrets = {
        n: next(v["secret"]["secretName"] for v in pods[n]["volumes"] if v["name"] == "tls-certs") for n in "abc"
    }
    assert secrets == {
        "a": "a-kserve-self-signed-certs",
        "b": "b-kserve-self-signed-certs",
        "c": "c-kserve-self-signed-certs",
    }
    scripts = {n: container(pods[n])["command"][2] for n in "abc"}
    assert scripts["a"] == scripts["b"] and '"publishers/llm-test/models/same"' in scripts["a"]
    assert '"publishers/other-ns/models/different"' in scripts["c"]
