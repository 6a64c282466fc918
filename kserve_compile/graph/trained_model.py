"""TrainedModels: admission rules, the controller's checks, and the ``models.json`` of ``modelconfig-<isvc>-0``.

Sources: ``pkg/apis/serving/v1alpha1/trainedmodel_webhook.go`` (validation), ``pkg/controller/v1alpha1/trainedmodel/
controller.go`` (parent, multi-model and memory conditions), ``pkg/modelconfig/configmap.go`` (the JSON) and
``sharding/memory/strategy.go`` (every model goes to shard 0). KServe writes the model list from a Go map, so its
order varies from run to run; here it is sorted by model name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from .. import constants as C
from ..errors import InputError
from ..inputs.serving_types import InferenceService
from ..kube.quantity import QUANTITY_FORMAT_ERROR, canonical_quantity, is_quantity, parse_quantity
from ..plan.components import is_multi_model
from .gojson import go_dumps
from .graph_types import TrainedModel

TM_NAME_REGEX = "^[a-zA-Z0-9_-]+$"
_TM_NAME = re.compile(TM_NAME_REGEX)


def _memory(tm: TrainedModel) -> str:
    value = str(tm.spec.model.memory)
    if not is_quantity(value):
        raise InputError(f"{QUANTITY_FORMAT_ERROR} (got {value!r})", "spec.model.memory")
    return canonical_quantity(value)


def validate_trained_model(tm: TrainedModel, old: TrainedModel | None = None) -> None:
    """The validating webhook: name format, storage URI prefix, and on update (``old`` given) unchanged memory."""
    name = tm.metadata.name
    if not _TM_NAME.match(name):
        raise InputError(
            f'the Trained Model "{name}" is invalid: a Trained Model name must consist of alphanumeric characters, '
            f"'_', or '-'. (e.g. \"my-Name\" or \"abc_123\", regex used for validation is '{TM_NAME_REGEX}')",
            "metadata.name",
        )
    uri = tm.spec.model.storage_uri
    if not uri.startswith(C.TRAINED_MODEL_STORAGE_PREFIXES):
        raise InputError(
            f'the Trained Model "{name}" storageUri field is invalid. The storage uri must start with one of the '
            f'prefixes: {", ".join(C.TRAINED_MODEL_STORAGE_PREFIXES)}. (the storage uri given is "{uri}")',
            "spec.model.storageUri",
        )
    memory = _memory(tm)
    if old is not None:
        was = _memory(old)
        if parse_quantity(memory) != parse_quantity(was):
            raise InputError(
                f'the Trained Model "{name}" memory field is immutable. The memory was "{was}" but it is updated to "{memory}"',
                "spec.model.memory",
            )


def model_config_json(trained_models: Iterable[TrainedModel]) -> str:
    """``models.json`` of the isvc's modelconfig ConfigMap holding ``trained_models`` (json-iterator's output)."""
    by_name: dict[str, TrainedModel] = {}
    for tm in trained_models:
        by_name[tm.metadata.name] = tm  # a map keyed by name: the last one wins
    entries = []
    for name in sorted(by_name):
        model = by_name[name].spec.model
        spec = {"storageUri": model.storage_uri, "framework": model.framework, "memory": _memory(by_name[name])}
        entries.append({"modelName": name, "modelSpec": spec})
    return go_dumps(entries, short_bf=False)


def group_by_isvc(
    trained_models: Iterable[TrainedModel], isvcs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], list[TrainedModel]]:
    """TrainedModels per parent ``(namespace, isvc name)``; a parent missing from ``isvcs`` raises.

    KServe deletes a TrainedModel whose InferenceService does not exist; a compiler reports it instead.
    """
    known = set(isvcs)
    out: dict[tuple[str, str], list[TrainedModel]] = {key: [] for key in known}
    for tm in trained_models:
        key = (tm.namespace, tm.spec.inference_service)
        if key not in known:
            raise InputError(
                f'TrainedModel "{tm.metadata.name}" names InferenceService "{key[0]}/{key[1]}", which is not among the '
                "inputs (KServe deletes a TrainedModel whose parent InferenceService does not exist)",
                "spec.inferenceService",
            )
        out[key].append(tm)
    return out


def predictor_memory_limit(isvc: InferenceService) -> str | None:
    """The predictor container's own ``resources.limits.memory`` (KServe reads the isvc's container, not the
    runtime-merged one): the ``model`` container, else the first custom container."""
    predictor = isvc.spec.predictor
    if predictor.model is not None:
        container = predictor.model.k8s
    elif predictor.containers:
        container = predictor.containers[0]
    else:
        return None
    limits = (container.get("resources") or {}).get("limits") or {}
    value = limits.get("memory")
    return None if value is None else str(value)


def check_trained_models(
    isvc_name: str, trained_models: Sequence[TrainedModel], *, multi_model: bool, memory_limit: str | None
) -> None:
    """The controller's conditions, steady state (parent Ready): multi-model predictor, and memory for all models.

    Models are allocated in name order while the predictor's memory limit holds them (no limit holds nothing).
    Raises :class:`InputError` with KServe's condition error for the first model that cannot deploy.
    """
    ordered = sorted(trained_models, key=lambda tm: tm.metadata.name)
    if not ordered:
        return
    if not multi_model:
        raise InputError(
            f'Inference Service "{isvc_name}" predictor is not configured for multi-model serving. '
            f'Trained Model "{ordered[0].metadata.name}" cannot deploy',
            "spec.inferenceService",
        )
    limit = parse_quantity(memory_limit) if memory_limit is not None and is_quantity(memory_limit) else Decimal(0)
    total = Decimal(0)
    for tm in ordered:
        total += parse_quantity(_memory(tm))
        if limit < total:
            raise InputError(
                f'Inference Service "{isvc_name}" memory resources are not available. '
                f'Trained Model "{tm.metadata.name}" cannot deploy',
                "spec.model.memory",
            )


def check_plan_trained_models(isvc: InferenceService, trained_models: Sequence[TrainedModel]) -> None:
    """:func:`check_trained_models` for a defaulted isvc (``pkg/controller/v1alpha1/trainedmodel``)."""
    multi_model = is_multi_model(isvc.spec.predictor)
    limit = predictor_memory_limit(isvc)
    check_trained_models(isvc.metadata.name, trained_models, multi_model=multi_model, memory_limit=limit)


def fill_model_config(
    objects: Sequence[dict[str, Any]], isvc: InferenceService, trained: Sequence[TrainedModel]
) -> None:
    """The TrainedModel controller's update of the isvc's ``modelconfig-<isvc>-0``: its models, in place."""
    name = f"modelconfig-{isvc.metadata.name}-0"
    for obj in objects:
        if obj.get("kind") == "ConfigMap" and obj["metadata"].get("name") == name:
            obj["data"][C.MODEL_CONFIG_FILE] = model_config_json(trained)
