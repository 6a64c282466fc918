"""``MergeSpecs``: LLMInferenceServiceSpecs layered by strategic merge patch.

Mirrors ``mergeSpecs`` in ``pkg/controller/v1alpha2/llmisvc/config_merge.go``: each override becomes a two-way
strategic patch from the zero spec and is applied onto the base with the ``LLMInferenceServiceSpec`` patch tags.
Only Kubernetes core types carry merge keys, so PodSpecs (``template``, ``worker``, the prefill ones, the scheduler
and tokenizer templates) merge containers, volumes, env … by key (``kserve_compile.merge``); every other list
(HTTPRoute rules, InferencePool target ports, KEDA triggers, baseRefs) is replaced; maps merge per key.
"""

from __future__ import annotations

from typing import Any

from ..datacopy import clone
from ..merge import POD_SPEC_LIST_KEYS, strategic_merge
from .models import Spec

POD_LIST_KEYS = {**POD_SPEC_LIST_KEYS, "topologySpreadConstraints": "topologyKey"}

# where PodSpecs sit in an LLMInferenceServiceSpec
_POD_SPECS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("template",),
        ("worker",),
        ("prefill", "template"),
        ("prefill", "worker"),
        ("router", "scheduler", "template"),
        ("router", "scheduler", "tokenizer", "template"),
    }
)
_PREFIXES = frozenset(p[:i] for p in _POD_SPECS for i in range(1, len(p)))


def merge_specs(*specs: Spec) -> Spec:
    """``MergeSpecs(cfgs...)``: the first spec with each later one merged over it, in order."""
    if not specs:
        return {}
    out = clone(specs[0])
    for override in specs[1:]:
        out = _merge(out, override, ())
    return out


def _merge(base: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        here = (*path, key)
        current = out.get(key)
        if value is None:
            out.pop(key, None)
        elif here in _POD_SPECS and isinstance(value, dict) and isinstance(current, dict):
            out[key] = strategic_merge(current, value, POD_LIST_KEYS)
        elif isinstance(value, dict) and isinstance(current, dict):
            out[key] = _merge(current, value, here) if here in _PREFIXES else _merge_plain(current, value)
        else:
            out[key] = clone(value)
    return out


def _merge_plain(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_plain(out[key], value)
        else:
            out[key] = clone(value)
    return out
