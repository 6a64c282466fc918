"""Plan, step 2 — validate: KServe's InferenceService admission rules (``api/inference_service_validation.go``).

The isvc seen here is the *defaulted* one, as KServe's validating webhook sees the output of its mutating webhook.
Rules run in KServe's order and the first failure is raised as an :class:`InputError` (the webhook stops at the first
error too). Messages keep KServe's wording — including its quirks — so a user can search for them; the field path
names where the offending value sits in the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from .. import constants as C
from ..errors import InputError, go_quote
from ..inputs.config import KServeConfig
from ..inputs.serving_types import (
    FRAMEWORKS,
    ComponentExtension,
    ExplainerSpec,
    InferenceService,
    LoggerSpec,
    MetricQuantityTarget,
    PredictorSpec,
    StorageSpec,
    StorageUri,
)
from ..kube.paths import CommonParentPanic, find_common_parent_path
from ..kube.quantity import parse_quantity
from ..kube.validation import (
    blocked_env_problem,
    container_env,
    known_gpu_types,
    unknown_gpu_resource,
)

ISVC_NAME_PATTERN = "[a-z]([-a-z0-9]*[a-z0-9])?"
ISVC_NAME = re.compile(f"^{ISVC_NAME_PATTERN}$")

# ``ExactlyOneErrorFor`` lists every Go struct field of the component but the last (ComponentExtensionSpec, or
# StorageUris for transformer and explainer — so those two lists name ComponentExtensionSpec, not StorageUris).
PREDICTOR_FIELDS = "Name, SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, Model, StorageUris, StorageContainerName, WorkerSpec, PodSpec"
TRANSFORMER_FIELDS = "PodSpec, ComponentExtensionSpec"
EXPLAINER_FIELDS = "ART, PodSpec, ComponentExtensionSpec"
EXACTLY_ONE = {
    C.PREDICTOR: f"exactly one of [{PREDICTOR_FIELDS}] must be specified in PredictorSpec",
    C.TRANSFORMER: f"exactly one of [{TRANSFORMER_FIELDS}] must be specified in TransformerSpec",
    C.EXPLAINER: f"exactly one of [{EXPLAINER_FIELDS}] must be specified in ExplainerSpec",
}

ENV_PROTOCOL = "PROTOCOL"  # custom predictor protocol env (CustomSpecProtocolEnvVarKey)
KNATIVE_HPA_CLASS = "hpa.autoscaling.knative.dev"
LOGGER_MODES = ("all", "request", "response")
HPA_METRICS = ("cpu", "memory")
KPA_METRICS = ("concurrency", "rps")
STORAGE_SPEC_PREFIXES = ("s3://", "hdfs://", "webhdfs://")  # SupportedStorageSpecURIPrefixList
ONNX_EXT = ".onnx"
KBS_RESOURCE_ID = re.compile(r"^kbs:///[a-zA-Z0-9_.-]+/[a-zA-Z0-9_.-]+/[a-zA-Z0-9_.-]+$")
QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ONE_MI = 1 << 20

# Go field order of predictorFrameworkContainer / GetConfidentialSpecFromPredictor (model first for the former).
FRAMEWORK_CONTAINER_ORDER = ("model",) + FRAMEWORKS
CONFIDENTIAL_ORDER = FRAMEWORKS + ("model",)


def validate_isvc(
    isvc: InferenceService, mode: str, config: KServeConfig, *, source: InferenceService | None = None
) -> list[str]:
    """Raise the first admission error of the defaulted ``isvc``; return the webhook's warnings.

    ``mode`` is accepted for the caller's convenience only: like KServe, every mode-dependent rule reads the
    ``deploymentMode`` annotation (which defaulting has already written). ``source`` — the isvc as written, before
    defaulting — lets a rule on a legacy framework field (``sklearn:`` turned into ``model:``) name the field the user
    wrote, and rejects a component written with no implementation at all (KServe's defaulting adds none).
    """
    del mode
    paths = _Paths.of(source)
    _check_metric_quantities(isvc)
    _check_name(isvc)
    _check_autoscaler_class(isvc)
    _check_blocked_env(isvc, paths)
    _check_multi_node(isvc, config, paths)
    _check_collocation_storage_uri(isvc.spec.predictor)
    _check_standard_predictor_name(isvc.spec.predictor, paths)
    _check_storage_uris(isvc, paths)
    warnings = _check_confidential(isvc.spec.predictor, paths)
    annotations = isvc.metadata.annotations
    for kind, path, component in _components(isvc):
        implementations = _implementations(kind, path, component, paths)
        written = _source_component(source, kind)
        # KServe's defaulting never gives an implementation to a component written without one
        if len(implementations) != 1 or (written is not None and not _implementations(kind, path, written, paths)):
            raise InputError(EXACTLY_ONE[kind], path)
        _validate_implementation(implementations[0])
        _validate_extension(path, component)
        _validate_autoscaling(annotations, path, component)
    _check_canaries(isvc)
    return warnings


# --- paths ---------------------------------------------------------------------------------------------------------


class _Paths(NamedTuple):
    """Where the predictor's model spec sits in the input: ``model`` or the legacy framework field it came from."""

    model: str = "spec.predictor.model"

    @classmethod
    def of(cls, source: InferenceService | None) -> _Paths:
        if source is not None:
            for field in FRAMEWORKS:
                if getattr(source.spec.predictor, field) is not None:
                    return cls(f"spec.predictor.{field}")
        return cls()


def _source_component(source: InferenceService | None, kind: str) -> ComponentExtension | None:
    if source is None:
        return None
    return source.spec.predictor if kind == C.PREDICTOR else getattr(source.spec, kind)


def _components(isvc: InferenceService) -> list[tuple[str, str, ComponentExtension]]:
    out: list[tuple[str, str, ComponentExtension]] = [(C.PREDICTOR, "spec.predictor", isvc.spec.predictor)]
    if isvc.spec.transformer is not None:
        out.append((C.TRANSFORMER, "spec.transformer", isvc.spec.transformer))
    if isvc.spec.explainer is not None:
        out.append((C.EXPLAINER, "spec.explainer", isvc.spec.explainer))
    return out


def _env_index(container: Mapping[str, Any], name: str) -> int | None:
    for index, env in enumerate(container_env(container)):
        if env.get("name") == name:
            return index
    return None


# --- implementations (``GetImplementations``) ----------------------------------------------------------------------


class _Impl(NamedTuple):
    """One implementation of a component: a framework/model spec, the ART explainer, or the custom containers."""

    kind: str  # "model", a framework name, "art", or "custom"
    component: str  # predictor | transformer | explainer
    path: str
    spec: Any  # the PredictorExtension / ARTExplainerSpec, or the component itself for "custom"

    def storage_uri(self) -> str | None:
        """``GetStorageUri``."""
        if self.kind == "art":
            return self.spec.storage_uri or None
        if self.kind != "custom":
            return self.spec.storage_uri
        containers = self.spec.containers
        if self.component == C.PREDICTOR:
            chosen = next((c for c in containers if c.get("name") == C.CONTAINER_KSERVE), None)
        else:
            chosen = containers[0] if containers else None
        if chosen is None:
            return None
        for env in container_env(chosen):
            if env.get("name") == C.ENV_STORAGE_URI:
                return str(env.get("value", ""))
        return None


def _implementations(kind: str, path: str, component: ComponentExtension, paths: _Paths) -> list[_Impl]:
    out: list[_Impl] = []
    containers = component.containers
    if kind == C.PREDICTOR:
        assert isinstance(component, PredictorSpec)
        for field in C.PREDICTOR_IMPLEMENTATIONS:
            spec = getattr(component, field)
            if spec is not None:
                where = paths.model if field == "model" and path == "spec.predictor" else f"{path}.{field}"
                out.append(_Impl(field, kind, where, spec))
        if containers:
            out += [_Impl("custom", kind, path, component) for c in containers if c.get("name") == C.CONTAINER_KSERVE]
            if not out:
                out.append(_Impl("custom", kind, path, component))
        return out
    if kind == C.EXPLAINER and isinstance(component, ExplainerSpec) and component.art is not None:
        out.append(_Impl("art", kind, f"{path}.art", component.art))
    if containers:
        out.append(_Impl("custom", kind, path, component))
    return out


# --- decode-time: MetricQuantity --------------------------------------------------------------------------------------


def _check_metric_quantities(isvc: InferenceService) -> None:
    """``MetricQuantity.UnmarshalJSON``: a string must parse as a quantity (floats never get this far: the typed
    model accepts only strings and integers)."""
    targets = [(p, c) for _, p, c in _components(isvc)]
    targets += [(f"spec.canary[{i}].predictor", c.predictor) for i, c in enumerate(isvc.spec.canary or [])]
    for path, component in targets:
        for where, target in _metric_targets(path, component):
            for field, value in (("value", target.value), ("averageValue", target.average_value)):
                if isinstance(value, str):
                    try:
                        parse_quantity(value)
                    except ValueError:
                        raise InputError(
                            f"failed to parse quantity {go_quote(value)}: {QUANTITY_FORMAT}", f"{where}.{field}"
                        ) from None


def _metric_targets(path: str, component: ComponentExtension) -> Iterator[tuple[str, MetricQuantityTarget]]:
    if component.auto_scaling is None:
        return
    for index, metric in enumerate(component.auto_scaling.metrics or []):
        base = f"{path}.autoScaling.metrics[{index}]"
        for field, source in (
            ("resource", metric.resource),
            ("external", metric.external),
            ("podmetric", metric.podmetric),
        ):
            if source is not None:
                yield f"{base}.{field}.target", source.target


# --- the webhook's checks, in its order ---------------------------------------------------------------------------


def _check_name(isvc: InferenceService) -> None:
    name = isvc.metadata.name
    if not ISVC_NAME.match(name):
        raise InputError(
            f'the InferenceService "{name}" is invalid: a InferenceService name must consist of lower case alphanumeric '
            'characters or \'-\', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used '
            f"for validation is '{ISVC_NAME_PATTERN}')",
            "metadata.name",
        )


def _check_autoscaler_class(isvc: InferenceService) -> None:
    value = isvc.metadata.annotations.get(C.ANN_AUTOSCALER_CLASS)
    if value is not None and value not in C.AUTOSCALER_CLASSES:
        raise InputError(
            f"[{value}] is not a supported autoscaler class type", f"metadata.annotations[{C.ANN_AUTOSCALER_CLASS}]"
        )


def _check_blocked_env(isvc: InferenceService, paths: _Paths) -> None:
    """``validateBlockedEnvVars``: every container an isvc can define, in KServe's order."""
    spec = isvc.spec
    predictor = spec.predictor
    # (path of the list — or of the single container —, containers, is a single inlined container)
    groups: list[tuple[str, Sequence[Mapping[str, Any]], bool]] = [
        ("spec.predictor.containers", predictor.containers, False),
        ("spec.predictor.initContainers", list(predictor.k8s.get("initContainers") or []), False),
    ]
    field = next((f for f in FRAMEWORK_CONTAINER_ORDER if getattr(predictor, f) is not None), None)
    if field is not None:
        groups.append(
            (paths.model if field == "model" else f"spec.predictor.{field}", [getattr(predictor, field).k8s], True)
        )
    if predictor.worker_spec is not None:
        worker = predictor.worker_spec.k8s
        groups.append(("spec.predictor.workerSpec.containers", list(worker.get("containers") or []), False))
        groups.append(("spec.predictor.workerSpec.initContainers", list(worker.get("initContainers") or []), False))
    for kind in (C.TRANSFORMER, C.EXPLAINER):
        component = getattr(spec, kind)
        if component is None:
            continue
        groups.append((f"spec.{kind}.containers", component.containers, False))
        groups.append((f"spec.{kind}.initContainers", list(component.k8s.get("initContainers") or []), False))
        art = getattr(component, "art", None)
        if art is not None:
            container = dict(art.k8s)
            if not component.containers:  # ARTExplainerSpec.Default (run when ART is the only implementation) names it
                container["name"] = C.CONTAINER_KSERVE
            groups.append((f"spec.{kind}.art", [container], True))
    for base, containers, single in groups:
        problem = blocked_env_problem(containers, base, single=single)
        if problem:
            message, path = problem
            raise InputError(f'the InferenceService "{isvc.metadata.name}" is invalid: {message}', path)


def _check_multi_node(isvc: InferenceService, config: KServeConfig, paths: _Paths) -> None:
    """``validateMultiNodeVariables`` (only with ``predictor.workerSpec``)."""
    predictor = isvc.spec.predictor
    worker = predictor.worker_spec
    if worker is None:
        return
    name = go_quote(isvc.metadata.name)
    annotations = isvc.metadata.annotations
    gpu_path = f"metadata.annotations[{C.ANN_GPU_RESOURCE_TYPES}]"
    worker_containers = list(worker.k8s.get("containers") or [])
    if len(worker_containers) > 1:
        raise InputError(
            f"the InferenceService {name} is invalid: setting multiple containers in workerSpec is not allowed",
            "spec.predictor.workerSpec.containers",
        )
    model = predictor.model
    if model is not None:
        container = model.k8s
        for env_name in (C.ENV_PIPELINE_PARALLEL_SIZE, C.ENV_TENSOR_PARALLEL_SIZE):
            index = _env_index(container, env_name)
            if index is not None:
                raise InputError(
                    f"the InferenceService {name} is invalid: setting {env_name} in environment variables is not allowed",
                    f"{paths.model}.env[{index}]",
                )
        gpu_types = known_gpu_types(annotations, config.gpu_resource_types)
        if isinstance(gpu_types, str):
            raise InputError(gpu_types, gpu_path)
        unknown = unknown_gpu_resource(container.get("resources"), gpu_types)
        if unknown:
            raise InputError(_unknown_gpu_message(name), f"{paths.model}.resources.{unknown}")
        if model.storage_uri is None:
            raise InputError(
                f"the InferenceService {name} is invalid: StorageURI must be set for multinode enabled", paths.model
            )
        protocol = model.storage_uri.split("://")[0]
        if protocol not in ("pvc", "oci"):
            raise InputError(
                f"the InferenceService {name} is invalid: Multinode only supports 'pvc' and 'oci' Storage Protocol({protocol})",
                f"{paths.model}.storageUri",
            )
        autoscaler = annotations.get(C.ANN_AUTOSCALER_CLASS, "")
        if autoscaler != C.AUTOSCALER_NONE:
            raise InputError(
                f"the InferenceService {name} is invalid: Multinode only supports 'none' autoscaler({autoscaler})",
                f"metadata.annotations[{C.ANN_AUTOSCALER_CLASS}]",
            )
    for field, label, value in (
        ("pipelineParallelSize", "PipelineParallelSize", worker.pipeline_parallel_size),
        ("tensorParallelSize", "TensorParallelSize", worker.tensor_parallel_size),
    ):
        if value is not None and value < 1:
            raise InputError(
                f"the InferenceService {name} is invalid: WorkerSpec.{label} cannot be less than 1({value})",
                f"spec.predictor.workerSpec.{field}",
            )
    for index, container in enumerate(worker_containers):
        gpu_types = known_gpu_types(annotations, config.gpu_resource_types)
        if isinstance(gpu_types, str):
            raise InputError(gpu_types, gpu_path)
        unknown = unknown_gpu_resource(container.get("resources"), gpu_types)
        if unknown:
            raise InputError(
                _unknown_gpu_message(name), f"spec.predictor.workerSpec.containers[{index}].resources.{unknown}"
            )


def _unknown_gpu_message(quoted_name: str) -> str:
    return (
        f"the InferenceService {quoted_name} is invalid: Unknown GPU resource type. "
        f"Set '{C.ANN_GPU_RESOURCE_TYPES}' annotation to use custom gpu resource type"
    )


def _check_collocation_storage_uri(predictor: PredictorSpec) -> None:
    for index, container in enumerate(predictor.containers):
        if container.get("name") == C.CONTAINER_TRANSFORMER:
            env_index = _env_index(container, C.ENV_STORAGE_URI)
            if env_index is not None:
                raise InputError(
                    "storage uri should not be specified in transformer container",
                    f"spec.predictor.containers[{index}].env[{env_index}]",
                )
            return


def _check_standard_predictor_name(predictor: PredictorSpec, paths: _Paths) -> None:
    """``validatePredictor``: a framework or model container may not carry a ``name``."""
    for field in FRAMEWORKS + ("model",):
        ext = getattr(predictor, field)
        if ext is not None and ext.k8s.get("name"):
            where = paths.model if field == "model" else f"spec.predictor.{field}"
            raise InputError("the 'name' field is not allowed in standard predictor", f"{where}.name")


def _check_storage_uris(isvc: InferenceService, paths: _Paths) -> None:
    """``validateMultipleStorageURIs``: transformer, explainer, then predictor."""
    ordered = [c for c in _components(isvc) if c[0] != C.PREDICTOR] + [
        c for c in _components(isvc) if c[0] == C.PREDICTOR
    ]
    for kind, path, component in ordered:
        implementations = _implementations(kind, path, component, paths)
        storage_uri = implementations[0].storage_uri() if implementations else None
        if storage_uri is not None and component.storage_uris is not None:
            raise InputError("Setting both StorageURI and StorageURIs is not supported.", f"{path}.storageUris")
        storage_uris_problem(component.storage_uris or [], f"{path}.storageUris")


def storage_uris_problem(entries: Sequence[StorageUri], path: str) -> None:
    """``validateMultipleStorageURIsSpec``."""
    plain: list[str] = []
    plain_index: dict[str, int] = {}
    pvc: list[str] = []
    for index, entry in enumerate(entries):
        where = f"{path}[{index}]"
        if entry.uri == "":
            raise InputError("storage URI cannot be empty", f"{where}.uri")
        mount = entry.mount_path
        if mount == "/":
            raise InputError("storage path cannot be empty", f"{where}.mountPath")
        if not mount.startswith("/"):
            raise InputError(f"storage path must be absolute: {mount}", f"{where}.mountPath")
        if ".." in mount:
            raise InputError(f"storage path cannot contain '..' for security reasons: {mount}", f"{where}.mountPath")
        if entry.uri.startswith("pvc://"):
            pvc.append(mount)
        else:
            plain.append(mount)
            plain_index.setdefault(mount, index)
    # KServe returns here when at most one non-PVC path exists — before its PVC uniqueness check.
    if len(plain) <= 1:
        return
    if len(pvc) != len(set(pvc)):
        raise InputError("PVC storage paths must be unique", path)
    try:
        parent = find_common_parent_path(plain)
    except CommonParentPanic as panic:  # KServe's webhook panics here (recovered, the request denied)
        where = f"{path}[{plain_index[panic.path]}].mountPath"
        raise InputError(f"storage path {panic.path} has no directory components: {panic}", where) from None
    if parent == "/":
        raise InputError(
            f"storage paths must have a common parent directory. Current paths: [{' '.join(plain)}] have no common parent beyond root",
            path,
        )


def _check_confidential(predictor: PredictorSpec, paths: _Paths) -> list[str]:
    """``validateConfidential``: the predictor's confidential spec needs a storageUri; a resourceId must be a KBS id."""
    field = next((f for f in CONFIDENTIAL_ORDER if getattr(predictor, f) is not None), None)
    if field is None:
        return []
    confidential = getattr(predictor, field).confidential or {}
    if confidential.get("enabled") is not True:
        return []
    where = paths.model if field == "model" else f"spec.predictor.{field}"
    implementations = _implementations(C.PREDICTOR, "spec.predictor", predictor, paths)
    uri = implementations[0].storage_uri() if implementations else None
    if not uri:
        raise InputError("confidential model serving requires storageUri to be set", f"{where}.confidential")
    warnings = []
    if uri.startswith("oci://"):
        warnings.append(
            "confidential has no effect with OCI URIs; OCI image decryption is handled by the container runtime via runtimeClassName"
        )
    if uri.startswith("pvc://"):
        warnings.append(
            "confidential has no effect with PVC URIs; the storage-initializer is not injected for PVC volumes"
        )
    resource_id = confidential.get("resourceId")
    if isinstance(resource_id, str) and resource_id and not KBS_RESOURCE_ID.match(resource_id):
        # KServe reports the path relative to spec.predictor whichever implementation holds the spec
        raise InputError(
            f"spec.predictor.confidential.resourceId: Invalid value: {go_quote(resource_id)}: must be in the format kbs:///<repo>/<type>/<tag>",
            f"{where}.confidential.resourceId",
        )
    return warnings


# --- per implementation and per component --------------------------------------------------------------------------


def _validate_implementation(impl: _Impl) -> None:
    """``ComponentImplementation.Validate``."""
    if impl.kind == "custom":
        if impl.component == C.PREDICTOR:
            _validate_custom_protocol(impl)
        return
    if impl.kind == "art":
        _validate_storage_spec(impl.spec.storage, impl.storage_uri(), impl.path)
        return
    if impl.kind in ("tensorflow", "pytorch"):
        _validate_framework_gpu(impl)
    if impl.kind == "onnx" and impl.spec.storage_uri is not None:
        suffix = _go_ext(impl.spec.storage_uri)
        if suffix not in (ONNX_EXT, ""):
            raise InputError(
                f"expected storageUri file extension: '{ONNX_EXT}' but got '{suffix}'", f"{impl.path}.storageUri"
            )
    if impl.kind in ("tensorflow", "pytorch", "onnx", "pmml", "huggingface"):
        _validate_storage_spec(impl.spec.storage, impl.spec.storage_uri, impl.path)


def _go_ext(uri: str) -> str:
    """Go's ``path.Ext``: the suffix from the final dot of the last element, or ""."""
    for index in range(len(uri) - 1, -1, -1):
        if uri[index] == "/":
            return ""
        if uri[index] == ".":
            return uri[index:]
    return ""


def _validate_custom_protocol(impl: _Impl) -> None:
    containers = impl.spec.containers
    first = containers[0] if containers else {}
    for index, env in enumerate(container_env(first)):
        if env.get("name") == ENV_PROTOCOL:
            value = str(env.get("value", ""))
            if value in (C.PROTOCOL_V1, C.PROTOCOL_V2):
                return
            # KServe passes the format arguments the other way round; its message reads exactly like this.
            raise InputError(
                f"invalid protocol {C.PROTOCOL_V1}, {C.PROTOCOL_V2}. Must be one of [{value}]",
                f"{impl.path}.containers[0].env[{index}].value",
            )


# ``validateGPU`` messages of TFServingSpec and TorchServeSpec (KServe's PyTorch texts end with ". ").
FRAMEWORK_GPU_ERRORS = {
    "tensorflow": (
        "Tensorflow RuntimeVersion is not GPU enabled but GPU resources are requested",
        "Tensorflow RuntimeVersion is GPU enabled but GPU resources are not requested",
    ),
    "pytorch": (
        "PyTorch RuntimeVersion is not GPU enabled but GPU resources are requested. ",
        "PyTorch RuntimeVersion is GPU enabled but GPU resources are not requested. ",
    ),
}


def _validate_framework_gpu(impl: _Impl) -> None:
    """``validateGPU``: a runtime version's ``-gpu`` suffix must match whether GPU limits are set."""
    version = impl.spec.runtime_version
    if version is None:
        return
    limits = (impl.spec.k8s.get("resources") or {}).get("limits") or {}
    gpu = C.NVIDIA_GPU_RESOURCE in limits or any(str(k).startswith(C.NVIDIA_MIG_PREFIX) for k in limits)
    not_gpu_version, gpu_version = FRAMEWORK_GPU_ERRORS[impl.kind]
    if gpu and "-gpu" not in version:
        raise InputError(not_gpu_version, f"{impl.path}.runtimeVersion")
    if not gpu and "-gpu" in version:
        raise InputError(gpu_version, f"{impl.path}.runtimeVersion")


def _validate_storage_spec(storage: StorageSpec | None, storage_uri: str | None, path: str) -> None:
    """``validateStorageSpec``: with a ``storage`` spec, the URI (or ``parameters.type``) must be s3/hdfs/webhdfs."""
    if storage is None:
        return
    supported = ", ".join(STORAGE_SPEC_PREFIXES)
    if storage_uri is not None:
        if storage_uri.startswith(STORAGE_SPEC_PREFIXES):
            return
        raise InputError(
            f"storageUri, must be one of: [{supported}] or match https://{{}}.blob.core.windows.net/{{}}/{{}} or be an absolute "
            f"or relative local path. StorageUri [{storage_uri}] is not supported",
            f"{path}.storageUri",
        )
    kind = (storage.parameters or {}).get("type")
    if kind is not None and not f"{kind}://".startswith(STORAGE_SPEC_PREFIXES):
        raise InputError(
            f"storage.spec.type, must be one of: [{supported}]. storage.spec.type [{kind}] is not supported",
            f"{path}.storage.parameters[type]",
        )


def _validate_extension(path: str, ext: ComponentExtension) -> None:
    """``ComponentExtensionSpec.Validate``: containerConcurrency, replicas, logger."""
    if ext.container_concurrency is not None and ext.container_concurrency < 0:
        raise InputError("parallelism cannot be less than 0", f"{path}.containerConcurrency")
    min_replicas = ext.min_replicas if ext.min_replicas is not None else C.DEFAULT_MIN_REPLICAS
    if min_replicas < 0:
        raise InputError("'MinReplicas' cannot be less than 0", f"{path}.minReplicas")
    if ext.max_replicas < 0:
        raise InputError("'MaxReplicas' cannot be less than 0", f"{path}.maxReplicas")
    if min_replicas > ext.max_replicas and ext.max_replicas != 0:
        raise InputError("'MinReplicas' cannot be greater than MaxReplicas", f"{path}.minReplicas")
    _validate_logger(path, ext.logger)


def _validate_logger(path: str, logger: LoggerSpec | None) -> None:
    if logger is None:
        return
    if logger.mode not in LOGGER_MODES:
        raise InputError("invalid logger type", f"{path}.logger.mode")
    storage = logger.storage
    if storage is not None and (storage.path is None or storage.parameters is None or storage.key is None):
        raise InputError("invalid logger storage configuration", f"{path}.logger.storage")


# --- autoscaling ---------------------------------------------------------------------------------------------------


def _validate_autoscaling(annotations: Mapping[str, str], path: str, ext: ComponentExtension) -> None:
    """``validateAutoScalingCompExtension``: which rules apply depends only on the annotations."""
    if annotations.get(C.ANN_DEPLOYMENT_MODE) == C.MODE_STANDARD:
        autoscaler = annotations.get(C.ANN_AUTOSCALER_CLASS)
        if autoscaler == C.AUTOSCALER_HPA:
            _validate_hpa(path, ext)
        elif autoscaler == C.AUTOSCALER_KEDA:
            _validate_keda(path, ext)
        return
    if annotations.get(C.ANN_KNATIVE_CLASS) == KNATIVE_HPA_CLASS:
        _validate_hpa(path, ext)
    else:
        _validate_kpa(path, ext)


def _validate_hpa(path: str, ext: ComponentExtension) -> None:
    metric = ext.scale_metric if ext.scale_metric is not None else "cpu"
    if metric not in HPA_METRICS:
        raise InputError(f"[{metric}] is not a supported metric", f"{path}.scaleMetric")
    if ext.scale_target is not None:
        target = ext.scale_target
        # Go's ``metric == cpu && target < 1 || target > 100``: any target above 100 fails, memory included.
        if (metric == "cpu" and target < 1) or target > 100:
            raise InputError("the target utilization percentage should be a [1-100] integer", f"{path}.scaleTarget")
        if metric == "memory" and target < 1:
            raise InputError("the target memory should be greater than 1 MiB", f"{path}.scaleTarget")
    if ext.auto_scaling is not None:
        for index, spec in enumerate(ext.auto_scaling.metrics or []):
            where = f"{path}.autoScaling.metrics[{index}]"
            if spec.type != "Resource":
                raise InputError(
                    f"invalid HPA metric source type with value [{spec.type}],valid metric source types are Resource",
                    f"{where}.type",
                )
            if spec.resource is None:
                raise InputError("metricSpec.Resource is not set for resource metric source type", where)


def _validate_keda(path: str, ext: ComponentExtension) -> None:
    if ext.scale_metric is not None:
        raise InputError("ScaleMetric is not supported for KEDA", f"{path}.scaleMetric")
    if ext.auto_scaling is None:
        return
    for index, spec in enumerate(ext.auto_scaling.metrics or []):
        where = f"{path}.autoScaling.metrics[{index}]"
        if spec.type == "Resource":
            resource = spec.resource
            if resource is None:
                raise InputError("metricSpec.Resource is not set for resource metric source type", where)
            target = resource.target
            target_path = f"{where}.resource.target"
            if resource.name == "cpu":
                if target.type != "Utilization":
                    raise InputError("the cpu target value type should be Utilization", f"{target_path}.type")
            elif resource.name == "memory":
                if target.type not in ("AverageValue", "Utilization"):
                    raise InputError(
                        "the memory target value type should be AverageValue or Utilization", f"{target_path}.type"
                    )
                # an absent averageValue reads as the zero quantity
                if target.type == "AverageValue" and _quantity(target.average_value) < ONE_MI:
                    raise InputError(
                        "the memory target value should be greater than 1 MiB", f"{target_path}.averageValue"
                    )
            else:
                raise InputError(f"resource type {resource.name} is not supported", f"{where}.resource.name")
            _validate_scale_target(target, target_path)
        elif spec.type in ("External", "PodMetric"):
            field = "external" if spec.type == "External" else "podmetric"
            source = spec.external if spec.type == "External" else spec.podmetric
            if source is None:
                label = "External" if spec.type == "External" else "PodMetric"
                kind = "external" if spec.type == "External" else "pod"
                raise InputError(f"metricSpec.{label} is not set for {kind} metric source type", where)
            if source.metric.query == "":
                raise InputError("the query should not be empty", f"{where}.{field}.metric.query")
            if source.target.value is None:
                raise InputError("the target threshold value should not be empty", f"{where}.{field}.target.value")
            _validate_scale_target(source.target, f"{where}.{field}.target")
        else:
            raise InputError(
                f"unknown KEDA metric type with value [{spec.type}].Valid types are Resource,External,PodMetric",
                f"{where}.type",
            )


def _quantity(value: str | int | None) -> float:
    if value is None:
        return 0
    return float(parse_quantity(value))


def _validate_scale_target(target: MetricQuantityTarget, path: str) -> None:
    """``validateScaleTarget``."""
    if target.type == "Utilization":
        if target.average_utilization is None:
            raise InputError("the AverageUtilization type should be set", f"{path}.averageUtilization")
        if not 1 <= target.average_utilization <= 100:
            raise InputError(
                "the target utilization percentage should be a [1-100] integer", f"{path}.averageUtilization"
            )
    elif target.type == "AverageValue" and target.average_value is None:
        raise InputError("the AverageValue type should be set", f"{path}.averageValue")
    elif target.type == "Value" and target.value is None:
        raise InputError("the Value type should be set", f"{path}.value")


def _validate_kpa(path: str, ext: ComponentExtension) -> None:
    if ext.deployment_strategy is not None:
        raise InputError(
            "customizing deploymentStrategy is only supported for raw deployment mode", f"{path}.deploymentStrategy"
        )
    metric = ext.scale_metric if ext.scale_metric is not None else "concurrency"
    if metric not in KPA_METRICS:
        raise InputError(f"[{metric}] is not a supported metric", f"{path}.scaleMetric")
    if ext.scale_target is not None and metric == "rps" and ext.scale_target < 1:
        raise InputError("the target for rps should be greater than 1", f"{path}.scaleTarget")


# --- canary (spec.canary) ------------------------------------------------------------------------------------------


def _check_canaries(isvc: InferenceService) -> None:
    """``validateCanarySpecs``. Canary predictors are not defaulted by KServe, so they are checked as written."""
    canaries = isvc.spec.canary or []
    if not canaries:
        return
    if isvc.metadata.annotations.get(C.ANN_DEPLOYMENT_MODE) != C.MODE_STANDARD:
        raise InputError(f"canary is only supported in {C.MODE_STANDARD} deployment mode", "spec.canary")
    stable = isvc.spec.predictor
    stable_impls = _implementations(C.PREDICTOR, "spec.predictor", stable, _Paths())
    if (not stable_impls or stable_impls[0].storage_uri() is None) and stable.model is None:
        raise InputError(
            "canary requires a stable predictor with a model (multi-model serving is not supported with canary)",
            "spec.predictor",
        )
    names: set[str] = set()
    total = 0
    for index, canary in enumerate(canaries):
        path = f"spec.canary[{index}]"
        predictor = canary.predictor
        name = predictor.name or ""
        quoted = go_quote(name)
        if not name:
            raise InputError(f"canary[{index}] predictor.name is required", f"{path}.predictor")
        if name in names:
            raise InputError(f"canary predictor.name {quoted} is duplicated", f"{path}.predictor.name")
        names.add(name)
        if name == (stable.name or ""):
            raise InputError(
                f"canary predictor.name {quoted} conflicts with stable predictor name", f"{path}.predictor.name"
            )
        if not 0 <= canary.traffic_percent <= 100:
            raise InputError(
                f"canary {quoted} trafficPercent must be between 0 and 100, got {canary.traffic_percent}",
                f"{path}.trafficPercent",
            )
        total += canary.traffic_percent
        implementations = _implementations(C.PREDICTOR, f"{path}.predictor", predictor, _Paths())
        if len(implementations) != 1:
            raise InputError(f"canary {quoted} predictor: {EXACTLY_ONE[C.PREDICTOR]}", f"{path}.predictor")
        try:
            _validate_implementation(implementations[0])
            _validate_extension(f"{path}.predictor", predictor)
        except InputError as exc:
            raise InputError(f"canary {quoted} predictor: {exc.message}", exc.path) from None
        if predictor.worker_spec is not None:
            raise InputError(
                f"canary {quoted} must not set workerSpec (multi-node is not yet supported for canary)",
                f"{path}.predictor.workerSpec",
            )
        for field, value in (
            ("maxReplicas", predictor.max_replicas > 0 or None),
            ("scaleTarget", predictor.scale_target),
            ("scaleMetric", predictor.scale_metric),
            ("autoScaling", predictor.auto_scaling),
        ):
            if value is not None:
                raise InputError(
                    f"canary {quoted} must not set {field} (canary uses fixed replicas)", f"{path}.predictor.{field}"
                )
        if predictor.min_replicas is not None:
            stable_min = stable.min_replicas if stable.min_replicas is not None else C.DEFAULT_MIN_REPLICAS
            if predictor.min_replicas > stable_min:
                raise InputError(
                    f"canary {quoted} minReplicas ({predictor.min_replicas}) must not exceed stable predictor minReplicas ({stable_min})",
                    f"{path}.predictor.minReplicas",
                )
    if total > 100:
        raise InputError(f"sum of canary trafficPercent values ({total}) must be <= 100", "spec.canary")
