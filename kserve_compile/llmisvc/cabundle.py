"""The CA bundle on an LLMInferenceService's storage-initializer (``injectCaBundle`` / ``extractCaBundleConfig`` /
``needCaBundleMount`` in ``pkg/controller/v1alpha2/llmisvc/workload_storage.go``), for ``s3://`` and multi-URI
downloads: the bundle ConfigMap (``global-ca-bundle`` outside ``kserve``, or the one the S3 secret names) mounted
read-only, with the two env vars telling the initializer where it is."""

from __future__ import annotations

import posixpath
from typing import Any

from .. import constants as C
from ..inputs.config import StorageInitializerConfig
from ..render.pod_webhook.credentials import AWS_CA_BUNDLE, AWS_CA_BUNDLE_CONFIGMAP


def inject_ca_bundle(namespace: str, pod: dict[str, Any], init: dict[str, Any], si: StorageInitializerConfig) -> None:
    env = init.get("env") or []
    names = {e.get("name"): e.get("value") for e in env if isinstance(e, dict)}
    if not si.ca_bundle_config_map_name and AWS_CA_BUNDLE_CONFIGMAP not in names:
        return
    config_map = (
        si.ca_bundle_config_map_name if namespace == C.KSERVE_NAMESPACE else C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP
    )
    mount_path = si.ca_bundle_volume_mount_path or C.DEFAULT_CA_BUNDLE_MOUNT_PATH
    for entry in env:  # the S3 secret's own choices win, as in extractCaBundleConfig
        if entry.get("name") == AWS_CA_BUNDLE_CONFIGMAP:
            config_map = str(entry.get("value") or "")
        elif entry.get("name") == AWS_CA_BUNDLE:
            mount_path = posixpath.dirname(str(entry.get("value") or ""))
    new_env = init.setdefault("env", [])
    if C.ENV_CA_BUNDLE_CONFIGMAP_NAME not in names:
        new_env.append({"name": C.ENV_CA_BUNDLE_CONFIGMAP_NAME, "value": config_map})
    if C.ENV_CA_BUNDLE_MOUNT_POINT not in names:
        new_env.append({"name": C.ENV_CA_BUNDLE_MOUNT_POINT, "value": mount_path})
    pod.setdefault("volumes", []).append({"configMap": {"name": config_map}, "name": C.VOLUME_CA_BUNDLE})
    init.setdefault("volumeMounts", []).append({"mountPath": mount_path, "name": C.VOLUME_CA_BUNDLE, "readOnly": True})
