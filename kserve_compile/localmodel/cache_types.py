"""Typed local-model-cache resources (``serving.kserve.io/v1alpha1``) and the Node fields the controller reads.

Mirrors KServe's Go API types in ``pkg/apis/serving/v1alpha1/local_model_cache_types.go``,
``local_model_namespace_cache_types.go``, ``local_model_node_group_types.go``, ``local_model_node_types.go`` (and
their ``*_status.go``) and the CRD constraints generated from them (``config/crd/full/localmodel/``): required fields,
``nodeGroups`` ``minItems: 1``, quantities for ``modelSize`` and ``storageLimit``. The node group's PersistentVolume
and PersistentVolumeClaim specs stay plain Kubernetes data (they are copied into the objects the controller makes).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from .. import constants as C
from ..inputs.serving_types import ObjectMeta
from ..kube.quantity import is_quantity


class _Strict(BaseModel):
    """A KServe struct: camelCase names as the Go JSON tags, unknown fields rejected by name."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", strict=True, frozen=True)

    @model_validator(mode="after")
    def _no_unknown_fields(self) -> _Strict:
        extras = list(self.model_extra or {})
        if extras:
            raise ValueError(f'unknown field "{extras[0]}"')
        return self


def _quantity(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not is_quantity(value):
        raise ValueError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got {value!r:.80})"
        )
    return value


class LocalModelStorageSpec(_Strict):
    key: str | None = None
    parameters: dict[str, str] | None = None


class LocalModelCacheSpec(_Strict):
    """``LocalModelCacheSpec`` (also ``LocalModelNamespaceCacheSpec``: the same fields)."""

    source_model_uri: str
    model_size: str | int
    node_groups: list[str]
    service_account_name: str = ""
    storage: LocalModelStorageSpec | None = None

    _size = field_validator("model_size", mode="before")(classmethod(lambda cls, v: _quantity(v)))

    @field_validator("node_groups")
    @classmethod
    def _at_least_one(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("should have at least 1 items")
        return value


class LocalModelNodeGroupSpec(_Strict):
    storage_limit: str | int
    persistent_volume_spec: dict[str, Any]
    persistent_volume_claim_spec: dict[str, Any]

    _limit = field_validator("storage_limit", mode="before")(classmethod(lambda cls, v: _quantity(v)))


class LocalModelInfo(_Strict):
    source_model_uri: str
    model_name: str
    namespace: str = ""
    node_group: str = ""
    service_account_name: str = ""
    storage: LocalModelStorageSpec | None = None

    @property
    def status_key(self) -> str:
        """``GetStatusKey``: ``name`` for a cluster cache, ``namespace/name`` for a namespace cache."""
        return f"{self.namespace}/{self.model_name}" if self.namespace else self.model_name

    def to_data(self) -> dict[str, Any]:
        """The entry as the API server stores it (``omitempty`` strings left out)."""
        data = self.model_dump(by_alias=True, exclude_none=True)
        return {k: v for k, v in data.items() if v != "" or k in ("sourceModelUri", "modelName")}


class LocalModelNodeSpec(_Strict):
    local_models: list[LocalModelInfo]


class _Resource(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    KIND: ClassVar[str] = ""

    api_version: Literal["serving.kserve.io/v1alpha1"] = Field(alias="apiVersion")
    metadata: ObjectMeta
    status: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.metadata.name


class LocalModelCache(_Resource):
    """Cluster-scoped: its PersistentVolumes and download PVCs carry the cache's name only."""

    kind: Literal["LocalModelCache"]
    spec: LocalModelCacheSpec

    @property
    def namespace(self) -> str:
        return ""


class LocalModelNamespaceCache(_Resource):
    """Namespace-scoped: only InferenceServices in its own namespace use it."""

    kind: Literal["LocalModelNamespaceCache"]
    spec: LocalModelCacheSpec

    @property
    def namespace(self) -> str:
        return self.metadata.namespace


AnyCache = LocalModelCache | LocalModelNamespaceCache


class LocalModelNodeGroup(_Resource):
    kind: Literal["LocalModelNodeGroup"]
    spec: LocalModelNodeGroupSpec


class LocalModelNode(_Resource):
    """One per node, named after it; an input one is the live object the controller patches."""

    kind: Literal["LocalModelNode"]
    spec: LocalModelNodeSpec


class NodeCondition(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    type: str = ""
    status: str = ""


class NodeStatus(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    conditions: list[NodeCondition] = Field(default_factory=list)


class Node(BaseModel):
    """The Node fields node selection reads: name, labels (and fields), and the Ready condition."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    api_version: Literal["v1"] = Field(alias="apiVersion")
    kind: Literal["Node"]
    metadata: ObjectMeta
    status: NodeStatus = NodeStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def ready(self) -> bool:
        """``IsNodeReady``: a ``Ready`` condition whose status is ``True``."""
        return any(c.type == "Ready" and c.status == "True" for c in self.status.conditions)

    @property
    def runs_agent(self) -> bool:
        key, value = C.LOCAL_MODEL_AGENT_NODE_LABEL
        return self.metadata.labels.get(key) == value
