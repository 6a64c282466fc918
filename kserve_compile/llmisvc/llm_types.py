"""Typed views of LLMInferenceService and LLMInferenceServiceConfig inputs.

The spec stays the plain JSON-shaped mapping KServe's controller merges (``pkg/apis/serving/v1alpha2``,
``llm_inference_service_types.go``): merging, templating and building all work on that shape, the way the
controller round-trips it through JSON. These classes carry identity, metadata and the document they came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..constants import KIND_LLMISVC, KIND_LLMISVC_CONFIG, KSERVE_NAMESPACE, V1ALPHA1, V1ALPHA2
from ..inputs.parse import Document

SYSTEM_NAMESPACE = KSERVE_NAMESPACE
__all__ = ["KIND_LLMISVC", "KIND_LLMISVC_CONFIG", "V1ALPHA1", "V1ALPHA2"]

Spec = dict[str, Any]


def drop_nulls(value: Any) -> Any:
    """What survives Go's ``json.Unmarshal`` into typed structs: explicit ``null`` values vanish."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


@dataclass
class LLMService:
    """One LLMInferenceService (converted to v1alpha2), as the controller sees it after the defaulting webhook."""

    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    spec: Spec
    status: dict[str, Any]
    doc: Document
    source_version: str = V1ALPHA2
    uid: str = ""

    def problem(self, message: str, path: str = "", severity: str = "error", about: str = "") -> Any:
        return self.doc.problem(message, path, severity, about)


@dataclass
class LLMConfig:
    """An LLMInferenceServiceConfig: a preset (embedded or given) or a ``baseRefs`` target."""

    name: str
    namespace: str
    spec: Spec
    doc: Document | None = None
    embedded: bool = False
    annotations: dict[str, str] = field(default_factory=dict)


def get_path(spec: Any, *keys: str) -> Any:
    """``spec[k1][k2]…`` or None when any step is absent (Go's nil-pointer guards, written once)."""
    value = spec
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def int_or(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def is_data_parallel(parallelism: Any) -> bool:
    """``ParallelismSpec.IsDataParallel``."""
    return isinstance(parallelism, dict) and (
        int_or(parallelism.get("data"), 0) > 0 or int_or(parallelism.get("dataLocal"), 0) > 0
    )


def is_pipeline_parallel(parallelism: Any) -> bool:
    return isinstance(parallelism, dict) and int_or(parallelism.get("pipeline"), 0) > 0


def group_size(parallelism: Any) -> int | None:
    """``ParallelismSpec.GetSize``: LeaderWorkerSet group size."""
    if not isinstance(parallelism, dict):
        return None
    if is_data_parallel(parallelism):
        data = max(int_or(parallelism.get("data"), 1), 1)
        local = max(int_or(parallelism.get("dataLocal"), 1), 1)
        return max(data // local, 1)
    if is_pipeline_parallel(parallelism):
        return int(parallelism["pipeline"])
    return None


def pool_has_ref(spec: Spec) -> bool:
    return bool(get_path(spec, "router", "scheduler", "pool", "ref", "name"))


def pool_name(spec: Spec, name: str) -> str:
    """``SchedulerSpec.InferencePoolName``."""
    from .names import inference_pool

    ref = get_path(spec, "router", "scheduler", "pool", "ref", "name")
    return str(ref) if ref else inference_pool(name)


def epp_service_name(spec: Spec, name: str) -> str:
    """``RouterSpec.EPPServiceName``."""
    from .names import epp_service

    picker = get_path(spec, "router", "scheduler", "pool", "spec", "endpointPickerRef", "name")
    if not pool_has_ref(spec) and picker:
        return str(picker)
    return epp_service(name)


def has_managed_scheduler(spec: Spec) -> bool:
    return get_path(spec, "router", "scheduler", "template") is not None and not pool_has_ref(spec)
