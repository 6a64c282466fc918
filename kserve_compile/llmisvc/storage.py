"""Model artifacts on an LLMInferenceService pod: ``attachModelArtifacts``.

Mirrors ``pkg/controller/v1alpha2/llmisvc/workload_storage.go``: ``hf://`` and ``s3://`` get the storage-initializer
init container (credentials from the pod's ServiceAccount, else ``default``, as for InferenceService) writing an
emptyDir mounted read-only at ``/mnt/models``; ``pvc://`` mounts the claim read-only with its sub-path and drops
any storage-initializer; ``oci://`` is a modelcar or an image volume by the storage config; a LocalModelCache
label rewrites the URI to its ``pvc://`` first; ``storageInitializer.enabled: false`` leaves the pod alone. The
builders are the project's (``kserve_compile.render.pod_webhook``: ``storage``, ``credentials``, ``modelcar``).
"""

from __future__ import annotations

from typing import Any

from .. import constants as C
from ..errors import InputError
from ..inputs.cluster_state import ClusterState
from ..inputs.config import KServeConfig
from ..kube.fields import set_env
from ..kube.paths import CommonParentPanic, find_common_parent_path
from ..render.pod_webhook.credentials import add_service_account_credentials
from ..render.pod_webhook.modelcar import configure_modelcar, configure_oci_native, parse_oci_scheme
from ..render.pod_webhook.storage import (
    ModelMount,
    add_model_mount,
    cached_model_uri,
    create_init_container,
    find_init_container,
    merge_container,
    parse_pvc_uri,
)
from .cabundle import inject_ca_bundle
from .llm_types import LLMService, Spec, get_path
from .lora import attach_adapters, download_pairs, enumerate_adapters

MODEL_PATH = "/mnt/models"
HF_DEFAULT_ENV = (
    ("HF_HUB_ENABLE_HF_TRANSFER", "1"),
    ("HF_XET_HIGH_PERFORMANCE", "1"),
    ("HF_XET_NUM_CONCURRENT_RANGE_GETS", "8"),
)


def _strip_storage_initializer(pod: dict[str, Any]) -> dict[str, Any] | None:
    """``extractAndStripStorageInitializer``: remove (and return) a user-written storage-initializer."""
    found = None
    kept = []
    for init in pod.get("initContainers") or []:
        if isinstance(init, dict) and init.get("name") == C.CONTAINER_STORAGE_INITIALIZER:
            found = init
        else:
            kept.append(init)
    if "initContainers" in pod:
        pod["initContainers"] = kept
    return found


def model_uri(svc: LLMService, spec: Spec) -> str:
    """The URI to attach: a covering LocalModelCache's ``pvc://…/models/<key>`` when the service is labelled so."""
    uri = str(get_path(spec, "model", "uri") or "")
    if C.LABEL_LOCAL_MODEL not in svc.labels:
        return uri
    source = svc.annotations.get(C.ANN_LOCAL_MODEL_SOURCE_URI)
    pvc = svc.annotations.get(C.ANN_LOCAL_MODEL_PVC_NAME)
    for key, value in ((C.ANN_LOCAL_MODEL_SOURCE_URI, source), (C.ANN_LOCAL_MODEL_PVC_NAME, pvc)):
        if value is None:
            raise InputError(
                f"LLMInferenceService {svc.namespace}/{svc.name}: annotation {key} not found", "metadata.annotations"
            )
    return cached_model_uri(uri, str(source), str(pvc))


def attach_model_artifacts(
    pod: dict[str, Any],
    svc: LLMService,
    spec: Spec,
    ctx: Any,
    *,
    container: str = "main",
    model_path: str = MODEL_PATH,
    service_account: dict[str, Any] | str | None = None,
    notes: list[str],
    lora: bool = True,
) -> None:
    """Mutate ``pod`` (a PodSpec) as KServe does for the model URI of ``spec``.

    ``service_account`` is the one KServe hands to the credential builder: a ServiceAccount object the controller
    itself creates (its secrets copied from ``default``), the name of an existing one (an input), or None for
    ``default``. ``lora``: whether this pod serves the LoRA adapters (the model server's pods do, the tokenizer
    does not)."""
    uri = model_uri(svc, spec)
    scheme, sep, _ = uri.partition("://")
    if not sep:
        raise InputError(f"invalid model URI: {uri}", "spec.model.uri")
    if get_path(spec, "storageInitializer", "enabled") is False:
        return
    config: KServeConfig = ctx.config
    adapters = enumerate_adapters(spec) if lora else []
    pairs = download_pairs(adapters)
    if scheme in ("pvc", "oci", "oci+native"):
        if scheme == "pvc":
            claim, sub_path = parse_pvc_uri(uri)
            add_model_mount(ModelMount(model_path, C.VOLUME_PVC_SOURCE, True, sub_path, claim), container, pod)
        else:
            _attach_oci(uri, scheme, pod, container, model_path, config)
        if pairs:
            _download(pairs, pod, svc, ctx, container, service_account, notes)
        elif scheme != "oci+native":
            _strip_storage_initializer(pod)
    elif scheme in ("hf", "s3"):
        if pairs:
            _download([(uri, MODEL_PATH), *pairs], pod, svc, ctx, container, service_account, notes)
        else:
            init = _attach_storage_initializer(
                uri, pod, container, model_path, config, get_path(spec, "model", "confidential")
            )
            _credentials(init, pod, svc, config, ctx.cluster, service_account, notes)
            if scheme == "hf":
                _hf_env(init)
            else:
                inject_ca_bundle(svc.namespace, pod, init, config.storage_initializer)
    else:
        raise InputError(f"unsupported schema in model URI: {uri}", "spec.model.uri")
    if adapters:
        attach_adapters(pod, spec, svc.namespace, adapters)


def _hf_env(init: dict[str, Any]) -> None:
    env = init.setdefault("env", [])
    for name, value in HF_DEFAULT_ENV:
        if not any(e.get("name") == name for e in env):
            env.append({"name": name, "value": value})


def _download(
    pairs: list[tuple[str, str]], pod: dict[str, Any], svc: LLMService, ctx: Any, container: str,
    service_account: dict[str, Any] | str | None, notes: list[str],
) -> None:  # fmt: skip
    """``attachMultiStorageDownloads``: one storage-initializer downloading every (uri, path), the common parent
    directory mounted writable there and read-only in the model server."""
    config: KServeConfig = ctx.config
    user = _strip_storage_initializer(pod)
    try:  # "" only for no paths, which never reach here; KServe's attachMultiStorageDownloads maps it to "/" too
        parent = find_common_parent_path([path for _, path in pairs]) or "/"
    except CommonParentPanic as panic:  # KServe's reconcile panics on this
        raise InputError(f"storage path {panic.path} has no directory components: {panic}", "spec.model") from None
    init = create_init_container(config.storage_initializer, [x for pair in pairs for x in pair])
    if user is not None:
        init = _merge_user(init, user)
    pod.setdefault("initContainers", []).append(init)
    add_model_mount(ModelMount(parent, C.VOLUME_PROVISION_LOCATION, False), C.CONTAINER_STORAGE_INITIALIZER, pod)
    add_model_mount(ModelMount(parent, C.VOLUME_PROVISION_LOCATION, True), container, pod)
    init = find_init_container(pod, C.CONTAINER_STORAGE_INITIALIZER) or init
    _credentials(init, pod, svc, config, ctx.cluster, service_account, notes)
    if any(uri.startswith("hf://") for uri, _ in pairs):
        _hf_env(init)
    inject_ca_bundle(svc.namespace, pod, init, config.storage_initializer)


def _merge_user(init: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """User overrides of the storage-initializer merged in; its name, args and command stay KServe's."""
    merged = merge_container(init, user)
    for key in ("name", "args", "command"):
        if key in init:
            merged[key] = init[key]
        else:
            merged.pop(key, None)
    return merged


def _attach_oci(
    uri: str, scheme: str, pod: dict[str, Any], container: str, model_path: str, config: KServeConfig
) -> None:
    si = config.storage_initializer
    if scheme == "oci+native":
        _, normalized, _ = parse_oci_scheme(uri)
        configure_oci_native(normalized, pod, container, model_path)
        return
    mode = si.oci_mode
    if not mode:
        raise InputError("OCI modelcars is not enabled", "spec.model.uri")
    if mode == "native":
        configure_oci_native(uri, pod, container, model_path)
    else:
        configure_modelcar(uri, pod, container, model_path, si, 0)


def _attach_storage_initializer(
    uri: str, pod: dict[str, Any], container: str, model_path: str, config: KServeConfig, confidential: Any = None
) -> dict[str, Any]:
    """``attachStorageInitializer``: KServe's init container (confidential-model env when asked), user overrides
    merged (name/args/command kept)."""
    user = _strip_storage_initializer(pod)
    init = create_init_container(config.storage_initializer, [uri, MODEL_PATH])
    if isinstance(confidential, dict) and confidential.get("enabled"):
        set_env(init, "CONFIDENTIAL_ENABLED", "true")  # ApplyConfidentialContainerConfig
        if confidential.get("resourceId"):
            set_env(init, "CONFIDENTIAL_RESOURCE_ID", str(confidential["resourceId"]))
    if user is not None:
        init = _merge_user(init, user)
    pod.setdefault("initContainers", []).append(init)
    add_model_mount(ModelMount(MODEL_PATH, C.VOLUME_PROVISION_LOCATION, False), C.CONTAINER_STORAGE_INITIALIZER, pod)
    add_model_mount(ModelMount(model_path, C.VOLUME_PROVISION_LOCATION, True), container, pod)
    return find_init_container(pod, C.CONTAINER_STORAGE_INITIALIZER) or init


class _WithAccount:
    """The live objects, plus a ServiceAccount the controller creates in the same reconcile."""

    def __init__(self, cluster: ClusterState, account: dict[str, Any]) -> None:
        self._cluster = cluster
        self._account = account

    def service_account(self, namespace: str, name: str) -> dict[str, Any] | None:
        if name == (self._account.get("metadata") or {}).get("name"):
            return self._account
        return self._cluster.service_account(namespace, name)

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._cluster.secret(namespace, name)


def _credentials(
    init: dict[str, Any], pod: dict[str, Any], svc: LLMService, config: KServeConfig, cluster: ClusterState,
    sa: dict[str, Any] | str | None, notes: list[str],
) -> None:  # fmt: skip
    volumes = pod.setdefault("volumes", [])
    view: Any = cluster
    name = sa or "default"
    if isinstance(sa, dict):
        view, name = _WithAccount(cluster, sa), str(sa["metadata"]["name"])
    add_service_account_credentials(
        init, volumes, namespace=svc.namespace, annotations=svc.annotations, service_account_name=str(name),
        config=config.credentials, cluster=view, warnings=notes,
    )  # fmt: skip
    if not volumes:
        pod.pop("volumes", None)
