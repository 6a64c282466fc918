"""Typed KServe resources: InferenceService (v1beta1), ServingRuntime / ClusterServingRuntime (v1alpha1).

KServe's own fields are modelled; Kubernetes core sub-objects (containers, volumes, affinity, resources …) stay plain
data. A spec that inlines a PodSpec or a Container keeps those fields as validated *extras*: a name that is neither a
KServe field nor a Kubernetes PodSpec/Container field is rejected, as the API server's strict field validation would.
Field names follow the Go JSON tags (``alias_generator=to_camel``). Annotations are not postponed (no ``from __future__
import annotations``): pydantic would evaluate each from its string at import, ~3 ms of every run.
"""

from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ..kube.shapes import CONTAINER, POD_SPEC, check

POD_SPEC_FIELDS = frozenset(
    """activeDeadlineSeconds affinity automountServiceAccountToken containers dnsConfig dnsPolicy enableServiceLinks
    ephemeralContainers hostAliases hostIPC hostNetwork hostPID hostUsers hostname imagePullSecrets initContainers
    nodeName nodeSelector os overhead preemptionPolicy priority priorityClassName readinessGates resourceClaims
    resources restartPolicy runtimeClassName schedulerName schedulingGates securityContext serviceAccount
    serviceAccountName setHostnameAsFQDN shareProcessNamespace subdomain terminationGracePeriodSeconds tolerations
    topologySpreadConstraints volumes""".split()
)
CONTAINER_FIELDS = frozenset(
    """args command env envFrom image imagePullPolicy lifecycle livenessProbe name ports readinessProbe resizePolicy
    resources restartPolicy securityContext startupProbe stdin stdinOnce terminationMessagePath
    terminationMessagePolicy tty volumeDevices volumeMounts workingDir""".split()
)
NO_EXTRAS: frozenset[str] = frozenset()


class Spec(BaseModel):
    """A KServe struct. ``K8S_FIELDS`` names the Kubernetes fields it inlines (kept as data in ``k8s``)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", strict=True, frozen=True, defer_build=True
    )
    K8S_FIELDS: ClassVar[frozenset[str]] = NO_EXTRAS

    @model_validator(mode="after")
    def _only_known_extras(self) -> "Spec":
        extras = self.model_extra or {}
        unknown = [k for k in extras if k not in self.K8S_FIELDS]
        if unknown:
            raise ValueError(f'unknown field "{unknown[0]}"')
        if extras:
            shape = CONTAINER if self.K8S_FIELDS is CONTAINER_FIELDS else POD_SPEC
            problem = check(extras, shape, "")
            if problem:
                raise ValueError(problem.lstrip("."))
        return self

    @property
    def k8s(self) -> dict[str, Any]:
        """The inlined Kubernetes fields exactly as written (PodSpec or Container fields)."""
        return dict(self.model_extra or {})


class ObjectMeta(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", strict=True, frozen=True, defer_build=True)

    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    generation: int = 0
    creation_timestamp: str | None = Field(None, alias="creationTimestamp")

    @model_validator(mode="before")
    @classmethod
    def _null_maps_are_empty(cls, data: Any) -> Any:
        """``labels:`` with no value is null in YAML; the API server treats it as absent."""
        if isinstance(data, dict) and any(data.get(k, {}) is None for k in ("labels", "annotations")):
            data = {**data, **{k: {} for k in ("labels", "annotations") if data.get(k, {}) is None}}
        return data


# --- InferenceService --------------------------------------------------------------------------------------------


class ModelFormat(Spec):
    name: str
    version: str | None = None


class StorageSpec(Spec):
    path: str | None = None
    parameters: dict[str, str] | None = None
    key: str | None = None
    schema_path: str | None = None


class LoggerStorageSpec(StorageSpec):
    service_account_name: str | None = None


class LoggerSpec(Spec):
    url: str | None = None
    mode: str = ""
    metadata_headers: list[str] | None = None
    metadata_annotations: list[str] | None = None
    storage: LoggerStorageSpec | None = None
    marshaller_url: str | None = None
    batch_size: int | None = None
    batch_interval: str | None = None


class Batcher(Spec):
    max_batch_size: int | None = None
    max_latency: int | None = None
    timeout: int | None = None


class MetricQuantityTarget(Spec):
    type: str = ""
    value: str | int | None = None
    average_value: str | int | None = None
    average_utilization: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _string_or_integer(cls, data: Any) -> Any:
        """``MetricQuantity.UnmarshalJSON``: a string or an integer, never a float (KServe's wording)."""
        if isinstance(data, dict):
            for key in ("value", "averageValue"):
                item = data.get(key)
                if item is not None and (isinstance(item, bool) or not isinstance(item, (str, int))):
                    raise ValueError(f"{key}: value must be string or integer")
        return data


class ResourceMetricSource(Spec):
    name: str
    target: MetricQuantityTarget


class ExternalMetrics(Spec):
    backend: str = ""
    server_address: str = ""
    query: str = ""
    namespace: str = ""


class AuthenticationRef(Spec):
    name: str = ""


class ExtMetricAuthentication(Spec):
    auth_modes: str = ""
    authentication_ref: AuthenticationRef = Field(default_factory=AuthenticationRef)


class ExternalMetricSource(Spec):
    metric: ExternalMetrics
    target: MetricQuantityTarget
    authentication_ref: ExtMetricAuthentication | None = None


class PodMetrics(Spec):
    backend: str = ""
    server_address: str = ""
    metric_names: list[str] | None = None
    query: str = ""
    operation_over_time: str = ""


class PodMetricSource(Spec):
    metric: PodMetrics
    target: MetricQuantityTarget


class MetricsSpec(Spec):
    type: str
    resource: ResourceMetricSource | None = None
    external: ExternalMetricSource | None = None
    podmetric: PodMetricSource | None = Field(None, alias="podmetric")


class AutoScalingSpec(Spec):
    metrics: list[MetricsSpec] | None = None
    behavior: dict[str, Any] | None = None


class StorageUri(Spec):
    uri: str
    mount_path: str = "/mnt/models"


class ComponentExtension(Spec):
    """``ComponentExtensionSpec`` plus the inlined ``PodSpec`` shared by every component."""

    K8S_FIELDS: ClassVar[frozenset[str]] = POD_SPEC_FIELDS

    min_replicas: int | None = None
    max_replicas: int = 0
    scale_target: int | None = None
    scale_metric: str | None = None
    scale_metric_type: str | None = None
    auto_scaling: AutoScalingSpec | None = None
    container_concurrency: int | None = None
    timeout: int | None = None
    canary_traffic_percent: int | None = None
    logger: LoggerSpec | None = None
    batcher: Batcher | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    deployment_strategy: dict[str, Any] | None = None
    storage_uris: list[StorageUri] | None = None

    @property
    def containers(self) -> list[dict[str, Any]]:
        return list((self.model_extra or {}).get("containers") or [])  # not via k8s: no copy of every extra


class PredictorExtension(Spec):
    """``PredictorExtensionSpec``: storage and protocol plus an inlined Container."""

    K8S_FIELDS: ClassVar[frozenset[str]] = CONTAINER_FIELDS

    storage_uri: str | None = None
    runtime_version: str | None = None
    protocol_version: str | None = None
    storage: StorageSpec | None = None
    confidential: dict[str, Any] | None = None


class ModelSpec(PredictorExtension):
    model_format: ModelFormat
    runtime: str | None = None


class WorkerSpec(Spec):
    K8S_FIELDS: ClassVar[frozenset[str]] = POD_SPEC_FIELDS

    pipeline_parallel_size: int | None = None
    tensor_parallel_size: int | None = None


FRAMEWORKS = (
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)


class PredictorSpec(ComponentExtension):
    name: str | None = None
    sklearn: PredictorExtension | None = None
    xgboost: PredictorExtension | None = None
    tensorflow: PredictorExtension | None = None
    pytorch: PredictorExtension | None = None
    triton: PredictorExtension | None = None
    onnx: PredictorExtension | None = None
    huggingface: PredictorExtension | None = None
    pmml: PredictorExtension | None = None
    lightgbm: PredictorExtension | None = None
    paddle: PredictorExtension | None = None
    model: ModelSpec | None = None
    storage_container_name: str | None = None
    worker_spec: WorkerSpec | None = None


class TransformerSpec(ComponentExtension):
    pass


class ARTExplainerSpec(Spec):
    K8S_FIELDS: ClassVar[frozenset[str]] = CONTAINER_FIELDS

    type: str
    storage_uri: str | None = None
    runtime_version: str | None = None
    config: dict[str, str] | None = None
    storage: StorageSpec | None = None


class ExplainerSpec(ComponentExtension):
    art: ARTExplainerSpec | None = None


class CanarySpec(Spec):
    predictor: PredictorSpec
    traffic_percent: int


class InferenceServiceSpec(Spec):
    predictor: PredictorSpec
    transformer: TransformerSpec | None = None
    explainer: ExplainerSpec | None = None
    canary: list[CanarySpec] | None = None


class InferenceService(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, defer_build=True)

    api_version: Literal["serving.kserve.io/v1beta1"] = Field(alias="apiVersion")
    kind: Literal["InferenceService"]
    metadata: ObjectMeta
    spec: InferenceServiceSpec
    status: dict[str, Any] | None = None


# --- ServingRuntime / ClusterServingRuntime ----------------------------------------------------------------------


def model_type(name: str, version: str | None) -> str:
    """A model-type label as runtime selection matches them: ``mt:<name>``, or ``mt:<name>:<version>``."""
    return f"mt:{name}:{version}" if version else f"mt:{name}"


class SupportedModelFormat(Spec):
    name: str
    version: str | None = None
    auto_select: bool | None = None
    priority: int | None = None


RUNTIME_POD_FIELDS = frozenset(
    "containers volumes nodeSelector affinity tolerations imagePullSecrets hostIPC schedulerName resourceClaims".split()
)


class RuntimeWorkerSpec(Spec):
    K8S_FIELDS: ClassVar[frozenset[str]] = RUNTIME_POD_FIELDS

    pipeline_parallel_size: int | None = None
    tensor_parallel_size: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class ServingRuntimeSpec(Spec):
    K8S_FIELDS: ClassVar[frozenset[str]] = RUNTIME_POD_FIELDS

    supported_model_formats: list[SupportedModelFormat] | None = None
    multi_model: bool | None = None
    disabled: bool | None = None
    protocol_versions: list[str] | None = None
    worker_spec: RuntimeWorkerSpec | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    grpc_endpoint: str | None = None
    grpc_data_endpoint: str | None = None
    http_data_endpoint: str | None = None
    replicas: int | None = None
    storage_helper: dict[str, Any] | None = None
    built_in_adapter: dict[str, Any] | None = None

    @property
    def containers(self) -> list[dict[str, Any]]:
        return list((self.model_extra or {}).get("containers") or [])  # not via k8s: no copy of every extra

    @cached_property
    def model_type_labels(self) -> tuple[frozenset[str], frozenset[str]]:
        """The runtime's model-type labels (``mt:<name>``, ``mt:<name>:<version>``): (auto-selectable, all)."""
        auto: set[str] = set()
        every: set[str] = set()
        for fmt in self.supported_model_formats or []:
            labels = {model_type(fmt.name, None), model_type(fmt.name, fmt.version)}
            every |= labels
            if fmt.auto_select:
                auto |= labels
        return frozenset(auto), frozenset(every)


class ServingRuntime(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, defer_build=True)

    api_version: Literal["serving.kserve.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["ServingRuntime", "ClusterServingRuntime"]
    metadata: ObjectMeta
    spec: ServingRuntimeSpec

    @property
    def is_cluster(self) -> bool:
        return self.kind == "ClusterServingRuntime"
