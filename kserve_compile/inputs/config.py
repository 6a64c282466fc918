"""The ``inferenceservice-config`` ConfigMap, parsed the way KServe's controller parses it.

Each data key holds a JSON document read with Go's ``encoding/json``: unknown fields are ignored and field names
match case-insensitively. Some keys change behaviour by their mere presence (``inferenceService`` installs the
disallowed lists, a missing ``security`` key means ``automountServiceAccountToken: false``), so presence is kept.
Source: ``pkg/apis/serving/v1beta1/configmap.go``, ``pkg/types/config.go`` and the injectors' config structs.
``isvcCompile``, a key kserve-compile defines (KServe ignores it), is read by ``isvc_compile``.
"""

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .. import constants as C
from ..errors import CompileError, InputError
from ..kube.quantity import parse_quantity
from ..provenance import is_tracing
from ..provenance.sources import tag_config_json
from ..provenance.typed import retag_model
from .defaults import shipped_config_data
from .isvc_compile import IsvcCompileConfig, parse_isvc_compile
from .parse import Document


class GoJSON(BaseModel):
    """A struct decoded like Go's encoding/json: case-insensitive names, unknown fields ignored."""

    model_config = ConfigDict(populate_by_name=True, strict=True, frozen=True, extra="ignore", defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _fold_case(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        by_lower = {}
        for name, field in cls.model_fields.items():
            by_lower[(field.alias or name).lower()] = field.alias or name
        folded: dict[str, Any] = {}
        for key, value in data.items():
            target = by_lower.get(str(key).lower())
            if target is not None and target not in folded:
                folded[target] = value
        return folded


class ResourceConfig(GoJSON):
    cpu_limit: str = Field("", alias="cpuLimit")
    memory_limit: str = Field("", alias="memoryLimit")
    cpu_request: str = Field("", alias="cpuRequest")
    memory_request: str = Field("", alias="memoryRequest")

    def requirements(self) -> dict[str, dict[str, str]]:
        """``{limits: {cpu, memory}, requests: {cpu, memory}}`` with empty values left out."""
        out: dict[str, dict[str, str]] = {}
        for section, cpu, memory in (
            ("limits", self.cpu_limit, self.memory_limit),
            ("requests", self.cpu_request, self.memory_request),
        ):
            entries = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
            if entries:
                out[section] = entries
        return out


class RolloutSpec(GoJSON):
    max_surge: str = Field("", alias="maxSurge")
    max_unavailable: str = Field("", alias="maxUnavailable")


class DeploymentRolloutStrategy(GoJSON):
    default_rollout: RolloutSpec | None = Field(None, alias="defaultRollout")


class DeployConfig(GoJSON):
    default_deployment_mode: str = Field("", alias="defaultDeploymentMode")
    deployment_rollout_strategy: DeploymentRolloutStrategy | None = Field(None, alias="deploymentRolloutStrategy")


class IngressConfig(GoJSON):
    enable_gateway_api: bool = Field(False, alias="enableGatewayApi")
    kserve_ingress_gateway: str = Field("", alias="kserveIngressGateway")
    ingress_gateway: str = Field("", alias="ingressGateway")
    knative_local_gateway_service: str = Field("", alias="knativeLocalGatewayService")
    local_gateway: str = Field("", alias="localGateway")
    local_gateway_service: str = Field("", alias="localGatewayService")
    ingress_domain: str = Field("", alias="ingressDomain")
    ingress_class_name: str | None = Field(None, alias="ingressClassName")
    additional_ingress_domains: list[str] | None = Field(None, alias="additionalIngressDomains")
    domain_template: str = Field("", alias="domainTemplate")
    url_scheme: str = Field("", alias="urlScheme")
    disable_istio_virtual_host: bool = Field(False, alias="disableIstioVirtualHost")
    path_template: str = Field("", alias="pathTemplate")
    disable_ingress_creation: bool = Field(False, alias="disableIngressCreation")
    disable_httproute_timeout: bool = Field(False, alias="disableHTTPRouteTimeout")


class StorageInitializerConfig(GoJSON):
    image: str = ""
    cpu_request: str = Field("", alias="cpuRequest")
    cpu_limit: str = Field("", alias="cpuLimit")
    memory_request: str = Field("", alias="memoryRequest")
    memory_limit: str = Field("", alias="memoryLimit")
    cpu_modelcar: str = Field("", alias="cpuModelcar")
    memory_modelcar: str = Field("", alias="memoryModelcar")
    ca_bundle_config_map_name: str = Field("", alias="caBundleConfigMapName")
    ca_bundle_volume_mount_path: str = Field("", alias="caBundleVolumeMountPath")
    enable_modelcar: bool = Field(False, alias="enableModelcar")
    uid_modelcar: int | None = Field(None, alias="uidModelcar")
    enable_oci_model_support: bool = Field(False, alias="enableOciModelSupport")
    oci_model_mode: str = Field("", alias="ociModelMode")
    oci_insecure_registry: bool = Field(False, alias="ociInsecureRegistry")

    @property
    def oci_mode(self) -> str:
        """``ResolveOciModelMode``: explicit mode, else modelcar when enabled, else "" (OCI off)."""
        if self.oci_model_mode:
            return self.oci_model_mode
        return C.OCI_MODE_MODELCAR if (self.enable_modelcar or self.enable_oci_model_support) else ""


class S3Config(GoJSON):
    access_key_id_name: str = Field("", alias="s3AccessKeyIDName")
    secret_access_key_name: str = Field("", alias="s3SecretAccessKeyName")
    endpoint: str = Field("", alias="s3Endpoint")
    use_https: str = Field("", alias="s3UseHttps")
    region: str = Field("", alias="s3Region")
    verify_ssl: str = Field("", alias="s3VerifySSL")
    use_virtual_bucket: str = Field("", alias="s3UseVirtualBucket")
    use_accelerate: str = Field("", alias="s3UseAccelerate")
    use_anonymous_credential: str = Field("", alias="s3UseAnonymousCredential")
    ca_bundle_config_map: str = Field("", alias="s3CABundleConfigMap")
    ca_bundle: str = Field("", alias="s3CABundle")


class GCSConfig(GoJSON):
    credential_file_name: str = Field("", alias="gcsCredentialFileName")


class CredentialConfig(GoJSON):
    s3: S3Config = Field(default_factory=S3Config)
    gcs: GCSConfig = Field(default_factory=GCSConfig)
    storage_spec_secret_name: str = Field("", alias="storageSpecSecretName")
    storage_secret_name_annotation: str = Field("", alias="storageSecretNameAnnotation")


class AgentConfig(GoJSON):
    image: str = ""
    cpu_request: str = Field("", alias="cpuRequest")
    cpu_limit: str = Field("", alias="cpuLimit")
    memory_request: str = Field("", alias="memoryRequest")
    memory_limit: str = Field("", alias="memoryLimit")


class LoggerConfig(AgentConfig):
    default_url: str = Field("", alias="defaultUrl")
    ca_bundle: str = Field("", alias="caBundle")
    ca_cert_file: str = Field("", alias="caCertFile")
    tls_skip_verify: bool = Field(False, alias="tlsSkipVerify")
    storage: dict[str, Any] | None = None
    marshaller_url: str = Field("", alias="marshallerUrl")
    batch_size: int = Field(0, alias="batchSize")
    batch_interval: str = Field("", alias="batchInterval")


class BatcherConfig(AgentConfig):
    max_batch_size: str = Field("", alias="maxBatchSize")
    max_latency: str = Field("", alias="maxLatency")


class RouterConfig(AgentConfig):
    image_pull_policy: str = Field("", alias="imagePullPolicy")
    headers: dict[str, list[str]] | None = None
    image_pull_secrets: list[str] | None = Field(None, alias="imagePullSecrets")


class ExplainerImage(GoJSON):
    image: str = ""
    default_image_version: str = Field("", alias="defaultImageVersion")


class ExplainersConfig(GoJSON):
    art: ExplainerImage = Field(default_factory=ExplainerImage)


class InferenceServicesConfig(GoJSON):
    service_annotation_disallowed_list: list[str] | None = Field(None, alias="serviceAnnotationDisallowedList")
    service_label_disallowed_list: list[str] | None = Field(None, alias="serviceLabelDisallowedList")
    resource: ResourceConfig = Field(default_factory=ResourceConfig)


class SecurityConfig(GoJSON):
    auto_mount_service_account_token: bool = Field(False, alias="autoMountServiceAccountToken")


class ServiceConfig(GoJSON):
    service_cluster_ip_none: bool = Field(False, alias="serviceClusterIPNone")


class MetricsAggregatorConfig(GoJSON):
    enable_metric_aggregation: str = Field("", alias="enableMetricAggregation")
    enable_prometheus_scraping: str = Field("", alias="enablePrometheusScraping")


class OtelCollectorConfig(GoJSON):
    scrape_interval: str = Field("", alias="scrapeInterval")
    metric_receiver_endpoint: str = Field("", alias="metricReceiverEndpoint")
    metric_scaler_endpoint: str = Field("", alias="metricScalerEndpoint")
    resource: ResourceConfig = Field(default_factory=ResourceConfig)


class AutoscalerConfig(GoJSON):
    scale_up_stabilization_window_seconds: str = Field("", alias="scaleUpStabilizationWindowSeconds")
    scale_down_stabilization_window_seconds: str = Field("", alias="scaleDownStabilizationWindowSeconds")


class MultiNodeConfig(GoJSON):
    custom_gpu_resource_type_list: list[str] | None = Field(None, alias="customGPUResourceTypeList")


class LocalModelConfig(GoJSON):
    enabled: bool = False
    job_namespace: str = Field("", alias="jobNamespace")
    fs_group: int | None = Field(None, alias="fsGroup")
    job_ttl_seconds_after_finished: int | None = Field(None, alias="jobTTLSecondsAfterFinished")
    disable_volume_management: bool = Field(False, alias="disableVolumeManagement")


DEFAULT_GPU_RESOURCE_TYPES = (C.NVIDIA_GPU_RESOURCE, "amd.com/gpu", "intel.com/gpu", "habana.ai/gaudi")


class KServeConfig(BaseModel):
    """Everything the renderer reads from ``inferenceservice-config``, with KServe's defaulting applied."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    present_keys: frozenset[str]
    deploy: DeployConfig
    ingress: IngressConfig
    storage_initializer: StorageInitializerConfig
    credentials: CredentialConfig
    agent: AgentConfig
    logger: LoggerConfig
    batcher: BatcherConfig
    router: RouterConfig
    explainers: ExplainersConfig
    inference_service: InferenceServicesConfig
    security: SecurityConfig
    service: ServiceConfig
    metrics_aggregator: MetricsAggregatorConfig
    opentelemetry_collector: OtelCollectorConfig
    autoscaler: AutoscalerConfig
    multi_node: MultiNodeConfig
    local_model: LocalModelConfig
    isvc_compile: IsvcCompileConfig  # kserve-compile's own key (isvcCompile), not KServe's

    # data key → attribute, and the model that parses it
    KEYS: ClassVar[dict[str, tuple[str, type[GoJSON]]]] = {
        "deploy": ("deploy", DeployConfig),
        "ingress": ("ingress", IngressConfig),
        "storageInitializer": ("storage_initializer", StorageInitializerConfig),
        "credentials": ("credentials", CredentialConfig),
        "agent": ("agent", AgentConfig),
        "logger": ("logger", LoggerConfig),
        "batcher": ("batcher", BatcherConfig),
        "router": ("router", RouterConfig),
        "explainers": ("explainers", ExplainersConfig),
        "inferenceService": ("inference_service", InferenceServicesConfig),
        "security": ("security", SecurityConfig),
        "service": ("service", ServiceConfig),
        "metricsAggregator": ("metrics_aggregator", MetricsAggregatorConfig),
        "opentelemetryCollector": ("opentelemetry_collector", OtelCollectorConfig),
        "autoscaler": ("autoscaler", AutoscalerConfig),
        "multiNode": ("multi_node", MultiNodeConfig),
        "localModel": ("local_model", LocalModelConfig),
    }

    # --- derived facts (KServe computes these while loading) ---------------------------------------
    @property
    def annotation_disallowed(self) -> tuple[str, ...]:
        """Built-in list plus the user's — only when the ``inferenceService`` key exists (KServe quirk)."""
        if "inferenceService" not in self.present_keys:
            return ()
        return C.DEFAULT_ANNOTATION_DISALLOWED + tuple(self.inference_service.service_annotation_disallowed_list or ())

    @property
    def label_disallowed(self) -> tuple[str, ...]:
        if "inferenceService" not in self.present_keys:
            return ()
        return C.DEFAULT_LABEL_DISALLOWED + tuple(self.inference_service.service_label_disallowed_list or ())

    @property
    def gpu_resource_types(self) -> tuple[str, ...]:
        return tuple(self.multi_node.custom_gpu_resource_type_list or ()) + DEFAULT_GPU_RESOURCE_TYPES


_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def parse_config(data: dict[str, str] | None) -> KServeConfig:
    """Parse the ConfigMap's ``data``; ``InputError`` (path ``data.<key>``) with KServe's wording on bad values."""
    data = data or {}
    parsed: dict[str, Any] = {}
    for key, (attr, model) in KServeConfig.KEYS.items():
        raw = data.get(key)
        parsed[attr] = _parse_key(key, raw, model)
    present = frozenset(k for k in data if k in KServeConfig.KEYS)
    parsed["isvc_compile"] = parse_isvc_compile(data.get(C.ISVC_COMPILE_KEY))
    parsed["deploy"] = _check_deploy(parsed["deploy"], "deploy" in present)
    parsed["ingress"] = _default_ingress(parsed["ingress"], "ingress" in present)
    if "storageInitializer" in present:
        _check_storage_initializer(parsed["storage_initializer"])
    return KServeConfig(present_keys=present, **parsed)


def _parse_key(key: str, raw: Any, model: type[GoJSON]) -> GoJSON:
    if raw is None:
        return model()
    if not isinstance(raw, str):
        raise InputError(f"the value of key {key!r} must be a string holding JSON", f"data.{key}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"unable to parse {key} config json: {exc.msg} (line {exc.lineno} column {exc.colno})", f"data.{key}"
        ) from None
    if not isinstance(value, dict):
        raise InputError(f"unable to parse {key} config json: expected a JSON object", f"data.{key}")
    if is_tracing():
        value = tag_config_json(raw, key, value)
    try:
        parsed = model.model_validate(value)
        return retag_model(parsed, value) if is_tracing() else parsed
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"unable to parse {key} config json: {where}: {err['msg']}", f"data.{key}.{where}") from None


def _check_deploy(deploy: DeployConfig, present: bool) -> DeployConfig:
    if not present:
        return deploy
    mode = deploy.default_deployment_mode
    if not mode:
        raise InputError("invalid deploy config, defaultDeploymentMode is required", "data.deploy")
    mode = C.LEGACY_MODES.get(mode, mode)
    if mode not in (C.MODE_KNATIVE, C.MODE_STANDARD, C.MODE_MODELMESH):
        raise InputError(
            "invalid deployment mode. Supported modes are Knative, Standard and ModelMesh",
            "data.deploy.defaultDeploymentMode",
        )
    return deploy.model_copy(update={"default_deployment_mode": mode})


def _default_ingress(ingress: IngressConfig, present: bool) -> IngressConfig:
    update: dict[str, Any] = {}
    if present:
        if ingress.enable_gateway_api:
            _check_kserve_gateway(ingress.kserve_ingress_gateway)
        if not ingress.ingress_gateway:
            raise InputError("invalid ingress config - ingressGateway is required", "data.ingress.ingressGateway")
        if ingress.path_template:
            from ..gotemplate import GoTemplate  # local: only configs with a pathTemplate pay for it

            try:
                GoTemplate(ingress.path_template, name="path-template")
            except ValueError as exc:
                raise InputError(
                    f"invalid ingress config, unable to parse pathTemplate: {exc}", "data.ingress.pathTemplate"
                ) from None
            if not ingress.ingress_domain:
                raise InputError(
                    "invalid ingress config - ingressDomain is required if pathTemplate is given",
                    "data.ingress.ingressDomain",
                )
        if not ingress.knative_local_gateway_service:
            update["knative_local_gateway_service"] = ingress.local_gateway_service
    update.setdefault("domain_template", ingress.domain_template or "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}")
    update.setdefault("ingress_domain", ingress.ingress_domain or "example.com")
    update.setdefault("url_scheme", ingress.url_scheme or "http")
    return ingress.model_copy(update=update)


def _check_kserve_gateway(value: str) -> None:
    path = "data.ingress.kserveIngressGateway"
    if not value:
        raise InputError("invalid ingress config - kserveIngressGateway is required", path)
    parts = value.split("/")
    if len(parts) != 2:
        raise InputError(
            "invalid ingress config - kserveIngressGateway should be in the format <namespace>/<name>", path
        )
    if not _DNS1123_LABEL.match(parts[0]) or len(parts[0]) > 63:
        raise InputError("invalid ingress config - kserveIngressGateway gateway namespace is invalid", path)
    if not _DNS1123_LABEL.match(parts[1]) or len(parts[1]) > 63:
        raise InputError("invalid ingress config - kserveIngressGateway gateway name is invalid", path)


def _check_storage_initializer(cfg: StorageInitializerConfig) -> None:
    fields = {
        "memoryRequest": cfg.memory_request,
        "memoryLimit": cfg.memory_limit,
        "cpuRequest": cfg.cpu_request,
        "cpuLimit": cfg.cpu_limit,
    }
    if cfg.cpu_modelcar:
        fields["cpuModelcar"] = cfg.cpu_modelcar
    if cfg.memory_modelcar:
        fields["memoryModelcar"] = cfg.memory_modelcar
    for key, value in fields.items():
        try:
            parse_quantity(value)
        except ValueError as exc:
            raise InputError(
                f'failed to parse resource configuration for "storageInitializer".{key!r}: {exc}',
                f"data.storageInitializer.{key}",
            ) from None
    if cfg.oci_model_mode and cfg.oci_model_mode not in (C.OCI_MODE_MODELCAR, C.OCI_MODE_NATIVE, C.OCI_MODE_FETCH):
        raise InputError(
            f'invalid "storageInitializer".ociModelMode "{cfg.oci_model_mode}": must be one of "modelcar", "native", "fetch"',
            "data.storageInitializer.ociModelMode",
        )


def load_config(configmaps: Sequence[Document]) -> KServeConfig:
    """The run's config from its ``inferenceservice-config`` ConfigMaps (at most one), else KServe's shipped one."""
    if len(configmaps) > 1:
        raise CompileError(
            [
                d.problem(f"more than one {C.CONFIGMAP_NAME} ConfigMap in the inputs", "metadata.name")
                for d in configmaps[1:]
            ]
        )
    if not configmaps:
        return parse_config(shipped_config_data())
    doc = configmaps[0]
    data = doc.data.get("data") or {}
    if not isinstance(data, dict):
        raise CompileError([doc.problem("data must be a mapping of strings", "data")])
    try:
        return parse_config(data)
    except InputError as exc:
        raise CompileError([doc.problem(exc.message, exc.path)]) from None
