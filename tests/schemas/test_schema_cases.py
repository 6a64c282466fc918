"""Valid KServe-shaped objects of every kind pass; targeted breakages fail at the right field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from schema_helpers import fixture_id, fixtures_by_id, load_fixtures, mutate

from kserve_compile.checks.schema import check_object, known_kinds

REPO = Path(__file__).resolve().parents[2]
FIXTURES = fixtures_by_id()

ISVC = "serving.kserve.io/v1beta1/InferenceService/sklearn-iris"
ISVC_CUSTOM = "serving.kserve.io/v1beta1/InferenceService/custom"
ISVC_PIPE = "serving.kserve.io/v1beta1/InferenceService/torch-pipeline"
SR = "serving.kserve.io/v1alpha1/ServingRuntime/custom-runtime"
CSR = "serving.kserve.io/v1alpha1/ClusterServingRuntime/kserve-sklearnserver"
IG = "serving.kserve.io/v1alpha1/InferenceGraph/my-graph"
TM = "serving.kserve.io/v1alpha1/TrainedModel/model-a"
CSC = "serving.kserve.io/v1alpha1/ClusterStorageContainer/s3-custom"
KSVC = "serving.knative.dev/v1/Service/sklearn-iris-predictor"
VS1B1 = "networking.istio.io/v1beta1/VirtualService/sklearn-iris"
VS1 = "networking.istio.io/v1/VirtualService/sklearn-iris-v1"
ROUTE = "gateway.networking.k8s.io/v1/HTTPRoute/sklearn-iris"
SO = "keda.sh/v1alpha1/ScaledObject/sklearn-iris-predictor"
OTEL = "opentelemetry.io/v1beta1/OpenTelemetryCollector/sklearn-iris-predictor"
DEPLOY = "apps/v1/Deployment/sklearn-iris-predictor"
SVC = "v1/Service/sklearn-iris-predictor"
HPA = "autoscaling/v2/HorizontalPodAutoscaler/sklearn-iris-transformer"
ING = "networking.k8s.io/v1/Ingress/sklearn-iris"
LMC = "serving.kserve.io/v1alpha1/LocalModelCache/iris"
LMNC = "serving.kserve.io/v1alpha1/LocalModelNamespaceCache/ns-iris"
LMNG = "serving.kserve.io/v1alpha1/LocalModelNodeGroup/gpu1"
LMN = "serving.kserve.io/v1alpha1/LocalModelNode/node-1"
LWS = "leaderworkerset.x-k8s.io/v1/LeaderWorkerSet/test-llm-preset-kserve-mn"
POOL = "inference.networking.k8s.io/v1/InferencePool/test-llm-managed-inference-pool"
POOL2 = "inference.networking.x-k8s.io/v1alpha2/InferencePool/test-llm-managed-inference-pool"
CERT = "cert-manager.io/v1/Certificate/test-llm-certs-kserve-self-signed-certs"
LLM = "serving.kserve.io/v1alpha2/LLMInferenceService/llama"
LLM1 = "serving.kserve.io/v1alpha1/LLMInferenceService/llama-v1alpha1"
LLMC = "serving.kserve.io/v1alpha2/LLMInferenceServiceConfig/team-defaults"
LLMC1 = "serving.kserve.io/v1alpha1/LLMInferenceServiceConfig/team-defaults-v1alpha1"
HSO = "http.keda.sh/v1alpha1/HTTPScaledObject/income-gw-predictor"
GRANT = "gateway.networking.k8s.io/v1beta1/ReferenceGrant/income-gw.team-a"

DEL = object()  # marker: delete the field instead of setting it
TYPE, UNKNOWN, REQUIRED, ENUM = "is not of type", "unknown field", "is missing", "unsupported value"

# (fixture, field to break, new value or DEL, expected issue path (None = the same), message part)
CASES = [
    # InferenceService: predictor, inlined PodSpec and Container, component extension, canary
    (ISVC, "spec.predictor.minReplicas", "two", None, TYPE),
    (ISVC, "spec.predictor.replicas", 3, None, UNKNOWN),
    (ISVC, "spec.predictor.model.modelFormat.name", DEL, None, REQUIRED),
    (ISVC, "spec.predictor.scaleMetric", "gpu", None, ENUM),
    (ISVC, "spec.predictor.logger.mode", "everything", None, ENUM),
    (ISVC, "spec.predictor.autoScaling.metrics[0].resource.name", "gpu", None, ENUM),
    (ISVC, "spec.predictor.autoScaling.metrics[1].external.metric.backend", "influx", None, ENUM),
    (ISVC, "spec.predictor.autoScaling.metrics[0].resource.target.averageValue", "ten", None, "does not match"),
    (ISVC, "spec.predictor.model.resources.limits.cpu", [], None, TYPE),
    (
        ISVC,
        "spec.predictor.model.env[0].valueFrom",
        {"secretKeyRef": {"name": "s"}},
        "spec.predictor.model.env[0].valueFrom.secretKeyRef.key",
        REQUIRED,
    ),
    (ISVC, "spec.predictor.tolerations[0].tolerationSeconds", "60", None, TYPE),
    (ISVC, "spec.predictor.deploymentStrategy.rollingUpdate.maxSurge", True, None, TYPE),
    (ISVC, "spec.canary[0].trafficPercent", 120, None, "greater than the maximum"),
    (ISVC, "spec.canary[0].predictor.model.storageURI", "gs://x", None, UNKNOWN),
    (ISVC, "spec.predictor.name", "Stable", None, "does not match"),
    (ISVC, "spec.predictor", DEL, None, REQUIRED),
    (ISVC, "specs", {}, None, UNKNOWN),
    (ISVC, "metadata.labels", {"serving.kserve.io/x": 1}, 'metadata.labels["serving.kserve.io/x"]', TYPE),
    (ISVC_CUSTOM, "spec.predictor.containers[0].ports[0].containerPort", "8080", None, TYPE),
    (ISVC_CUSTOM, "spec.predictor.containers[0].name", DEL, None, REQUIRED),
    (ISVC_CUSTOM, "spec.predictor.volumes[0].emptyDir.size", "1Gi", None, UNKNOWN),
    (ISVC_PIPE, "spec.transformer.containerConcurrency", "4", None, TYPE),
    (ISVC_PIPE, "spec.transformer.model", {}, None, UNKNOWN),
    (ISVC_PIPE, "spec.explainer.art.config.nb_classes", 10, None, TYPE),
    (ISVC_PIPE, "spec.predictor.storageUris[0].uri", DEL, None, REQUIRED),
    (ISVC_PIPE, "spec.predictor.storageUris[0].mountPath", "mnt", None, "does not match"),
    # ServingRuntime / ClusterServingRuntime
    (SR, "spec.replicas", "1", None, TYPE),
    (SR, "spec.replicas", 70000, None, "greater than the maximum"),
    (SR, "spec.runtimeVersion", "x", None, UNKNOWN),
    (SR, "spec.containers", DEL, None, REQUIRED),
    (SR, "spec.supportedModelFormats[0].priority", 0, None, "less than the minimum"),
    (SR, "spec.workerSpec.containers[0].imagePullPolicy", 1, None, TYPE),
    (SR, "spec.workerSpec.minReplicas", 1, None, UNKNOWN),
    (CSR, "spec.containers[0].resources.requests.cpu", True, None, TYPE),
    (CSR, "spec.multiModel", "yes", None, TYPE),
    (CSR, "spec.supportedModelFormats[0].name", DEL, None, REQUIRED),
    (CSR, "spec.containers[0].securityContext.runAsNonroot", True, None, UNKNOWN),
    # InferenceGraph
    (IG, "spec.nodes.root.routerType", "Random", None, ENUM),
    (IG, "spec.nodes.root.routerType", DEL, None, REQUIRED),
    (IG, "spec.nodes.splitter.steps[0].weight", "70", None, TYPE),
    (IG, "spec.nodes.root.steps[1].dependency", "Maybe", None, ENUM),
    (IG, "spec.routerTimeouts.serverIdleTimeout", 1, None, UNKNOWN),
    (IG, "spec.scaleMetric", "latency", None, ENUM),
    (IG, "spec.nodes", DEL, None, REQUIRED),
    # TrainedModel
    (TM, "spec.model.memory", DEL, None, REQUIRED),
    (TM, "spec.model.memory", "lots", None, "does not match"),
    (TM, "spec.model.memory", 1.5, None, TYPE),
    (TM, "spec.model.format", "x", None, UNKNOWN),
    (TM, "spec.inferenceService", 5, None, TYPE),
    # ClusterStorageContainer
    (CSC, "disabled", "no", None, TYPE),
    (CSC, "spec.supportedUriFormats[0].glob", "*", None, UNKNOWN),
    (CSC, "spec.container", DEL, None, REQUIRED),
    (CSC, "spec.container.name", DEL, None, REQUIRED),
    # Knative Service: the pod template resolves into core PodSpec pieces
    (KSVC, "spec.template.spec.containers[0].ports[0].containerPort", "8080", None, TYPE),
    (KSVC, "spec.template.spec.nodeName", "node-1", None, UNKNOWN),
    (KSVC, "spec.template.spec.containers[0].lifecycle", {}, None, UNKNOWN),
    (KSVC, "spec.template.spec.volumes[0].nfs", {"server": "s", "path": "/"}, None, UNKNOWN),
    (KSVC, "spec.template.spec.containers", DEL, None, REQUIRED),
    (KSVC, "spec.template.spec.timeoutSeconds", "300", None, TYPE),
    (KSVC, "spec.traffic[0].percent", 150, None, "greater than the maximum"),
    (KSVC, "spec.traffic[0].weight", 10, None, UNKNOWN),
    (KSVC, "spec.template.spec.initContainers[0].image", 7, None, TYPE),
    (KSVC, "spec.template.metadata.labels", "x", None, TYPE),
    # Istio VirtualService
    (VS1B1, "spec.http[0].route[0].destination.port.number", "80", None, TYPE),
    (VS1B1, "spec.http[0].route[0].destination.host", DEL, None, REQUIRED),
    (VS1B1, "spec.http[0].match[0].authority", {"exact": "a", "regex": "b"}, None, "too many properties"),
    (VS1B1, "spec.http[1].timeout", "sixty", None, "does not match"),
    (VS1B1, "spec.http[0].retry", {"attempts": 3}, None, UNKNOWN),
    (
        VS1B1,
        "spec.http[0].corsPolicy",
        {"unmatchedPreflights": "DROP"},
        "spec.http[0].corsPolicy.unmatchedPreflights",
        ENUM,
    ),
    (VS1B1, "spec.http[0].headers.request.set.Host", 1, None, TYPE),
    (VS1, "spec.hosts", "sklearn-iris", None, TYPE),
    (VS1, "spec.http[0].route[0].weight", "100", None, TYPE),
    (VS1, "spec.gateway", ["mesh"], None, UNKNOWN),
    (VS1, "spec.http[0].redirect", {"derivePort": "FROM_ANYWHERE"}, "spec.http[0].redirect.derivePort", ENUM),
    # Gateway API HTTPRoute
    (ROUTE, "spec.rules[0].backendRefs[0].port", "81", None, TYPE),
    (ROUTE, "spec.rules[0].backendRefs[0].port", 0, None, "less than the minimum"),
    (ROUTE, "spec.rules[1].matches[0].path.type", "Regex", None, ENUM),
    (ROUTE, "spec.rules[0].filters[0].type", "HeaderModifier", None, ENUM),
    (ROUTE, "spec.parentRefs[0].name", DEL, None, REQUIRED),
    (ROUTE, "spec.rules[0].timeouts.request", "1 minute", None, "does not match"),
    (ROUTE, "spec.rules[0].filters[0].requestHeaderModifier.replace", [], None, UNKNOWN),
    (ROUTE, "spec.hostnames[0]", "Bad_Host", None, "does not match"),
    (ROUTE, "spec.rules[1].backendRefs[0].weight", -1, None, "less than the minimum"),
    (ROUTE, "spec", DEL, None, REQUIRED),
    # KEDA ScaledObject
    (SO, "spec.minReplicaCount", -1, None, "less than the minimum"),
    (SO, "spec.triggers[0].metadata.value", 50, None, TYPE),
    (SO, "spec.scaleTargetRef", DEL, None, REQUIRED),
    (SO, "spec.triggers[1].authenticationRef.kind", "Secret", None, ENUM),
    (
        SO,
        "spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds",
        "300",
        None,
        TYPE,
    ),
    (SO, "spec.triggers[0].metric_type", "Utilization", None, UNKNOWN),
    (SO, "spec.triggers", [], None, "should be non-empty"),
    (SO, "spec.fallback", {"failureThreshold": 3}, "spec.fallback.replicas", REQUIRED),
    # OpenTelemetryCollector
    (OTEL, "spec.mode", "agent", None, ENUM),
    (OTEL, "spec.config.exporters", DEL, None, REQUIRED),
    (OTEL, "spec.replicas", "1", None, TYPE),
    (OTEL, "spec.configs", {}, None, UNKNOWN),
    (OTEL, "spec.resources.limits.cpu", [], None, TYPE),
    (OTEL, "spec.config.service.pipelines.metrics.receivers", "prometheus", None, TYPE),
    (OTEL, "spec.config.service.pipelines.metrics.exporters", DEL, None, REQUIRED),
    (OTEL, "spec.upgradeStrategy", "always", None, ENUM),
    # Core kinds through kubernetes-validate's strict schemas
    (DEPLOY, "spec.template.spec.containers[0].ports[0].containerPort", "8080", None, TYPE),
    (DEPLOY, "spec.replica", 1, None, UNKNOWN),
    (DEPLOY, "spec.selector", DEL, None, REQUIRED),
    (DEPLOY, "spec.template.spec.containers[0].name", DEL, None, REQUIRED),
    (SVC, "spec.ports[0].port", "80", None, TYPE),
    (SVC, "spec.ports[0].target", 8080, None, UNKNOWN),
    (HPA, "spec.maxReplicas", DEL, None, REQUIRED),
    (HPA, "spec.metrics[0].resource.target.averageUtilization", "80", None, TYPE),
    (ING, "spec.rules[0].http.paths[0].pathType", 5, None, TYPE),
    # Local model caches
    (LMC, "spec.nodeGroups", [], None, "should be non-empty"),
    (LMC, "spec.modelSize", "lots", None, "does not match"),
    (LMC, "spec.sourceModelUri", DEL, None, REQUIRED),
    (LMC, "spec.storage.parameters.bucket", 1, None, TYPE),
    (LMC, "spec.storageUri", "s3://x", None, UNKNOWN),
    (LMNC, "spec.nodeGroups", DEL, None, REQUIRED),
    (LMNC, "spec.nodeGroups", "gpu1", None, TYPE),
    (LMNC, "spec.modelSize", 1.5, None, TYPE),
    (LMNC, "spec.serviceAccount", "sa", None, UNKNOWN),
    (LMNG, "spec.storageLimit", DEL, None, REQUIRED),
    (LMNG, "spec.persistentVolumeSpec.capacity.storage", [], None, TYPE),
    (
        LMNG,
        "spec.persistentVolumeSpec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key",
        DEL,
        None,
        REQUIRED,
    ),
    (LMNG, "spec.persistentVolumeClaimSpec.accessMode", ["ReadWriteOnce"], None, UNKNOWN),
    (LMN, "spec.localModels[0].modelName", DEL, None, REQUIRED),
    (LMN, "spec.localModels[0].nodeGroup", 1, None, TYPE),
    (LMN, "spec.localModels", DEL, None, REQUIRED),
    (LMN, "status.modelStatus.iris", "Done", None, ENUM),
    # LeaderWorkerSet, InferencePool (v1, v1alpha2), cert-manager Certificate (LLMInferenceService objects)
    (LWS, "spec.leaderWorkerTemplate.workerTemplate", DEL, None, REQUIRED),
    (LWS, "spec.leaderWorkerTemplate.size", "2", None, TYPE),
    (LWS, "spec.leaderWorkerTemplate.restartPolicy", "Always", None, ENUM),
    (LWS, "spec.startupPolicy", "LeaderStarted", None, ENUM),
    (LWS, "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].ports[0].containerPort", "8000", None, TYPE),
    (LWS, "spec.leaderWorkerTemplate.subGroupPolicy.size", 2, None, UNKNOWN),
    (POOL, "spec.targetPorts", [{"number": 8000}, {"number": 8001}], None, "is too long"),
    (POOL, "spec.endpointPickerRef.failureMode", "Open", None, ENUM),
    (POOL, "spec.endpointPickerRef.port", DEL, "spec.endpointPickerRef.port", REQUIRED),
    (POOL, "spec.selector.matchLabels", DEL, None, REQUIRED),
    (POOL, "spec.targetPorts[0].number", 70000, None, "greater than the maximum"),
    (POOL2, "spec.targetPortNumber", DEL, None, REQUIRED),
    (POOL2, "spec.targetPortNumber", "8000", None, TYPE),
    (POOL2, "spec.extensionRef.failureMode", "Open", None, ENUM),
    (POOL2, "spec.extensionRef.port", 9002, None, UNKNOWN),
    (CERT, "spec.secretName", DEL, None, REQUIRED),
    (CERT, "spec.issuerRef.name", DEL, None, REQUIRED),
    (CERT, "spec.dnsNames", "a.b", None, TYPE),
    (CERT, "spec.issuerRef.namespace", "x", None, UNKNOWN),
    (LLM, "spec.model", DEL, None, REQUIRED),
    (LLM, "spec.replicas", "2", None, TYPE),
    (LLM, "spec.parallelism.tensors", 2, None, UNKNOWN),
    (LLM, "spec.template.containers[0].resources.limits", "2", None, TYPE),
    (LLM, "spec.router.gateway.refs[0].port", 80, None, UNKNOWN),
    (LLM, "spec.prefill.replicas", "one", None, TYPE),
    (LLM1, "spec.model.criticality", "Urgent", None, ENUM),
    (LLM1, "spec.model", DEL, None, REQUIRED),
    (LLM1, "spec.worker", "pods", None, TYPE),
    (LLM1, "spec.routers", {}, None, UNKNOWN),
    (LLMC, "spec.routers", {}, None, UNKNOWN),
    (LLMC, "spec", DEL, None, REQUIRED),
    (LLMC, "spec.template", "pods", None, TYPE),
    (LLMC, "metadata.labels", {"a": 1}, "metadata.labels.a", TYPE),
    (LLMC1, "spec.model2", {}, None, UNKNOWN),
    (LLMC1, "spec", DEL, None, REQUIRED),
    # KEDA HTTP add-on HTTPScaledObject and the Gateway API ReferenceGrant (kserve-compile's scale to zero)
    (HSO, "spec.scaleTargetRef.service", DEL, None, REQUIRED),
    (HSO, "spec.scaleTargetRef.deployment", "x", None, UNKNOWN),
    (HSO, "spec.replicas.min", "zero", None, TYPE),
    (HSO, "spec.replicas.max", 2147483648, None, "greater than the maximum"),
    (HSO, "spec.scalingMetric.requestRate.window", "one minute", None, "does not match"),
    (HSO, "spec.scaleTargetRef.portName", "http", "spec.scaleTargetRef", "should not be valid under"),
    (HSO, "spec.hosts", "a.example.com", None, TYPE),
    (GRANT, "spec.from[0].namespace", "Team_A", None, "does not match"),
    (GRANT, "spec.to[0].kind", DEL, None, REQUIRED),
    (GRANT, "spec.to", [], None, "should be non-empty"),
    (GRANT, "spec.from[0].name", "x", None, UNKNOWN),
    (LLMC1, "spec", [], None, TYPE),
    (LLMC1, "spec.labels", [], None, TYPE),
]


def _case_id(case: tuple) -> str:
    fixture, field, value = case[0], case[1], case[2]
    what = "del" if value is DEL else "set"
    return f"{fixture.split('/')[-2]}:{what}:{field}"


@pytest.mark.parametrize("obj", load_fixtures(), ids=fixture_id)
def test_valid_fixture_passes(obj: dict) -> None:
    assert check_object(obj) == []


def test_every_authored_kind_has_a_valid_fixture_and_invalid_cases() -> None:
    kinds = {(o["apiVersion"], o["kind"]) for o in load_fixtures()}
    assert set(known_kinds()) <= kinds
    for api_version, kind in known_kinds():
        n = sum(1 for c in CASES if c[0].startswith(f"{api_version}/{kind}/"))
        assert n >= 4, f"{api_version} {kind} has only {n} invalid cases"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_broken_field_is_reported_at_its_path(case: tuple) -> None:
    fixture, field, value, expected_path, message_part = case
    base = FIXTURES[fixture]
    bad = mutate(base, field, delete=True) if value is DEL else mutate(base, field, value)
    issues = check_object(bad)
    expected = expected_path or field
    assert [i.path for i in issues] == [expected], issues
    assert message_part in issues[0].message, issues[0].message
    assert issues[0].kind == base["kind"]
    assert issues[0].name == base["metadata"]["name"]


def test_unknown_field_inside_preserved_collector_config_is_accepted() -> None:
    obj = mutate(FIXTURES[OTEL], "spec.config.receivers.prometheus.extra", {"any": ["thing"]})
    assert check_object(obj) == []


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "runtimes").glob("*.yaml")) + [REPO / "kserve_compile/data/storagecontainers.yaml"],
    ids=lambda p: p.name,
)
def test_shipped_runtime_and_storage_data_pass(path: Path) -> None:
    objs = [o for o in yaml.safe_load_all(path.read_text()) if o]
    assert objs
    for obj in objs:
        assert check_object(obj) == [], fixture_id(obj)


def test_every_golden_object_passes() -> None:
    # Inputs are checked as the API server checks them: after the mutating webhook (admitted form).
    from kserve_compile.inputs.config import parse_config
    from kserve_compile.inputs.defaults import embedded_configmap
    from kserve_compile.plan.defaulting import admitted

    files = sorted((REPO / "golden").rglob("*.yaml"))
    assert files
    issues = []
    for path in files:
        docs = [o for o in yaml.safe_load_all(path.read_text()) if isinstance(o, dict)]
        given = [o for o in docs if o.get("kind") == "ConfigMap" and o["metadata"]["name"] == "inferenceservice-config"]
        config = parse_config((given[0] if given else embedded_configmap())["data"])
        for obj in docs:
            issues.extend(f"{path.relative_to(REPO)}: {i}" for i in check_object(admitted(obj, config)))
    assert issues == []
