"""InferenceGraph and TrainedModel (``serving.kserve.io/v1alpha1``), field names as KServe's Go JSON tags.

Sources: ``pkg/apis/serving/v1alpha1/inference_graph.go`` and ``trained_model.go``; required fields and enums from
the CRDs (``config/crd/full/serving.kserve.io_inferencegraphs.yaml``, ``…_trainedmodels.yaml``). The Kubernetes
sub-objects of a graph spec (``resources``, ``affinity``, ``tolerations``) stay plain data here and are checked
field by field by :func:`kserve_compile.graph.gojson.normalize` when the router JSON is written. ``RetryConfig``
(``spec.defaultRetry``, a step's ``retry``) is kserve/kserve PR #5386's, open when this was written.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..inputs.serving_types import ObjectMeta

RouterType = Literal["Sequence", "Splitter", "Ensemble", "Switch"]
ScaleMetric = Literal["cpu", "memory", "concurrency", "rps"]


class _Spec(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True, frozen=True)


class RetryConfig(_Spec):
    """PR #5386's ``RetryConfig``; an absent field takes the PR's default (3 retries, 100 ms, 300000 ms)."""

    max_retries: int | None = None
    initial_delay_ms: int | None = None
    max_delay_ms: int | None = None


class GraphStep(_Spec):
    """``InferenceStep`` with its inlined ``InferenceTarget``; empty strings stand for absent (Go omitempty)."""

    name: str = ""
    node_name: str = ""
    service_name: str = ""
    service_url: str = Field("", alias="serviceUrl")
    data: str = ""
    map_predictions_to_instances: bool = False
    weight: int | None = None
    condition: str = ""
    dependency: Literal["Soft", "Hard"] | None = None
    retry: RetryConfig | None = None


class GraphRouter(_Spec):
    router_type: RouterType
    steps: list[GraphStep] | None = None


class RouterTimeouts(_Spec):
    server_read: int | None = None
    server_write: int | None = None
    server_idle: int | None = None
    service_client: int | None = None


class GraphSpec(_Spec):
    nodes: dict[str, GraphRouter] | None
    resources: dict[str, Any] | None = None
    affinity: dict[str, Any] | None = None
    timeout: int | None = None
    router_timeouts: RouterTimeouts | None = None
    min_replicas: int | None = None
    max_replicas: int = 0
    scale_target: int | None = None
    scale_metric: ScaleMetric | None = None
    tolerations: list[Any] | None = None
    node_selector: dict[str, str] | None = None
    node_name: str = ""
    service_account_name: str = ""
    default_retry: RetryConfig | None = None


class _Object(BaseModel):
    """The envelope both kinds share: serving.kserve.io/v1alpha1, metadata, a status read as plain data."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    api_version: Literal["serving.kserve.io/v1alpha1"] = Field(alias="apiVersion")
    metadata: ObjectMeta
    status: dict[str, Any] | None = None

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"


class InferenceGraph(_Object):
    kind: Literal["InferenceGraph"]
    spec: GraphSpec


class TrainedModelModel(_Spec):
    """``v1alpha1.ModelSpec`` of a TrainedModel; ``memory`` is a resource quantity (int or string in YAML)."""

    storage_uri: str
    framework: str
    memory: str | int


class TrainedModelSpec(_Spec):
    inference_service: str
    model: TrainedModelModel


class TrainedModel(_Object):
    kind: Literal["TrainedModel"]
    spec: TrainedModelSpec
