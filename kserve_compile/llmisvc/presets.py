"""Well-known LLMInferenceServiceConfig presets and the config lookup ``getConfig`` does.

Mirrors ``config_merge.go`` (``WellKnownDefaultConfigs``, ``getConfig``, ``WellKnownConfigResolver``): presets are
named ``<prefix>config-llm-*`` (prefix ``kserve-`` unless ``LLM_INFERENCE_SERVICE_CONFIG_PREFIX`` says otherwise);
a config is looked up in the service's namespace first, then in ``kserve``. KServe's shipped presets
(``config/llmisvcconfig/``, embedded under ``kserve_compile/data/llmisvc/``) live in ``kserve``; input
LLMInferenceServiceConfigs come before them, so an input of the same name and namespace replaces a shipped one.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .. import embedded
from ..datacopy import clone
from ..errors import InputError
from .llm_types import SYSTEM_NAMESPACE, LLMConfig, LLMService, drop_nulls
from .options import LLMOptions

TEMPLATE = "config-llm-template"
DECODE_TEMPLATE = "config-llm-decode-template"
PREFILL_TEMPLATE = "config-llm-prefill-template"
WORKER_DP = "config-llm-worker-data-parallel"
DECODE_WORKER_DP = "config-llm-decode-worker-data-parallel"
PREFILL_WORKER_DP = "config-llm-prefill-worker-data-parallel"
WORKER_PP = "config-llm-worker-pipeline-parallel"  # referenced by KServe, not shipped
DECODE_WORKER_PP = "config-llm-decode-worker-pipeline-parallel"
PREFILL_WORKER_PP = "config-llm-prefill-worker-pipeline-parallel"
SCHEDULER = "config-llm-scheduler"
ROUTER_ROUTE = "config-llm-router-route"
LATENCY_PREDICTOR = "config-llm-scheduler-latency-predictor"
TOKENIZER = "config-llm-tokenizer"
TRACING = "config-llm-tracing"
WELL_KNOWN = (
    TEMPLATE, DECODE_TEMPLATE, WORKER_DP, DECODE_WORKER_DP, PREFILL_TEMPLATE, PREFILL_WORKER_DP,
    SCHEDULER, ROUTER_ROUTE, LATENCY_PREDICTOR, TOKENIZER, TRACING,
)  # fmt: skip
PIN_PREFIX = "serving.kserve.io/"


SHIPPED_PREFIX = (
    "kserve-"  # the names KServe's install gives its presets (file config-llm-x.yaml → kserve-config-llm-x)
)


@cache
def embedded_preset(name: str) -> LLMConfig | None:
    """KServe's shipped preset ``name`` (namespace ``kserve``), read on first use; None when KServe ships none."""
    if not name.startswith(SHIPPED_PREFIX + "config-llm-"):
        return None
    path = f"{embedded.PRESETS}/{name.removeprefix(SHIPPED_PREFIX)}.yaml"
    if not embedded.has(path):
        return None
    data = clone(embedded.documents(path)[0])
    return LLMConfig(data["metadata"]["name"], SYSTEM_NAMESPACE, drop_nulls(data.get("spec") or {}), embedded=True)


class ConfigStore:
    """The LLMInferenceServiceConfigs a run can see: its inputs, then KServe's shipped presets."""

    def __init__(self, given: list[LLMConfig]) -> None:
        self._given = {(c.namespace, c.name): c for c in given}

    def get(self, name: str, namespace: str) -> LLMConfig:
        """``getConfig``: the service's namespace first, then ``kserve``."""
        for ns in (namespace, SYSTEM_NAMESPACE):
            found = self._given.get((ns, name))
            if found is not None:
                return found
        embedded = embedded_preset(name)
        if embedded is not None:
            return embedded
        raise InputError(
            f'LLMInferenceServiceConfig "{name}" not found in namespaces [{namespace} {SYSTEM_NAMESPACE}]',
            "spec.baseRefs",
        )


def pinned_name(svc: LLMService, suffix: str, options: LLMOptions) -> str:
    """``WellKnownConfigResolver.Resolve``: the name pinned in ``status.annotations`` on first reconcile, if any."""
    name = options.config_prefix + suffix
    if not options.versioned_config:
        return name
    pinned = (svc.status.get("annotations") or {}) if isinstance(svc.status, dict) else {}
    value = pinned.get(PIN_PREFIX + suffix) if isinstance(pinned, dict) else None
    return str(value) if value else name


def pins(svc: LLMService, options: LLMOptions) -> dict[str, str]:
    """``WellKnownConfigResolver.Attach``: the ``status.annotations`` KServe writes (already-pinned entries kept)."""
    if not options.versioned_config:
        return {}
    found = svc.status.get("annotations") if isinstance(svc.status, dict) else None
    current: dict[str, Any] = found if isinstance(found, dict) else {}
    return {PIN_PREFIX + s: str(current.get(PIN_PREFIX + s) or options.config_prefix + s) for s in sorted(WELL_KNOWN)}
