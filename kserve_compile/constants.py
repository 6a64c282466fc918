"""Every name KServe gives a label, annotation, port, path or container — defined once.

Values follow KServe's ``pkg/constants/constants.go`` (snapshot aaac4e294, 2026-08-21).
"""

from __future__ import annotations

# --- API groups, versions and kinds -----------------------------------------------------------
SERVING_GROUP = "serving.kserve.io"
ISVC_API_VERSION = "serving.kserve.io/v1beta1"
V1ALPHA1 = "serving.kserve.io/v1alpha1"
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
