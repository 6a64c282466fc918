"""KServe copies the CA bundle into each InferenceService namespace as ``global-ca-bundle``
(``pkg/controller/v1beta1/inferenceservice/reconcilers/cabundleconfigmap``)."""

from __future__ import annotations

from typing import Any

from .. import constants as C
from ..errors import CompileError, Problem
from ..inputs.config import KServeConfig


def ca_bundle_config_maps(
    config: KServeConfig, source: dict[str, Any] | None, namespaces: set[str]
) -> list[dict[str, Any]]:
    """KServe copies the CA bundle into each isvc namespace as ``global-ca-bundle`` (cabundleconfigmap reconciler)."""
    wanted = config.storage_initializer.ca_bundle_config_map_name
    if not wanted or not namespaces:
        return []
    if source is None:
        raise CompileError(
            [
                Problem(
                    f"storageInitializer.caBundleConfigMapName is {wanted!r}: give the ConfigMap {C.KSERVE_NAMESPACE}/{wanted} "
                    "as an input (KServe copies its cabundle.crt into every InferenceService namespace)",
                    "data.storageInitializer",
                )
            ]
        )
    data = (source.get("data") or {}).get(C.CA_BUNDLE_FILE_NAME)
    if not data:
        raise CompileError(
            [
                Problem(
                    f"specified cabundle file {C.CA_BUNDLE_FILE_NAME} not found in cabundle configmap {wanted}", "data"
                )
            ]
        )
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP, "namespace": ns},
            "data": {C.CA_BUNDLE_FILE_NAME: data},
        }
        for ns in sorted(namespaces)
    ]
