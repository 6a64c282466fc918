"""The storage initializer: the init container (or PVC mount) that puts a model at ``/mnt/models``.

Ports ``CommonStorageInitialization`` and its helpers (``pkg/webhook/admission/pod/storage_initializer_injector.go``,
``pkg/utils/storage.go``). The single ``storageUri`` ("legacy") path runs in the pod webhook from the
``internal.serving.kserve.io/storage-initializer-sourceuri`` annotation; the ``storageUris`` list is applied by the
controller straight onto the workload's pod template (:func:`apply_storage_uris`).

Internal helpers change the pod spec dict they are given; the public functions deep-copy first.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import constants as C
from ...datacopy import clone
from ...errors import InputError
from ...inputs.cluster_state import ClusterState
from ...inputs.config import KServeConfig
from ...kube.fields import add_env_if_absent, set_env
from ...kube.paths import CommonParentPanic, find_common_parent_path
from . import modelcar
from .credentials import (
    AWS_CA_BUNDLE,
    AWS_CA_BUNDLE_CONFIGMAP,
    add_service_account_credentials,
    add_storage_spec_credentials,
)
from .pod_edits import (
    Container,
    ModelMount,
    PodSpec,
    add_model_mount,
    create_init_container,
    find_container,
    find_init_container,
    merge_container,
    parse_pvc_uri,
    volume_mount,
    volume_name_from_path,
)


def _csc_name(csc: Mapping[str, Any]) -> str:
    return str((csc.get("metadata") or {}).get("name", ""))


def _workload_type(spec: Mapping[str, Any]) -> str:
    return str(spec.get("workloadType") or "initContainer")  # CRD default


def uri_supported(spec: Mapping[str, Any], uri: str, csc_name: str) -> bool:
    """``IsStorageUriSupported``: a prefix match, or an (unanchored) regex search."""
    for fmt in spec.get("supportedUriFormats") or []:
        if not isinstance(fmt, Mapping):
            continue
        if fmt.get("prefix"):
            if uri.startswith(str(fmt["prefix"])):
                return True
        elif fmt.get("regex"):
            try:
                if re.search(str(fmt["regex"]), uri):
                    return True
            except re.error as exc:
                raise InputError(
                    f"error checking storage container {csc_name}: error parsing regexp: {exc}",
                    "spec.supportedUriFormats",
                ) from None
    return False


def storage_container_spec(uri: str, name: str | None, cluster: ClusterState) -> dict[str, Any] | None:
    """``GetStorageContainerSpec``: the named CSC (strictly checked) or the first enabled one that supports ``uri``."""
    if name:
        csc = next((c for c in cluster.storage_containers if _csc_name(c) == name), None)
        if csc is None:
            raise InputError(f'ClusterStorageContainer "{name}" not found', "spec.predictor.storageContainerName")
        spec = csc.get("spec") or {}
        if csc.get("disabled") is True:
            raise InputError(f'ClusterStorageContainer "{name}" is disabled', "spec.predictor.storageContainerName")
        if _workload_type(spec) != "initContainer":
            raise InputError(
                f'ClusterStorageContainer "{name}" has workloadType "{_workload_type(spec)}"; explicit selection requires "initContainer"',
                "spec.predictor.storageContainerName",
            )
        if not uri_supported(spec, uri, name):
            raise InputError(
                f'ClusterStorageContainer "{name}" does not support storageUri "{uri}"',
                "spec.predictor.storageContainerName",
            )
        return spec
    for csc in cluster.storage_containers:
        spec = csc.get("spec") or {}
        if csc.get("disabled") is True or _workload_type(spec) != "initContainer":
            continue
        if uri_supported(spec, uri, _csc_name(csc)):
            return spec
    return None


# --- CommonStorageInitialization -----------------------------------------------------------------------------------
@dataclass
class StorageParams:
    namespace: str
    storage_uris: list[tuple[str, str]]  # (uri, mountPath)
    read_only: bool
    pod_spec: PodSpec
    config: KServeConfig
    cluster: ClusterState
    annotations: Mapping[str, str]
    legacy: bool
    storage_spec: tuple[str, dict[str, str] | None] | None = None  # (storage key, override parameters)
    storage_container: dict[str, Any] | None = None


def readonly_flag(annotations: Mapping[str, str]) -> bool:
    return annotations.get(C.ANN_STORAGE_READONLY) != "false"


def common_storage_initialization(p: StorageParams, warnings: list[str]) -> None:
    if C.ANN_AGENT in p.annotations:  # the multi-model agent downloads models itself
        return
    si = p.config.storage_initializer
    oci_mode = si.oci_mode
    if any(modelcar.effective_mode(uri, oci_mode) for uri, _ in p.storage_uris):
        if p.legacy:
            return  # the webhook's modelcar step handles the annotation
        modelcar.inject_oci_storage_uris(p.pod_spec, p.storage_uris, si, p.namespace)
    if find_init_container(p.pod_spec, C.CONTAINER_STORAGE_INITIALIZER) is not None or not p.storage_uris:
        return
    user = find_container(p.pod_spec, C.CONTAINER_KSERVE) or find_container(p.pod_spec, C.CONTAINER_WORKER)
    if user is None:
        raise InputError("Invalid configuration: cannot find container", "spec.containers")
    transformer = find_container(p.pod_spec, C.CONTAINER_TRANSFORMER)
    targets = [user["name"]] + ([transformer["name"]] if transformer is not None else [])
    init: Container | None = None

    if not p.legacy:
        if p.storage_container is not None and not p.storage_container.get("supportsMultiModelDownload"):
            name = (p.storage_container.get("container") or {}).get("name", "")
            raise InputError(
                f'storage container "{name}" does not support multi-model download; '
                "use the default kserve storage initializer or a compatible storage container",
                "spec.predictor.storageUris",
            )
        rest = [(u, m) for u, m in p.storage_uris if not modelcar.parse_oci_scheme(u)[2]]
        pvcs = [(u, m) for u, m in rest if u.startswith(C.PVC_URI_PREFIX)]
        downloads = [(u, m) for u, m in rest if not u.startswith(C.PVC_URI_PREFIX)]
        for uri, path in pvcs:
            claim, _ = parse_pvc_uri(uri)  # the path inside the claim is not used on this path (KServe behaviour)
            for name in targets:
                add_model_mount(
                    ModelMount(path, volume_name_from_path(path), p.read_only, pvc_name=claim), name, p.pod_spec
                )
        if downloads:
            try:
                parent = find_common_parent_path([m for _, m in downloads])
            except CommonParentPanic as panic:  # the admission check rejects such paths first; KServe panics here
                raise InputError(
                    f"storage path {panic.path} has no directory components: {panic}", "spec.predictor.storageUris"
                ) from None
            args = [x for pair in downloads for x in pair]
            init = create_init_container(si, args)
            p.pod_spec.setdefault("initContainers", []).append(init)
            mount = ModelMount(parent, volume_name_from_path(parent), p.read_only)
            for name in [*targets, init["name"]]:
                add_model_mount(mount, name, p.pod_spec)
    elif len(p.storage_uris) == 1:
        uri, path = p.storage_uris[0]
        mount = ModelMount(C.DEFAULT_MODEL_DIR, C.VOLUME_PROVISION_LOCATION, p.read_only)
        names = list(targets)
        if uri.startswith(C.PVC_URI_PREFIX):
            claim, sub_path = parse_pvc_uri(uri)
            mount = ModelMount(C.DEFAULT_MODEL_DIR, C.VOLUME_PVC_SOURCE, p.read_only, sub_path=sub_path, pvc_name=claim)
        else:
            init = create_init_container(si, [uri, path])
            p.pod_spec.setdefault("initContainers", []).append(init)
            names.append(init["name"])
        for name in names:
            add_model_mount(mount, name, p.pod_spec)
        for env in user.get("env") or []:
            if env.get("name") == C.ENV_STORAGE_URI and env.get("value"):
                env["value"] = C.DEFAULT_MODEL_DIR

    if init is not None:
        _finish_init_container(init, p, warnings)


def _finish_init_container(init: Container, p: StorageParams, warnings: list[str]) -> None:
    """Credentials, ClusterStorageContainer merge, CA bundle, Hugging Face env, confidential env — in KServe's order."""
    si = p.config.storage_initializer
    if p.storage_spec is not None:
        key, params = p.storage_spec
        add_storage_spec_credentials(
            init,
            namespace=p.namespace,
            annotations=p.annotations,
            storage_key=key,
            override_params=params,
            config=p.config.credentials,
            cluster=p.cluster,
            warnings=warnings,
        )
    else:
        add_service_account_credentials(
            init,
            p.pod_spec.setdefault("volumes", []),
            namespace=p.namespace,
            annotations=p.annotations,
            service_account_name=str(p.pod_spec.get("serviceAccountName") or ""),
            config=p.config.credentials,
            cluster=p.cluster,
            warnings=warnings,
        )
    env_names = {e.get("name"): e.get("value", "") for e in init.get("env") or []}
    needs_ca = bool(si.ca_bundle_config_map_name) or AWS_CA_BUNDLE_CONFIGMAP in env_names
    ca_name = ca_path = ""
    if needs_ca:
        ca_name = si.ca_bundle_config_map_name
        if p.namespace != C.KSERVE_NAMESPACE:
            ca_name = C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP
        ca_path = si.ca_bundle_volume_mount_path or C.DEFAULT_CA_BUNDLE_MOUNT_PATH
        for env in init.get("env") or []:
            if env.get("name") == AWS_CA_BUNDLE_CONFIGMAP:
                ca_name = env.get("value", "")
            if env.get("name") == AWS_CA_BUNDLE:
                ca_path = posixpath.dirname(env.get("value", "")) or "."
    if p.storage_container is not None:
        merged = merge_container(init, clone(p.storage_container.get("container") or {}))
        init.clear()
        init.update(merged)
    if needs_ca:
        add_env_if_absent(init, C.ENV_CA_BUNDLE_CONFIGMAP_NAME, ca_name)
        add_env_if_absent(init, C.ENV_CA_BUNDLE_MOUNT_POINT, ca_path)
        p.pod_spec.setdefault("volumes", []).append({"name": C.VOLUME_CA_BUNDLE, "configMap": {"name": ca_name}})
        init.setdefault("volumeMounts", []).append(volume_mount(C.VOLUME_CA_BUNDLE, ca_path, read_only=True))
    for name, value in C.HF_DEFAULT_ENV:
        add_env_if_absent(init, name, value)
    if p.annotations.get(C.ANN_CONFIDENTIAL_ENABLED) == "true":
        set_env(init, C.ENV_CONFIDENTIAL_ENABLED, "true")
        resource_id = p.annotations.get(C.ANN_CONFIDENTIAL_RESOURCE_ID, "")
        if resource_id:
            set_env(init, C.ENV_CONFIDENTIAL_RESOURCE_ID, resource_id)
    if not p.pod_spec.get("volumes"):
        p.pod_spec.pop("volumes", None)


# --- the two entry points ------------------------------------------------------------------------------------------
def inject_storage_initializer(
    metadata: dict[str, Any],
    pod_spec: PodSpec,
    *,
    namespace: str,
    config: KServeConfig,
    cluster: ClusterState,
    warnings: list[str],
) -> None:
    """``InjectStorageInitializer`` (pod webhook, single ``storageUri``); changes ``pod_spec`` in place."""
    annotations: Mapping[str, str] = metadata.get("annotations") or {}
    labels: Mapping[str, str] = metadata.get("labels") or {}
    src = annotations.get(C.ANN_STORAGE_SOURCE_URI)
    if src is None:
        return
    if C.LABEL_LOCAL_MODEL in labels:
        src = _local_model_uri(src, annotations)
    storage_spec = None
    if annotations.get(C.ANN_STORAGE_SPEC) == "true":
        params = None
        raw = annotations.get(C.ANN_STORAGE_SPEC_PARAM)
        if raw is not None:
            try:
                params = json.loads(raw)
            except ValueError as exc:
                raise InputError(
                    f"invalid {C.ANN_STORAGE_SPEC_PARAM} annotation: {exc}",
                    f"metadata.annotations[{C.ANN_STORAGE_SPEC_PARAM}]",
                ) from None
            if params is not None and not (
                isinstance(params, dict) and all(isinstance(v, str) for v in params.values())
            ):
                raise InputError(
                    f"invalid {C.ANN_STORAGE_SPEC_PARAM} annotation: expected a JSON object of strings",
                    f"metadata.annotations[{C.ANN_STORAGE_SPEC_PARAM}]",
                )
        storage_spec = (annotations.get(C.ANN_STORAGE_SPEC_KEY, ""), params)
    csc = storage_container_spec(src, annotations.get(C.ANN_STORAGE_CONTAINER_NAME), cluster)
    common_storage_initialization(
        StorageParams(
            namespace=namespace,
            storage_uris=[(src, C.DEFAULT_MODEL_DIR)],
            read_only=readonly_flag(annotations),
            pod_spec=pod_spec,
            config=config,
            cluster=cluster,
            annotations=annotations,
            legacy=True,
            storage_spec=storage_spec,
            storage_container=clone(csc),
        ),
        warnings,
    )


def _local_model_uri(src: str, annotations: Mapping[str, str]) -> str:
    pvc = annotations.get(C.ANN_LOCAL_MODEL_PVC_NAME)
    if pvc is None:
        raise InputError(f"Annotation {C.ANN_LOCAL_MODEL_PVC_NAME} not found", "metadata.annotations")
    return cached_model_uri(src, annotations.get(C.ANN_LOCAL_MODEL_SOURCE_URI, ""), pvc)


def cached_model_uri(storage_uri: str, source_uri: str, pvc_name: str) -> str:
    """``pvc://<pvc>/models/<storage key><subpath>``: where a cached model is read from. The sub-path is the storage
    URI past the cache's source URI, with a leading ``/`` (the pod webhook's and ``attachModelArtifacts``' rewrite)."""
    sub_path = storage_uri.removeprefix(source_uri)
    if not sub_path.startswith("/"):
        sub_path = "/" + sub_path
    return f"pvc://{pvc_name}/models/{local_model_storage_key(source_uri)}{sub_path}"


def local_model_storage_key(source_uri: str) -> str:
    """``v1alpha1.GetStorageKey``: the first 16 hex digits of the source URI's SHA-256."""
    return hashlib.sha256(source_uri.encode()).hexdigest()[:16]


def set_istio_cni_security_context(metadata: dict[str, Any], pod_spec: PodSpec) -> None:
    """``SetIstioCniSecurityContext``: run the storage initializer as the Istio sidecar's UID where needed.

    In a rendered template the Istio sidecar is not there yet (Istio injects it into the Pod), so only the explicit
    ``serving.kserve.io/storage-initializer-uid`` annotation normally has an effect offline.
    """
    init = find_init_container(pod_spec, C.CONTAINER_STORAGE_INITIALIZER)
    if init is None:
        return
    annotations: Mapping[str, str] = metadata.get("annotations") or {}
    if C.ANN_STORAGE_INITIALIZER_UID in annotations:
        try:
            uid = int(str(annotations[C.ANN_STORAGE_INITIALIZER_UID]), 10)
        except ValueError:
            return  # KServe ignores an unparsable value
        if -(2**63) <= uid < 2**63:
            init.setdefault("securityContext", {})["runAsUser"] = uid
        return
    if find_init_container(pod_spec, C.CONTAINER_ISTIO_INIT) is not None:
        return
    if annotations.get(C.ANN_ISTIO_INTERCEPTION_MODE) != C.ISTIO_INTERCEPT_MODE_REDIRECT:
        return
    status = annotations.get(C.ANN_ISTIO_SIDECAR_STATUS)
    if status is None:
        return
    try:
        decoded = json.loads(status)
    except ValueError as exc:
        raise InputError(f"invalid {C.ANN_ISTIO_SIDECAR_STATUS} annotation: {exc}", "metadata.annotations") from None
    containers = decoded.get("containers") if isinstance(decoded, dict) else None
    sidecar_name = (
        containers[0] if isinstance(containers, list) and containers and isinstance(containers[0], str) else ""
    )
    sidecar = find_container(pod_spec, sidecar_name) if sidecar_name else None
    if sidecar is None:
        return
    sidecar_uid = (sidecar.get("securityContext") or {}).get("runAsUser")
    init.setdefault("securityContext", {})["runAsUser"] = (
        C.DEFAULT_ISTIO_SIDECAR_UID if sidecar_uid is None else sidecar_uid
    )


def apply_storage_uris(
    pod_spec: dict[str, Any],
    storage_uris: list[dict[str, Any]],
    *,
    annotations: Mapping[str, str],
    namespace: str,
    config: KServeConfig,
    cluster: ClusterState,
    storage_container_name: str | None = None,
    storage_spec: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The controller's ``storageUris`` step on a workload pod template (``IsLegacyURI=false``).

    ``storage_uris`` are the component's ``storageUris`` entries (``{uri, mountPath}``, mountPath defaulting to
    ``/mnt/models``); ``annotations`` are the pod template's. ``storage_container_name`` is the component's
    ``storageContainerName`` (default: the ``storage-container-name`` annotation); ``storage_spec`` its model
    ``storage`` (``{key, parameters}``), used for credentials only when both are set. Returns the new pod spec and
    warnings.
    """
    spec = clone(pod_spec)
    warnings: list[str] = []
    pairs: list[tuple[str, str]] = []
    for i, entry in enumerate(storage_uris):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("uri"), str) or not entry.get("uri"):
            raise InputError("storageUris entry needs a uri", f"storageUris[{i}].uri")
        pairs.append((entry["uri"], str(entry.get("mountPath") or C.DEFAULT_MODEL_DIR)))
    if not pairs:
        return spec, warnings
    # The controller resolves the storage container from the first URI, as KServe's reconcilers do.
    csc_name = (
        storage_container_name if storage_container_name is not None else annotations.get(C.ANN_STORAGE_CONTAINER_NAME)
    )
    csc = storage_container_spec(pairs[0][0], csc_name, cluster)
    spec_creds = None
    if storage_spec is not None and storage_spec.get("key") is not None and storage_spec.get("parameters") is not None:
        spec_creds = (str(storage_spec["key"]), dict(storage_spec["parameters"]))
    common_storage_initialization(
        StorageParams(
            namespace=namespace,
            storage_uris=pairs,
            read_only=readonly_flag(annotations),
            pod_spec=spec,
            config=config,
            cluster=cluster,
            annotations=annotations,
            legacy=False,
            storage_spec=spec_creds,
            storage_container=clone(csc),
        ),
        warnings,
    )
    return spec, warnings
