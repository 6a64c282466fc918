"""Plan, step 1 — default: what KServe's InferenceService mutating webhook does to an isvc before anything else.

``api/inference_service_defaults.go`` DefaultInferenceService: normalise or add the deploymentMode annotation, turn a
legacy framework field into ``model``, default the protocol for triton/vLLM/onnx/huggingface, record the
``modelFormat`` annotation, name and size custom containers, and turn off the service-account token.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .. import constants as C
from ..inputs.config import KServeConfig
from ..inputs.serving_types import (
    FRAMEWORKS,
    ComponentExtension,
    InferenceService,
    ModelFormat,
    ModelSpec,
    PredictorSpec,
)

# Legacy framework field → (modelFormat.name, protocol set when unset)
FRAMEWORK_FORMATS: dict[str, tuple[str, str | None]] = {
    "sklearn": ("sklearn", None),
    "xgboost": ("xgboost", None),
    "tensorflow": ("tensorflow", None),
    "pytorch": ("pytorch", None),
    "triton": ("triton", C.PROTOCOL_V2),
    "onnx": ("onnx", C.PROTOCOL_V2),
    "huggingface": ("huggingface", C.PROTOCOL_V2),
    "pmml": ("pmml", None),
    "lightgbm": ("lightgbm", None),
    "paddle": ("paddle", None),
}
V2_BY_DEFAULT_FORMATS = ("triton", "vLLM")


def default_isvc(isvc: InferenceService, config: KServeConfig) -> InferenceService:
    annotations = dict(isvc.metadata.annotations)
    mode = annotations.get(C.ANN_DEPLOYMENT_MODE)
    if mode is not None and mode in C.LEGACY_MODES:
        mode = C.LEGACY_MODES[mode]
        annotations[C.ANN_DEPLOYMENT_MODE] = mode
    if mode is None and config.deploy.default_deployment_mode in (C.MODE_STANDARD, C.MODE_MODELMESH):
        annotations[C.ANN_DEPLOYMENT_MODE] = config.deploy.default_deployment_mode

    spec = isvc.spec
    predictor = spec.predictor
    if mode != C.MODE_MODELMESH:
        predictor = _framework_to_model(predictor)
        if predictor.model is not None:
            model = predictor.model
            if model.protocol_version is None and model.model_format.name in V2_BY_DEFAULT_FORMATS:
                predictor = _update(predictor, model=_update(model, protocol_version=C.PROTOCOL_V2))
            if model.model_format.name:
                annotations.setdefault(C.ANN_MODEL_FORMAT, model.model_format.name)
        predictor = _default_custom(predictor, config, "predictor")
    transformer = _default_custom(spec.transformer, config, "transformer") if spec.transformer else None
    explainer = _default_custom(spec.explainer, config, "explainer") if spec.explainer else None

    if not config.security.auto_mount_service_account_token:
        predictor = _no_token(predictor)
        transformer = _no_token(transformer) if transformer else None
        explainer = _no_token(explainer) if explainer else None

    new_spec = _update(spec, predictor=predictor, transformer=transformer, explainer=explainer)
    new_meta = _update(isvc.metadata, annotations=annotations)
    return _update(isvc, metadata=new_meta, spec=new_spec)


def _update(obj: Any, /, **changes: Any) -> Any:
    if all(getattr(obj, name) is value for name, value in changes.items()):
        return obj  # nothing changes: models are frozen, so the same object serves
    return obj.model_copy(update=changes)


def _framework_to_model(predictor: PredictorSpec) -> PredictorSpec:
    for field in FRAMEWORKS:
        ext = getattr(predictor, field)
        if ext is None:
            continue
        fmt_name, protocol = FRAMEWORK_FORMATS[field]
        values = {k: v for k, v in ext.model_dump(by_alias=False, exclude_none=True).items()}
        extras = ext.k8s
        for k in extras:
            values.pop(k, None)
        if protocol and not values.get("protocol_version"):
            values["protocol_version"] = protocol
        model = ModelSpec.model_validate(
            {**{_camel(k): v for k, v in values.items()}, **extras, "modelFormat": {"name": fmt_name}}
        )
        model = _update(model, model_format=ModelFormat(name=fmt_name))
        return _update(predictor, model=model, **{field: None})
    return predictor


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def is_custom(component: ComponentExtension, kind: str) -> bool:
    """A component implemented by its own containers (no model, framework or ART explainer)."""
    if kind == "predictor":
        assert isinstance(component, PredictorSpec)
        if component.model is not None or any(getattr(component, f) is not None for f in FRAMEWORKS):
            return False
        return True
    if kind == "explainer":
        return getattr(component, "art", None) is None
    return True


def _default_custom(component: Any, config: KServeConfig, kind: str) -> Any:
    """CustomPredictor/Transformer/Explainer.Default: name container 0 and fill resource defaults."""
    if not is_custom(component, kind):
        return component
    containers = [dict(c) for c in component.containers] or [{}]
    first = containers[0]
    # a predictor keeps a named first container when it has several; transformers/explainers always rename
    if kind != "predictor" or len(containers) == 1 or not first.get("name"):
        first["name"] = C.CONTAINER_KSERVE
    first["resources"] = default_resources(first.get("resources"), config)
    k8s = component.k8s
    k8s["containers"] = containers
    return component.__class__.model_validate({**_public(component), **k8s})


def default_resources(resources: dict[str, Any] | None, config: KServeConfig) -> dict[str, Any]:
    """``setResourceRequirementDefaults``: fill only missing request/limit keys from ``inferenceService.resource``."""
    out = {k: dict(v) for k, v in (resources or {}).items() if isinstance(v, dict)}
    out.update({k: v for k, v in (resources or {}).items() if not isinstance(v, dict)})
    for section, values in config.inference_service.resource.requirements().items():
        target = out.setdefault(section, {})
        for key, value in values.items():
            target.setdefault(key, value)
    return out


def _public(model: Any) -> dict[str, Any]:
    """The model's own fields as input data (by alias), without its Kubernetes extras."""
    data = model.model_dump(by_alias=True, exclude_none=True)
    for key in model.k8s:
        data.pop(key, None)
    return data


def _no_token(component: Any) -> Any:
    if component.k8s.get("automountServiceAccountToken") is not None:
        return component
    return component.__class__.model_validate(
        {**_public(component), **component.k8s, "automountServiceAccountToken": False}
    )


def admitted(obj: dict[str, Any], config: KServeConfig | None) -> dict[str, Any]:
    """An InferenceService as the API server checks it against its schema: after the mutating webhook (which,
    e.g., names a lone custom container ``kserve-container``). Other objects, and ones that do not parse, as given."""
    if config is None or obj.get("kind") != "InferenceService":
        return obj
    try:
        isvc = InferenceService.model_validate(obj)
    except ValidationError:
        return obj
    return default_isvc(isvc, config).model_dump(by_alias=True, exclude_none=True)
