"""Every name KServe gives a label, annotation, port, path or container — defined once.

Values follow KServe's ``pkg/constants/constants.go`` (snapshot aaac4e294, 2026-08-21).
"""

from __future__ import annotations

# --- API groups, versions and kinds -----------------------------------------------------------
SERVING_GROUP = "serving.kserve.io"
ISVC_API_VERSION = "serving.kserve.io/v1beta1"
V1ALPHA1 = "serving.kserve.io/v1alpha1"
V1ALPHA2 = "serving.kserve.io/v1alpha2"
KIND_LLMISVC = "LLMInferenceService"
KIND_LLMISVC_CONFIG = "LLMInferenceServiceConfig"
KIND_ISVC = "InferenceService"
KIND_SR = "ServingRuntime"
KIND_CSR = "ClusterServingRuntime"
KIND_IG = "InferenceGraph"
KIND_TM = "TrainedModel"
KIND_CSC = "ClusterStorageContainer"

CONFIGMAP_NAME = "inferenceservice-config"
KSERVE_NAMESPACE = "kserve"

# --- deployment modes -------------------------------------------------------------------------
MODE_STANDARD = "Standard"
MODE_KNATIVE = "Knative"
MODE_MODELMESH = "ModelMesh"
MODE_LEGACY_RAW = "RawDeployment"
MODE_LEGACY_SERVERLESS = "Serverless"
LEGACY_MODES = {MODE_LEGACY_RAW: MODE_STANDARD, MODE_LEGACY_SERVERLESS: MODE_KNATIVE}
DEPLOYMENT_MODES = (MODE_STANDARD, MODE_KNATIVE, MODE_MODELMESH)  # what GetDeploymentMode resolves to

# --- component names --------------------------------------------------------------------------
PREDICTOR = "predictor"
TRANSFORMER = "transformer"
EXPLAINER = "explainer"
COMPONENTS = (PREDICTOR, TRANSFORMER, EXPLAINER)

# --- labels -----------------------------------------------------------------------------------
LABEL_ISVC = "serving.kserve.io/inferenceservice"
LABEL_IG = "serving.kserve.io/inferencegraph"
LABEL_KIND = "serving.kserve.io/kind"
LABEL_COMPONENT = "component"
LABEL_APP = "app"
LABEL_KNATIVE_VISIBILITY = "networking.knative.dev/visibility"
LABEL_KSERVE_VISIBILITY = "networking.kserve.io/visibility"
VISIBILITY_CLUSTER_LOCAL = "cluster-local"
LABEL_MODEL_CLASS = "modelClass"
LABEL_SERVICE_ENVELOPE = "serviceEnvelope"
LABEL_GENERATION = "isvc.generation"
LABEL_MULTINODE_ROLE = "multinode/role"

# --- annotations ------------------------------------------------------------------------------
ANN_DEPLOYMENT_MODE = "serving.kserve.io/deploymentMode"
ANN_AUTOSCALER_CLASS = "serving.kserve.io/autoscalerClass"
ANN_SERVER_TYPE = "serving.kserve.io/server-type"
ANN_STOP = "serving.kserve.io/stop"
ANN_MODEL_FORMAT = "modelFormat"
ANN_STORAGE_READONLY = "storage.kserve.io/readonly"
ANN_STORAGE_SECRET_NAME = "serving.kserve.io/storageSecretName"
ANN_STORAGE_INITIALIZER_UID = "serving.kserve.io/storage-initializer-uid"
ANN_ENABLE_TAG_ROUTING = "serving.kserve.io/enable-tag-routing"
ANN_PROMETHEUS_PORT = "prometheus.kserve.io/port"
ANN_PROMETHEUS_PATH = "prometheus.kserve.io/path"
ANN_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

INTERNAL = "internal.serving.kserve.io/"
ANN_STORAGE_SOURCE_URI = INTERNAL + "storage-initializer-sourceuri"
ANN_STORAGE_CONTAINER_NAME = INTERNAL + "storage-container-name"
ANN_STORAGE_SPEC = INTERNAL + "storage-spec"
ANN_STORAGE_SPEC_PARAM = INTERNAL + "storage-spec-param"
ANN_STORAGE_SPEC_KEY = INTERNAL + "storage-spec-key"
ANN_LOGGER = INTERNAL + "logger"
ANN_LOGGER_SINK_URL = INTERNAL + "logger-sink-url"
ANN_LOGGER_MODE = INTERNAL + "logger-mode"
ANN_LOGGER_METADATA_HEADERS = INTERNAL + "logger-metadata-headers"
ANN_LOGGER_METADATA_ANNOTATIONS = INTERNAL + "logger-metadata-annotations"
ANN_BATCHER = INTERNAL + "batcher"
ANN_BATCHER_MAX_BATCHSIZE = INTERNAL + "batcher-max-batchsize"
ANN_BATCHER_MAX_LATENCY = INTERNAL + "batcher-max-latency"
ANN_AGENT = INTERNAL + "agent"
ANN_CONFIG_VOLUME_NAME = INTERNAL + "configVolumeName"
ANN_CONFIG_MOUNT_PATH = INTERNAL + "configMountPath"
ANN_MODEL_DIR = INTERNAL + "modelDir"

KNATIVE_AUTOSCALING = "autoscaling.knative.dev/"
ANN_KNATIVE_CLASS = KNATIVE_AUTOSCALING + "class"
ANN_KNATIVE_METRIC = KNATIVE_AUTOSCALING + "metric"
ANN_KNATIVE_TARGET = KNATIVE_AUTOSCALING + "target"
ANN_KNATIVE_MIN_SCALE = KNATIVE_AUTOSCALING + "min-scale"
ANN_KNATIVE_MAX_SCALE = KNATIVE_AUTOSCALING + "max-scale"
ANN_KNATIVE_INITIAL_SCALE = KNATIVE_AUTOSCALING + "initial-scale"

# Annotations and labels KServe never copies from the isvc onto what it creates (constants.go:537-547).
DEFAULT_ANNOTATION_DISALLOWED = (
    ANN_KNATIVE_MIN_SCALE,
    ANN_KNATIVE_MAX_SCALE,
    ANN_STORAGE_SOURCE_URI,
    ANN_LAST_APPLIED,
    ANN_MODEL_FORMAT,
)
DEFAULT_LABEL_DISALLOWED = (LABEL_KNATIVE_VISIBILITY,)

# --- autoscaler classes -----------------------------------------------------------------------
AUTOSCALER_HPA = "hpa"
AUTOSCALER_KEDA = "keda"
AUTOSCALER_EXTERNAL = "external"
AUTOSCALER_NONE = "none"
AUTOSCALER_CLASSES = (AUTOSCALER_HPA, AUTOSCALER_EXTERNAL, AUTOSCALER_KEDA, AUTOSCALER_NONE)
DEFAULT_CPU_UTILIZATION = 80

# --- containers, volumes, paths, ports --------------------------------------------------------
CONTAINER_KSERVE = "kserve-container"
CONTAINER_TRANSFORMER = "transformer-container"
CONTAINER_WORKER = "worker-container"
CONTAINER_STORAGE_INITIALIZER = "storage-initializer"
CONTAINER_AGENT = "agent"
CONTAINER_MODELCAR = "modelcar"
CONTAINER_MODELCAR_INIT = "modelcar-init"

DEFAULT_MODEL_DIR = "/mnt/models"
MODEL_CONFIG_DIR = "/mnt/configs"
VOLUME_PROVISION_LOCATION = "kserve-provision-location"
VOLUME_PVC_SOURCE = "kserve-pvc-source"
STORAGE_INITIALIZER_IMAGE = "kserve/storage-initializer:latest"

DEFAULT_HTTP_PORT = 8080
SERVICE_PORT = 80
AGENT_PORT = 9081
INFERENCE_SERVICE_NAME_ENV = "INFERENCE_SERVICE_NAME"

# --- protocols --------------------------------------------------------------------------------
PROTOCOL_V1 = "v1"
PROTOCOL_V2 = "v2"
PROTOCOL_GRPC_V1 = "grpc-v1"
PROTOCOL_GRPC_V2 = "grpc-v2"
# Rank used by runtime auto-selection (api/predictor_model.go): lower sorts first; none = 5.
PROTOCOL_RANK = {PROTOCOL_V1: 1, PROTOCOL_V2: 2, PROTOCOL_GRPC_V1: 3, PROTOCOL_GRPC_V2: 4}

# --- ingress ----------------------------------------------------------------------------------
GATEWAY_API_GROUP = "gateway.networking.k8s.io"
CLUSTER_LOCAL_DOMAIN = "svc.cluster.local"
ISVC_NAME_HEADER = "KServe-Isvc-Name"
ISVC_NAMESPACE_HEADER = "KServe-Isvc-Namespace"
EXPLAIN_PATH_REGEX = r"^/v1/models/[\w-]+:explain$"
FALLBACK_PATH_REGEX = r"^/.*$"
DEFAULT_HTTPROUTE_TIMEOUT_SECONDS = 60

# --- field manager / tool identity ------------------------------------------------------------
FIELD_MANAGER = "kserve-compile"


def component_name(isvc_name: str, component: str, predictor_name: str | None = None) -> str:
    """``<isvc>-<component>``, or ``<isvc>-<predictor.name>-predictor`` (constants.go:802-835)."""
    if component == PREDICTOR and predictor_name:
        return f"{isvc_name}-{predictor_name}-{PREDICTOR}"
    return f"{isvc_name}-{component}"


def app_label(component_name_: str) -> str:
    """The ``app`` selector label KServe's raw reconcilers put on workloads and Services."""
    return f"isvc.{component_name_}"


# --- apply loop and daemon (kserve_compile/apply) ---------------------------------------------
# ApplySet (KEP-3659) labels and annotations.
LABEL_APPLYSET_ID = "applyset.kubernetes.io/id"
LABEL_APPLYSET_PART_OF = "applyset.kubernetes.io/part-of"
ANN_APPLYSET_TOOLING = "applyset.kubernetes.io/tooling"
ANN_APPLYSET_GROUP_KINDS = "applyset.kubernetes.io/contains-group-kinds"
ANN_APPLYSET_NAMESPACES = "applyset.kubernetes.io/additional-namespaces"
APPLYSET_TOOLING_PREFIX = "kserve-compile/"
# Per-object knobs mirroring Flux's (values: ssa Merge|IfNotPresent|Ignore; prune disabled; recreate enabled).
ANN_KC_SSA = "kserve-compile.io/ssa"
ANN_KC_PRUNE = "kserve-compile.io/prune"
ANN_KC_RECREATE = "kserve-compile.io/recreate"
STATUS_FIELD_MANAGER = "kserve-compile-status"
DAEMON_LEASE_NAME = "kserve-compile-daemon"
DAEMON_HEALTH_PORT = 8081
DAEMON_METRICS_PORT = 8080
APPLYSET_PARENT_SUFFIX = ".kserve-compile"  # isvc "m" → parent ConfigMap "m.kserve-compile"

# --- pod webhook ---------------------------------------------------------------------
# Values from KServe's pkg/constants/constants.go and pkg/webhook/admission/pod/*.go.
CONTAINER_QUEUE_PROXY = "queue-proxy"
CONTAINER_ISTIO_INIT = "istio-init"
LABEL_ENDPOINT = "endpoint"
LABEL_LOCAL_MODEL = INTERNAL + "localmodel"
LABEL_LOCAL_MODEL_NAMESPACE = INTERNAL + "localmodel-namespace"
ANN_LOCAL_MODEL_SOURCE_URI = INTERNAL + "localmodel-sourceuri"
ANN_LOCAL_MODEL_PVC_NAME = INTERNAL + "localmodel-pvc-name"
ANN_CONFIDENTIAL_ENABLED = INTERNAL + "confidential-enabled"
ANN_CONFIDENTIAL_RESOURCE_ID = INTERNAL + "confidential-resource-id"
ANN_ENABLE_METRIC_AGGREGATION = "serving.kserve.io/enable-metric-aggregation"
ANN_ENABLE_PROMETHEUS_SCRAPING = "serving.kserve.io/enable-prometheus-scraping"
ANN_PROMETHEUS_IO_PORT = "prometheus.io/port"
ANN_PROMETHEUS_IO_PATH = "prometheus.io/path"
ANN_ISTIO_INTERCEPTION_MODE = "sidecar.istio.io/interceptionMode"
ANN_ISTIO_SIDECAR_STATUS = "sidecar.istio.io/status"
ANN_AWS_IRSA_ROLE_ARN = "eks.amazonaws.com/role-arn"
ISTIO_INTERCEPT_MODE_REDIRECT = "REDIRECT"
DEFAULT_ISTIO_SIDECAR_UID = 1337

PVC_URI_PREFIX = "pvc://"
OCI_URI_PREFIX = "oci://"
URI_SCHEME_PLACEHOLDER = "<scheme-placeholder>"
OCI_MODE_MODELCAR = "modelcar"
OCI_MODE_NATIVE = "native"
OCI_MODE_FETCH = "fetch"
MAX_OCI_SOURCES_PER_POD = 10
CPU_MODELCAR_DEFAULT = "10m"
MEMORY_MODELCAR_DEFAULT = "15Mi"

VOLUME_CA_BUNDLE = "cabundle-cert"
DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP = "global-ca-bundle"
CA_BUNDLE_FILE_NAME = "cabundle.crt"  # the key KServe copies out of the CA-bundle source ConfigMap
DEFAULT_CA_BUNDLE_MOUNT_PATH = "/etc/ssl/custom-certs"
VOLUME_OCI_FETCH_DOCKER_CONFIG = "kserve-oci-fetch-docker-config"
OCI_FETCH_DOCKER_CONFIG_DIR = "/mnt/oci-fetch-auth"
VOLUME_OCI_FETCH_DEFAULT = "oci-fetch-model"
VOLUME_OCI_NATIVE_DEFAULT = "oci-model"
VOLUME_MODEL_DIR = "model-dir"
VOLUME_MODEL_CONFIG = "model-config"
VOLUME_LOGGER_CA_BUNDLE = "agent-ca-bundle"
LOGGER_CA_CERT_MOUNT_PATH = "/etc/tls/logger"
LOGGER_DEFAULT_SERVICE_ACCOUNT = "logger-sa"
LOGGER_DEFAULT_STORAGE_KEY = "credentials"
AGENT_PORT_NAME = "agent-port"
AGGREGATE_METRICS_PORT = 9088
AGGREGATE_METRICS_PORT_NAME = "aggr-metric"
DEFAULT_POD_PROMETHEUS_PORT = 9091
DEFAULT_PROMETHEUS_PATH = "/metrics"
DEFAULT_STORAGE_SPEC_SECRET = "storage-config"

ENV_STORAGE_URI = "STORAGE_URI"
ENV_MODEL_INIT_MODE = "MODEL_INIT_MODE"
ENV_CA_BUNDLE_CONFIGMAP_NAME = "CA_BUNDLE_CONFIGMAP_NAME"
ENV_CA_BUNDLE_MOUNT_POINT = "CA_BUNDLE_VOLUME_MOUNT_POINT"
ENV_STORAGE_CONFIG = "STORAGE_CONFIG"
ENV_STORAGE_OVERRIDE_CONFIG = "STORAGE_OVERRIDE_CONFIG"
ENV_SERVING_READINESS_PROBE = "SERVING_READINESS_PROBE"
ENV_USER_PORT = "USER_PORT"
ENV_CONFIDENTIAL_ENABLED = "CONFIDENTIAL_ENABLED"
ENV_CONFIDENTIAL_RESOURCE_ID = "CONFIDENTIAL_RESOURCE_ID"
ENV_OCI_DOCKER_CONFIG = "KSERVE_OCI_DOCKER_CONFIG"
ENV_OCI_INSECURE_REGISTRY = "KSERVE_OCI_INSECURE_REGISTRY"
ENV_KSERVE_PROMETHEUS_PORT = "KSERVE_CONTAINER_PROMETHEUS_METRICS_PORT"
ENV_KSERVE_PROMETHEUS_PATH = "KSERVE_CONTAINER_PROMETHEUS_METRICS_PATH"
ENV_AGGREGATE_PROMETHEUS_PORT = "AGGREGATE_PROMETHEUS_METRICS_PORT"
# The storage initializer always gets these unless already set (pkg/utils/storage.go AddDefaultHuggingFaceEnvVars).
HF_DEFAULT_ENV = (
    ("HF_HUB_ENABLE_HF_TRANSFER", "1"),
    ("HF_XET_HIGH_PERFORMANCE", "1"),
    ("HF_XET_NUM_CONCURRENT_RANGE_GETS", "8"),
)

# --- ingress -------------------------------------------------------------------------
# Values from KServe's pkg/constants/constants.go and reconcilers/ingress/*.go.
HTTPROUTE_API_VERSION = "gateway.networking.k8s.io/v1"
KIND_HTTPROUTE = "HTTPRoute"
KIND_GATEWAY = "Gateway"
KIND_SERVICE = "Service"
INGRESS_API_VERSION = "networking.k8s.io/v1"
KIND_INGRESS = "Ingress"
VIRTUAL_SERVICE_API_VERSION = "networking.istio.io/v1beta1"
KIND_VIRTUAL_SERVICE = "VirtualService"
ISTIO_MESH_GATEWAY = "mesh"
CLUSTER_DOMAIN = "cluster.local"  # Kubernetes cluster domain; Service hosts are <name>.<ns>.svc.<this>
PATH_BASED_EXPLAIN_REGEX = r"(/v1/models/[\w-]+:explain)$"
GRPC_INFERENCE_PATH_REGEX = r"^/inference\.GRPCInferenceService/.*$"
GRPC_CONTENT_TYPE_REGEX = "^application/grpc.*"
APP_PROTOCOL_H2C = "kubernetes.io/h2c"
HOST_PORT_REGEX = r"(?::\d{1,5})?"  # appended to every VirtualService authority regex
ANN_GKE_ACCELERATOR = "serving.kserve.io/gke-accelerator"
NODE_SELECTOR_GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
NVIDIA_GPU_RESOURCE = "nvidia.com/gpu"
NVIDIA_MIG_PREFIX = "nvidia.com/mig"

# --- knative -------------------------------------------------------------------------
# Values from KServe's pkg/constants/constants.go and Knative Serving's API packages.
KNATIVE_SERVING_API_VERSION = "serving.knative.dev/v1"
KIND_KNATIVE_SERVICE = "Service"
ANN_KNATIVE_ROLLOUT_DURATION = "serving.knative.dev/rollout-duration"
ANN_KNATIVE_OPENSHIFT_PASSTHROUGH = "serving.knative.openshift.io/enablePassthrough"
# Component annotations KServe moves from the revision template up to the Knative Service's own metadata.
KNATIVE_KSVC_ANNOTATIONS = (ANN_KNATIVE_ROLLOUT_DURATION, ANN_KNATIVE_OPENSHIFT_PASSTHROUGH)
KNATIVE_KPA_CLASS = "kpa.autoscaling.knative.dev"
DEFAULT_MIN_REPLICAS = 1
TRAFFIC_TAG_LATEST = "latest"
TRAFFIC_TAG_PREV = "prev"

# --- graph ---------------------------------------------------------------------------
# Values from KServe's pkg/constants/constants.go, pkg/agent/storage/provider.go and pkg/modelconfig.
ROUTER_PORT = 8080
ROUTER_READINESS_PATH = "/readyz"
ENV_ROUTER_PROPAGATE_HEADERS = "PROPAGATE_HEADERS"
MODEL_CONFIG_FILE = "models.json"
# Storage URI prefixes a TrainedModel may use (the multi-model agent's downloaders), in KServe's order.
TRAINED_MODEL_STORAGE_PREFIXES = ("s3://", "gs://", "https://", "http://")

# --- multi-node and canary -----------------------------------------------------------
# Values from KServe's pkg/constants/constants.go (MultiNode*, *ParallelSize*, GPU resource types).
MULTINODE_HEAD = "head"
MULTINODE_WORKER = "worker"
MULTINODE_WORKERS = "workers"
ANN_MULTINODE_EXECUTOR_BACKEND = "multinode/executor-backend"
MULTINODE_EXECUTOR_MP = "mp"
ANN_GPU_RESOURCE_TYPES = "serving.kserve.io/gpu-resource-types"
ENV_PIPELINE_PARALLEL_SIZE = "PIPELINE_PARALLEL_SIZE"
ENV_TENSOR_PARALLEL_SIZE = "TENSOR_PARALLEL_SIZE"
ENV_RAY_NODE_COUNT = "RAY_NODE_COUNT"
ENV_REQUEST_GPU_COUNT = "REQUEST_GPU_COUNT"
DEFAULT_PIPELINE_PARALLEL_SIZE = 1
DEFAULT_TENSOR_PARALLEL_SIZE = 1

# --- local model caches --------------------------------------------------------------
# Values from KServe's pkg/constants/constants.go, pkg/controller/v1alpha1/localmodel/reconcilers/utils.go,
# pkg/controller/v1alpha1/localmodelnode/{controller,platform_default}.go and config/localmodelnodes/manager.yaml.
KIND_LOCAL_MODEL_CACHE = "LocalModelCache"
KIND_LOCAL_MODEL_NAMESPACE_CACHE = "LocalModelNamespaceCache"
KIND_LOCAL_MODEL_NODE_GROUP = "LocalModelNodeGroup"
KIND_LOCAL_MODEL_NODE = "LocalModelNode"
KIND_NODE = "Node"
LABEL_LOCAL_MODEL_NAMESPACE = INTERNAL + "localmodel-namespace"
ANN_NODE_GROUP = "serving.kserve.io/nodegroup"
ANN_DISABLE_LOCAL_MODEL = "serving.kserve.io/disable-localmodel"
LOCAL_MODEL_DOWNLOAD_CONTAINER = "kserve-localmodel-download"
LOCAL_MODEL_PVC_SOURCE_VOLUME = "kserve-pvc-source"
LOCAL_MODEL_DEFAULT_JOB_IMAGE = "kserve/storage-initializer:latest"
LOCAL_MODEL_DEFAULT_JOB_TTL_SECONDS = 3600
LOCAL_MODEL_DOWNLOAD_WORKLOAD = "localModelDownloadJob"  # ClusterStorageContainer spec.workloadType
# The shipped node-agent DaemonSet (kserve-localmodelnode-agent) runs only on nodes with this label.
LOCAL_MODEL_AGENT_NODE_LABEL = ("kserve/localmodel", "worker")
LABEL_HOSTNAME = "kubernetes.io/hostname"

DAEMON_OPT_IN_LABEL = "kserve-compile.io/managed"  # alongside KServe: the daemon reconciles only isvcs labelled "true"

# --- scale to zero in Standard mode through KEDA's HTTP add-on (beyond KServe; docs/scale-to-zero.md) ----------
# The add-on's names: kedacore/http-add-on config/crd/bases/http.keda.sh_httpscaledobjects.yaml and its chart's
# interceptor Service (keda-add-ons-http-interceptor-proxy, port 8080, in the add-on's namespace).
ANN_SCALE_TO_ZERO = "kserve-compile.io/scale-to-zero"  # "true" opts an isvc (or one component) in, "false" out
ISVC_COMPILE_KEY = "isvcCompile"  # the inferenceservice-config key kserve-compile defines for InferenceServices
HTTP_SCALED_OBJECT_API_VERSION = "http.keda.sh/v1alpha1"
KIND_HTTP_SCALED_OBJECT = "HTTPScaledObject"
KEDA_HTTP_INTERCEPTOR_NAMESPACE = "keda"
KEDA_HTTP_INTERCEPTOR_SERVICE = "keda-add-ons-http-interceptor-proxy"
KEDA_HTTP_INTERCEPTOR_PORT = 8080
KEDA_HTTP_DEFAULT_TARGET = 100  # the CRD's default targetValue of concurrency and requestRate
SCALE_TO_ZERO_PROXY_SUFFIX = "-proxy"  # <component>-proxy: the ExternalName Service in front of the interceptor
REFERENCE_GRANT_API_VERSION = "gateway.networking.k8s.io/v1beta1"
KIND_REFERENCE_GRANT = "ReferenceGrant"

# Go field order of PredictorSpec.GetImplementations (not the struct order).
PREDICTOR_IMPLEMENTATIONS = (
    "xgboost",
    "pytorch",
    "triton",
    "sklearn",
    "tensorflow",
    "onnx",
    "pmml",
    "lightgbm",
    "paddle",
    "huggingface",
    "model",
)

# The first line of what ``render --output-dir`` writes: a directory so marked is output, never read as input.
OUTPUT_DIR_MARKER = "# Generated by kserve-compile"
