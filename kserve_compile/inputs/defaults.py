"""KServe's shipped objects, for what the inputs do not give: the ``inferenceservice-config`` data, the built-in
ClusterServingRuntimes and the ClusterStorageContainers (``config/configmap``, ``config/runtimes``,
``config/storagecontainers`` in kserve/kserve, embedded in the package: :mod:`kserve_compile.embedded`)."""

from __future__ import annotations

from functools import cache
from typing import Any

from .. import embedded
from ..provenance import is_tracing
from ..provenance.sources import tag_embedded
from ..provenance.typed import retag_model
from .serving_types import ServingRuntime


@cache
def embedded_configmap() -> dict[str, Any]:
    return embedded.documents(embedded.CONFIGMAP)[0]


def shipped_config_data() -> dict[str, Any]:
    """The shipped ConfigMap's ``data`` (tagged with its origin while tracing)."""
    data = embedded_configmap()["data"]
    if is_tracing():
        return tag_embedded(
            data, "KServe's shipped inferenceservice-config", "data/inferenceservice-config.yaml", ("data",)
        )
    return data


@cache
def _embedded_runtime_data() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple((path.rsplit("/", 1)[1], embedded.documents(path)[0]) for path in embedded.runtime_files())


@cache
def embedded_runtimes() -> tuple[ServingRuntime, ...]:
    return tuple(ServingRuntime.model_validate(data) for _, data in _embedded_runtime_data())


def builtin_runtimes() -> list[ServingRuntime]:
    """The built-in runtimes; while tracing, fresh models with every field tagged (the cached ones stay plain)."""
    if not is_tracing():
        return list(embedded_runtimes())
    out = []
    for name, data in _embedded_runtime_data():
        tagged = tag_embedded(
            data, f"built-in ClusterServingRuntime {data['metadata']['name']}", f"data/runtimes/{name}"
        )
        out.append(retag_model(ServingRuntime.model_validate(tagged), tagged))
    return out


@cache
def embedded_storage_containers() -> tuple[dict[str, Any], ...]:
    return tuple(embedded.documents(embedded.STORAGE_CONTAINERS))


def shipped_storage_containers() -> list[dict[str, Any]]:
    """KServe's shipped ClusterStorageContainers (tagged with their origin while tracing)."""
    shipped = list(embedded_storage_containers())
    if not is_tracing():
        return shipped
    return [
        tag_embedded(
            d, f"KServe's shipped ClusterStorageContainer {d['metadata']['name']}", "data/storagecontainers.yaml"
        )
        for d in shipped
    ]
