"""Volumes, mounts and init containers on a pod spec: the helpers the storage initializer and modelcar share.

Ports the small helpers of ``pkg/webhook/admission/pod/storage_initializer_injector.go`` and ``pkg/utils/utils.go``.
They change the pod spec dict they are given.
"""

from __future__ import annotations

import posixpath
from typing import Any, NamedTuple

from ... import constants as C
from ...inputs.config import StorageInitializerConfig
from ...kube.merge import CONTAINER_LIST_KEYS, strategic_merge
from ...kube.quantity import requirements

PodSpec = dict[str, Any]
Container = dict[str, Any]


def find_container(pod_spec: PodSpec, name: str) -> Container | None:
    for container in pod_spec.get("containers") or []:
        if container.get("name") == name:
            return container
    return None


def find_init_container(pod_spec: PodSpec, name: str) -> Container | None:
    for container in pod_spec.get("initContainers") or []:
        if container.get("name") == name:
            return container
    return None


def volume_name_from_path(path: str) -> str:
    """``/mnt/models/base`` → ``mnt-models-base`` (``GetVolumeNameFromPath``)."""
    return path.strip("/").replace("/", "-")


def parent_directory(path: str) -> str:
    """``GetParentDirectory``: ``filepath.Dir`` with ``.`` and ``/`` both meaning ``/``."""
    parent = posixpath.dirname(posixpath.normpath(path)) if path else "."
    return "/" if parent in (".", "/", "") else parent


def add_volume_if_absent(pod_spec: PodSpec, volume: dict[str, Any]) -> None:
    volumes = pod_spec.setdefault("volumes", [])
    if not any(v.get("name") == volume["name"] for v in volumes):
        volumes.append(volume)


def volume_mount(name: str, mount_path: str, *, read_only: bool = False, sub_path: str = "") -> dict[str, Any]:
    """A VolumeMount as it serializes: ``readOnly: false`` and an empty ``subPath`` are omitted."""
    mount: dict[str, Any] = {"name": name, "mountPath": mount_path}
    if sub_path:
        mount["subPath"] = sub_path
    if read_only:
        mount["readOnly"] = True
    return mount


class ModelMount(NamedTuple):
    mount_path: str
    volume_name: str
    read_only: bool
    sub_path: str = ""
    pvc_name: str = ""


def add_model_mount(mount: ModelMount, container_name: str, pod_spec: PodSpec) -> None:
    """``AddModelMount``: mount (once per volume name) into the named container; init containers mount writable."""
    target = find_container(pod_spec, container_name)
    read_only = mount.read_only
    if target is None:
        target = find_init_container(pod_spec, container_name)
        read_only = False
    if target is None or any(m.get("name") == mount.volume_name for m in target.get("volumeMounts") or []):
        return
    target.setdefault("volumeMounts", []).append(
        volume_mount(mount.volume_name, mount.mount_path, read_only=read_only, sub_path=mount.sub_path)
    )
    source = {"persistentVolumeClaim": {"claimName": mount.pvc_name}} if mount.pvc_name else {"emptyDir": {}}
    add_volume_if_absent(pod_spec, {"name": mount.volume_name, **source})


def parse_pvc_uri(uri: str) -> tuple[str, str]:
    """``pvc://claim/sub/path`` → ``("claim", "sub/path")``."""
    parts = uri.removeprefix(C.PVC_URI_PREFIX).split("/")
    return parts[0], "/".join(parts[1:])


def create_init_container(cfg: StorageInitializerConfig, args: list[str]) -> Container:
    """``CreateInitContainerWithConfig``."""
    return {
        "name": C.CONTAINER_STORAGE_INITIALIZER,
        "image": cfg.image or C.STORAGE_INITIALIZER_IMAGE,
        "args": list(args),
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "resources": requirements(
            "storageInitializer", cfg.cpu_limit, cfg.memory_limit, cfg.cpu_request, cfg.memory_request
        ),
    }


def merge_container(base: Container, overlay: Container) -> Container:
    """``MergeContainerWithPatch``: strategic merge; an env entry keeps only the overlay's kind of value."""
    merged = strategic_merge(base, overlay, CONTAINER_LIST_KEYS)
    wanted = {e.get("name"): e for e in overlay.get("env") or [] if isinstance(e, dict)}
    for env in merged.get("env") or []:
        over = wanted.get(env.get("name"))
        if over is not None and "value" in env and "valueFrom" in env:
            env.pop("value" if over.get("valueFrom") else "valueFrom")
    if not merged.get("name"):
        merged["name"] = base.get("name", "")
    return merged


# --- ClusterStorageContainer ---------------------------------------------------------------------------------------
