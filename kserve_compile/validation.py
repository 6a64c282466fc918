"""Step 2b — validate: KServe's InferenceService admission rules (``api/inference_service_validation.go``).

Messages keep KServe's wording so a user can search for them. Rules run in KServe's order; the first error of an
isvc is reported (as the webhook does).
"""

from __future__ import annotations

import re

from . import constants as C
from .config import KServeConfig
from .errors import InputError
from .models import FRAMEWORKS, ComponentExtension, InferenceService

ISVC_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
ISVC_NAME_PATTERN = "^[a-z]([-a-z0-9]*[a-z0-9])?$"
PREDICTOR_FIELDS = "Name, SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, Model, StorageUris, StorageContainerName, WorkerSpec, PodSpec"
LOGGER_MODES = ("all", "request", "response")


def validate_isvc(isvc: InferenceService, mode: str, config: KServeConfig) -> None:
    name = isvc.metadata.name
    if not ISVC_NAME.match(name):
        raise InputError(
            f'the InferenceService "{name}" is invalid: a InferenceService name must consist of lower case alphanumeric '
            "characters or '-', and must start with alphabetical character. (e.g. \"my-name\" or \"abc-123\", regex used "
            f"for validation is '{ISVC_NAME_PATTERN}')",
            "metadata.name",
        )
    autoscaler = isvc.metadata.annotations.get(C.ANN_AUTOSCALER_CLASS)
    if autoscaler is not None and autoscaler not in C.AUTOSCALER_CLASSES:
        raise InputError(f"[{autoscaler}] is not a supported autoscaler class type", f"metadata.annotations[{C.ANN_AUTOSCALER_CLASS}]")
    for path, component in _components(isvc):
        _check_pythonpath(name, path, component)
    predictor = isvc.spec.predictor
    implementations = [f for f in FRAMEWORKS if getattr(predictor, f) is not None] + (["model"] if predictor.model else [])
    if len(implementations) > 1:
        raise InputError(f"exactly one of [{PREDICTOR_FIELDS}] must be specified in PredictorSpec", "spec.predictor")
    if not implementations and not predictor.containers:
        raise InputError(f"exactly one of [{PREDICTOR_FIELDS}] must be specified in PredictorSpec", "spec.predictor")
    for path, component in _components(isvc):
        _check_extension(path, component)


def _components(isvc: InferenceService) -> list[tuple[str, ComponentExtension]]:
    out: list[tuple[str, ComponentExtension]] = [("spec.predictor", isvc.spec.predictor)]
    if isvc.spec.transformer is not None:
        out.append(("spec.transformer", isvc.spec.transformer))
    if isvc.spec.explainer is not None:
        out.append(("spec.explainer", isvc.spec.explainer))
    return out


def _check_pythonpath(name: str, path: str, component: ComponentExtension) -> None:
    containers = list(component.containers) + list(component.k8s.get("initContainers") or [])
    model = getattr(component, "model", None)
    if model is not None:
        containers.append({"name": C.CONTAINER_KSERVE, **model.k8s})
    for index, container in enumerate(containers):
        for env in container.get("env") or []:
            if env.get("name") == "PYTHONPATH":
                raise InputError(
                    f'the InferenceService "{name}" is invalid: setting PYTHONPATH in container "{container.get("name", "")}" '
                    "is not allowed for security reasons",
                    f"{path}.containers[{index}].env" if index < len(component.containers) else path,
                )


def _check_extension(path: str, ext: ComponentExtension) -> None:
    min_replicas = ext.min_replicas if ext.min_replicas is not None else 1
    if ext.min_replicas is not None and ext.min_replicas < 0:
        raise InputError("'MinReplicas' cannot be less than 0", f"{path}.minReplicas")
    if ext.max_replicas < 0:
        raise InputError("'MaxReplicas' cannot be less than 0", f"{path}.maxReplicas")
    if ext.max_replicas != 0 and min_replicas > ext.max_replicas:
        raise InputError("'MinReplicas' cannot be greater than MaxReplicas", f"{path}.minReplicas")
    if ext.container_concurrency is not None and ext.container_concurrency < 0:
        raise InputError("parallelism cannot be less than 0", f"{path}.containerConcurrency")
    if ext.logger is not None and ext.logger.mode not in LOGGER_MODES:
        raise InputError("invalid logger type", f"{path}.logger.mode")
    storage_uri = getattr(getattr(ext, "model", None), "storage_uri", None)
    if storage_uri is not None and ext.storage_uris:
        raise InputError("Setting both StorageURI and StorageURIs is not supported.", f"{path}.storageUris")
