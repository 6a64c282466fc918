"""``serving.kserve.io/v1alpha1`` → ``v1alpha2`` conversion, as the conversion webhook does it.

Mirrors ``pkg/apis/serving/v1alpha1/llm_inference_service_conversion.go`` (``ConvertTo``): model and adapter
``criticality`` move into the annotations ``internal.serving.kserve.io/model-criticality`` and
``…/lora-criticalities`` (JSON, adapter index → value); the scheduler's InferencePool spec is converted from the
Gateway API Inference Extension v1alpha2 shape to v1 (``InferencePool.ConvertTo``). Every other field has the same
JSON shape in both versions; fields v1alpha1 does not have (``kvCacheOffloading``, ``model.confidential``) are
not carried over, as the field-by-field conversion does not carry them.
"""

from __future__ import annotations

import json
from typing import Any

from ..datacopy import clone

MODEL_CRITICALITY = "internal.serving.kserve.io/model-criticality"
LORA_CRITICALITIES = "internal.serving.kserve.io/lora-criticalities"


def convert_spec(spec: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    """The v1alpha2 spec of a v1alpha1 one; ``annotations`` gains the criticality keys."""
    out = clone(spec)
    for workload in (out, out.get("prefill")):
        if isinstance(workload, dict):
            workload.pop("kvCacheOffloading", None)
    if isinstance(out.get("model"), dict):
        out["model"].pop("confidential", None)
    model = out.get("model")
    if isinstance(model, dict):
        critical = model.pop("criticality", None)
        if critical:
            annotations[MODEL_CRITICALITY] = str(critical)
        adapters = (model.get("lora") or {}).get("adapters") if isinstance(model.get("lora"), dict) else None
        found: dict[str, str] = {}
        for i, adapter in enumerate(adapters or []):
            value = adapter.pop("criticality", None) if isinstance(adapter, dict) else None
            if value:
                found[str(i)] = str(value)
        if found:
            annotations[LORA_CRITICALITIES] = json.dumps(found, separators=(",", ":"), sort_keys=True)
    pool = (
        ((out.get("router") or {}).get("scheduler") or {}).get("pool") if isinstance(out.get("router"), dict) else None
    )
    if isinstance(pool, dict) and isinstance(pool.get("spec"), dict):
        pool["spec"] = pool_spec_to_v1(pool["spec"])
    return out


def pool_spec_to_v1(spec: dict[str, Any]) -> dict[str, Any]:
    """GIE v1alpha2 ``InferencePoolSpec`` → v1: ``selector`` map → ``matchLabels``, ``targetPortNumber`` →
    ``targetPorts``, ``extensionRef`` → ``endpointPickerRef`` (``portNumber`` → ``port.number``)."""
    out: dict[str, Any] = {}
    if isinstance(spec.get("selector"), dict) and spec["selector"]:
        out["selector"] = {"matchLabels": dict(spec["selector"])}
    if spec.get("targetPortNumber") is not None:
        out["targetPorts"] = [{"number": spec["targetPortNumber"]}]
    ext = spec.get("extensionRef")
    if isinstance(ext, dict):
        ref: dict[str, Any] = {k: ext[k] for k in ("group", "kind", "name", "failureMode") if ext.get(k) is not None}
        if ext.get("portNumber") is not None:
            ref["port"] = {"number": ext["portNumber"]}
        out["endpointPickerRef"] = ref
    return out
