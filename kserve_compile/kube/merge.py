"""The merges KServe makes: Kubernetes strategic merge patch for Container and PodSpec, and mergo's override merge.

KServe merges a ServingRuntime's container with the InferenceService's (``MergeContainerWithPatch``) and the
runtime's pod-level fields with the predictor's PodSpec (``MergePodSpec``) through ``strategicpatch``. The patch
strategy of each list comes from the Kubernetes API types; the table below is that data. Lists without a merge key
are replaced; maps merge per key; ``null`` deletes; merged lists are ordered as strategicpatch orders them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..datacopy import clone
from ..provenance import is_tracing, overriding

# field → merge key, for lists merged element-by-element (k8s.io/api/core/v1 patchMergeKey tags)
CONTAINER_LIST_KEYS = {
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "resizePolicy": "resourceName",
}
POD_SPEC_LIST_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "resourceClaims": "name",
    "schedulingGates": "name",
}
_NESTED = {
    "containers": CONTAINER_LIST_KEYS,
    "initContainers": CONTAINER_LIST_KEYS,
    "ephemeralContainers": CONTAINER_LIST_KEYS,
}


def strategic_merge(base: dict[str, Any], patch: dict[str, Any], list_keys: dict[str, str]) -> dict[str, Any]:
    """``base`` with ``patch`` merged over it; neither input is changed."""
    out = clone(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif key in list_keys and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(out[key], value, list_keys[key], _NESTED.get(key, {}))
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_map(out[key], value)
        else:
            out[key] = _replacing(out, key, clone(value))
    return out


def _replacing(out: dict[str, Any], key: str, new: Any) -> Any:
    """``new`` for ``out[key]``; while tracing it remembers the value it replaces."""
    return overriding(out[key], new) if key in out and is_tracing() else new


def _merge_map(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_map(out[key], value)
        else:
            out[key] = _replacing(out, key, clone(value))
    return out


def _merge_list(base: list[Any], patch: list[Any], merge_key: str, nested: dict[str, str]) -> list[Any]:
    """Merge by key, then order as ``strategicpatch`` does (``normalizeElementOrder`` / ``mergeSortedSlice``).

    Patch items keep the patch's order, items only in the base keep the base's order, and the two runs are
    interleaved: a base-only item goes before a patch item only when both exist in the base and it comes first
    there. So a new patch item lands before the base items that follow it, e.g. base [a, b] + patch [c, b] gives
    [c, a, b] (KServe's imagePullSecrets test: isvc secrets first, then runtime-only ones).
    """
    keyed_patch = [item for item in patch if isinstance(item, dict)]
    base_index = {item.get(merge_key): i for i, item in enumerate(base) if isinstance(item, dict)}
    merged_by_key: dict[Any, Any] = {}
    for item in keyed_patch:
        key = item.get(merge_key)
        earlier = merged_by_key.get(key)
        if earlier is not None:
            merged_by_key[key] = strategic_merge(earlier, item, nested)
        elif key in base_index:
            merged_by_key[key] = strategic_merge(base[base_index[key]], item, nested)
        else:
            merged_by_key[key] = clone(item)
    patch_items: list[Any] = []
    seen: set[Any] = set()
    for item in keyed_patch:
        key = item.get(merge_key)
        if key not in seen:
            seen.add(key)
            patch_items.append(merged_by_key[key])
    server_only = [clone(item) for item in base if not (isinstance(item, dict) and item.get(merge_key) in seen)]

    def position(item: Any) -> int:
        return base_index.get(item.get(merge_key), -1) if isinstance(item, dict) else -1

    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        else:
            left, right = position(server_only[i]), position(patch_items[j])
            if left >= 0 and right >= 0 and left < right:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    out += [clone(item) for item in patch if not isinstance(item, dict)]
    return out


def merge_containers(runtime: dict[str, Any], isvc: dict[str, Any]) -> dict[str, Any]:
    """``MergeRuntimeContainers``: strategic merge, env value/valueFrom by the isvc's intent, args concatenated."""
    merged = strategic_merge(runtime, isvc, CONTAINER_LIST_KEYS)
    overlay_env = {e.get("name"): e for e in isvc.get("env") or [] if isinstance(e, dict)}
    for env in merged.get("env") or []:
        wanted = overlay_env.get(env.get("name"))
        if wanted is None or "value" not in env or "valueFrom" not in env:
            continue
        env.pop("value" if wanted.get("valueFrom") is not None else "valueFrom", None)
    if not merged.get("name"):
        merged["name"] = runtime.get("name", "")
    args = list(runtime.get("args") or []) + list(isvc.get("args") or [])
    if args:
        merged["args"] = args
    else:
        merged.pop("args", None)
    return merged


def merge_pod_specs(runtime_pod: dict[str, Any], predictor_pod: dict[str, Any]) -> dict[str, Any]:
    """``MergePodSpec``: the predictor's PodSpec strategically merged over the runtime's pod-level fields."""
    return strategic_merge(runtime_pod, predictor_pod, POD_SPEC_LIST_KEYS)


# --- mergo.Merge(..., WithOverride): how KServe builds a canary predictor over the stable one -------------------

# Keys whose objects are Go maps (entries merge one by one, an empty src value still wins); every other object in a
# PredictorSpec is a struct or a pointer to one (fields merge recursively, empty src values never override).
_GO_MAPS = frozenset({"labels", "annotations", "nodeSelector", "overhead", "limits", "requests", "parameters"})


def _empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or value == "" or value == [] or value == {}


def merge_override(dst: Mapping[str, Any], src: Mapping[str, Any], *, is_map: bool = False) -> dict[str, Any]:
    """``mergo.Merge(&dst, src, mergo.WithOverride)`` over the JSON form of a Go struct.

    Non-empty scalars and lists of ``src`` replace those of ``dst`` (lists are never merged item by item); objects merge
    recursively; an empty ``src`` value only fills a field ``dst`` does not have (a nil pointer). Inside a Go map every
    ``src`` entry wins."""
    out = clone(dict(dst))
    for key, value in src.items():
        if value is None:
            continue
        current = out.get(key)
        if is_map:
            out[key] = clone(value)
        elif isinstance(value, dict) and isinstance(current, dict):
            out[key] = merge_override(current, value, is_map=key in _GO_MAPS)
        elif key not in out:
            if not (isinstance(value, list) and not value):  # an empty slice leaves a nil one nil
                out[key] = clone(value)
        elif not _empty(value):
            out[key] = clone(value)
    return out
