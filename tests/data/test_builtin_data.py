"""Guards on the committed KServe data: the 14 default ClusterServingRuntimes, the shipped
``inferenceservice-config`` ConfigMap and the default ClusterStorageContainer.

The expected values below are the facts the renderer relies on (runtime auto-selection, images,
defaults). An accidental edit to a data file should make one of these assertions fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from kserve_compile import constants as C

ROOT = Path(__file__).resolve().parents[2]
RUNTIMES_DIR = ROOT / "runtimes"
DATA_DIR = ROOT / "kserve_compile" / "data"
CONFIGMAP_FILE = DATA_DIR / "inferenceservice-config.yaml"
CSC_FILE = DATA_DIR / "storagecontainers.yaml"

# Runtimes in runtimes/ that are this project's own, not KServe defaults.
PROJECT_RUNTIMES = {"kserve-onnxserver"}

# name -> (server-type, image, protocolVersions or None when the field is absent,
#          [(format, version, autoSelect, priority)] with None for an absent field)
EXPECTED: dict[str, tuple[str, str, list[str] | None, list[tuple[str, str, bool | None, int | None]]]] = {
    "kserve-sklearnserver": (
        "sklearnserver",
        "kserve/sklearnserver:latest",
        ["v1", "v2"],
        [("sklearn", "1", True, 1)],
    ),
    "kserve-xgbserver": (
        "xgbserver",
        "kserve/xgbserver:latest",
        ["v1", "v2"],
        [("xgboost", "2", True, 1)],
    ),
    "kserve-lgbserver": (
        "lgbserver",
        "kserve/lgbserver:latest",
        ["v1", "v2"],
        [("lightgbm", "4", True, 1)],
    ),
    "kserve-pmmlserver": (
        "pmmlserver",
        "kserve/pmmlserver:latest",
        ["v1", "v2"],
        [("pmml", "3", True, 1), ("pmml", "4", True, 1)],
    ),
    "kserve-paddleserver": (
        "paddleserver",
        "kserve/paddleserver:latest",
        ["v1", "v2"],
        [("paddle", "2", True, 1)],
    ),
    "kserve-autogluonserver": (
        "autogluonserver",
        "kserve/autogluonserver:latest",
        ["v1", "v2"],
        [("autogluon", "1", True, 1)],
    ),
    "kserve-predictiveserver": (
        "predictiveserver",
        "kserve/predictiveserver:latest",
        ["v1", "v2"],
        [("sklearn", "1", False, 3), ("xgboost", "2", False, 3), ("lightgbm", "4", False, 3)],
    ),
    "kserve-mlserver": (
        "mlserver",
        "docker.io/seldonio/mlserver:1.7.1",
        ["v2"],
        [
            ("sklearn", "0", True, 2),
            ("sklearn", "1", True, 2),
            ("xgboost", "1", True, 2),
            ("xgboost", "2", True, 2),
            ("lightgbm", "3", True, 2),
            ("lightgbm", "4", True, 2),
            ("mlflow", "1", True, 1),
            ("mlflow", "2", True, 1),
        ],
    ),
    "kserve-tensorflow-serving": (
        "tensorflow-serving",
        "tensorflow/serving:2.6.2",
        ["v1", "grpc-v1"],
        [("tensorflow", "1", True, 2), ("tensorflow", "2", True, 2)],
    ),
    "kserve-torchserve": (
        "torchserve",
        "pytorch/torchserve-kfs:0.9.0",
        ["v1", "v2", "grpc-v2"],
        [("pytorch", "1", True, 2)],
    ),
    "kserve-tritonserver": (
        "tritonserver",
        "nvcr.io/nvidia/tritonserver:23.05-py3",
        ["v2", "grpc-v2"],
        [
            ("tensorrt", "8", True, 1),
            ("tensorflow", "1", True, 1),
            ("tensorflow", "2", True, 1),
            ("onnx", "1", True, 1),
            ("pytorch", "1", None, None),
            ("triton", "2", True, 1),
        ],
    ),
    "kserve-huggingfaceserver": (
        "huggingfaceserver",
        "kserve/huggingfaceserver:latest",
        ["v2", "v1"],
        [("huggingface", "1", True, 1)],
    ),
    "kserve-huggingfaceserver-multinode": (
        "huggingfaceserver",
        "kserve/huggingfaceserver:latest-gpu",
        ["v2", "v1"],
        [("huggingface", "1", True, 2)],
    ),
    "kserve-vllmserver": (
        "vllmserver",
        "vllm/vllm-openai:latest",
        None,
        [("vLLM", "1", True, 1)],
    ),
}

PROMETHEUS_PORT = {"kserve-torchserve": "8082", "kserve-tritonserver": "8002"}
RUNS_AS_USER_1000 = {"kserve-tensorflow-serving", "kserve-torchserve", "kserve-tritonserver"}
MULTINODE = "kserve-huggingfaceserver-multinode"
STANDARD_RESOURCES = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _kserve_runtime_files() -> dict[str, Path]:
    return {p.stem: p for p in sorted(RUNTIMES_DIR.glob("*.yaml")) if p.stem not in PROJECT_RUNTIMES}


@pytest.fixture(scope="module")
def runtimes() -> dict[str, dict[str, Any]]:
    return {name: _load(path) for name, path in _kserve_runtime_files().items()}


@pytest.fixture(scope="module")
def configmap() -> dict[str, Any]:
    return _load(CONFIGMAP_FILE)


@pytest.fixture(scope="module")
def cm_data(configmap: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {key: json.loads(value) for key, value in configmap["data"].items()}


@pytest.fixture(scope="module")
def csc() -> dict[str, Any]:
    return _load(CSC_FILE)


# --- runtimes ---------------------------------------------------------------------------------


def test_exactly_the_fourteen_kserve_default_runtimes() -> None:
    files = _kserve_runtime_files()
    assert len(files) == 14
    assert set(files) == set(EXPECTED)


def test_openvino_is_not_installed(runtimes: dict[str, dict[str, Any]]) -> None:
    assert not list(RUNTIMES_DIR.glob("*openvino*"))
    for rt in runtimes.values():
        assert "openvino" not in rt["metadata"]["name"]
        assert "openvino" not in rt["metadata"]["annotations"][C.ANN_SERVER_TYPE]
        assert all(f["name"] != "openvino_ir" for f in rt["spec"]["supportedModelFormats"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_runtime_identity_and_header(name: str, runtimes: dict[str, dict[str, Any]]) -> None:
    rt = runtimes[name]
    assert rt["apiVersion"] == C.V1ALPHA1
    assert rt["kind"] == C.KIND_CSR
    assert rt["metadata"]["name"] == name
    assert "namespace" not in rt["metadata"]
    assert rt["metadata"]["annotations"] == {C.ANN_SERVER_TYPE: EXPECTED[name][0]}
    first_line = (RUNTIMES_DIR / f"{name}.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first_line.startswith("#") and f"config/runtimes/{name}.yaml" in first_line


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_runtime_formats_and_protocols(name: str, runtimes: dict[str, dict[str, Any]]) -> None:
    spec = runtimes[name]["spec"]
    _, _, protocols, formats = EXPECTED[name]
    got = [(f["name"], f["version"], f.get("autoSelect"), f.get("priority")) for f in spec["supportedModelFormats"]]
    assert got == formats
    for f in spec["supportedModelFormats"]:
        assert set(f) <= {"name", "version", "autoSelect", "priority"}
        assert isinstance(f["version"], str)
    assert spec.get("protocolVersions") == protocols


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_runtime_single_predictor_container(name: str, runtimes: dict[str, dict[str, Any]]) -> None:
    spec = runtimes[name]["spec"]
    containers = spec["containers"]
    assert [c["name"] for c in containers] == [C.CONTAINER_KSERVE]
    container = containers[0]
    assert container["image"] == EXPECTED[name][1]
    # No runtime declares ports, so Services fall back to 8080.
    assert "ports" not in container
    assert spec["annotations"] == {
        C.ANN_PROMETHEUS_PORT: PROMETHEUS_PORT.get(name, str(C.DEFAULT_HTTP_PORT)),
        C.ANN_PROMETHEUS_PATH: "/metrics",
    }
    if name == MULTINODE:
        workers = spec["workerSpec"]["containers"]
        assert [c["name"] for c in workers] == [C.CONTAINER_WORKER]
        assert workers[0]["image"] == EXPECTED[name][1]
        assert spec["workerSpec"]["pipelineParallelSize"] == 1
        assert spec["workerSpec"]["tensorParallelSize"] == 1
    else:
        assert "workerSpec" not in spec


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - {MULTINODE}))
def test_runtime_resources_and_security(name: str, runtimes: dict[str, dict[str, Any]]) -> None:
    container = runtimes[name]["spec"]["containers"][0]
    assert container["resources"] == STANDARD_RESOURCES
    expected_sc: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    if name in RUNS_AS_USER_1000:
        expected_sc["runAsUser"] = 1000
    if name == "kserve-vllmserver":
        del expected_sc["runAsNonRoot"]
    assert container["securityContext"] == expected_sc


def test_sklearn_style_args(runtimes: dict[str, dict[str, Any]]) -> None:
    base = ["--model_name={{.Name}}", f"--model_dir={C.DEFAULT_MODEL_DIR}", "--http_port=8080"]
    for name in ("kserve-sklearnserver", "kserve-pmmlserver", "kserve-paddleserver", "kserve-autogluonserver"):
        assert runtimes[name]["spec"]["containers"][0]["args"] == base
    for name in ("kserve-xgbserver", "kserve-lgbserver"):
        assert runtimes[name]["spec"]["containers"][0]["args"] == [*base, "--nthread=1"]
    predictive = runtimes["kserve-predictiveserver"]["spec"]
    assert predictive["containers"][0]["args"] == [*base, "--framework={{.Annotations.modelFormat}}", "--nthread=1"]
    assert predictive["multiModel"] is False


def test_template_placeholders_in_env(runtimes: dict[str, dict[str, Any]]) -> None:
    mlserver = runtimes["kserve-mlserver"]["spec"]["containers"][0]
    assert "args" not in mlserver and "command" not in mlserver
    assert mlserver["env"] == [
        {"name": "MLSERVER_MODEL_IMPLEMENTATION", "value": "{{.Labels.modelClass}}"},
        {"name": "MLSERVER_HTTP_PORT", "value": "8080"},
        {"name": "MLSERVER_GRPC_PORT", "value": "9000"},
    ]
    torchserve = runtimes["kserve-torchserve"]["spec"]["containers"][0]
    assert torchserve["env"] == [{"name": "TS_SERVICE_ENVELOPE", "value": "{{.Labels.serviceEnvelope}}"}]
    assert torchserve["args"][:2] == ["torchserve", "--start"]


def test_tensorflow_and_triton_commands(runtimes: dict[str, dict[str, Any]]) -> None:
    tf = runtimes["kserve-tensorflow-serving"]["spec"]["containers"][0]
    assert tf["command"] == ["/usr/bin/tensorflow_model_server"]
    assert tf["args"] == [
        "--model_name={{.Name}}",
        "--port=9000",
        "--rest_api_port=8080",
        "--model_base_path=/mnt/models",
        "--rest_api_timeout_in_ms=60000",
    ]
    triton = runtimes["kserve-tritonserver"]["spec"]["containers"][0]
    assert "command" not in triton
    assert triton["args"] == [
        "tritonserver",
        "--model-store=/mnt/models",
        "--grpc-port=9000",
        "--http-port=8080",
        "--allow-grpc=true",
        "--allow-http=true",
    ]


def test_llm_runtimes_shm_and_probes(runtimes: dict[str, dict[str, Any]]) -> None:
    for name in ("kserve-huggingfaceserver", "kserve-vllmserver"):
        spec = runtimes[name]["spec"]
        assert spec["hostIPC"] is False
        assert spec["volumes"] == [{"name": "devshm", "emptyDir": {"medium": "Memory"}}]
        assert spec["containers"][0]["volumeMounts"] == [{"name": "devshm", "mountPath": "/dev/shm"}]
        assert {"name": "LMCACHE_USE_EXPERIMENTAL", "value": "True"} in spec["containers"][0]["env"]
    vllm = runtimes["kserve-vllmserver"]["spec"]["containers"][0]
    assert vllm["command"] == ["python", "-m", "vllm.entrypoints.openai.api_server"]
    assert vllm["args"] == ["--port=8080", "--served-model-name={{.Name}}", "--model=/mnt/models"]
    assert vllm["readinessProbe"]["httpGet"] == {"path": "/v1/models", "port": 8080}
    assert vllm["startupProbe"]["failureThreshold"] == 60
    assert vllm["startupProbe"]["initialDelaySeconds"] == 30


def test_multinode_runtime_shape(runtimes: dict[str, dict[str, Any]]) -> None:
    spec = runtimes[MULTINODE]["spec"]
    head = spec["containers"][0]
    assert head["command"][:2] == ["bash", "-c"]
    assert "ray start --head" in head["command"][2]
    assert head["args"] == ["--model_name={{.Name}}"]
    assert "securityContext" not in head
    env = {e["name"]: e for e in head["env"]}
    assert list(env) == ["RAY_PORT", "POD_NAMESPACE", "POD_IP", "VLLM_CONFIG_ROOT", "HF_HUB_CACHE"]
    assert env["RAY_PORT"]["value"] == "6379"
    assert env["POD_IP"]["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    big = {"requests": {"cpu": "2", "memory": "6Gi"}, "limits": {"cpu": "4", "memory": "12Gi"}}
    worker = spec["workerSpec"]["containers"][0]
    assert head["resources"] == big and worker["resources"] == big
    assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(head)
    assert {"livenessProbe", "startupProbe"} <= set(worker) and "readinessProbe" not in worker
    assert "ray start --address" in worker["command"][2]
    shm = [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "3Gi"}}]
    assert spec["volumes"] == shm and spec["workerSpec"]["volumes"] == shm


@pytest.mark.parametrize(
    "path",
    sorted(_kserve_runtime_files().values()) + [CONFIGMAP_FILE, CSC_FILE],
    ids=lambda p: p.name,
)
def test_yaml_reads_the_same_under_1_1_and_1_2(path: Path) -> None:
    # PyYAML follows YAML 1.1, ruamel YAML 1.2: an unquoted "yes", "on" or "0755" would differ.
    with path.open(encoding="utf-8") as fh:
        as_1_2 = YAML(typ="safe").load(fh)
    assert json.dumps(as_1_2, sort_keys=True) == json.dumps(_load(path), sort_keys=True)


# --- inferenceservice-config ------------------------------------------------------------------

LIVE_KEYS = {
    "deploy",
    "ingress",
    "storageInitializer",
    "credentials",
    "logger",
    "batcher",
    "agent",
    "router",
    "explainers",
    "inferenceService",
    "security",
    "metricsAggregator",
    "localModel",
    "opentelemetryCollector",
    "autoscaler",
}


def test_configmap_envelope_and_keys(configmap: dict[str, Any]) -> None:
    assert configmap["apiVersion"] == "v1"
    assert configmap["kind"] == "ConfigMap"
    assert configmap["metadata"] == {"name": C.CONFIGMAP_NAME, "namespace": C.KSERVE_NAMESPACE}
    assert set(configmap["data"]) == LIVE_KEYS
    assert "_example" not in configmap["data"]
    for key, value in configmap["data"].items():
        assert isinstance(value, str), key
        assert isinstance(json.loads(value), dict), key


def test_configmap_deploy_default_mode(cm_data: dict[str, dict[str, Any]]) -> None:
    assert cm_data["deploy"] == {"defaultDeploymentMode": C.MODE_LEGACY_SERVERLESS}
    assert C.LEGACY_MODES[cm_data["deploy"]["defaultDeploymentMode"]] == C.MODE_KNATIVE


def test_configmap_ingress(cm_data: dict[str, dict[str, Any]]) -> None:
    assert cm_data["ingress"] == {
        "enableGatewayApi": False,
        "kserveIngressGateway": "kserve/kserve-ingress-gateway",
        "ingressGateway": "knative-serving/knative-ingress-gateway",
        "localGateway": "knative-serving/knative-local-gateway",
        "localGatewayService": "knative-local-gateway.istio-system.svc.cluster.local",
        "ingressDomain": "example.com",
        "ingressClassName": "istio",
        "domainTemplate": "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}",
        "urlScheme": "http",
        "disableIstioVirtualHost": False,
        "disableIngressCreation": False,
        "disableHTTPRouteTimeout": False,
    }


def test_configmap_storage_initializer(cm_data: dict[str, dict[str, Any]]) -> None:
    si = cm_data["storageInitializer"]
    assert si == {
        "image": C.STORAGE_INITIALIZER_IMAGE,
        "cpuRequest": "100m",
        "cpuLimit": "1",
        "memoryRequest": "100Mi",
        "memoryLimit": "1Gi",
        "caBundleConfigMapName": "",
        "caBundleVolumeMountPath": "/etc/ssl/custom-certs",
        "enableModelcar": True,
        "cpuModelcar": "10m",
        "memoryModelcar": "15Mi",
        "uidModelcar": 1010,
    }
    assert "ociModelMode" not in si and "enableOciModelSupport" not in si


def test_configmap_sidecars_and_defaults(cm_data: dict[str, dict[str, Any]]) -> None:
    small = {"cpuRequest": "100m", "cpuLimit": "1", "memoryRequest": "100Mi", "memoryLimit": "1Gi"}
    assert cm_data["agent"] == {"image": "kserve/agent:latest", **small}
    assert cm_data["logger"] == {"image": "kserve/agent:latest", **small, "defaultUrl": "http://default-broker"}
    assert cm_data["batcher"] == {
        "image": "kserve/agent:latest",
        "cpuRequest": "1",
        "cpuLimit": "1",
        "memoryRequest": "1Gi",
        "memoryLimit": "1Gi",
        "maxBatchSize": "32",
        "maxLatency": "5000",
    }
    assert cm_data["router"] == {"image": "kserve/router:latest", **small, "imagePullPolicy": "IfNotPresent"}
    assert cm_data["explainers"] == {"art": {"image": "kserve/art-explainer", "defaultImageVersion": "latest"}}
    assert cm_data["inferenceService"] == {
        "resource": {"cpuRequest": "1", "cpuLimit": "1", "memoryRequest": "2Gi", "memoryLimit": "2Gi"}
    }
    assert cm_data["security"] == {"autoMountServiceAccountToken": True}
    # Strings, not booleans, in KServe's shipped file.
    assert cm_data["metricsAggregator"] == {"enableMetricAggregation": "false", "enablePrometheusScraping": "false"}
    assert cm_data["autoscaler"] == {
        "scaleUpStabilizationWindowSeconds": "0",
        "scaleDownStabilizationWindowSeconds": "300",
    }
    assert cm_data["credentials"]["storageSpecSecretName"] == "storage-config"
    assert cm_data["credentials"]["storageSecretNameAnnotation"] == C.ANN_STORAGE_SECRET_NAME
    assert cm_data["credentials"]["s3"]["s3AccessKeyIDName"] == "AWS_ACCESS_KEY_ID"
    assert cm_data["localModel"]["enabled"] is False
    assert cm_data["opentelemetryCollector"]["resource"]["cpuRequest"] == "200m"


# --- ClusterStorageContainer ------------------------------------------------------------------


def _csc_supports(csc: dict[str, Any], uri: str) -> bool:
    # Prefix match, or Go's regexp.MatchString (an unanchored search).
    for fmt in csc["spec"]["supportedUriFormats"]:
        if "prefix" in fmt and uri.startswith(fmt["prefix"]):
            return True
        if "regex" in fmt and re.search(fmt["regex"], uri):
            return True
    return False


def test_csc_shape_matches_storage_initializer_config(csc: dict[str, Any], cm_data: dict[str, dict[str, Any]]) -> None:
    assert csc["apiVersion"] == C.V1ALPHA1
    assert csc["kind"] == C.KIND_CSC
    assert csc["metadata"] == {"name": "default"}
    spec = csc["spec"]
    assert spec["workloadType"] == "initContainer"
    assert spec["supportsMultiModelDownload"] is True
    container = spec["container"]
    si = cm_data["storageInitializer"]
    assert container["name"] == C.CONTAINER_STORAGE_INITIALIZER
    assert container["image"] == si["image"] == C.STORAGE_INITIALIZER_IMAGE
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["resources"] == {
        "requests": {"cpu": si["cpuRequest"], "memory": si["memoryRequest"]},
        "limits": {"cpu": si["cpuLimit"], "memory": si["memoryLimit"]},
    }


def test_csc_supported_uri_formats(csc: dict[str, Any]) -> None:
    assert csc["spec"]["supportedUriFormats"] == [
        {"prefix": "gs://"},
        {"prefix": "s3://"},
        {"prefix": "hdfs://"},
        {"prefix": "hf://"},
        {"prefix": "modelscope://"},
        {"prefix": "webhdfs://"},
        {"regex": "https://(.+?).blob.core.windows.net/(.+)"},
        {"regex": "https://(.+?).file.core.windows.net/(.+)"},
        {"regex": "https?://(.+)/(.+)"},
    ]


@pytest.mark.parametrize(
    ("uri", "supported"),
    [
        ("gs://kfserving-examples/models/sklearn/1.0/model", True),
        ("s3://bucket/model", True),
        ("hf://meta-llama/Llama-3.1-8B", True),
        ("https://acct.blob.core.windows.net/container/model", True),
        ("http://example.com/models/model.joblib", True),
        ("pvc://claim/model", False),
        ("oci://registry/image:tag", False),
        ("/mnt/local/model", False),
    ],
)
def test_csc_uri_support(csc: dict[str, Any], uri: str, supported: bool) -> None:
    assert _csc_supports(csc, uri) is supported
