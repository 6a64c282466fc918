"""OCI model sources: modelcar sidecar, native ImageVolume, or fetch by the storage initializer.

Ports ``InjectModelcar`` (``pod/storage_initializer_injector.go``), ``ConfigureModelcarToContainer`` /
``ConfigureOciNativeToContainer`` / ``ParseOciScheme`` (``pkg/utils/storage.go``) and ``ConfigureOciFetchToContainer``
(``pod/oci_fetch.go``). Helpers change the pod spec dict they are given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import constants as C
from ...errors import InputError, go_quote
from ...inputs.config import StorageInitializerConfig
from ...kube.quantity import canonical_quantity, is_quantity
from .pod_edits import (
    ModelMount,
    add_model_mount,
    create_init_container,
    parent_directory,
    volume_name_from_path,
)

PodSpec = dict[str, Any]


def parse_oci_scheme(uri: str) -> tuple[str, str, bool]:
    """``oci+native://x`` → ``("native", "oci://x", True)``; ``oci://x`` → ``("", "oci://x", True)``; else not OCI."""
    if uri.startswith("oci+"):
        rest = uri[4:]
        sep = rest.find("://")
        if sep > 0:
            return rest[:sep], C.OCI_URI_PREFIX + rest[sep + 3 :], True
    if uri.startswith(C.OCI_URI_PREFIX):
        return "", uri, True
    return "", uri, False


def effective_mode(uri: str, config_mode: str) -> str:
    """The OCI mode a URI gets ("" when it is not OCI or OCI support is off and the scheme names no mode)."""
    mode, _, is_oci = parse_oci_scheme(uri)
    if not is_oci:
        return ""
    return mode or config_mode


def _find(pod_spec: PodSpec, key: str, name: str) -> dict[str, Any] | None:
    return next((c for c in pod_spec.get(key) or [] if c.get("name") == name), None)


def _mount_if_absent(container: dict[str, Any], name: str, path: str, *, read_only: bool, sub_path: str = "") -> None:
    mounts = container.setdefault("volumeMounts", [])
    if any(m.get("name") == name for m in mounts):
        return
    mount: dict[str, Any] = {"name": name, "mountPath": path}
    if sub_path:
        mount["subPath"] = sub_path
    if read_only:
        mount["readOnly"] = True
    mounts.append(mount)


def _volume_if_absent(pod_spec: PodSpec, volume: dict[str, Any]) -> None:
    volumes = pod_spec.setdefault("volumes", [])
    if not any(v.get("name") == volume["name"] for v in volumes):
        volumes.append(volume)


def _parent(path: str) -> str:
    return parent_directory(path)


def _shell_quote(text: str) -> str:
    """``ShellQuote``: safe strings unchanged, others single-quoted."""
    if not text:
        return "''"
    if all(c.isascii() and (c.isalnum() or c in "/._-") for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def _modelcar_command(model_path: str) -> str:
    # "$$$$" is literal: Kubernetes turns "$$" into "$" when expanding args, leaving the shell's "$$" (its PID).
    link = f"ln -sf /proc/$$$$/root/models {_shell_quote(model_path)} && sleep infinity"
    if model_path != C.DEFAULT_MODEL_DIR:
        return f"mkdir -p {_shell_quote(_parent(model_path))} && {link}"
    return link


def _modelcar_resources(si: StorageInitializerConfig) -> dict[str, dict[str, str]]:
    cpu = si.cpu_modelcar or C.CPU_MODELCAR_DEFAULT
    memory = si.memory_modelcar or C.MEMORY_MODELCAR_DEFAULT
    for key, value in (("cpuModelcar", cpu), ("memoryModelcar", memory)):
        if not is_quantity(value):
            raise InputError(f'invalid "storageInitializer".{key} quantity {value!r}', f"data.storageInitializer.{key}")
    amounts = {"cpu": canonical_quantity(cpu), "memory": canonical_quantity(memory)}
    return {"limits": dict(amounts), "requests": dict(amounts)}


def modelcar_names(index: int) -> tuple[str, str, str]:
    """(sidecar, init container, volume) names; index 0 keeps the historic unsuffixed names."""
    if index == 0:
        return C.CONTAINER_MODELCAR, C.CONTAINER_MODELCAR_INIT, C.VOLUME_PROVISION_LOCATION
    suffix = f"-{index}"
    return C.CONTAINER_MODELCAR + suffix, C.CONTAINER_MODELCAR_INIT + suffix, C.VOLUME_PROVISION_LOCATION + suffix


def configure_modelcar(
    uri: str, pod_spec: PodSpec, target_name: str, model_path: str, si: StorageInitializerConfig, index: int
) -> None:
    """``ConfigureModelcarToContainer``."""
    target = _find(pod_spec, "containers", target_name)
    if target is None:
        raise InputError(f"no container found with name {target_name}", "spec.containers")
    sidecar_name, init_name, volume = modelcar_names(index)
    env = target.setdefault("env", [])
    existing = next((e for e in env if e.get("name") == C.ENV_MODEL_INIT_MODE), None)
    if existing is not None:
        existing["value"] = "async"
    else:
        env.append({"name": C.ENV_MODEL_INIT_MODE, "value": "async"})
    parent = _parent(model_path)
    _volume_if_absent(pod_spec, {"name": volume, "emptyDir": {}})
    _mount_if_absent(target, volume, parent, read_only=False)
    if si.uid_modelcar is not None:
        target.setdefault("securityContext", {})["runAsUser"] = si.uid_modelcar
    if _find(pod_spec, "containers", sidecar_name) is None:
        image = uri.removeprefix(C.OCI_URI_PREFIX)
        resources = _modelcar_resources(si)
        sidecar: dict[str, Any] = {
            "name": sidecar_name,
            "image": image,
            "volumeMounts": [{"name": volume, "mountPath": parent}],
            "args": ["sh", "-c", _modelcar_command(model_path)],
            "resources": resources,
            "terminationMessagePolicy": "FallbackToLogsOnError",
        }
        if si.uid_modelcar is not None:
            sidecar["securityContext"] = {"runAsUser": si.uid_modelcar}
        pod_spec.setdefault("containers", []).append(sidecar)
        check = (
            f"echo 'Pre-fetching modelcar {image}: ' && [ -d /models ] && [ \"$$(ls -A /models)\" ] && "
            "echo 'OK ... Prefetched and valid (/models exists)' || "
            "(echo 'NOK ... Prefetched but modelcar is invalid (/models does not exist or is empty)' && exit 1)"
        )
        pod_spec.setdefault("initContainers", []).append(
            {
                "name": init_name,
                "image": image,
                "args": ["sh", "-c", check],
                "resources": _modelcar_resources(si),
                "terminationMessagePolicy": "FallbackToLogsOnError",
            }
        )
    pod_spec["shareProcessNamespace"] = True


def configure_oci_native(uri: str, pod_spec: PodSpec, target_name: str, model_path: str) -> None:
    """``ConfigureOciNativeToContainer``: a Kubernetes ImageVolume mounted read-only with ``subPath: models``."""
    target = _find(pod_spec, "containers", target_name)
    if target is None:
        raise InputError(f"no container found with name {target_name}", "spec.containers")
    volume = volume_name_from_path(model_path) or C.VOLUME_OCI_NATIVE_DEFAULT
    for mount in target.get("volumeMounts") or []:
        if mount.get("mountPath") == model_path and mount.get("name") != volume:
            raise InputError(
                f"mountPath {go_quote(model_path)} already used by volume {go_quote(str(mount.get('name')))}",
                "spec.containers",
            )
    _volume_if_absent(
        pod_spec,
        {"name": volume, "image": {"reference": uri.removeprefix(C.OCI_URI_PREFIX), "pullPolicy": "IfNotPresent"}},
    )
    _mount_if_absent(target, volume, model_path, read_only=True, sub_path="models")


def configure_oci_fetch(
    uri: str, pod_spec: PodSpec, target_name: str, model_path: str, si: StorageInitializerConfig, namespace: str
) -> None:
    """``ConfigureOciFetchToContainer``: the storage initializer downloads the image's model layers."""
    if _find(pod_spec, "containers", target_name) is None:
        raise InputError(f"no container found with name {target_name}", "spec.containers")
    init = _find(pod_spec, "initContainers", C.CONTAINER_STORAGE_INITIALIZER)
    if init is None:
        init = create_init_container(si, [uri, model_path])
        pod_spec.setdefault("initContainers", []).append(init)
        _mount_pull_secret(pod_spec, init)
        _mount_ca_bundle_for_fetch(pod_spec, init, si, namespace)
        if si.oci_insecure_registry:
            init.setdefault("env", []).append({"name": C.ENV_OCI_INSECURE_REGISTRY, "value": "true"})
    else:
        args = init.setdefault("args", [])
        if not any(args[i] == uri and args[i + 1] == model_path for i in range(0, len(args) - 1, 2)):
            args.extend([uri, model_path])
    mount = ModelMount(model_path, volume_name_from_path(model_path) or C.VOLUME_OCI_FETCH_DEFAULT, read_only=False)
    add_model_mount(mount, C.CONTAINER_STORAGE_INITIALIZER, pod_spec)
    add_model_mount(mount, target_name, pod_spec)


def _mount_pull_secret(pod_spec: PodSpec, init: dict[str, Any]) -> None:
    """The pod's first imagePullSecret projected as a docker config.json (registry credentials for the fetch)."""
    secrets = pod_spec.get("imagePullSecrets") or []
    if not secrets:
        return
    if any(v.get("name") == C.VOLUME_OCI_FETCH_DOCKER_CONFIG for v in pod_spec.get("volumes") or []):
        return
    pod_spec.setdefault("volumes", []).append(
        {
            "name": C.VOLUME_OCI_FETCH_DOCKER_CONFIG,
            "secret": {
                "secretName": secrets[0].get("name", ""),
                "defaultMode": 0o400,
                "items": [{"key": ".dockerconfigjson", "path": "config.json"}],
            },
        }
    )
    init.setdefault("volumeMounts", []).append(
        {"name": C.VOLUME_OCI_FETCH_DOCKER_CONFIG, "mountPath": C.OCI_FETCH_DOCKER_CONFIG_DIR, "readOnly": True}
    )
    init.setdefault("env", []).append(
        {"name": C.ENV_OCI_DOCKER_CONFIG, "value": C.OCI_FETCH_DOCKER_CONFIG_DIR + "/config.json"}
    )


def _mount_ca_bundle_for_fetch(
    pod_spec: PodSpec, init: dict[str, Any], si: StorageInitializerConfig, namespace: str
) -> None:
    if not si.ca_bundle_config_map_name:
        return
    if any(v.get("name") == C.VOLUME_CA_BUNDLE for v in pod_spec.get("volumes") or []):
        return
    name = si.ca_bundle_config_map_name if namespace == C.KSERVE_NAMESPACE else C.DEFAULT_GLOBAL_CA_BUNDLE_CONFIGMAP
    path = si.ca_bundle_volume_mount_path or C.DEFAULT_CA_BUNDLE_MOUNT_PATH
    init.setdefault("env", []).extend(
        [{"name": C.ENV_CA_BUNDLE_CONFIGMAP_NAME, "value": name}, {"name": C.ENV_CA_BUNDLE_MOUNT_POINT, "value": path}]
    )
    pod_spec.setdefault("volumes", []).append({"name": C.VOLUME_CA_BUNDLE, "configMap": {"name": name}})
    init.setdefault("volumeMounts", []).append({"name": C.VOLUME_CA_BUNDLE, "mountPath": path, "readOnly": True})


def validate_oci_mount_paths(paths: list[str], mode: str) -> None:
    """``ValidateOCIMountPaths``: native needs distinct paths, modelcar distinct parent directories."""
    if len(paths) <= 1:
        return
    if mode == C.OCI_MODE_NATIVE:
        seen: set[str] = set()
        for path in paths:
            if path in seen:
                raise InputError(
                    f"OCI mount path {go_quote(path)} is specified more than once; each native ImageVolume must have a unique mount path",
                    "spec.predictor.storageUris",
                )
            seen.add(path)
        return
    parents: dict[str, str] = {}
    for path in paths:
        parent = _parent(path)
        if parent in parents:
            raise InputError(
                f"OCI mount paths {go_quote(parents[parent])} and {go_quote(path)} share parent directory {go_quote(parent)}, which would cause "
                "volume mount shadowing; use mount paths with distinct parent directories",
                "spec.predictor.storageUris",
            )
        parents[parent] = path


def _configure(
    mode: str,
    uri: str,
    pod_spec: PodSpec,
    target: str,
    path: str,
    si: StorageInitializerConfig,
    namespace: str,
    index: int,
) -> None:
    if mode == C.OCI_MODE_NATIVE:
        configure_oci_native(uri, pod_spec, target, path)
    elif mode == C.OCI_MODE_FETCH:
        configure_oci_fetch(uri, pod_spec, target, path, si, namespace)
    else:
        configure_modelcar(uri, pod_spec, target, path, si, index)


def inject_oci_storage_uris(
    pod_spec: PodSpec, storage_uris: list[tuple[str, str]], si: StorageInitializerConfig, namespace: str
) -> None:
    """The OCI part of ``CommonStorageInitialization`` for ``storageUris`` (one sidecar/volume per OCI URI)."""
    user = _find(pod_spec, "containers", C.CONTAINER_KSERVE)
    if user is None and _find(pod_spec, "containers", C.CONTAINER_WORKER) is None:
        raise InputError("Invalid configuration: cannot find container", "spec.containers")
    oci_paths = [path for uri, path in storage_uris if parse_oci_scheme(uri)[2]]
    if len(oci_paths) > C.MAX_OCI_SOURCES_PER_POD:
        raise InputError(
            f"too many OCI sources ({len(oci_paths)}); maximum is {C.MAX_OCI_SOURCES_PER_POD} per pod",
            "spec.predictor.storageUris",
        )
    validate_oci_mount_paths(oci_paths, si.oci_mode)
    target = C.CONTAINER_KSERVE if user is not None else C.CONTAINER_WORKER
    index = 0
    for uri, path in storage_uris:
        parsed, normalized, is_oci = parse_oci_scheme(uri)
        if not is_oci:
            continue
        mode = parsed or si.oci_mode
        if not mode:
            continue
        _configure(mode, normalized, pod_spec, target, path, si, namespace, index)
        if _find(pod_spec, "containers", C.CONTAINER_TRANSFORMER) is not None:
            _configure(mode, normalized, pod_spec, C.CONTAINER_TRANSFORMER, path, si, namespace, index)
        index += 1


def inject_modelcar(
    annotations: Mapping[str, str], pod_spec: PodSpec, si: StorageInitializerConfig, namespace: str
) -> None:
    """``InjectModelcar`` (pod webhook, last step; registered only when OCI support is on)."""
    src = annotations.get(C.ANN_STORAGE_SOURCE_URI)
    if src is None:
        return
    parsed, normalized, is_oci = parse_oci_scheme(src)
    if not is_oci:
        return
    mode = parsed or si.oci_mode
    if _find(pod_spec, "containers", C.CONTAINER_KSERVE) is not None:
        target = C.CONTAINER_KSERVE
    elif _find(pod_spec, "containers", C.CONTAINER_WORKER) is not None:
        target = C.CONTAINER_WORKER
    else:
        raise InputError(f"Invalid configuration: cannot find container: {C.CONTAINER_KSERVE}", "spec.containers")
    _configure(mode, normalized, pod_spec, target, C.DEFAULT_MODEL_DIR, si, namespace, 0)
    if _find(pod_spec, "containers", C.CONTAINER_TRANSFORMER) is not None:
        _configure(mode, normalized, pod_spec, C.CONTAINER_TRANSFORMER, C.DEFAULT_MODEL_DIR, si, namespace, 0)
