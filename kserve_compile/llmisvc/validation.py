"""Admission checks for LLMInferenceService, with KServe's messages and field paths.

Mirrors ``pkg/apis/serving/v1alpha2/llm_inference_service_validation.go`` (router cross-field constraints,
parallelism, scheduler config, scaling and actuator consistency, LoRA adapters, KV-cache offloading) and the CRD's
required ``spec.model.uri``. The webhook checks the object as written; the controller's dry-run checks the merged
spec again (``reconcileBaseRefs``), so :func:`validate_spec` runs on both.
"""

from __future__ import annotations

import re
from typing import Any

from ..kube.quantity import QUANTITY_FORMAT_ERROR, is_quantity
from .llm_types import Spec, get_path, is_data_parallel, is_pipeline_parallel

Problem = tuple[str, str]  # (field path, message)
_VARIANT_COST = re.compile(r"^\d+(\.\d+)?$")


def validate_spec(spec: Spec, name: str) -> list[Problem]:
    out: list[Problem] = []
    if not get_path(spec, "model", "uri"):
        out.append(("spec.model.uri", "Required value"))
    out += _router(spec)
    out += _parallelism("spec", spec)
    if isinstance(spec.get("prefill"), dict):
        out += _parallelism("spec.prefill", spec["prefill"])
    out += _scheduler(spec)
    out += _scaling("spec", spec)
    if isinstance(spec.get("prefill"), dict):
        out += _scaling("spec.prefill", spec["prefill"])
        out += _actuators(spec, spec["prefill"])
    out += _lora(get_path(spec, "model", "lora"), str(get_path(spec, "model", "name") or name))
    out += _kv_cache("spec.kvCacheOffloading", spec.get("kvCacheOffloading"))
    return out


def _router(spec: Spec) -> list[Problem]:
    http = get_path(spec, "router", "route", "http")
    if not isinstance(http, dict):
        return []
    base = "spec.router.route.http"
    out: list[Problem] = []
    gateway = get_path(spec, "router", "gateway")
    if http.get("refs") and http.get("spec") is not None:
        message = f"unsupported configuration: cannot use both custom HTTPRoute refs ('{base}.refs') and an inline route spec ('{base}.spec'); choose one"
        out.append((base, message))
    if http.get("refs") and isinstance(gateway, dict) and not gateway.get("refs"):
        message = (f"unsupported configuration: custom HTTP routes ('{base}.refs') cannot be used with a managed gateway "
                   f"('spec.router.gateway'); either remove '{base}.refs' or set 'spec.router.gateway.refs'")  # fmt: skip
        out.append((f"{base}.refs", message))
    parents = get_path(http, "spec", "parentRefs") or []
    refs = get_path(gateway, "refs") or []
    if parents and refs and not _parents_match(parents, refs):
        message = (f"unsupported configuration: managed HTTP route spec ('{base}.spec') has parentRefs that conflict with custom "
                   f"gateway refs ('spec.router.gateway.refs'); either remove 'spec.router.gateway.refs' or '{base}.spec.parentRefs'")  # fmt: skip
        out.append((f"{base}.spec", message))
    return out


def _parents_match(parents: list[Any], refs: list[Any]) -> bool:
    def key(ref: Any) -> tuple[str, str, str]:
        return (str(ref.get("name", "")), str(ref.get("namespace", "")), str(ref.get("sectionName", "")))

    return len(parents) == len(refs) and sorted(key(p) for p in parents) == sorted(key(r) for r in refs)


def _parallelism(base: str, workload: Spec) -> list[Problem]:
    worker_msg = (
        "when worker is specified, parallelism must be configured for either data parallelism or pipeline parallelism"
    )
    parallelism = workload.get("parallelism")
    if workload.get("worker") is not None and parallelism is None:
        return [(f"{base}.worker", worker_msg)]
    if not isinstance(parallelism, dict):
        return []
    path = f"{base}.parallelism"
    out: list[Problem] = []
    if (
        workload.get("worker") is not None
        and not is_data_parallel(parallelism)
        and not is_pipeline_parallel(parallelism)
    ):
        out.append((f"{base}.worker", worker_msg))
    if is_pipeline_parallel(parallelism) and is_data_parallel(parallelism):
        out.append(
            (path, "cannot set both pipeline parallelism and data parallelism (data or dataLocal) simultaneously")
        )
    if "data" in parallelism and "dataLocal" not in parallelism:
        out.append((f"{path}.dataLocal", "dataLocal must be set when data is set"))
    if "dataLocal" in parallelism and "data" not in parallelism:
        out.append((f"{path}.data", "data must be set when dataLocal is set"))
    for key, label in (
        ("pipeline", "pipeline parallelism"),
        ("data", "data parallelism"),
        ("dataLocal", "dataLocal parallelism"),
    ):
        value = parallelism.get(key)
        if isinstance(value, int) and value <= 0:
            out.append((f"{path}.{key}", f"{label} must be greater than 0"))
    return out


def _scheduler(spec: Spec) -> list[Problem]:
    scheduler = get_path(spec, "router", "scheduler")
    if not isinstance(scheduler, dict):
        return []
    path = "spec.router.scheduler"
    out: list[Problem] = []
    replicas = scheduler.get("replicas")
    if isinstance(replicas, int) and replicas <= 0:
        out.append((f"{path}.replicas", "scheduler replicas must be greater than zero"))
    config = scheduler.get("config")
    if not isinstance(config, dict):
        return out
    inline, ref = config.get("inline"), config.get("ref")
    if inline is None and ref is None:
        out.append((f"{path}.config", "either inline or ref is required"))
    if inline is not None and ref is not None:
        out.append((f"{path}.config", "both inline and ref are set, either specify inline or ref"))
    if inline is not None and (inline == {} or (isinstance(inline, str) and len(inline) < 3)):
        out.append((f"{path}.config.inline", "inline configuration is invalid"))
    if isinstance(ref, dict) and not ref.get("name"):
        out.append((f"{path}.config.ref.name", "name is empty"))
    return out


def _scaling(base: str, workload: Spec) -> list[Problem]:
    scaling = workload.get("scaling")
    if not isinstance(scaling, dict):
        return []
    path = f"{base}.scaling"
    out: list[Problem] = []
    if workload.get("replicas") is not None:
        out.append(
            (
                path,
                "scaling and replicas are mutually exclusive; use scaling for autoscaled deployments or replicas for static deployments",
            )
        )
    low, high = scaling.get("minReplicas"), scaling.get("maxReplicas", 0)
    if isinstance(low, int) and isinstance(high, int) and low > high:
        out.append((f"{path}.minReplicas", f"minReplicas ({low}) cannot exceed maxReplicas ({high})"))
    wva, keda = scaling.get("wva"), scaling.get("keda")
    if wva is not None and keda is not None:
        return [*out, (path, "wva and keda are mutually exclusive; choose one scaling mechanism")]
    if wva is None and keda is None:
        return [*out, (path, "Required value: either wva or keda must be specified when scaling is configured")]
    if keda is not None:
        if not (keda or {}).get("triggers"):
            out.append(
                (
                    f"{path}.keda.triggers",
                    "Required value: at least one trigger is required when using direct KEDA scaling",
                )
            )
        return out
    assert wva is not None  # exactly one of wva and keda is set, and it is not keda
    if wva.get("hpa") is not None and wva.get("keda") is not None:
        out.append((f"{path}.wva", "hpa and keda are mutually exclusive; choose one actuator backend"))
    if wva.get("hpa") is None and wva.get("keda") is None:
        out.append((f"{path}.wva", "Required value: either hpa or keda must be specified as the actuator backend"))
    cost = wva.get("variantCost")
    if cost and not _VARIANT_COST.match(str(cost)):
        out.append(
            (f"{path}.wva.variantCost", 'variantCost must be a non-negative numeric string (e.g., "10", "10.0", "0.5")')
        )
    return out


def _actuators(decode: Spec, prefill: Spec) -> list[Problem]:
    d, p = decode.get("scaling"), prefill.get("scaling")
    if not isinstance(d, dict) or not isinstance(p, dict):
        return []
    if (d.get("keda") is not None) != (p.get("keda") is not None):
        modes = ("direct keda", "wva") if d.get("keda") is not None else ("wva", "direct keda")
        return [
            (
                "spec.prefill.scaling",
                f"decode and prefill must use the same scaling mode; decode uses {modes[0]} but prefill uses {modes[1]}",
            )
        ]
    dw, pw = d.get("wva"), p.get("wva")
    if (
        not isinstance(dw, dict)
        or not isinstance(pw, dict)
        or (dw.get("hpa") is not None) == (pw.get("hpa") is not None)
    ):
        return []
    backends = ("hpa", "keda") if dw.get("hpa") is not None else ("keda", "hpa")
    message = (
        f"decode and prefill must use the same actuator backend; decode uses {backends[0]} but prefill uses {backends[1]} — "
        "mixing backends requires two separate metric pipelines and leads to independent, unsynchronised scaling decisions"
    )
    return [("spec.prefill.scaling.wva", message)]


def _lora(lora: Any, base_model: str) -> list[Problem]:
    if not isinstance(lora, dict):
        return []
    path = "spec.model.lora"
    out: list[Problem] = []
    for key in ("maxRank", "maxAdapters", "maxCpuAdapters"):
        if isinstance(lora.get(key), int) and lora[key] < 1:
            out.append((f"{path}.{key}", f"{key} must be at least 1"))
    seen: dict[str, int] = {}
    for i, adapter in enumerate(lora.get("adapters") or []):
        where = f"{path}.adapters[{i}].name"
        name = adapter.get("name") if isinstance(adapter, dict) else None
        if not name:
            out.append((where, "Required value: adapter name is required"))
            continue
        if name in (".", ".."):
            out.append((where, 'adapter name must not include "." or ".." (path traversal risk)'))
            continue
        if name in seen:
            out.append((where, f"duplicate name (same as adapters[{seen[name]}])"))
        else:
            seen[name] = i
        if name == base_model:
            out.append((where, f'adapter name must differ from base model name "{base_model}"'))
    return out


def _kv_cache(path: str, kv: Any) -> list[Problem]:
    if not isinstance(kv, dict):
        return []
    out: list[Problem] = []
    tiers = kv.get("secondary") or []
    if tiers and kv.get("cpu") in (None, "", 0, "0"):
        out.append((f"{path}.cpu", "Required value: cpu must be set when secondary tiers are configured"))
    for i, tier in enumerate(tiers):
        fs = tier.get("fileSystem") if isinstance(tier, dict) else None
        where = f"{path}.secondary[{i}].fileSystem"
        if not isinstance(fs, dict):
            out.append((where, "Required value: only fileSystem tiers are supported; fileSystem must be set"))
            continue
        kinds = [k for k in ("emptyDir", "pvc") if fs.get(k) is not None]
        if not kinds:
            out.append((where, "Required value: exactly one of emptyDir or pvc must be set"))
        elif len(kinds) > 1:
            out.append((where, "exactly one of emptyDir or pvc must be set; multiple are set"))
        elif kinds == ["emptyDir"]:
            size = fs["emptyDir"].get("size") if isinstance(fs["emptyDir"], dict) else None
            if size is None:  # the CRD's required field
                out.append((f"{where}.emptyDir.size", "Required value"))
            elif not is_quantity(str(size)):
                out.append((f"{where}.emptyDir.size", f"{QUANTITY_FORMAT_ERROR} (got {size!r})"))
        elif kinds == ["pvc"]:
            pvc = fs["pvc"]
            set_ = [k for k in ("spec", "ref") if pvc.get(k) is not None]
            if not set_:
                out.append((f"{where}.pvc", "Required value: exactly one of spec or ref must be set"))
            elif len(set_) > 1:
                out.append((f"{where}.pvc", "exactly one of spec or ref must be set; multiple are set"))
            elif set_ == ["ref"] and not pvc["ref"].get("name"):
                out.append((f"{where}.pvc.ref.name", "Required value: name is required"))
    return out
