"""KV-cache secondary tiers on a pod (``attachKVCacheSecondaryTiers`` in
``pkg/controller/v1alpha2/llmisvc/workload_kvcache.go``): one volume per file-system tier, mounted in ``main``
at ``/mnt/kv-cache-<i>``; an emptyDir tier also adds its size to main's ephemeral-storage request."""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..kube.quantity import QUANTITY_FORMAT_ERROR, canonical_quantity, is_quantity, parse_quantity


def attach_secondary_tiers(pod: dict[str, Any], secondary: Any, container_name: str) -> None:
    for i, tier in enumerate(secondary or []):
        fs = tier.get("fileSystem") if isinstance(tier, dict) else None
        if isinstance(fs, dict):
            _attach(pod, fs, f"kv-cache-secondary-{i}", f"/mnt/kv-cache-{i}", container_name)


def _attach(pod: dict[str, Any], fs: dict[str, Any], volume: str, mount_path: str, container_name: str) -> None:
    pvc = found if isinstance(found := fs.get("pvc"), dict) else {}
    sub_path = ""
    if isinstance(fs.get("emptyDir"), dict):
        source: dict[str, Any] = {"emptyDir": {"sizeLimit": fs["emptyDir"].get("size")}}
    elif pvc.get("spec") is not None:
        source = {"ephemeral": {"volumeClaimTemplate": {"spec": pvc["spec"]}}}
    elif isinstance(pvc.get("ref"), dict):
        source = {"persistentVolumeClaim": {"claimName": pvc["ref"].get("name", "")}}
        sub_path = str(pvc["ref"].get("path") or "")
    else:
        return
    pod.setdefault("volumes", []).append({"name": volume, **source})
    for container in pod.get("containers") or []:
        if container.get("name") != container_name:
            continue
        mount = {"mountPath": mount_path, "name": volume}
        if sub_path:
            mount["subPath"] = sub_path
        container.setdefault("volumeMounts", []).append(mount)
        if isinstance(fs.get("emptyDir"), dict):
            requests = container.setdefault("resources", {}).setdefault("requests", {})
            size = str(fs["emptyDir"].get("size"))
            existing = requests.get("ephemeral-storage")
            if existing is None:  # a zero Quantity takes the added one's format
                requests["ephemeral-storage"] = canonical_quantity(size)
            elif not is_quantity(str(existing)):
                raise InputError(
                    f"{QUANTITY_FORMAT_ERROR} (got {existing!r})",
                    "spec.template.containers[main].resources.requests[ephemeral-storage]",
                )
            else:
                total = parse_quantity(str(existing)) + parse_quantity(size)
                requests["ephemeral-storage"] = canonical_quantity(
                    str(total.normalize()) if total != total.to_integral_value() else str(int(total))
                )
        break
