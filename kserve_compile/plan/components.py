"""Plan, step 5 — build each component: name, labels, annotations and pod spec, as KServe's component reconcilers do.

``components/predictor.go`` (buildPredictorResources, reconcileModel, buildPodSpec), ``transformer.go``,
``explainer.go`` and ``component.go`` (the internal annotations). The result is mode-independent; the Standard and
Knative builders turn it into workloads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .. import constants as C
from ..datacopy import clone
from ..errors import InputError
from ..gotemplate import GoTemplate, object_meta_data
from ..inputs.config import KServeConfig
from ..inputs.serving_types import ComponentExtension, InferenceService, ModelSpec, PredictorSpec, ServingRuntime
from ..kube.fields import filtered, set_env
from ..kube.merge import merge_containers, merge_pod_specs
from ..provenance import carry_over, is_tracing, overriding, with_origin_of
from .runtime_select import Selected, lowest_protocol, select_runtime
from .storage_uri import validate_storage_uri

SERVER_TYPE_BY_RUNTIME = {
    "kserve-mlserver": "mlserver",
    "kserve-torchserve": "torchserve",
    "kserve-tritonserver": "tritonserver",
    "kserve-tensorflow-serving": "tensorflow-serving",
    "kserve-huggingfaceserver": "huggingfaceserver",
    "kserve-vllmserver": "vllmserver",
}
MLSERVER_MODEL_CLASS = {
    "xgboost": "mlserver_xgboost.XGBoostModel",
    "lightgbm": "mlserver_lightgbm.LightGBMModel",
    "mlflow": "mlserver_mlflow.MLflowRuntime",
}
MLSERVER_DEFAULT_MODEL_CLASS = "mlserver_sklearn.SKLearnModel"
GPU_SUFFIX_SERVER_TYPES = ("tensorflow-serving", "torchserve", "huggingfaceserver")
_IMAGE_TAG = re.compile(r"(:([\w.\-_]*))$")


def component_metadata(
    isvc_name: str,
    kind: str,
    spec: ComponentExtension,
    config: KServeConfig,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    runtime_labels: Mapping[str, str] | None = None,
    runtime_annotations: Mapping[str, str] | None = None,
    extra_labels: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """The labels and annotations of a component's objects, layered as KServe layers them: the runtime's, then the
    isvc's, then the component spec's (its annotations without the disallowed keys), then KServe's own labels."""
    merged_labels = {
        **(runtime_labels or {}),
        **labels,
        **(spec.labels or {}),
        **(extra_labels or {}),
        C.LABEL_ISVC: isvc_name,
        C.LABEL_COMPONENT: kind,
    }
    merged_annotations = {
        **(runtime_annotations or {}),
        **annotations,
        **filtered(spec.annotations, config.annotation_disallowed),
    }
    return merged_labels, merged_annotations


@dataclass
class Component:
    """One component of an isvc, ready to become a Deployment + Service + autoscaler (or a Knative Service)."""

    kind: str  # predictor | transformer | explainer
    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    pod_spec: dict[str, Any]
    spec: ComponentExtension
    runtime: Selected | None = None
    # The ``app`` selector label; KServe derives it from the name except for the multi-node worker Deployment,
    # whose name ignores ``predictor.name`` while its label does not.
    app: str | None = None

    @property
    def app_label(self) -> str:
        return self.app or C.app_label(self.name)


def add_logger_annotations(spec: ComponentExtension, annotations: dict[str, str]) -> None:
    logger = spec.logger
    if logger is None:
        return
    annotations[C.ANN_LOGGER] = "true"
    if logger.url is not None:
        annotations[C.ANN_LOGGER_SINK_URL] = logger.url
    annotations[C.ANN_LOGGER_MODE] = logger.mode
    if logger.metadata_headers is not None:
        annotations[C.ANN_LOGGER_METADATA_HEADERS] = ",".join(logger.metadata_headers)
    if logger.metadata_annotations is not None:
        annotations[C.ANN_LOGGER_METADATA_ANNOTATIONS] = ",".join(logger.metadata_annotations)


def add_batcher_annotations(spec: ComponentExtension, annotations: dict[str, str]) -> None:
    batcher = spec.batcher
    if batcher is None:
        return
    annotations[C.ANN_BATCHER] = "true"
    if batcher.max_batch_size is not None:
        annotations[C.ANN_BATCHER_MAX_BATCHSIZE] = str(batcher.max_batch_size)
    if batcher.max_latency is not None:
        annotations[C.ANN_BATCHER_MAX_LATENCY] = str(batcher.max_latency)


def is_multi_model(predictor: PredictorSpec) -> bool:
    """``IsMMSPredictor``: a model predictor with no storage at all (huggingface excluded); custom: env flag."""
    if predictor.model is not None:
        m = predictor.model
        if m.model_format.name == "huggingface":
            return False
        return m.storage_uri is None and m.storage is None and not predictor.storage_uris
    if predictor.containers:
        env = predictor.containers[0].get("env") or []
        return any(e.get("name") == "MULTI_MODEL_SERVER" and e.get("value") == "true" for e in env)
    return False


def _env_value(containers: Sequence[Mapping[str, Any]], container: str, name: str) -> str | None:
    for c in containers:
        if c.get("name") == container:
            for e in c.get("env") or []:
                if e.get("name") == name:
                    return str(e.get("value", ""))
            return None
    return None


def _storage_annotations(uri: str | None, storage: Any, annotations: dict[str, str], path: str) -> None:
    if storage is not None:
        annotations[C.ANN_STORAGE_SPEC] = "true"
        if storage.parameters is not None:
            annotations[C.ANN_STORAGE_SPEC_PARAM] = json.dumps(
                storage.parameters, separators=(",", ":"), sort_keys=True
            )
        if storage.key is not None:
            annotations[C.ANN_STORAGE_SPEC_KEY] = storage.key
        if storage.path is not None:
            annotations[C.ANN_STORAGE_SOURCE_URI] = "<scheme-placeholder>://" + storage.path.lstrip("/")
    if uri is not None:
        if C.ANN_STORAGE_SOURCE_URI in annotations:
            raise InputError("must provide only one of storageUri and storage.path", path)
        annotations[C.ANN_STORAGE_SOURCE_URI] = uri
        validate_storage_uri(uri, path)


# --- predictor ---------------------------------------------------------------------------------------------------


def predictor_annotations(
    isvc: InferenceService, predictor: PredictorSpec, config: KServeConfig, path: str = "spec.predictor"
) -> dict[str, str]:
    """KServe's predictor ``annotations`` (``buildPredictorResources``): the filtered isvc annotations plus the internal
    logger, batcher, storage and agent annotations — before the runtime and predictor annotations are unioned in.
    Multi-node worker metadata starts from this map too."""
    meta = isvc.metadata
    annotations = filtered(meta.annotations, config.annotation_disallowed)
    add_logger_annotations(predictor, annotations)
    add_batcher_annotations(predictor, annotations)
    storage = predictor.model.storage if predictor.model else None
    if storage is not None:
        _storage_annotations(None, storage, annotations, f"{path}.model.storage")
    if is_multi_model(predictor):
        config_name = f"modelconfig-{meta.name}-0"
        annotations.update(
            {
                C.ANN_AGENT: "true",
                C.ANN_CONFIG_VOLUME_NAME: config_name,
                C.ANN_CONFIG_MOUNT_PATH: C.MODEL_CONFIG_DIR,
                C.ANN_MODEL_DIR: C.DEFAULT_MODEL_DIR,
            }
        )
    source_uri = (
        predictor.model.storage_uri
        if predictor.model
        else _env_value(predictor.containers, C.CONTAINER_KSERVE, "STORAGE_URI")
    )
    if source_uri is not None:
        field_path = f"{path}.model.storageUri" if predictor.model else f"{path}.containers[0].env"
        if C.ANN_STORAGE_SOURCE_URI in annotations:
            raise InputError("must provide only one of storageUri and storage.path", field_path)
        annotations[C.ANN_STORAGE_SOURCE_URI] = source_uri
        validate_storage_uri(source_uri, field_path)
    if predictor.storage_container_name:
        annotations[C.ANN_STORAGE_CONTAINER_NAME] = predictor.storage_container_name
    return annotations


def build_predictor(
    isvc: InferenceService,
    predictor: PredictorSpec,
    config: KServeConfig,
    runtimes: Sequence[ServingRuntime],
    labels: dict[str, str],
    path: str = "spec.predictor",
) -> Component:
    """The predictor's metadata and pod spec. ``labels`` are the isvc labels; runtime defaults may add to them
    (KServe mutates ``isvc.Labels`` in place, so later components see the additions too)."""
    meta = isvc.metadata
    annotations = predictor_annotations(isvc, predictor, config, path)

    selected: Selected | None = None
    runtime_labels: dict[str, str] = {}
    runtime_annotations: dict[str, str] = {}
    if predictor.model is not None:
        selected = select_runtime(
            predictor.model,
            meta.namespace,
            runtimes,
            multi_node=predictor.worker_spec is not None,
            path=f"{path}.model",
        )
        model = _apply_runtime_defaults(predictor.model, selected, meta.name, labels)
        if model.protocol_version is None:
            model = model.model_copy(update={"protocol_version": lowest_protocol(selected.spec)})
        predictor = predictor.model_copy(update={"model": model})
        pod_spec = _runtime_pod_spec(isvc, predictor, model, selected, labels, path)
        runtime_labels = dict(selected.spec.labels or {})
        runtime_annotations = filtered(selected.spec.annotations, config.annotation_disallowed)
    else:
        pod_spec = clone(predictor.k8s)
        containers = pod_spec.get("containers") or []
        kserve = next((c for c in containers if c.get("name") == C.CONTAINER_KSERVE), None)
        if kserve is None:
            raise InputError(
                "exactly one of [Name, SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, Model, StorageUris, StorageContainerName, WorkerSpec, PodSpec] must be specified in PredictorSpec",
                path,
            )
        pod_spec["containers"] = [kserve] + containers[1:] if containers else [kserve]
    for container in pod_spec["containers"]:
        set_env(container, C.INFERENCE_SERVICE_NAME_ENV, meta.name)

    name = C.component_name(meta.name, C.PREDICTOR, predictor.name)
    component_labels, component_annotations = component_metadata(
        meta.name, C.PREDICTOR, predictor, config, labels, annotations, runtime_labels, runtime_annotations
    )
    return Component(
        C.PREDICTOR, name, meta.namespace, component_labels, component_annotations, pod_spec, predictor, selected
    )


def _server_type(selected: Selected) -> str:
    server_type = selected.runtime.metadata.annotations.get(C.ANN_SERVER_TYPE)
    if server_type is None:
        server_type = SERVER_TYPE_BY_RUNTIME.get(selected.name, "")
    return server_type


def _apply_runtime_defaults(model: ModelSpec, selected: Selected, isvc_name: str, labels: dict[str, str]) -> ModelSpec:
    """``SetRuntimeDefaults`` for mlserver, torchserve and triton (mutates ``labels`` like KServe mutates isvc labels)."""
    server_type = _server_type(selected)
    k8s = clone(model.k8s)
    protocol = model.protocol_version
    has_storage = model.storage_uri is not None or model.storage is not None
    if server_type == "mlserver":
        protocol = protocol or C.PROTOCOL_V2
        env = k8s.setdefault("env", [])
        wanted = (
            [("MLSERVER_LOAD_MODELS_AT_STARTUP", "false")]
            if not has_storage
            else [("MLSERVER_MODEL_NAME", isvc_name), ("MLSERVER_MODEL_URI", C.DEFAULT_MODEL_DIR)]
        )
        for name, value in wanted:
            if not any(e.get("name") == name for e in env):
                env.append({"name": name, "value": value})
        labels[C.LABEL_MODEL_CLASS] = MLSERVER_MODEL_CLASS.get(model.model_format.name, MLSERVER_DEFAULT_MODEL_CLASS)
    elif server_type == "torchserve":
        protocol = protocol or C.PROTOCOL_V1
        labels[C.LABEL_SERVICE_ENVELOPE] = "kservev2" if protocol in (C.PROTOCOL_V2, C.PROTOCOL_GRPC_V2) else "kserve"
        k8s.setdefault("env", []).append({"name": "PROTOCOL_VERSION", "value": protocol})
    elif server_type == "tritonserver":
        protocol = protocol or C.PROTOCOL_V2
        if not has_storage:
            k8s["args"] = list(k8s.get("args") or []) + ["--model-control-mode=explicit"]
    if k8s == model.k8s and protocol == model.protocol_version:
        return model
    data = model.model_dump(by_alias=True, exclude_none=True)
    for key in model.k8s:
        data.pop(key, None)
    data.update(k8s)
    data["protocolVersion"] = protocol
    return ModelSpec.model_validate(data)


def _runtime_pod_spec(
    isvc: InferenceService,
    predictor: PredictorSpec,
    model: ModelSpec,
    selected: Selected,
    labels: Mapping[str, str],
    path: str,
) -> dict[str, Any]:
    runtime_containers = selected.spec.containers
    if not runtime_containers:
        raise InputError("no container configuration found in selected serving runtime", f"{path}.model.runtime")
    runtime_kserve = next((c for c in runtime_containers if c.get("name") == C.CONTAINER_KSERVE), None)
    if runtime_kserve is None:
        raise InputError("failed to find kserve-container in ServingRuntime containers", f"{path}.model.runtime")
    # KServe templates with the isvc ObjectMeta as it stands after runtime defaults (labels included)
    meta = object_meta_data(isvc.metadata.name, isvc.metadata.namespace, labels, isvc.metadata.annotations)
    container = merge_containers(runtime_kserve, model.k8s)
    container = replace_placeholders(container, meta, selected.name)
    _update_image_tag(container, model.runtime_version, selected)

    runtime_pod = {k: clone(v) for k, v in selected.spec.k8s.items() if k in RUNTIME_POD_MERGED}
    pod_spec = merge_pod_specs(runtime_pod, predictor.k8s)
    containers = [container]
    isvc_containers = predictor.containers
    rt_transformer = next((c for c in runtime_containers if c.get("name") == C.CONTAINER_TRANSFORMER), None)
    is_transformer = next((c for c in isvc_containers if c.get("name") == C.CONTAINER_TRANSFORMER), None)
    transformer = None
    if rt_transformer is not None and is_transformer is not None:
        transformer = merge_containers(rt_transformer, is_transformer)
    else:
        transformer = clone(rt_transformer or is_transformer)
    if transformer is not None:
        containers.append(replace_placeholders(transformer, meta, selected.name))
    containers += [
        clone(c) for c in runtime_containers if c.get("name") not in (C.CONTAINER_KSERVE, C.CONTAINER_TRANSFORMER)
    ]
    containers += [clone(c) for c in isvc_containers if c.get("name") != C.CONTAINER_TRANSFORMER]
    pod_spec["containers"] = containers
    return pod_spec


# The runtime pod-level fields MergePodSpec starts from (hostIPC, labels and annotations are not among them).
RUNTIME_POD_MERGED = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "imagePullSecrets",
    "schedulerName",
    "resourceClaims",
)


def _json_text(data: Any) -> str:
    try:
        return orjson.dumps(data).decode()
    except TypeError:  # what orjson refuses: an integer beyond 64 bits, tracing's tagged floats
        return json.dumps(data, ensure_ascii=False)


def replace_placeholders(container: dict[str, Any], meta: Mapping[str, Any], runtime_name: str) -> dict[str, Any]:
    """``ReplacePlaceholders``: html/template over the container's JSON with the isvc ObjectMeta."""
    text = _json_text(container)
    if "{{" not in text:
        return container
    try:
        rendered = orjson.loads(GoTemplate(text, name="container-tmpl").render(meta, html=True))
        return carry_over(container, rendered, "placeholders filled") if is_tracing() else rendered
    except (ValueError, json.JSONDecodeError) as exc:
        raise InputError(
            f"failed to replace placeholders in serving runtime {runtime_name} Container {container.get('name', '')}: {exc}",
            "spec.predictor.model.runtime",
        ) from None


def _gpu_requested(resources: Mapping[str, Any] | None) -> bool:
    limits = (resources or {}).get("limits") or {}
    return any(k == C.NVIDIA_GPU_RESOURCE or k.startswith(C.NVIDIA_MIG_PREFIX) for k in limits)


def _update_image_tag(container: dict[str, Any], runtime_version: str | None, selected: Selected) -> None:
    """``UpdateImageTag``: runtimeVersion replaces the tag; GPU builds get ``-gpu``; vLLM without GPU ``-cpu``."""
    image = container.get("image") or ""
    if "@sha256:" in image:
        return
    tag_match = _IMAGE_TAG.search(image)
    if runtime_version is not None:
        retagged = _IMAGE_TAG.sub(":" + runtime_version, image) if tag_match else f"{image}:{runtime_version}"
        container["image"] = overriding(image, with_origin_of(runtime_version, retagged))
        return
    server_type = _server_type(selected)
    if not server_type or not tag_match:
        return
    tag = tag_match.group(0)
    without_tag = image[: -len(tag)]
    if _gpu_requested(container.get("resources")):
        if server_type in GPU_SUFFIX_SERVER_TYPES and not image.endswith("-gpu"):
            container["image"] = image + "-gpu"
    elif server_type == "vllmserver" and not without_tag.endswith("-cpu"):
        container["image"] = without_tag + "-cpu" + tag


# --- transformer and explainer -----------------------------------------------------------------------------------


def _append_missing_args(container: dict[str, Any], pairs: Sequence[tuple[str, str]]) -> None:
    args = container["args"] = container.get("args") or []
    for flag, value in pairs:
        if not any(a == flag or a.startswith(flag) for a in args):
            args.extend([flag, value])


def build_transformer(isvc: InferenceService, config: KServeConfig, labels: Mapping[str, str]) -> Component:
    spec = isvc.spec.transformer
    assert spec is not None
    meta = isvc.metadata
    annotations = filtered(meta.annotations, config.annotation_disallowed)
    uri = _env_value(spec.containers, C.CONTAINER_KSERVE, "STORAGE_URI")
    if uri is not None:
        annotations[C.ANN_STORAGE_SOURCE_URI] = uri
        validate_storage_uri(uri, "spec.transformer.containers[0].env")
    add_logger_annotations(spec, annotations)
    add_batcher_annotations(spec, annotations)
    predictor_host = C.component_name(meta.name, C.PREDICTOR, isvc.spec.predictor.name)
    pod_spec = clone(spec.k8s)
    containers = pod_spec.setdefault("containers", [{}])
    first = containers[0]
    pairs = [
        ("--model_name", meta.name),
        ("--predictor_host", f"{predictor_host}.{meta.namespace}"),
        ("--http_port", str(C.DEFAULT_HTTP_PORT)),
    ]
    _append_missing_args(first, pairs)
    if spec.container_concurrency is not None:
        _append_missing_args(first, [("--workers", str(spec.container_concurrency))])
    set_env(first, C.INFERENCE_SERVICE_NAME_ENV, meta.name)
    return _component(isvc, C.TRANSFORMER, spec, labels, annotations, config, pod_spec)


def build_explainer(isvc: InferenceService, config: KServeConfig, labels: Mapping[str, str]) -> Component:
    spec = isvc.spec.explainer
    assert spec is not None
    meta = isvc.metadata
    annotations = filtered(meta.annotations, config.annotation_disallowed)
    predictor_host = f"{C.component_name(meta.name, C.PREDICTOR, isvc.spec.predictor.name)}.{meta.namespace}"
    pod_spec = clone(spec.k8s)
    if spec.art is not None:
        uri = spec.art.storage_uri
        container = _art_container(isvc, config, predictor_host)
    else:
        uri = _env_value(spec.containers, C.CONTAINER_KSERVE, "STORAGE_URI")
        container = clone((pod_spec.get("containers") or [{}])[0])
        _append_missing_args(container, [("--model_name", meta.name), ("--predictor_host", predictor_host)])
        container.setdefault("args", []).extend(["--http_port", str(C.DEFAULT_HTTP_PORT)])
        if spec.container_concurrency is not None:
            _append_missing_args(container, [("--workers", str(spec.container_concurrency))])
    if uri is not None and uri != "":
        annotations[C.ANN_STORAGE_SOURCE_URI] = uri
        validate_storage_uri(uri, "spec.explainer")
    add_logger_annotations(spec, annotations)
    containers = pod_spec.get("containers") or []
    pod_spec["containers"] = [container] + containers[1:]
    return _component(isvc, C.EXPLAINER, spec, labels, annotations, config, pod_spec)


def _art_container(isvc: InferenceService, config: KServeConfig, predictor_host: str) -> dict[str, Any]:
    """``ARTExplainerSpec.GetContainer`` — note KServe appends the user args twice."""
    explainer = isvc.spec.explainer
    assert explainer is not None and explainer.art is not None
    art = explainer.art
    from .defaulting import default_resources

    container = clone(art.k8s)
    container["name"] = C.CONTAINER_KSERVE
    if not container.get("image"):
        version = art.runtime_version or config.explainers.art.default_image_version
        container["image"] = f"{config.explainers.art.image}:{version}"
    user_args = list(container.get("args") or [])
    args = ["--model_name", isvc.metadata.name, "--http_port", str(C.DEFAULT_HTTP_PORT)]
    if not any(a == "--predictor_host" or a.startswith("--predictor_host") for a in user_args):
        args += ["--predictor_host", predictor_host]
    if explainer.container_concurrency is not None and not any(a.startswith("--workers") for a in user_args):
        args += ["--workers", str(explainer.container_concurrency)]
    if art.storage_uri:
        args += ["--storage_uri", C.DEFAULT_MODEL_DIR]
    args += ["--adversary_type", art.type]
    for key in sorted(art.config or {}):
        args += [f"--{key}", (art.config or {})[key]]
    args += user_args + user_args
    container["args"] = args
    container["resources"] = default_resources(container.get("resources"), config)
    return container


def _component(
    isvc: InferenceService,
    kind: str,
    spec: ComponentExtension,
    labels: Mapping[str, str],
    annotations: dict[str, str],
    config: KServeConfig,
    pod_spec: dict[str, Any],
) -> Component:
    meta = isvc.metadata
    component_labels, component_annotations = component_metadata(meta.name, kind, spec, config, labels, annotations)
    return Component(
        kind, C.component_name(meta.name, kind), meta.namespace, component_labels, component_annotations, pod_spec, spec
    )
